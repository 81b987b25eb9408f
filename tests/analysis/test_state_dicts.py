"""analysis/state_dicts.py: what a state_dict snapshot is, and where it is read."""
from __future__ import annotations

import pytest

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes
from flake8_tensorcopy.analysis import kept, state_dicts


def described(source: str):
    node, ctx = context_at(source)
    found = state_dicts.snapshot(node.value, ctx)
    return None if found is None else found[1]


@pytest.mark.parametrize("value, what", [
    ("model.state_dict()", "the module's state_dict()"),
    ("dict(model.state_dict())", "a shallow copy of model.state_dict()"),
    ("model.state_dict().copy()", "a shallow copy of model.state_dict()"),
    ("{k: v.detach() for k, v in model.state_dict().items()}",
     "entries of model.state_dict() that are not copies"),
    ("{k: v.cpu() for k, v in model.state_dict().items()}",
     "entries of model.state_dict() that are not copies on a CPU model"),
    ("{k: v.clone() for k, v in model.state_dict().items()}", None),  # copies
    ("copy.deepcopy(model.state_dict())", None),
    ("optimizer.state_dict()", None),  # not a module
    ("model.state_dict(destination)", None),
])
def test_what_a_snapshot_is(value, what):
    assert described(f"""
        import copy
        def f(model, optimizer, destination):
            best = {value}  # <-
    """) == what


def test_a_name_bound_to_the_state_dict_and_copied_shallowly():
    assert described("""
        def f(model):
            sd = model.state_dict()
            best = dict(sd)  # <-
    """) == "a shallow copy of sd"


def test_a_method_returning_the_state_dict_counts_as_the_call():
    assert described("""
        import torch
        class Trainer:
            def weights(self):
                return self.model.state_dict()

            def fit(self):
                best = self.weights()  # <-
    """) == "the state_dict() that self.weights() returns"


def test_a_class_that_overrides_state_dict_is_not_a_module_snapshot():
    assert described("""
        class Stats:
            def state_dict(self):
                return {}

            def save(self):
                best = self.state_dict()  # <-
    """) is None


def test_reads_for_keys_only_and_loading_targets():
    node, ctx = context_at("""
        def f(model, other):
            sd = model.state_dict()  # <-
            n = len(sd)
            names = sd.keys()
            sd["w"].copy_(other)
    """)
    assert len(state_dicts.key_reads(ctx, "sd")) == 2
    assert state_dicts.used_as_loading_target(ctx, "sd")
    assert not state_dicts.used_as_loading_target(ctx, "model")


def test_saved_positions_and_attribute_reads():
    node, ctx = context_at("""
        import torch
        class T:
            def fit(self):
                self.best = self.model.state_dict()  # <-
                torch.save(self.best, "b.pt")

            def restore(self):
                self.model.load_state_dict(self.best)
    """)
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    assert len(state_dicts.saved_positions(ctx, "self.best")) == 1
    assert [line for line, _ in state_dicts.attribute_reads(ctx, "self.best", start, end)] == [6, 9]


def test_reloaded_by_a_class_that_trains():
    source = """
        class T:
            def snapshot(self):
                self.best = self.model.state_dict()  # <-

            def fit(self, loss):
                loss.backward()
                self.model.load_state_dict(self.best)
    """
    node, ctx = context_at(source)
    assert state_dicts.reloaded_by_a_training_class("self.best", ctx) == (
        "the training between calls of the class's methods")
    node, ctx = context_at(source.replace("loss.backward()", "print(loss)"))
    assert state_dicts.reloaded_by_a_training_class("self.best", ctx) is None


def test_module_root():
    node, ctx = context_at("""
        def f(net):
            best = net.encoder.state_dict()  # <-
    """)
    assert state_dicts.module_root(node.value, ctx) == "net"


ENSEMBLE = """
import torch

def train_ensemble(loader, models, n=3):
    states = []
    {outside}
    for i in range(n):
        {inside}
        opt = torch.optim.Adam(m.parameters())
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
        states.append(m.state_dict())
    return states
"""


@pytest.mark.parametrize("outside, inside, expected", [
    ("pass", "m = torch.nn.Linear(4, 2)", []),                           # a new module each pass
    ("pass", "m = models[i]", []),
    ("m = torch.nn.Linear(4, 2)", "pass", [(14, "TEN301")]),            # one module trained on and on
])
def test_snapshots_of_a_module_built_anew_in_each_pass_do_not_move(outside, inside, expected):
    """kept.new_each_pass: the training of later passes trains another object (an ensemble, k folds)."""
    assert codes(ENSEMBLE.format(outside=outside, inside=inside)) == expected


@pytest.mark.parametrize("line, new", [
    ("m = torch.nn.Linear(4, 2)", True),
    ("m = build(cfg)", True),
    ("m = m.to('cpu')", False),   # a module's .to() returns the module itself
    ("m += 1", False),
    ("other = torch.nn.Linear(4, 2)", False),
])
def test_a_name_bound_anew_in_each_pass(line, new):
    node, ctx = context_at(f"""
    def f(m, cfg, build):
        for i in range(3):
            {line}
            print(m)  # <-
    """)
    assert kept.new_each_pass(ctx.frame.scope, "m", ctx.frame.loops[0]) is new


@pytest.mark.parametrize("line, target", [
    ("sd[k].copy_(new)", True),
    ("sd[k] = new", True),
    ("sd.update(new)", True),
    ("for v, n in zip(sd.values(), new): v.data = n.clone()", True),   # review 15: entries loaded into
    ("for k, v in sd.items(): v.copy_(new[k])", True),
    ("for v in sd.values(): print(v.norm())", False),
    ("for v in sd.values(): w = v * 2", False),
    ("buffer.unpack(sd.values())", True),          # review 15: entries handed to code that fills them
    ("buf = TensorBuffer(list(sd.values()))", True),
    ("flat = torch.cat(list(sd.values()))", False),   # torch reads them
    ("n = len(list(sd.values()))", False),
])
def test_a_dict_loaded_into_entry_by_entry_is_a_loading_target(line, target):
    node, ctx = context_at(f"""
    import torch
    def f(model, new, k, buffer, TensorBuffer):
        sd = model.state_dict()
        {line}
        print(sd)  # <-
    """)
    assert state_dicts.used_as_loading_target(ctx, "sd") is target


def test_an_attribute_loaded_into_by_another_method_is_no_snapshot():
    source = """
    import torch

    class Worker:
        def listen(self, build):
            self.model = build()
            self.sd = self.model.state_dict()

        def receive(self, flat):
            for v, new in zip(self.sd.values(), flat):
                v.data = new.clone()
            self.model.load_state_dict(self.sd)

        def train(self, loader, opt):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.mse_loss(self.model(x), y).backward()
                opt.step()
    """
    assert codes(source) == []
    assert codes(source.replace("v.data = new.clone()", "print(v, new)")) == [(7, "TEN301")]
