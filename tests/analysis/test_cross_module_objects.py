"""Objects held by name or on `self`: a method called on an instance of a class imported from the package is
that class's def (`wrapper.predict(x)` returns the model output), and `self.meter.update(loss)` in a
trainer's loop is a call of `Meter.update` on the object its `__init__` made (analysis/summaries.py
`callee`, `sites`; analysis/project.py)."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.analysis import package_index
from flake8_tensorcopy.engine import core as engine

from tests.support.project_tools import write

METER = """
    class Meter:
        def __init__(self):
            self.values = []

        def update(self, value):
            self.values.append(value)

        def mean(self):
            return sum(self.values) / len(self.values)
"""
TRAINER = """
    import torch
    from .meters import Meter


    class Trainer:
        def __init__(self, model, opt):
            self.model = model
            self.opt = opt
            self.meter = Meter()

        def fit(self, loader):
            for x, y in loader:
                self.opt.zero_grad()
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                self.opt.step()
                self.meter.update({value})
            return self.meter.mean()
"""
WRAPPER = """
    import torch.nn as nn


    class Wrapper:
        def __init__(self):
            self.net = nn.Linear(4, 1)

        def predict(self, x):
            return self.net(x){detached}
"""
PREDICT = """
    import torch
    from .wrap import Wrapper


    def train(loader, opt):
        wrapper = Wrapper()
        outputs = []
        for x, y in loader:
            out = wrapper.predict(x)
            loss = ((out - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            outputs.append(out)
        return outputs
"""


def findings(path) -> list[tuple[int, str, str]]:
    result = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on])
    return [(f.line, f.code, f.message) for f in result.findings]


@pytest.mark.parametrize("value, reported", [("loss", True), ("loss.item()", False), ("loss.detach()", False)])
def test_a_trainer_holding_the_meter_on_self_calls_it_once_per_step(tmp_path, value, reported):
    """`self.meter.update(loss)` in a trainer's loop, `self.meter = Meter()` set in its `__init__`."""
    trainer = TRAINER.format(value=value)
    files = {"pkg/__init__.py": "", "pkg/meters.py": textwrap.dedent(METER)
             + textwrap.dedent(trainer.replace("from .meters import Meter", ""))}
    write(tmp_path, files)
    package_index.reset()
    found = findings(tmp_path / "pkg" / "meters.py")
    assert [code for _, code, _ in found] == (["TEN401"] if reported else [])
    assert not reported or "(line 23)" in found[0][2]


@pytest.mark.parametrize("detached, expected", [("", [(15, "TEN401")]), (".detach()", [])])
def test_what_a_method_of_an_imported_class_returns_is_known(tmp_path, detached, expected):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/wrap.py": WRAPPER.format(detached=detached),
                     "pkg/train.py": PREDICT})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "train.py")] == expected


LEARNER = """
    import torch


    class Learner:
        def __init__(self, net, opt):
            self.net, self.opt = net, opt

        def fit_batch(self, x, y):
            loss = ((self.net(x) - y) ** 2).mean()
            {train}
            return loss{returned}
"""
MAIN = """
    import torch
    from .learner import Learner


    def main(net, opt, sched, loader):
        learner, total = Learner(net, opt), 0.0
        for x, y in loader:
            step_loss = learner.fit_batch(x, y)
            sched.step()
            total += step_loss
        return total
"""


@pytest.mark.parametrize("train, returned, expected", [
    ("loss.backward(); self.opt.step()", "", [(11, "TEN401")]),
    ("loss.backward(); self.opt.step()", ".item()", []),  # the step returns a number
    ("pass", "", []),  # the method trains nothing: the loop is no training loop
])
def test_a_step_method_of_an_imported_class_makes_the_callers_loop_train(tmp_path, train, returned, expected):
    """`learner.fit_batch(x, y)` runs a backward and a step in another module, once per pass of the loop:
    the loss it returns, accumulated with its graph, keeps every step's graph (analysis/training.py)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/learner.py": LEARNER.format(train=train, returned=returned),
                     "pkg/main.py": MAIN})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "main.py")] == expected


BASE = """
    class BaseTrainer:
        def train_step(self, x, y):
            raise NotImplementedError

        def fit(self, loader):
            for x, y in loader:
                {call}
