"""Module state (analysis/module_state.py): TEN201 reports `copy.deepcopy(m)` of an instance of a class of
the file that keeps a tensor with a graph on itself (its forward, or a method registered as a forward
hook, stores one on `self` and leaves it). Each look-alike is quiet for its own reason: the same code with
that reason taken away is reported."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.rules import BY_CODE


def fill(template: str, **parts: str) -> str:
    for key, text in parts.items():
        template = template.replace("{" + key + "}", text)
    return textwrap.dedent(template)


def ten201(source: str) -> list[tuple[int, str]]:
    result = engine.analyse(textwrap.dedent(source), "t.py", [BY_CODE["TEN201"]])
    assert result.errors == []
    return [(f.line, f.message) for f in result.findings]


HOOKED = """
    import copy
    import torch
    from torch import nn


    def flatten(t):
        return t.reshape(t.shape[0], -1)


    class NetWrapper(nn.Module):
        def __init__(self, net, layer=-2):
            super().__init__()
            self.net = net
            self.layer = layer
            self.hidden = None
            self.hook_registered = False

        def _hook(self, _, __, output):
            self.hidden = {STORED}

        def _register_hook(self):
            layer = [*self.net.children()][self.layer]
            layer.register_forward_hook(self._hook)
            self.hook_registered = True

        def get_representation(self, x):
            {BEFORE}
            if not self.hook_registered:
                self._register_hook()
            {AFTER}
            _ = self.net(x)
            hidden = self.hidden
            {CLEAR}
            return hidden


    class BYOL(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.online_encoder = NetWrapper(net)
            self.target_encoder = None

        def _get_target_encoder(self):
            return copy.deepcopy(self.online_encoder)
"""


def hooked(stored="flatten(output)", before="pass", after="pass", clear="self.hidden = None"):
    return fill(HOOKED, STORED=stored, BEFORE=before, AFTER=after, CLEAR=clear)


def test_hook_output_kept_on_the_early_return_path_is_reported():
    """byol-pytorch 0.1.4: the hook is registered, then `layer == -1` returns before the clear."""
    source = hooked(after="if self.layer == -1:\n                return self.net(x)")
    found = ten201(source)
    assert len(found) == 1
    line, message = found[0]
    assert "copy.deepcopy(self.online_encoder)" in source.splitlines()[line - 1]
    assert "NetWrapper._hook() leaves a tensor with a graph" in message and "self.hidden" in message
    assert "'self.online_encoder'" in message


def test_early_return_before_the_hook_is_registered_is_not():
    """byol-pytorch 0.5.4: the early return comes before any registration."""
    assert ten201(hooked(before="if self.layer == -1:\n                return self.net(x)")) == []


@pytest.mark.parametrize("clear,found", [
    ("self.hidden = None", 0),
    ("del self.hidden", 0),
    ("self.hidden = hidden.detach()", 0),
    ("pass", 1),  # never cleared
    ("self.hidden = hidden * 2", 1),  # replaced by another graph tensor
    ("if hidden is None:\n                self.hidden = None", 1),  # cleared on one path only
])
def test_cleared_after_each_run(clear, found):
    assert len(ten201(hooked(clear=clear))) == found


@pytest.mark.parametrize("stored,found", [
    ("flatten(output)", 1),  # a function of the file whose return keeps the graph
    ("output", 1),
    ("output.detach()", 0),
    ("flatten(output).detach()", 0),
    ("tuple(output.shape)", 0),
    ("output.mean().item()", 0),
])
def test_what_the_hook_stores(stored, found):
    assert len(ten201(hooked(stored=stored, clear="pass"))) == found


def test_hook_output_is_the_fourth_parameter():
    """`input` (the third) is what the layer received: not shown to carry a graph."""
    source = hooked(clear="pass").replace("def _hook(self, _, __, output):", "def _hook(self, _, output, __):")
    assert ten201(source) == []


def test_a_method_never_registered_is_no_hook():
    source = hooked(clear="pass").replace("layer.register_forward_hook(self._hook)", "layer.eval()")
    assert ten201(source) == []


def test_run_under_no_grad_stores_no_graph():
    source = hooked(clear="pass").replace("_ = self.net(x)", "with torch.no_grad():\n            _ = self.net(x)")
    assert ten201(source) == []


DICT_HOOK = """
    import copy
    import torch


    class Wrapper(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.hidden = {}
            self.net.register_forward_hook(self._hook)

        def _hook(self, _, inputs, output):
            self.hidden[inputs[0].device] = output.flatten(1)

        def forward(self, x):
            self.hidden.clear()
            _ = self.net(x)
            hidden = self.hidden[x.device]
            {CLEAR}
            return hidden


    def target(net):
        online = Wrapper(net)
        online(torch.ones(2, 4))
        return copy.deepcopy(online)
"""


@pytest.mark.parametrize("clear,found", [("pass", 1), ("self.hidden.clear()", 0), ("self.hidden = {}", 0),
                                         ("self.hidden.pop(x.device)", 0)])
def test_a_dict_of_hooked_outputs(clear, found):
    """byol-pytorch 0.5.3 (emptied only before the forward) and 0.5.4 (after it too)."""
    assert len(ten201(fill(DICT_HOOK, CLEAR=clear))) == found


FORWARD = """
    import copy
    import torch


    class Attention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.score = torch.nn.Linear(4, 4)
            self.attn = None

        def forward(self, x):
            {BODY}
            return x


    class Owner:
        def __init__(self):
            self.block = Attention()
            {INIT}

        def run(self, x):
            return self.block(x)

        def snapshot(self):
            return copy.deepcopy(self.block)
"""

STORE = "self.attn = torch.softmax(self.score(x), dim=-1)"


@pytest.mark.parametrize("body,found", [
    (STORE, 1),
    (STORE.replace("dim=-1)", "dim=-1).detach()"), 0),
    ("with torch.no_grad():\n                " + STORE, 0),
    (STORE + "\n            x = self.attn @ x\n            self.attn = None", 0),
    ("try:\n                " + STORE + "\n                x = self.attn @ x\n            finally:\n"
     "                self.attn = None", 0),
    (STORE + "\n            if x.sum() > 0:\n                return x\n            self.attn = None", 1),
    ("self.calls = 1\n            self.shape = tuple(self.score(x).shape)", 0),
])
def test_forward_stores(body, found):
    assert len(ten201(fill(FORWARD, BODY=body, INIT="pass"))) == found


@pytest.mark.parametrize("init,found", [
    ("self.teacher = copy.deepcopy(self.block)", 0),  # nothing has run yet
    ("self.block.to('cpu')\n            self.teacher = copy.deepcopy(self.block)", 0),  # the module API runs nothing
    ("self.run(torch.ones(1, 4))\n            self.teacher = copy.deepcopy(self.block)", 1),
    ("self.block(torch.ones(1, 4))\n            self.teacher = copy.deepcopy(self.block)", 1),
])
def test_copy_in_init_before_any_run(init, found):
    source = fill(FORWARD, BODY=STORE, INIT=init).replace("return copy.deepcopy(self.block)", "return None")
    assert len(ten201(source)) == found


def test_copies_the_file_cannot_tie_to_the_class_are_not_reported():
    source = fill(FORWARD, BODY=STORE, INIT="pass") + textwrap.dedent("""
        def ema(model):
            return copy.deepcopy(model)

        def annotated(block: Attention):
            return copy.deepcopy(block)

        def either(flag):
            block = Attention() if flag else torch.nn.Linear(4, 4)
            block(torch.ones(1, 4))
            return copy.deepcopy(block)
    """)
    (line, _), = ten201(source)
    assert source.splitlines()[line - 1].strip() == "return copy.deepcopy(self.block)"  # Owner.snapshot only


def test_a_copy_under_no_grad_still_raises_and_is_reported():
    source = fill(FORWARD, BODY=STORE, INIT="pass").replace(
        "return copy.deepcopy(self.block)", "with torch.no_grad():\n                return copy.deepcopy(self.block)")
    assert len(ten201(source)) == 1


def test_the_finding_has_no_fix():
    (finding,) = engine.analyse(textwrap.dedent(fill(FORWARD, BODY=STORE, INIT="pass")), "t.py",
                                [BY_CODE["TEN201"]]).findings
    assert finding.fix is None
    assert finding.message.endswith("clear self.attn after use (or store it detached) in Attention")


def test_a_copy_in_a_loop_that_runs_the_instance_later_is_reported():
    source = fill(FORWARD, BODY=STORE, INIT="pass") + textwrap.dedent("""
        def snapshots(xs):
            block = Attention()
            kept = []
            for x in xs:
                kept.append(copy.deepcopy(block))
                block(x)
            return kept
    """)
    assert len(ten201(source)) == 2  # Owner.snapshot and the copy on the loop's second pass
    assert len(ten201(source.replace("        block(x)\n", ""))) == 1
