"""TEN401 (loss-accumulated-with-graph): a value that keeps a training step's graph, accumulated across
the steps of the loop: fixes, ownership (a periodic reset, a torch training loop, an update def that
backpropagates through the list and empties it), backward through an element, entries of loss dicts, and
fixes only where the analysis proves the value a tensor."""
from __future__ import annotations

import textwrap

import pytest
import torch

from tests.support.edit_tools import apply_edits
from tests.support.rule_tools import DEFAULT, LOOP, findings, findings_of as _found
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE, RULES

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


@pytest.mark.parametrize("line, replaced", [
    ("total += loss", "total += loss.detach()"),
    ("history.append(loss)", "history.append(loss.detach())"),
    ("history.append((loss, 3))", "history.append((loss.detach(), 3))"),
    ("history.append(loss * 2)", "history.append((loss * 2).detach())"),
])
def test_reports_and_fixes_accumulation(line, replaced):
    source = textwrap.dedent(LOOP.format(line=line))
    (finding,) = [f for f in findings(source) if f.code == "TEN401"]
    assert finding.fix is not None and finding.fix.safety.value == "unsafe"
    assert replaced in apply_edits(source, finding.fix.edits)


@pytest.mark.parametrize("line", [
    "total += loss.item()",
    "history.append(loss.detach())",
    "history.append(float(loss))",
    "history.append({'loss': loss.item()})",
    "total += x.shape[0]",
])
def test_numbers_and_detached_values_are_fine(line):
    assert not [f for f in findings(LOOP.format(line=line)) if f.code == "TEN401"]


BACKWARD_THROUGH_AN_ELEMENT = """
import torch

def optimize(params, loss_function, steps):
    optimizer = torch.optim.Adam(params)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        losses.append(loss_function(*params))
        losses[-1].backward(retain_graph=True)
        optimizer.step()
    return losses
"""


def test_backward_through_one_element_keeps_the_others_and_has_no_fix():
    """The backward proves what is appended requires grad; detaching it would break that backward."""
    (finding,) = findings(BACKWARD_THROUGH_AN_ELEMENT)
    assert (finding.code, finding.line, finding.fix) == ("TEN401", 9, None)
    assert "backward() on the loss itself" in finding.message


def test_backward_through_one_element_keeps_every_graph_at_runtime():
    """With real torch: every kept element holds its graph; the message's rewrite keeps none."""
    import torch

    space: dict = {}
    exec(BACKWARD_THROUGH_AN_ELEMENT, space)
    w = torch.ones(3, requires_grad=True)
    losses = space["optimize"]([w], lambda p: (p * 2).sum(), 4)
    assert len(losses) == 4 and all(loss.grad_fn is not None for loss in losses)
    rewritten = BACKWARD_THROUGH_AN_ELEMENT.replace(
        "losses.append(loss_function(*params))\n        losses[-1].backward(retain_graph=True)",
        "loss = loss_function(*params)\n        loss.backward()\n        losses.append(loss.detach())")
    assert rewritten != BACKWARD_THROUGH_AN_ELEMENT and findings(rewritten) == []
    exec(rewritten, space)
    assert all(loss.grad_fn is None for loss in space["optimize"]([w], lambda p: (p * 2).sum(), 4))


@pytest.mark.parametrize("backward", ["torch.stack(losses).sum().backward()", "losses[i].backward()",
                                      "sum(losses).backward()"])
def test_backward_through_the_whole_list_or_a_chosen_element_is_not_reported(backward):
    source = BACKWARD_THROUGH_AN_ELEMENT.replace("losses[-1].backward(retain_graph=True)", backward)
    assert findings(source.replace("for _ in", "for i in")) == []


def test_a_periodic_reset_does_not_silence_the_rule():
    """The passes that skip the reset keep their graphs (up to the reset interval's worth of steps)."""
    source = LOOP.format(line="total += loss\n        if total > 10:\n            total = 0.0")
    assert [f for f in findings(source) if f.code == "TEN401"]
    every_pass = LOOP.format(line="total += loss\n        print(total)\n        total = 0.0")
    assert not [f for f in findings(every_pass) if f.code == "TEN401"]


ONE_LOOP_ACCUMULATION = """
import torch


def fit(net, batches, opt, acc, k):
    running = 0
    for n, (xb, yb) in enumerate(batches):
        err = torch.nn.functional.mse_loss(net(xb), yb) / k
        running += err
        err.backward()
        {step}
"""


@pytest.mark.parametrize("step, reported", [
    ("if n % k == 0:\n            opt.step()\n            running = 0", False),  # reset with each optimizer step
    ("opt.step()\n        if acc.sync_gradients:\n            running = 0", False),  # Accelerate's real step
    ("opt.step()\n        if n % k == 0:\n            running = 0", True),  # a reset every k optimizer steps
    ("if n % k == 0:\n            opt.step()\n        else:\n            running = 0", True),  # not when it steps
])
def test_a_reset_that_comes_with_every_optimizer_step_bounds_the_graphs_kept(step, reported):
    """Gradient accumulation written as one loop: the total holds the micro-batches of one step at most."""
    found = [f for f in findings(ONE_LOOP_ACCUMULATION.format(step=step)) if f.code == "TEN401"]
    assert bool(found) is reported