"""
SUBCLASS = """
    import torch
    from .base import BaseTrainer
    from .meters import Meter


    class Trainer(BaseTrainer):
        def __init__(self, model, opt):
            self.model, self.opt, self.meter = model, opt, Meter()

        def train_step(self, x, y):
            loss = ((self.model(x) - y) ** 2).mean()
            loss.backward()
            self.opt.step()
            self.meter.update({value})
"""


@pytest.mark.parametrize("call, value, expected", [
    ("self.train_step(x, y)", "loss", [(15, "TEN401")]),
    ("self.train_step(x, y)", "loss.item()", []),
    ("with torch.no_grad():\n                    self.train_step(x, y)", "loss", []),  # grad off at the call
    ("pass", "loss", []),  # no loop runs the step
])
def test_a_base_classs_loop_in_another_module_runs_the_overridden_step(tmp_path, call, value, expected):
    """`fit` of the base class, in base.py, calls `self.train_step` once per batch: the subclass's step keeps
    `loss` in another module's meter on every pass (analysis/per_step.py `_base_calls`, analysis/hierarchy.py)."""
    base = ("import torch\n" if "torch" in call else "") + textwrap.dedent(BASE.format(call=call))
    write(tmp_path, {"pkg/__init__.py": "", "pkg/meters.py": METER, "pkg/base.py": base,
                     "pkg/trainer.py": SUBCLASS.format(value=value)})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "trainer.py")] == expected


RUN_LOG = """
    class RunLog:
        def __init__(self):
            self.rows = {}

        def add(self, key, value):
            self.rows.setdefault(key, []).append(value)
"""
ESTIMATOR = """
    import torch
    from .log import RunLog


    class Estimator:
        def __init__(self, model, opt):
            self.model, self.opt = model, opt

        def forward_and_log(self, x, y, log):
            loss = ((self.model(x) - y) ** 2).mean()
            log.add("mse", {value})
            return loss

        def fit(self, loader):
            log = RunLog()
            for x, y in loader:
                loss = self.forward_and_log(x, y, log)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            return log
"""


@pytest.mark.parametrize("value, expected", [("loss", [(12, "TEN401")]), ("loss.item()", [])])
def test_a_method_parameter_holding_an_object_of_another_modules_class(tmp_path, value, expected):
    """`log` of `forward_and_log` is the `RunLog()` its one caller passes: `log.add` keeps `loss` from one step
    to the next (summaries.parameter_class for a method, per_step.step_of a loop one def up)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/log.py": RUN_LOG, "pkg/est.py": ESTIMATOR.format(value=value)})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "est.py")] == expected


ESTIMATOR_BASE = """
    import torch


    class Estimator:
        def __init__(self, net, opt):
            self.net, self.opt, self.history = net, opt, []

        def forward_and_record(self, x, y):
            loss = ((self.net(x) - y) ** 2).mean()
            self.history.append({value})
            return loss

        def update(self):
            self.opt.step()
"""
FIT_LOOP = """
    import torch

    from .base import Estimator


    class FitLoop(Estimator):
        {override}
        def fit(self, loader):
            for x, y in loader:
                {call}
                {train}
