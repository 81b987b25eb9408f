"""Path semantics and gatekeepers: a hazard on one path of several is a hazard (analysis/evidence.py's
`tensor_strength` with `some_path`), reaching bindings rather than source order decide what a read sees,
a reset counts only where it runs on every pass of the loop (analysis/flow.py's `passes_again`), and a
function's name does not say on its own whether it trains (analysis/purpose.py, analysis/training.py)."""
from __future__ import annotations

import ast
import textwrap

import pytest

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes, findings
from flake8_tensorcopy.analysis import purpose, training
from flake8_tensorcopy.analysis.evidence import Strength, tensor_strength
from flake8_tensorcopy.analysis.facts import FileFacts


# ---- evidence strength on some path ------------------------------------------------------------------

@pytest.mark.parametrize("branch, every, some", [
    ("new = torch.as_tensor(value)", Strength.UNKNOWN, Strength.PROVEN),   # unknown on the other path
    ("new = old.clone()", Strength.UNKNOWN, Strength.LIKELY),
    ("new = torch.nn.Linear(2, 2)", Strength.UNKNOWN, Strength.UNKNOWN),  # a module on one path: no tensor
    ("new = torch.zeros(2)", Strength.UNKNOWN, Strength.PROVEN),
])
def test_strength_on_every_and_on_some_path(branch, every, some):
    _, ctx = context_at(f"""
        import torch
        def place(old, value, device):
            new = old.to(device)
            if value is not None:
                {branch}
            new.to(device)  # <-
    """)
    read = ast.Name("new", ast.Load())
    assert tensor_strength(read, ctx) == every
    assert tensor_strength(read, ctx, some_path=True) == some


def test_a_rebinding_on_every_path_decides():
    _, ctx = context_at("""
        import torch
        def place(old, value):
            new = old
            if value:
                new = torch.zeros(1)
            else:
                new = torch.ones(1)
            new.to("cpu")  # <-
    """)
    assert tensor_strength(ast.Name("new", ast.Load()), ctx) == Strength.PROVEN


def test_conditional_expression_arms_are_paths():
    _, ctx = context_at("""
        import torch
        def f(a, flag):
            x = torch.zeros(1) if flag else a
            x.cuda()  # <-
    """)
    read = ast.Name("x", ast.Load())
    assert (tensor_strength(read, ctx), tensor_strength(read, ctx, some_path=True)) == (
        Strength.UNKNOWN, Strength.PROVEN)


# ---- the rules: one path of several --------------------------------------------------------------------

def test_discarded_move_of_a_tensor_on_one_path_is_reported():
    assert (7, "TEN104") in codes("""
        import torch
        def place(module, name, device, value=None):
            new = getattr(module, name).to(device)
            if value is not None:
                new = torch.as_tensor(value)
            new.to(device)
            return new
    """)


def test_discarded_move_of_a_module_or_tensor_is_not_reported():
    assert codes("""
        import torch
        def place(device, flag):
            new = torch.nn.Linear(2, 2)
            if flag:
                new = torch.zeros(2)
            new.to(device)
            return new
    """) == []


def test_kept_data_write_of_a_forward_input_is_reported():
    assert (6, "TEN102") in codes("""
        import torch
        from torch import nn
        class Noise(nn.Module):
            def forward(self, x):
                noise = x.data.normal_(0, 0.1)
                return x + noise
    """)


SNAPSHOT = """
import torch
def train_model(model, opt, x, epochs):
    best_wts = model.state_dict()
    best = 0.0
    for epoch in range(epochs):
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if -loss.item() > best:
            best = -loss.item()
            best_wts = {later}
    model.load_state_dict(best_wts)
"""


def test_a_snapshot_rebound_only_in_a_branch_still_reaches_the_read():
    assert (4, "TEN301") in codes(SNAPSHOT.format(later="model.state_dict()"))


def test_a_snapshot_rebound_before_the_read_on_every_path_does_not():
    found = codes(SNAPSHOT.format(later="None").replace(
        "    model.load_state_dict(best_wts)",
        "    best_wts = {k: v.clone() for k, v in model.state_dict().items()}\n    model.load_state_dict(best_wts)"))
    assert (4, "TEN301") not in found


# ---- resets that some pass skips -------------------------------------------------------------------------

def passes(source: str, start_line: int, loop_line: int, stop_lines: list) -> bool:
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    scope = FileFacts(tree, source, (ast.Call,), None).function_frame(tree.body[0]).scope
    loop = next(n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While)) and n.lineno == loop_line)
    start = next(n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == start_line)
    stops = [(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno in stop_lines]
    return scope.passes_again((start.lineno, start.col_offset), loop, stops)


PERIODIC = """
def f(loader, n):
    for step, x in enumerate(loader):
        acc.append(x)
        if step % n == 0:
            acc.clear()
"""


def test_a_periodic_reset_leaves_other_passes_unreset():
    assert passes(PERIODIC, 4, 3, [6]) is True


def test_a_reset_at_the_top_of_every_pass_stops_it():
    assert passes("""
        def f(loader):
            for x in loader:
                acc.clear()
                acc.append(x)
    """, 5, 3, [4]) is False


def test_a_reset_after_an_inner_loop_stops_the_outer_pass():
    source = """
        def f(epochs, loader):
            for e in epochs:
                for x in loader:
                    acc.append(x)
                acc.clear()
    """
    assert passes(source, 5, 3, [6]) is False
    assert passes(source, 5, 4, [6]) is True  # the inner loop's passes are not reset


def test_a_while_loop_pass():
    assert passes("""
        def f(q):
            while q:
                acc.append(q.pop())
                if len(q) > 3:
                    del acc[:]
    """, 4, 3, [6]) is True


TRAIN = """
import torch
import torch.nn.functional as F
def train(model, loader, opt, n):
    losses = []
    for step, (x, y) in enumerate(loader):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        {reset}
"""


@pytest.mark.parametrize("reset, reported", [
    ("if step % n == 0: losses.clear()", True),
    ("if step % n == 0: del losses[:]", True),
    ("if step % n == 0: losses = []", True),
    ("losses.clear()", False),
    ("losses = []", False),
])
def test_accumulation_with_a_reset(reset, reported):
    assert ((11, "TEN401") in codes(TRAIN.format(reset=reset))) is reported


# ---- names as gatekeepers ---------------------------------------------------------------------------------

def def_of(source: str, name: str):
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    facts = FileFacts(tree, source, (ast.Call,), None)
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), facts