GRADIENT_ACCUMULATION = """
import torch
from torch import nn


def train(model, opt, batches, iter_size, steps):
    for step in range(steps):
        opt.zero_grad()
        loss_value = 0{reset}
        for sub in range(iter_size):
            x, y = next(batches)
            loss = nn.functional.mse_loss(model(x), y) / iter_size
            loss_value += loss
            loss.backward()
        opt.step()
    return loss_value
"""


@pytest.mark.parametrize("reset, reported", [
    ("", False),  # bound anew at every optimizer step: one step's micro-batches at most
    ("\n        if step % 10:\n            loss_value = 0", False),  # still bound anew on every pass
])
def test_an_accumulator_reset_at_every_optimizer_step_is_not_reported(reset, reported):
    """Fix review 7 (b, class B): a loop that backpropagates micro-batches and steps no optimizer, inside
    the loop that steps it, keeps the graphs of one optimizer step when the accumulator is bound anew in
    each pass of the stepping loop; the rule's leak grows with the steps, and this does not."""
    assert bool([f for f in findings(GRADIENT_ACCUMULATION.format(reset=reset)) if f.code == "TEN401"]) is reported


def test_an_accumulator_the_stepping_loop_does_not_reset_is_reported():
    """Bound before the stepping loop and reset only on some passes of it: the graphs of many steps are kept."""
    source = GRADIENT_ACCUMULATION.format(reset="").replace(
        "    for step in range(steps):\n        opt.zero_grad()\n        loss_value = 0",
        "    loss_value = 0\n    for step in range(steps):\n        opt.zero_grad()\n        if step % 10 == 0:\n"
        "            loss_value = 0")
    assert "if step % 10 == 0" in source
    assert [f.code for f in findings(source) if f.code == "TEN401"] == ["TEN401"]


def test_the_graphs_kept_under_a_reset_at_every_optimizer_step_do_not_grow_with_the_steps():
    """The claim behind the look-alike, with torch: the accumulator holds one step's micro-batch losses, the
    number of graph nodes it reaches is the same after 3 steps as after 30."""
    def nodes_after(steps):
        torch.manual_seed(0)
        model, iter_size = torch.nn.Linear(3, 1), 4
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for _ in range(steps):
            opt.zero_grad()
            loss_value = 0
            for _ in range(iter_size):
                loss = ((model(torch.randn(2, 3)) - 1) ** 2).mean() / iter_size
                loss_value += loss
                loss.backward()
            opt.step()
        seen, stack = set(), [loss_value.grad_fn]
        while stack:
            node = stack.pop()
            if node is not None and node not in seen:
                seen.add(node)
                stack += [n for n, _ in node.next_functions]
        return len(seen)

    assert nodes_after(3) == nodes_after(30)


def test_needs_a_torch_training_loop():
    hand_written = """
    import torch

    def train(model, loader, loss_fn, lr):
        losses = []
        for x, y in loader:
            out = model.forward(x)
            loss = loss_fn.cross_entropy_loss(out, y)
            model.backward(out, y, lr)
            losses.append(loss)
        return losses
    """
    assert not findings(hand_written)
    no_torch = LOOP.format(line="total += loss").replace("import torch", "import numpy as np")
    assert not [f for f in findings(no_torch) if f.code == "TEN401"]


def test_accumulator_in_an_outer_loop_outlives_the_inner_training_loop():
    source = """
    import torch

    def train(model, loader, optimizer, criterion, epochs):
        for epoch in range(epochs):
            epoch_loss = 0
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                epoch_loss += loss
            print(epoch_loss)
    """
    assert [f.code for f in findings(source)] == ["TEN401"]


ENTRY_KEPT = """
import torch

def train(model, loader, optimizer, extra):
    for epoch in range(3):
        losses = []
        for x in loader:
            output = model(x)
            optimizer.zero_grad()
            output[METRIC].backward()
            optimizer.step()
            losses.append(output[METRIC])
        {after}
"""


