"""Methods run once per step of a training loop that lives further up: in a caller of the def that makes the
call (`self.train_step(x, y)` running `self.tally.add(loss)`, analysis/per_step.py), and on an object a
parameter names, its class read from what the callers pass (analysis/summaries.parameter_class)."""
from __future__ import annotations

import pytest

from tests.support.rule_tools import codes

TALLY = """
import torch


class Tally:
    def __init__(self):
        self.total = 0.0

    def add(self, value):
        self.total += value
"""
TWO_UP = TALLY + """

class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt, self.tally = model, opt, Tally()

    def train_step(self, x, y):
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()
        self.opt.step()
        self.tally.add({value})

    def train(self, loader):
        for x, y in loader:
            {call}
"""


@pytest.mark.parametrize("value, call, expected", [
    ("loss", "self.train_step(x, y)", [(10, "TEN401")]),
    ("loss.item()", "self.train_step(x, y)", []),  # a number
    ("loss", "other.train_step(x, y)", []),  # another object's step: its tally is not this one's
    ("loss", "pass", []),  # nothing runs the step
])
def test_a_step_method_run_by_the_classs_own_loop(value, call, expected):
    assert codes(TWO_UP.format(value=value, call=call)) == expected


HELPER = TALLY + """

def step(model, x, y, opt, tally):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    tally.add(loss)


def fit(model, loader, opt):
    tally = Tally()
    for x, y in loader:
        {call}
"""


@pytest.mark.parametrize("call, expected", [
    ("step(model, x, y, opt, tally)", [(10, "TEN401")]),
    ("step(model, x, y, opt, Tally())", []),  # a new tally every pass keeps one step's graph
    ("with torch.no_grad():\n            step(model, x, y, opt, tally)", []),  # no graph is made
])
def test_a_helper_run_once_per_pass_on_an_object_made_before_the_loop(call, expected):
    assert codes(HELPER.format(call=call)) == expected


PARAMETER = TALLY + """

def run_epoch(model, loader, opt, tally):
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        tally.add(loss)


def main(model, loader, opt):
    run_epoch(model, loader, opt, {passed})
"""


@pytest.mark.parametrize("passed, expected", [
    ("Tally()", [(10, "TEN401")]),
    ("tally_of(model)", []),  # not known to be a Tally
])
def test_a_parameters_class_from_what_its_callers_pass(passed, expected):
    assert codes(PARAMETER.format(passed=passed)) == expected


def test_callers_passing_objects_of_two_classes_leave_the_class_unknown():
    other = PARAMETER.format(passed="Tally()") + "\n\nclass Log:\n    def add(self, value):\n        pass\n"
    assert codes(other + "\n\nrun_epoch(None, [], None, Log())\n") == []


SUMS = """
import torch


class Sums:
    def __init__(self):
        self.sums, self.names = [0, 0], []

    def add(self, values):
        for i, v in enumerate(values):
            self.sums[i] += v

    def add_named(self, terms):
        for key in terms:
            self.names.append(key)

    def add_values(self, terms):
        for key, value in terms.items():
            self.sums[0] += value


def fit(model, loader, opt):
    sums = Sums()
    for x, y in loader:
        a, b = model(x).abs().mean(), ((model(x) - y) ** 2).mean()
        (a + b).backward()
        opt.step()
        {call}
"""


@pytest.mark.parametrize("call, expected", [
    ("sums.add([a, b])", [(28, "TEN401")]),  # each entry kept with its graph
    ("sums.add([a.item(), b.item()])", []),  # numbers
    ("sums.add_values({'a': a, 'b': b})", [(28, "TEN401")]),  # a dict's values kept
    ("sums.add_named({'a': a, 'b': b})", []),  # iterating a dict gives its keys
    ("sums.add([a, 0])", [(28, "TEN401")]),
])
def test_a_method_keeping_the_entries_of_a_container_argument_is_reported_at_the_call(call, expected):
    """What the entries are is known only at the call (analysis/per_step.kept_by_callee, `entries`)."""
    assert codes(SUMS.format(call=call)) == expected


def test_the_finding_at_the_call_names_the_entries_to_detach():
    from tests.support.rule_tools import findings
    [found] = findings(SUMS.format(call="sums.add([a, b])"))
    assert "'[a, b]' is accumulated into 'sums.sums'" in found.message
    assert "a.detach(), b.detach()" in found.message