"""


@pytest.mark.parametrize("value, call, train, override, expected", [
    ("loss", "loss = self.forward_and_record(x, y)", "loss.backward()", "", [(11, "TEN401")]),
    ("loss.detach()", "loss = self.forward_and_record(x, y)", "loss.backward()", "", []),
    ("loss", "loss = self.forward_and_record(x, y)", "pass", "", []),  # an evaluation loop: nothing trains
    # the loop backpropagates through what the base class keeps: those graphs are needed
    ("loss", "self.forward_and_record(x, y)", "torch.stack(self.history[-2:]).mean().backward()", "", []),
    ("loss", "with torch.no_grad():\n                    loss = self.forward_and_record(x, y)", "pass", "", []),
    # the subclass overrides the method: its loop runs its own, not the base class's
    ("loss", "loss = self.forward_and_record(x, y)", "loss.backward()",
     "def forward_and_record(self, x, y):\n            return (self.net(x) - y).abs().mean()\n", []),
])
def test_a_subclasss_loop_in_another_module_runs_an_inherited_method(
        tmp_path, value, call, train, override, expected):
    """`FitLoop(Estimator)` in trainer.py calls `self.forward_and_record(x, y)` once per step: the base class's
    method, in base.py, keeps the loss on `self` (analysis/hierarchy.py `resolved`, summaries.sites over the
    package); the finding is in base.py, where the store is."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": ESTIMATOR_BASE.format(value=value),
                     "pkg/trainer.py": FIT_LOOP.format(call=call, train=train, override=override)})
    package_index.reset()
    found = findings(tmp_path / "pkg" / "base.py")
    assert [(line, code) for line, code, _ in found] == expected
    assert all("(trainer.py:" in message for _, _, message in found)  # the loop is named with its module


TRACKER = METER + """

    class Tracker:
        def __init__(self):
            self.meter = Meter()

        def reset(self):
            self.meter = Meter()

        def tick(self):
            self.steps = getattr(self, "steps", 0) + 1
"""
THROUGH_AN_ATTRIBUTE = """
    import torch
    from .track import Tracker


    def fit(model, loader, opt):
        tracker = Tracker()
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            {body}
        return tracker
"""


@pytest.mark.parametrize("body, expected", [
    ("tracker.meter.update(loss)", [(13, "TEN401")]),
    ("tracker.meter.update(loss.item())", []),
    ("tracker.meter = Meter()\n            tracker.meter.update(loss)", []),  # a new meter every pass
    ("tracker.reset()\n            tracker.meter.update(loss)", []),  # a method of the owner replaces it
    ("tracker.tick()\n            tracker.meter.update(loss)", [(14, "TEN401")]),  # one that does not
])
def test_a_keeper_reached_through_another_objects_attribute(tmp_path, body, expected):
    """`tracker.meter.update(loss)`: `Tracker.__init__` (another module) sets `self.meter = Meter()`, whose
    `update` keeps its argument (analysis/summaries.py `receiver_class`, per_step.outlives)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/track.py": TRACKER,
                     "pkg/train.py": THROUGH_AN_ATTRIBUTE.format(body=body)})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "train.py")] == expected


BOARD = """
    class Board:
        def __init__(self):
            self.rows = {}

        def __setitem__(self, key, value):
            self.rows.setdefault(key, []).append(value)
"""
STORES = """
    import torch
    from .board import Board


    def fit(model, loader, opt):
        board = {made}
        for step, (x, y) in enumerate(loader):
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            board["mse"] = {value}
        return board
"""


@pytest.mark.parametrize("made, value, expected", [
    ("Board()", "loss", [(13, "TEN401")]),
    ("Board()", "loss.item()", []),
    ("Board()", "step", []),
    ("{}", "loss", []),  # a dict's entry is replaced each step: nothing accumulates
    ("Board()", "last = loss", [(13, "TEN401")]),  # a chained store runs __setitem__ all the same
])
def test_a_store_into_another_modules_setitem_keeper(tmp_path, made, value, expected):
    """`board["mse"] = loss` runs `Board.__setitem__` of board.py, which appends every value it is given
    (analysis/item_sites.py `store_call`, read by TEN401 as the call it is)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/board.py": BOARD,
                     "pkg/train.py": STORES.format(made=made, value=value)})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "train.py")] == expected