@pytest.mark.parametrize("metric, after, reported", [
    ('"loss"', 'output["mean_loss"] = torch.stack(losses).mean()', True),
    ("self.metric", 'output[f"mean_{self.metric}"] = torch.stack(losses).mean()', True),
    ('"loss"', "output = {**output, **extra}\n        extra['mean'] = torch.stack(losses).mean()", True),
    ('"loss"', 'output["loss"] = torch.stack(losses).mean()', False),  # the backpropagated entry itself
    ('"loss"', "output = {**output, **extra}\n        extra['loss'] = torch.stack(losses).mean()", False),
    ("key", "output[name] = torch.stack(losses).mean()", False),  # two keys held by names may be one
    ('"loss"', "output = torch.stack(losses)", False),  # the whole dict
])
def test_an_entry_of_the_output_is_a_loss_key_of_its_own(metric, after, reported):
    """Storing another entry of the dict whose entry is backpropagated does not make the list a loss;
    storing that entry, a spread of it, or the whole dict does."""
    source = ENTRY_KEPT.replace("METRIC", metric).format(after=after)
    found = [f for f in findings(source) if f.code == "TEN401"]
    assert [f.line for f in found] == ([12] if reported else [])


TERMS = """
import torch
from collections import defaultdict

def train(model, loader, optimizer, criterion):
    totals = {start}
    for x, y in loader:
        terms = criterion(model(x), y)
        optimizer.zero_grad()
        sum(terms.values()).backward()
        optimizer.step()
        {line}
    return totals
"""


@pytest.mark.parametrize("start, line, replaced", [
    ("defaultdict(float)", "for k, v in terms.items():\n            totals[k] += v", "totals[k] += v.detach()"),
    ("{}", "for k in terms:\n            totals[k] = totals.get(k, 0.0) + terms[k]",
     "totals[k] = totals.get(k, 0.0) + terms[k].detach()"),
    ("{'ce': 0.0}", "totals['ce'] = totals['ce'] + terms['ce']",
     "totals['ce'] = totals['ce'] + terms['ce'].detach()"),
    ("defaultdict(lambda: torch.tensor(0.0))", "for v in terms.values():\n            totals['all'] += v * 2",
     "totals['all'] += (v * 2).detach()"),
])
def test_loss_terms_summed_by_name(start, line, replaced):
    """Entries of a dict whose sum is backpropagated, added into a dict that outlives the loop: reported, with
    the change in the message, but no fix: nothing proves every entry a tensor (`sum()` also adds a float
    entry such as an accuracy), and `.item()` on a float raises AttributeError."""
    source = textwrap.dedent(TERMS.format(start=start, line=line))
    (finding,) = [f for f in findings(source) if f.code == "TEN401"]
    assert finding.fix is None
    assert replaced.rsplit(" ", 1)[-1].rstrip(")") in finding.message


@pytest.mark.parametrize("line", [
    "for k, v in terms.items():\n            totals[k] += v.item()",
    "for k in terms:\n            totals[k] = other[k] + terms[k]",  # not an accumulation: a reset
    "logs = {k: v.item() for k, v in terms.items()}\n        for k, v in logs.items():\n            totals[k] += v",
    "totals = {}\n        for k, v in terms.items():\n            totals[k] = totals.get(k, 0) + v",
    "with torch.no_grad():\n            for k, v in terms.items():\n                totals[k] += v",
    "for k, v in batch_stats.items():\n            totals[k] += v",  # nothing says these are loss terms
])
def test_loss_terms_look_alikes(line):
    source = TERMS.format(start="defaultdict(float)", line=line)
    assert not [f for f in findings(source) if f.code == "TEN401"]


STEP = """
import torch

class Trainer:
    def __init__(self, model, optimizer, loss_fn):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.criterion = {criterion}

    def step(self, x, y):
        loss, parts = self.criterion(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return parts

    def epoch(self, loader):
        totals = {{}}
        for x, y in loader:
            for name, value in self.step(x, y).items():
                totals[name] = totals.get(name, 0.0) + value
        return totals
"""


TERMS_LOSS = """
class TermsLoss:
    def __call__(self, out, y):
        parts = {"mse": (out - y).pow(2).mean()}
        total = sum(parts.values())
        return total, parts


def make_loss():
    criterion = TermsLoss()
    return criterion
"""


@pytest.mark.parametrize("criterion, reported", [
    ("TermsLoss()", True), ("make_loss()", True),
    ("Logging()", False),  # its __call__ returns numbers beside the loss
    ("loss_fn", False),  # a parameter: what it returns is unknown
])
def test_loss_terms_from_a_loss_object_through_a_step_method(criterion, reported):
    numbers = "return total, {'mse': parts['mse'].item()}"
    logging = TERMS_LOSS.replace("TermsLoss", "Logging").replace("return total, parts", numbers)
    source = STEP.format(criterion=criterion) + TERMS_LOSS + logging.replace("make_loss", "make_logging")
    assert [f.line for f in findings(source) if f.code == "TEN401"] == ([19] if reported else [])


def test_loss_terms_from_a_loss_object_of_a_neighbouring_module(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "losses.py").write_text(TERMS_LOSS)
    train = tmp_path / "pkg" / "train.py"
    train.write_text("from pkg.losses import make_loss\n" + STEP.format(criterion="make_loss()"))
    result = analyse(train.read_text(), str(train), DEFAULT)
    assert [(f.line, f.code) for f in result.findings] == [(20, "TEN401")]