CALLED = """
import torch
from torch import nn


class SplitLoss(nn.Module):
    def forward(self, pred, target):
        a = (pred - target).abs().mean()
        b = ((pred - target) ** 2).mean()
        return a + b, a, b


def run_epoch(model, criterion, loader, opt):
    b_sum = 0
    for x, y in loader:
        loss, a, b = criterion(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        b_sum += b
    return b_sum


def main(model, loader, opt):
    return run_epoch(model, {passed}, loader, opt)
"""


@pytest.mark.parametrize("passed, expected", [("SplitLoss()", [(20, "TEN401")]), ("make_loss()", [])])
def test_a_parameter_called_like_a_function_runs_the_forward_of_the_class_callers_pass(passed, expected):
    """`criterion(out, y)` with every caller passing a `SplitLoss()` runs its `forward` (summaries.runs)."""
    assert codes(CALLED.format(passed=passed)) == expected


SHARED = """
import torch


class Running:
    def __init__(self):
        self.total = torch.zeros(())

    def push(self, v):
        {keep}


def train_epoch(model, loader, opt, crit):
    loss_avg, hits = Running(), Running()
    for x, y in loader:
        out = model(x)
        loss = crit(out, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_avg.push({value})
        hits.push((out.argmax(1) == y).sum())
    return loss_avg.total


def validate(model, loader, crit):
    val_avg = Running()
    with torch.no_grad():
        for x, y in loader:
            val_avg.push(crit(model(x), y))
    return val_avg.total
"""


@pytest.mark.parametrize("keep, value, expected", [
    ("self.total += v.float()", "loss", [(10, "TEN401")]),
    ("self.total += 2 * v", "loss", [(10, "TEN401")]),
    ("self.total += v.float()", "loss.item()", []),  # no per-step call passes a graph
    ("self.total += v.float().item()", "loss", []),
    ("v = v.detach()\n        self.total += v.float()", "loss", []),  # the parameter is rebound first
])
def test_a_shared_keeper_is_judged_at_each_per_step_call(keep, value, expected):
    """`loss_avg.push(loss)` beside `hits.push(correct)` and a `no_grad` validation: the callers disagree on
    what `v` is, but one per-step call passes a graph and the keeper keeps it (per_step.passed_at)."""
    assert codes(SHARED.format(keep=keep, value=value)) == expected


def test_a_keeper_called_further_down_is_not_judged_by_the_loops_call_arguments():
    """The loop calls `self.train_step(out, y)`, which runs `self.tally.add(y.sum().item())`: what the loop's
    call passes (`out`, attached) is no argument of `add` (per_step.passed_at)."""
    call = "out = self.model(x)\n            self.train_step(out, y)"
    assert codes(TWO_UP.format(value="y.sum().item()", call=call)) == []
    assert codes(TWO_UP.format(value="loss", call=call)) == [(10, "TEN401")]


@pytest.mark.parametrize("kept", ["v", "v.cpu()", "2 * v", "v.float()"])
def test_a_keeper_of_another_module_that_stores_a_graph_keeping_conversion(tmp_path, kept):
    """Study 4 (class L): `self.vals.append(v.cpu())` in common/meter.py keeps the loss the loop passes,
    as `self.vals.append(v)` does; `.item()` keeps a number."""
    from tests.support.project_tools import write
    from flake8_tensorcopy.engine import core as engine
    write(tmp_path, {"common/__init__.py": "", "common/meter.py": f"""
        class Meter:
            def __init__(self):
                self.vals = []

            def add(self, v):
                self.vals.append({kept})
    """, "jobs/__init__.py": "", "jobs/run.py": """
        import torch
        from common.meter import Meter

        def fit(model, data, opt):
            m = Meter()
            for x in data:
                loss = model(x).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                m.add(loss)
            return m
    """})
    path = tmp_path / "jobs" / "run.py"
    result = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on])
    assert [(f.line, f.code) for f in result.findings] == [(12, "TEN401")]
    (tmp_path / "common" / "meter.py").write_text(
        "class Meter:\n    def __init__(self):\n        self.vals = []\n\n"
        "    def add(self, v):\n        self.vals.append(v.item())\n")
    result = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on])
    assert result.findings == []
