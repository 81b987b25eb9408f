"""Values that cross a method, `__setitem__` or an attribute of an object of a class of the package: the
summaries resolve `obj.m(...)` to the class's def, read a method's parameters from every call on an
instance (`stats["loss"] = loss` too), say what `obj.attr` holds, and find the training loops that call a
method once per step on one object (analysis/summaries.py, item_sites.py, per_step.py)."""
from __future__ import annotations

import ast
import textwrap

from flake8_tensorcopy.analysis import evidence, per_step, proven, summaries
from flake8_tensorcopy.engine import core as engine

from tests.support.analysis_tools import context_at

OBJECTS = """
    import torch
    import torch.nn.functional as F


    class Meter:
        def __init__(self):
            self.total = 0.0
            self.ids = torch.arange(10)

        def update(self, value):
            self.total += value{update}

        def reset(self):
            self.total = 0.0


    class Stats:
        def __setitem__(self, key, value):
            print(value){setitem}


    def train(model, loader, opt):
        meter, stats = Meter(), Stats()
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            meter.update(loss){call}
            stats["loss"] = loss
            d = {{}}
            d.update(x=1)
        return meter.ids{ids}
"""


def at_mark(where: str, node_type=ast.stmt):
    marks = {k: "" for k in ("update", "setitem", "call", "ids")}
    marks[where] = "  # <-"
    return context_at(OBJECTS.format(**marks), node_type)


def test_a_method_called_on_an_instance_of_a_package_class_is_its_def():
    node, ctx = at_mark("call")
    fn = summaries.callee(node.value, ctx, ctx.pos)
    assert isinstance(fn, ast.FunctionDef) and fn.name == "update"


def test_a_method_of_the_same_name_on_another_object_is_not_it():
    source = OBJECTS.format(update="", setitem="", call="", ids="").replace("d.update(x=1)", "d.update(x=1)  # <-")
    node, ctx = context_at(source)
    assert summaries.callee(node.value, ctx, ctx.pos) is None


def test_a_parameter_of_a_method_is_what_the_calls_on_instances_pass():
    node, ctx = at_mark("update")  # self.total += value; `d.update(x=1)` is another class's update
    assert evidence.attached(node.value, ctx)


def test_the_value_of_setitem_is_what_an_entry_store_assigns():
    node, ctx = at_mark("setitem")  # print(value): stats["loss"] = loss calls Stats.__setitem__
    assert evidence.attached(node.value.args[0], ctx)


def test_an_attribute_of_an_instance_is_what_its_class_sets():
    node, ctx = at_mark("ids")
    assert evidence.kind(node.value, ctx) == evidence.TENSOR
    assert proven.tensor(node.value, ctx)


def test_an_attribute_no_class_of_the_file_sets_stays_unknown():
    source = """
        import torch

        def f(obj):
            return torch.tensor(obj.ids)  # <-
    """
    node, ctx = context_at(source)
    assert evidence.kind(node.value.args[0], ctx) is None


def test_a_method_called_once_per_step_on_an_object_bound_before_the_loop():
    node, ctx = at_mark("update")
    steps = per_step.per_step_calls("total", ctx)
    assert [s.call.lineno for s in steps] == [node.lineno + 18]
    assert isinstance(steps[0].loop, ast.For)


def test_a_loop_that_calls_a_resetting_method_is_no_step_of_it():
    source = OBJECTS.format(update="  # <-", setitem="", call="\n            meter.reset()", ids="")
    node, ctx = context_at(source)
    assert per_step.per_step_calls("total", ctx) == []


def test_an_object_rebuilt_in_the_loop_outlives_no_step():
    source = OBJECTS.format(update="  # <-", setitem="", call="", ids="").replace(
        "            meter.update(loss)", "            meter = Meter()\n            meter.update(loss)")
    node, ctx = context_at(source)
    assert per_step.per_step_calls("total", ctx) == []


def codes(source: str) -> list[tuple[int, str]]:
    rules = [r for r in engine.RULES if r.default_on]
    result = engine.analyse(textwrap.dedent(source), "t.py", rules)
    assert result.errors == []
    return sorted((f.line, f.code) for f in result.findings)


def test_every_rule_reads_the_facts():
    found = codes(OBJECTS.format(update="", setitem="\n            self.rows.setdefault(key, []).append(value)",
                                 call="", ids=""))
    # the kept loss in update and in __setitem__ (TEN401)
    assert (12, "TEN401") in found and (21, "TEN401") in found


def test_a_graph_passed_at_one_per_step_call_is_kept_whatever_the_other_calls_pass():
    """`meter.update(loss)` and `meter.update(loss.item())` on one meter every step: the meter keeps the
    graph of the first (the callers disagree on what `value` is; each per-step call is judged)."""
    source = OBJECTS.format(update="", setitem="", call="\n            meter.update(loss.item())", ids="")
    assert (12, "TEN401") in codes(source)
    assert (12, "TEN401") not in codes(source.replace("meter.update(loss)\n", "meter.update(loss.item())\n"))


STOPPER = """
    import torch.nn.functional as F


    class Stopper:
        def __init__(self):
            self.best = None

        def step(self, score, model):
            if score > 0:
                self.best = model.state_dict()


    def train(model, loader, opt):
        stopper = Stopper()
        for epoch in range(3):
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            stopper.step(epoch, model)
        {after}
"""


def test_a_snapshot_a_method_keeps_goes_stale_when_the_caller_trains_on_and_reads_it_after():
    assert (11, "TEN301") in codes(STOPPER.format(after="model.load_state_dict(stopper.best)"))


def test_a_snapshot_the_caller_never_reads_after_its_loop_is_quiet():
    assert (11, "TEN301") not in codes(STOPPER.format(after="return model"))


CELL = """
    import torch
    from torch import nn


    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            h = torch.tanh(self.lin(x))
            h.data.clamp_(-0.5, 0.5)
            return h


    def train(cell, x):
        {train}
"""


def test_a_forward_returns_into_the_backward_of_a_file_that_trains():
    assert codes(CELL.format(train="cell(x).sum().backward()")) == [(13, "TEN102")]


def test_a_forward_in_a_file_that_never_backpropagates_is_quiet():
    assert codes(CELL.format(train="return cell(x)")) == []


HELPER = """
    import torch


    def squash(w, x):
        h = torch.tanh(w * x)
        h.data.clamp_(-0.5, 0.5)
        return h


    def train(x):
        w = torch.randn(4, requires_grad=True)
        out = squash(w, x)
        {after}
"""


def test_a_helper_returns_into_its_callers_backward():
    assert codes(HELPER.format(after="out.sum().backward()")) == [(7, "TEN102")]


def test_a_helper_whose_callers_never_backpropagate_after_is_quiet():
    assert codes(HELPER.format(after="return out")) == []