def test_an_epoch_helper_does_not_make_a_step_loop():
    """A def that loops over batches itself is an epoch: the loop calling it is not a training loop."""
    source = STEP.format(criterion="TermsLoss()").replace(
        "        loss, parts = self.criterion(self.model(x), y)\n        loss.backward()",
        "        for _ in range(2):\n            loss, parts = self.criterion(self.model(x), y)\n"
        "            loss.backward()") + TERMS_LOSS
    assert not [f for f in findings(source) if f.code == "TEN401"]


# A list of graph-attached values that an update def the loop calls backpropagates and empties is not a
# graph kept across the loop (a class of harmful fixes the review of `fix --unsafe-fixes` on unseen
# repositories found, docs/fix-review.md).
ACTOR_CRITIC = """
import torch
import torch.nn.functional as F

critic = torch.nn.Linear(2, 1)
critic.saved = []
optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)


def update(targets):
    losses = [F.mse_loss(v, t) for v, t in zip(critic.saved, targets)]
    optimizer.zero_grad()
    torch.stack(losses).sum().backward()
    optimizer.step()
    {empty}


def train(episodes, states, targets):
    for _ in range(episodes):
        for s in states:
            value = critic(s)
            critic.saved.append(value)
        update(targets)
"""


@pytest.mark.parametrize("empty", ["del critic.saved[:]", "critic.saved.clear()", "critic.saved = []"])
def test_a_list_an_update_def_of_the_loop_backpropagates_and_empties_is_not_reported(empty):
    source = ACTOR_CRITIC.format(empty=empty)
    assert [f.code for f in analyse(source, "t.py", [BY_CODE["TEN401"]]).findings] == []
    assert fix_source(source, "t.py", RULES, unsafe=True).fixed == source


def test_the_list_kept_by_an_update_that_never_empties_it_is_still_reported():
    source = ACTOR_CRITIC.format(empty="pass")
    (finding,) = analyse(source, "t.py", [BY_CODE["TEN401"]]).findings
    assert finding.code == "TEN401" and finding.line == source.splitlines().index(
        "            critic.saved.append(value)") + 1


def test_a_def_that_binds_the_name_itself_empties_another_object():
    source = ACTOR_CRITIC.format(empty="critic = torch.nn.Linear(2, 1)\n    critic.saved = []")
    assert [f.code for f in analyse(source, "t.py", [BY_CODE["TEN401"]]).findings] == ["TEN401"]


METHOD = """
import torch

class Agent:
    def __init__(self):
        self.critic = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.critic.parameters(), lr=0.1)
        self.saved = []

    def finish(self):
        self.opt.zero_grad()
        torch.stack(self.saved).pow(2).sum().backward()
        self.opt.step()
        {empty}

    def run(self, states):
        for s in states:
            self.saved.append(self.critic(s))
            self.finish()
"""


def test_a_method_called_on_self_that_empties_the_list_resets_it():
    source = METHOD.format(empty="del self.saved[:]")
    assert analyse(source, "t.py", [BY_CODE["TEN401"]]).findings == []
    assert [f.code for f in analyse(METHOD.format(empty="pass"), "t.py", [BY_CODE["TEN401"]]).findings] == ["TEN401"]


def test_the_values_such_a_loop_keeps_must_stay_attached():
    """Why no fix is right there: the update backpropagates through the kept values, so detaching them (the
    fix TEN401 would offer) makes that backward raise, and as written the critic trains."""
    namespace: dict = {}
    exec(textwrap.dedent(ACTOR_CRITIC.format(empty="del critic.saved[:]")), namespace)
    critic = namespace["critic"]
    before = critic.weight.detach().clone()
    states, targets = [torch.ones(2), torch.zeros(2)], [torch.ones(1), torch.zeros(1)]
    namespace["train"](2, states, targets)
    assert not torch.equal(before, critic.weight) and critic.saved == []
    detached = [critic(s).detach() for s in states]
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.stack([(v - t).pow(2).sum() for v, t in zip(detached, targets)]).sum().backward()


EPOCH = """
import torch

def train(model, loader, optimizer, criterion):
    for epoch in range(3):
        total = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss
        mean = {use}
        print(epoch, mean)
"""


@pytest.mark.parametrize("use", ["(total / len(loader)).detach().cpu().numpy()", "total / len(loader)"])
def test_the_fix_keeps_a_tensor_whatever_the_code_does_with_the_total(use):
    """`.detach()`, never `.item()`: a tensor stays a tensor, so no later use of the total can break
    (`.item()` made `(total / n).detach()` raise in fix review 3, and broke other tensor uses later)."""
    (finding,) = analyse(EPOCH.format(use=use), "t.py", [BY_CODE["TEN401"]]).findings
    assert finding.fix.edits[0].text == "loss.detach()"