def test_a_function_named_for_updates_that_backpropagates_trains():
    fn, facts = def_of("""
        def train_step(model, opt, x):
            loss = model(x).sum()
            loss.backward()
            opt.step()
    """, "train_step")
    assert purpose.updates_weights(fn, facts) is False


def test_a_function_named_for_updates_without_backward_updates_weights():
    fn, facts = def_of("""
        def update_ema(ema, model):
            for e, p in zip(ema.parameters(), model.parameters()):
                e.data.mul_(0.99).add_(p.data, alpha=0.01)
    """, "update_ema")
    assert purpose.updates_weights(fn, facts) is True


def test_clone_kept_in_a_step_named_train_step_is_reported():
    assert (6, "TEN203") in codes("""
        import torch
        import torch.nn.functional as F
        def train_step(model, opt, x_u):
            probs = torch.softmax(model(x_u), dim=1)
            target = probs.clone()
            loss = F.mse_loss(torch.softmax(model(x_u + 0.1), dim=1), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """)


@pytest.mark.parametrize("body, trains", [
    ("loss = model(x).sum()\n    loss.backward()", True),
    ("opt.step()", True),
    ("helper(model)\ndef helper(m):\n    m(1).sum().backward()", True),
    ("return model(x).argmax()", False),               # named for training, trains nothing
    ("other.train_epoch(model)", True),                # code the package does not hold: the name counts
])
def test_code_trains(body, trains):
    fn, facts = def_of("def fit(model, x, opt):\n    " + body + "\n", "fit")
    assert training.code_trains(fn, facts) is trains


def test_a_def_named_fit_that_only_predicts_does_not_train_the_snapshot():
    assert codes("""
        import torch
        def fit(model, x):
            return model(x).argmax()
        def run(model, x):
            best = model.state_dict()
            fit(model, x)
            model.load_state_dict(best)
    """) == []


# ---- which paths can run: a placeholder the first comparison replaces -------------------------------------

PLACEHOLDER = """
import numpy as np
import torch
def train_model(model, opt, x, epochs):
    best_wts = model.state_dict()
    best = {start}
    for epoch in range(epochs):
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        score = {score}
        if {test}:
            best = score
            best_wts = model.state_dict()
    model.load_state_dict(best_wts)
"""


@pytest.mark.parametrize("start, score, test, reported", [
    ("float('inf')", "loss.item()", "score < best", False),        # the first loss beats infinity
    ("np.inf", "loss.item()", "best > score", False),
    ("None", "loss.item()", "best is None or score < best", False),
    ("0.0", "1 / loss.item()", "score > best", False),              # the first positive score replaces it
    ("0.0", "float(-loss)", "score > best", True),                  # a negated loss may never beat zero
    ("0.0", "loss.item()", "score < best", True),                   # a zero to go below: may never happen
    ("1.0", "loss.item()", "score < best", True),                   # any finite threshold
])
def test_placeholder_reaches_the_reload_only_on_a_path_that_can_run(start, score, test, reported):
    found = codes(PLACEHOLDER.format(start=start, score=score, test=test))
    assert ((5, "TEN301") in found) is reported
    assert (15, "TEN301") in found  # the snapshot taken in the loop is the same alias either way


# ---- a reset of an object's state that some pass skips; a tensor on one path for TEN204 ---------------------

METER = """
import torch
class Meter:
    def __init__(self):
        self.total = 0
    def update(self, v):
        self.total += v
    def reset(self):
        self.total = 0
def train(model, loader, opt):
    meter = Meter()
    for i, (x, y) in enumerate(loader):
        loss = (model(x) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        meter.update(loss)
        {reset}
"""


@pytest.mark.parametrize("reset, reported", [("if i % 100 == 0: meter.reset()", True), ("meter.reset()", False)])
def test_a_meter_reset_on_some_passes_only(reset, reported):
    assert any(code == "TEN401" for _, code in codes(METER.format(reset=reset))) is reported


def test_torch_tensor_of_a_value_that_is_a_tensor_on_one_path_is_reported_without_a_fix():
    found = [f for f in findings("""
        import torch
        def scale(x=None, n=3):
            if x is None:
                x = torch.zeros(n)
            return torch.tensor(x)
    """) if f.code == "TEN204"]
    assert [(f.line, f.fix) for f in found] == [(6, None)]
    assert "on some path" in found[0].message


def test_torch_tensor_of_a_module_or_tensor_stays_quiet():
    assert codes("""
        import torch
        def scale(flag):
            x = torch.nn.Linear(2, 2)
            if flag:
                x = torch.zeros(2)
            return torch.tensor(x)
    """) == []