KEEPERS = """
    import torch


    class Total:
        def __init__(self):
            self.total = 0.0

        def update(self, value):
            self.total += value


    class Window:
        def __init__(self):
            self.values = []

        def update(self, value):
            self.values.append(value)


    class AverageMeter:
        def __init__(self):
            self.sum, self.count = 0.0, 0

        def update(self, value, n=1):
            self.sum += value * n
            self.count += n


    class SafeTotal:
        def __init__(self):
            self.total = 0.0

        def update(self, value):
            if torch.is_tensor(value):
                value = value.item()
            self.total += value
"""
KEEPER_LOOP = """
    import torch
    from .keepers import {cls}


    def fit(model, loader, opt):
        keeper = {cls}()
        for i, (x, y) in enumerate(loader):
            loss = ((model(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            {body}
        return keeper
"""


@pytest.mark.parametrize("cls, body, expected", [
    ("Total", "keeper.update(loss)", [(13, "TEN401")]),
    # a sum made under no_grad holds no graph; a stored value keeps the one it was made with
    ("Total", "with torch.no_grad():\n                keeper.update(loss)", []),
    ("Window", "with torch.no_grad():\n                keeper.update(loss)", [(14, "TEN401")]),
    # the loop binds the attribute anew on every pass, or empties it; a reset some passes skip resets nothing
    ("Total", "keeper.total = 0.0\n            keeper.update(loss)", []),
    ("Window", "keeper.values.clear()\n            keeper.update(loss)", []),
    ("Total", "if i % 10 == 0:\n                keeper.total = 0.0\n            keeper.update(loss)", [(15, "TEN401")]),
    # the loop's loss is built from what the keeper keeps: its graphs are needed
    ("Window", "keeper.update(loss)\n            torch.stack(keeper.values[-2:]).mean().backward()", []),
    # the usual average meter: the value times a count
    ("AverageMeter", "keeper.update(loss, x.size(0))", [(13, "TEN401")]),
    ("AverageMeter", "keeper.update(loss.item(), x.size(0))", []),
    # a keeper that converts what it is given on some path keeps a number
    ("SafeTotal", "keeper.update(loss)", []),
    # whichever branch runs is attached; a tuple kept whole keeps its entries' graphs
    ("Window", "keeper.update(loss if i else 2 * loss)", [(13, "TEN401")]),
    ("Window", "keeper.update(loss if i else loss.item())", []),
    ("Window", "keeper.update((i, loss))", [(13, "TEN401")]),
    ("Window", "keeper.update((i, loss.item()))", []),
])
def test_what_a_keeper_of_another_module_keeps_at_the_loops_call(tmp_path, cls, body, expected):
    """`keeper.update(loss)` once per step, the keeper's class in keepers.py: reported at the argument when the
    value's graph outlives the step (analysis/per_step.py `kept_by_callee`, `resets_on_every_pass`,
    `backpropagated_through`, `grad_off_at`)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/keepers.py": KEEPERS,
                     "pkg/train.py": KEEPER_LOOP.format(cls=cls, body=body)})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "train.py")] == expected


@pytest.mark.parametrize("other, expected", [
    ("from .util import freeze\n\n\nfreeze([1.0])\n", [(2, "TEN104")]),
    # another module passes an object of its class whose `detach` works in place: the name is its method
    ("from .util import freeze\n\n\nclass Table:\n    def detach(self):\n        self.frozen = True\n"
     "        return self\n\n\nfreeze(Table())\n", []),
])
def test_a_method_of_a_class_another_caller_passes_keeps_the_name_quiet(tmp_path, other, expected):
    """`values.detach()` discarded in util.py: one caller passes a tensor, another an object of a package
    class with a `detach` of its own (analysis/own_methods.py)."""
    util = "def freeze(values):\n    values.detach()\n    return values\n"
    write(tmp_path, {"pkg/__init__.py": "", "pkg/util.py": util,
                     "pkg/a.py": "import torch\n\nfrom .util import freeze\n\nfreeze(torch.randn(2))\n",
                     "pkg/b.py": other})
    package_index.reset()
    assert [(line, code) for line, code, _ in findings(tmp_path / "pkg" / "util.py")] == expected