def test_the_fixed_epoch_loop_runs_and_reports_the_same_mean():
    """With real torch: the fixed loop runs, and the mean it reports is the one the original computed."""
    source = textwrap.dedent(EPOCH.format(use="(total / len(loader)).detach().cpu().numpy()"))
    fixed = fix_source(source, "t.py", RULES, unsafe=True).fixed
    assert "total += loss.detach()" in fixed
    means = []
    for program in (source, fixed):
        namespace = {"print": lambda epoch, mean: means.append(float(mean))}
        exec(program, namespace)
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 1)
        loader = [(torch.randn(4, 2), torch.randn(4, 1)) for _ in range(3)]
        namespace["train"](model, loader, torch.optim.SGD(model.parameters(), lr=0.1), torch.nn.MSELoss())
    assert len(means) == 6 and means[:3] == pytest.approx(means[3:])


# Fixes from proof: a fix adds a tensor method only to what the analysis proves is a tensor (cases a trial
# on unseen code found a harmful fix for).
LOSSES = """
import torch
from collections import defaultdict

def train(model, loader, optimizer, criterion):
    totals = defaultdict(float)
    for x, y in loader:
        terms = criterion(model(x), y)  # may hold floats beside the loss
        optimizer.zero_grad()
        sum(terms.values()).backward()
        optimizer.step()
        for k, v in terms.items():
            totals[k] += v
    return totals
"""


def test_a_loop_over_a_dict_of_mixed_values_gets_no_fix():
    (finding,) = _found(LOSSES, "TEN401")
    assert finding.fix is None
    assert fix_source(textwrap.dedent(LOSSES), "t.py", RULES, unsafe=True).fixed == textwrap.dedent(LOSSES)


def test_a_loss_autograd_ran_backward_from_is_proven_and_fixed():
    source = LOSSES.replace("sum(terms.values()).backward()", "loss = terms['loss']\n        loss.backward()") \
        .replace("for k, v in terms.items():\n            totals[k] += v", "totals['loss'] += loss")
    (finding,) = _found(source, "TEN401")
    assert finding.fix is not None and finding.fix.tensors
    assert "totals['loss'] += loss.detach()" in fix_source(textwrap.dedent(source), "t.py", RULES, unsafe=True).fixed


# A callback held on `self` under a module's name (fix review 11: `self.test_policy`, a constructor argument
# the caller gives a function returning a NumPy array): the name says "module", the code does not, so its
# result is only likely a tensor and gets no `.detach()`.
CALLBACK = """
import torch

class Fitter:
    def __init__(self, net, test_policy=None):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.test_policy = test_policy

    def fit(self, x, y):
        scores = []
        for _ in range(3):
            loss = ((self.net(x) - y) ** 2).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            stats = self.test_policy(self.net)
            scores.append(stats[0])
        return scores
"""


def test_a_call_of_an_attribute_named_like_a_module_is_no_proof_for_a_fix():
    for finding in _found(CALLBACK, "TEN401"):
        assert finding.fix is None
    assert fix_source(textwrap.dedent(CALLBACK), "t.py", RULES, unsafe=True).fixed == textwrap.dedent(CALLBACK)
    built = CALLBACK.replace("self.test_policy = test_policy", "self.test_policy = torch.nn.Linear(4, 2)")
    (finding,) = _found(built, "TEN401")  # the class builds a module there: its output is a tensor
    assert finding.fix is not None


# A policy keeps (log_prob, value) on `self` every step; a def of the file iterates them into the loss it
# backpropagates at the episode's end (fix review 3, class E: `.detach()` there stopped the critic learning).
POLICY = """
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.pi = nn.Linear(4, 2)
        self.v = nn.Linear(4, 1)
        self.saved = []

    def select_action(self, x):
        m = Categorical(logits=self.pi(x))
        a = m.sample()
        self.saved.append((m.log_prob(a), self.v(x)))
        return a


policy = Policy()
opt = torch.optim.SGD(policy.parameters(), lr=0.1)


def finish_episode():
    loss = 0
    for log_prob, value in policy.saved:
        loss = loss - log_prob * (1.0 - value).detach() + (value - 1.0).pow(2).sum()
    opt.zero_grad()
    {end}
    opt.step()
    policy.saved.clear()


for episode in range(4):
    for t in range(3):
        policy.select_action(torch.randn(4))
    finish_episode()
"""


def test_values_kept_on_an_object_for_a_later_backward_through_the_attribute_are_not_reported():
    assert _found(POLICY.replace("{end}", "loss.backward()"), "TEN401") == []


def test_values_kept_on_an_object_that_no_backward_reads_are_reported():
    (finding,) = _found(POLICY.replace("{end}", "print(float(loss))"), "TEN401")
    assert finding.line == 17 and "'self.saved'" in finding.message


