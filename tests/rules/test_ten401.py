"""TEN401 (loss-accumulated-with-graph): a value that keeps a training step's graph, accumulated across
the steps of the loop: fixes, ownership (a periodic reset, a torch training loop), backward through an
element, entries of loss dicts."""
from __future__ import annotations

import textwrap

import pytest

from tests.support.edit_tools import apply_edits
from tests.support.rule_tools import DEFAULT, LOOP, findings
from flake8_tensorcopy.engine.core import analyse


@pytest.mark.parametrize("line, replaced", [
    ("total += loss", "total += loss.item()"),
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


def test_a_periodic_reset_silences_the_rule():
    source = LOOP.format(line="total += loss\n        if total > 10:\n            total = 0.0")
    assert not [f for f in findings(source) if f.code == "TEN401"]


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
    ("defaultdict(float)", "for k, v in terms.items():\n            totals[k] += v", "totals[k] += v.item()"),
    ("{}", "for k in terms:\n            totals[k] = totals.get(k, 0.0) + terms[k]",
     "totals[k] = totals.get(k, 0.0) + terms[k].detach()"),
    ("{'ce': 0.0}", "totals['ce'] = totals['ce'] + terms['ce']", "totals['ce'] = totals['ce'] + terms['ce'].item()"),
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