# The same policy keeping one list per episode (`self.saved[-1].append(...)`), and a loss built from terms
# appended to lists (the rest of class E in the re-run after fix review 3).
EPISODES = """
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = nn.Linear(4, 1)
        self.saved = []

    def act(self, x):
        self.saved[-1].append((x.sum(), self.v(x)))


policy = Policy()
opt = torch.optim.SGD(policy.parameters(), lr=0.1)


def finish():
    terms = []
    flat = [step for episode in policy.saved for step in episode]
    for reward, value in flat:
        terms.append((value - reward).pow(2).sum())
    loss = torch.stack(terms).sum()
    opt.zero_grad()
    {end}
    opt.step()
    del policy.saved[:]


for episode in range(4):
    policy.saved.append([])
    for t in range(3):
        policy.act(torch.randn(4))
    finish()
"""


def test_values_kept_per_episode_for_a_loss_built_from_appended_terms_are_not_reported():
    source = EPISODES.replace("{end}", "loss.backward()")
    assert _found(source, "TEN401") == []
    assert fix_source(textwrap.dedent(source), "t.py", RULES, unsafe=True).fixed == textwrap.dedent(source)
    exec(textwrap.dedent(source), {})  # it runs, and trains the critic through the kept values


def test_values_kept_per_episode_that_no_backward_reads_are_reported():
    (finding,) = _found(EPISODES.replace("{end}", "print(float(loss))"), "TEN401")
    assert "'self.saved[-1]'" in finding.message or "'self.saved'" in finding.message


def test_the_kept_values_carry_the_graph_the_backward_needs():
    """The claim behind staying quiet: detaching the kept value leaves the critic without a gradient."""
    def critic_grad(detach: bool):
        torch.manual_seed(0)
        v = torch.nn.Linear(4, 1)
        saved = [v(torch.randn(4)) for _ in range(3)]
        loss = sum(((s.detach() if detach else s) - 1.0).pow(2).sum() for s in saved)
        if loss.requires_grad:
            loss.backward()
        return v.weight.grad

    assert critic_grad(False) is not None and critic_grad(True) is None


def test_a_comprehension_over_the_list_that_reuses_the_loss_name_does_not_hide_the_accumulation():
    """Its variable is its own: `losses` of `[losses[0] for losses in kept]` is not the backpropagated one."""
    source = """
import torch

def train_epoch(model, data, optimizer):
    kept = []
    for x in data:
        optimizer.zero_grad()
        losses = model.calculate_loss(x)
        loss = sum(losses)
        loss.backward()
        optimizer.step()
        kept.append(losses)
    return sum([losses[0] for losses in kept]).item()
"""
    assert [f.line for f in _found(source, "TEN401")] == [12]


# Fix review 4, class H: a total later read through `.data` must stay a tensor (`.item()` made it a float,
# and the log line raised AttributeError).
TOTAL_READ = """
import torch

net = torch.nn.Linear(2, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for epoch in range(3):
    total = 0
    for i in range(2):
        loss = net(torch.randn(4, 2)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
    print("total %.3f" % total.{read})
"""


@pytest.mark.parametrize("read, kept", [("data", "total += loss.detach()"), ("real", "total += loss.detach()")])
def test_a_total_read_through_a_tensor_attribute_keeps_a_tensor(read, kept):
    source = TOTAL_READ.replace("{read}", read)
    fixed = fix_source(source, "t.py", RULES, unsafe=True).fixed
    assert kept in fixed
    exec(fixed, {})  # the fixed program runs to its last line


CROSSVALID = """
    import torch
    from torch import nn


    def crossvalid(model, data):
        criterion = {criterion}
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        avg_valid_loss = 0
        for fold in range(4):
            for x, y in data:
                loss = criterion(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            valid_losses = []
            for x, y in data:
                with {grad}:
                    pred = model(x)
                loss = criterion(pred, y)
                valid_losses.append(loss)
            avg_valid_loss += sum(valid_losses) / len(valid_losses)
        return avg_valid_loss / 4
"""


@pytest.mark.parametrize("criterion, grad, reported", [
    ("nn.MSELoss()", "torch.no_grad()", False),
    ("nn.MSELoss()", "torch.enable_grad()", True),
    ("nn.Linear(1, 1)", "torch.no_grad()", True),  # a module with parameters: its output keeps their graph
])
def test_a_validation_loss_of_the_same_name_is_not_the_backpropagated_one(criterion, grad, reported):
    """Fix review 5's class E (6 fixes on false positives): `loss` bound anew in the validation loop from a
    prediction made under no_grad, by a loss module without parameters, has no graph, though the training
    loop's `loss` of the same name is backpropagated."""
    source = textwrap.dedent(CROSSVALID.format(criterion=criterion, grad=grad))
    assert bool([f for f in findings(source) if f.code == "TEN401"]) is reported
    if not reported:
        namespace = {}
        exec(compile(source, "crossvalid.py", "exec"), namespace)
        model = torch.nn.Linear(3, 1)
        assert not namespace["crossvalid"](model, [(torch.randn(1, 3), torch.randn(1, 1))] * 2).requires_grad


RETURNED_TOTAL = """
import torch


def train_epoch(model, batches, opt, loss_fn):
    total = 0
    for x, y in batches:
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
    total /= len(batches)
    return total


def fit(model, batches, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []
    for _ in range(epochs):
        USE
    return history


torch.manual_seed(0)
DATA = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
HISTORY = fit(torch.nn.Linear(3, 1), DATA, 2)
"""


@pytest.mark.parametrize("use, kept", [
    ("epoch_loss = train_epoch(model, batches, opt, torch.nn.functional.mse_loss)\n"
     "        history.append(epoch_loss.item())", ".detach()"),
    ("history.append(train_epoch(model, batches, opt, torch.nn.functional.mse_loss).item())", ".detach()"),
    ("history.append(train_epoch(model, batches, opt, torch.nn.functional.mse_loss))", ".detach()"),
])
def test_a_returned_total_a_caller_uses_as_a_tensor_keeps_a_tensor(use, kept):
    """Fix review 8 (d, class A, harmful): the epoch total starts as 0 and its function never uses it as a
    tensor, but returns it, and the caller calls `.item()` on the result: `.item()` in the fix made that
    raise AttributeError. The fix keeps a tensor, so the fixed program runs whatever the caller does."""
    source = RETURNED_TOTAL.replace("USE", use)
    fixed = fix_source(source, "t.py", RULES, unsafe=True).fixed
    assert f"total += loss{kept}" in fixed
    namespace = {}
    exec(compile(fixed, "t.py", "exec"), namespace)
    assert len(namespace["HISTORY"]) == 2


DERIVED_TOTAL = """
import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]


def train_epoch():
    total = 0
    for x, y in data:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        total += loss
    avg = total / len(data)
    return READ


RESULT = train_epoch()
"""


@pytest.mark.parametrize("read, kept", [
    ("avg.cpu().detach().numpy()", ".detach()"),
    ("avg.item()", ".detach()"),
    ("float(avg)", ".detach()"),
])
def test_a_total_used_as_a_tensor_through_a_name_computed_from_it_keeps_a_tensor(read, kept):
    """Fix review 9 (class A, harmful twice): `avg = total / n`, then a tensor method on `avg`; `.item()` made
    `total` a float and the method raised AttributeError. The fix keeps a tensor: the fixed program runs."""
    fixed = fix_source(DERIVED_TOTAL.replace("READ", read), "t.py", RULES, unsafe=True).fixed
    assert f"total += loss{kept}" in fixed
    exec(compile(fixed, "t.py", "exec"), {})


OUTPUT_ATTRIBUTE = """
import torch


def fit(model, loader, opt):
    running = 0.0
    for batch in loader:
        out = model(**batch)
        BACKWARD
        opt.step()
        opt.zero_grad()
        running += ADDED
    return running
"""


@pytest.mark.parametrize("backward, added, reported", [
    ("out.loss.backward()", "out.loss", True),  # autograd ran backward from the attribute itself
    ("loss = out.loss\n        loss.backward()", "out.loss", True),  # ... through a name bound to it
    ("out.loss.backward()", "out.loss.item()", False),
    ("out.aux.backward()", "out.loss", False),  # another attribute: nothing says it holds a graph
    ("out.loss.backward()\n        out = model(**batch)", "out.loss", False),  # `out` bound anew since
])
def test_a_loss_held_as_an_attribute_of_the_output_object(backward, added, reported):
    """A model's output object holds its loss as an attribute (`outputs.loss`): when the loop backpropagates
    that attribute (or a name bound to it), the attribute holds a graph, and accumulating it keeps every
    step's graph (a held-out class: the loss an attribute of the output object)."""
    source = OUTPUT_ATTRIBUTE.replace("BACKWARD", backward).replace("ADDED", added)
    assert [f.code for f in findings(source) if f.code == "TEN401"] == ["TEN401"] * reported


COUNTER_KEY = """
import torch


def train(model, loader, opt, epochs):
    counter = 0
    for epoch in range(epochs):
        per_step = {}
        for batch in loader:
            loss = model(batch).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            per_step[counter] = STORED
            STEP
        print(sum(float(v) for v in per_step.values()))
"""


@pytest.mark.parametrize("stored, step, reported", [
    ("loss", "counter += 1", True),  # a new key at every step: every step's graph is kept
    ("loss.item()", "counter += 1", False),
    ("loss", "if loss > 1:\n                counter += 1", False),  # not stepped on every pass: a key reused
    ("loss", "counter = 0", False),  # the same key every step: the entry is replaced
    ("loss", "with torch.no_grad():\n                counter += 1", True),  # a `with` block runs every pass
    ("loss", "try:\n                counter += 1\n            finally:\n                pass", True),
    ("loss", "try:\n                pass\n            except RuntimeError:\n                counter += 1", False),
])
def test_a_dict_keyed_by_a_counter_the_loop_steps_gets_an_entry_per_step(stored, step, reported):
    """A counter the loop's body steps on every pass (`counter += 1`) keys a new entry each step, as the loop's
    own variable does (a held-out class: a dict keyed by a per-step counter)."""
    source = COUNTER_KEY.replace("STORED", stored).replace("STEP", step)
    assert [f.code for f in findings(source) if f.code == "TEN401"] == ["TEN401"] * reported


TALLY = """
class Tally:
    def __init__(self):
        self.total = 0
        self.saved = []

    def add(self, value):
        self.total += value

    def keep(self, value):
        self.saved.append(value)

    def reset(self):
        self.total = 0
"""

FIT_WITH_TALLY = """
import torch

from pkg.tally import Tally


def fit(model, loader, opt):
    tally = Tally()
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        CALL
    return tally
"""


@pytest.mark.parametrize("call, reported", [
    ("tally.add(loss)", True),  # Tally.add accumulates its argument on self, in another module
    ("tally.keep(loss)", True),  # ... or appends it
    ("tally.add(loss.item())", False),  # a number keeps no graph
    ("tally.add(loss)\n        tally.reset()", False),  # reset on every pass: one step's graph at most
    ("tally.add(3)", False),
])
def test_a_method_of_another_module_that_keeps_its_argument_is_reported_at_the_call(tmp_path, call, reported):
    """A training loop hands every step's loss to a method of a class of another module that accumulates it on
    `self`: the finding is at the argument, in the file that shows the loop, where the fix `.detach()` goes
    (that module does not see the loop; a held-out class: the finding at the handing-over call)."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tally.py").write_text(TALLY)
    train = tmp_path / "pkg" / "train.py"
    train.write_text(FIT_WITH_TALLY.replace("CALL", call))
    found = [(f.line, f.code) for f in analyse(train.read_text(), str(train), DEFAULT).findings]
    assert found == [(13, "TEN401")] * reported
    if reported:
        (finding,) = analyse(train.read_text(), str(train), DEFAULT).findings
        assert finding.fix is not None and finding.fix.edits[0].text == "loss.detach()"


UNDER_NO_GRAD = """
import torch


def train(model, loader, opt, crit):
    losses, total = [], 0.0
    for x, y in loader:
        loss = crit(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.inference_mode():
            STORE
    return losses, total
"""


@pytest.mark.parametrize("store, reported", [
    ("losses.append(loss)", True),  # the tensor made with grad on keeps its graph wherever it is stored
    ("total += loss", False),  # a sum made under inference mode holds no graph
    ("val = crit(model(x), y)\n            losses.append(val)", False),  # made under it: no graph
])
def test_under_no_grad_what_counts_is_where_the_value_was_made(store, reported):
    """Fix review 10's observation: a loss computed with grad on and appended inside `torch.inference_mode()`
    keeps its `grad_fn`; a sum computed there does not, nor a value computed there."""
    source = UNDER_NO_GRAD.replace("STORE", store)
    assert [f.code for f in findings(source) if f.code == "TEN401"] == ["TEN401"] * reported


def test_a_tensor_stored_under_inference_mode_keeps_its_graph_and_a_sum_made_there_does_not():
    w = torch.ones(2, requires_grad=True)
    loss = (w * 2).sum()
    with torch.inference_mode():
        kept, total = [loss], 0.0 + loss
    assert kept[0].grad_fn is not None and total.grad_fn is None


# A loop over models, not steps (fix review 11, share b): each pass steps the optimizer its target selects, so
# a dict keyed by the agent holds one loss per agent, bound anew on every call; the episodes around it are the steps.
PER_AGENT = """
import torch

def update(agents, nets, optimizers, x):
    losses = {}
    for agent in agents:
        loss = nets[agent](x).pow(2).mean()
        optimizers[agent].zero_grad()
        loss.backward()
        optimizers[agent].step()
        losses[agent] = loss
    return losses
"""


AGENT_EPISODES = """
import torch

def train(agents, nets, optimizers, x):
    losses = []
    for episode in range(10):
        for agent in agents:
            loss = nets[agent](x).pow(2).mean()
            optimizers[agent].zero_grad()
            loss.backward()
            optimizers[agent].step()
            losses.append(loss)
    return losses
"""


def test_an_entry_per_model_of_a_loop_over_models_is_no_accumulation():
    assert _found(PER_AGENT, "TEN401") == []
    for source in (AGENT_EPISODES, AGENT_EPISODES.replace("optimizers[agent].step()", "agent.optimizer.step()")):
        (finding,) = _found(source, "TEN401")  # kept across the episodes, which are the steps
        assert finding.line == 12


def test_a_loop_that_steps_one_optimizer_is_a_loop_over_steps():
    source = PER_AGENT.replace("optimizers[agent]", "optimizer")
    (finding,) = _found(source, "TEN401")
    assert finding.line == 11
