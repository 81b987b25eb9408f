"""Look-alikes the engine must not report: `.detach()` / `.data` are the whole tensor, not a view of part
of one (api.whole_alias); an object of a package class whose own `detach()` works in place
(analysis/own_methods.py). A parameter's clone kept on `self` and only compared: tests/rules/test_ten203.py."""
from __future__ import annotations

from flake8_tensorcopy.analysis import api, own_methods

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes


def test_detach_and_data_are_whole_aliases_and_view_is_not():
    assert api.whole_alias("detach") and api.whole_alias("data")
    assert not api.whole_alias("view") and not api.whole_alias("narrow")


DEEPCOPY = """
    import copy
    import torch


    def gamma(w: torch.Tensor):
        w = w{index}
        return copy.deepcopy(w.data.detach())
"""


def test_a_deepcopy_of_a_detached_tensor_is_no_deepcopy_of_a_view():
    assert codes(DEEPCOPY.format(index="")) == []


def test_a_deepcopy_of_a_detached_view_still_is():
    assert codes(DEEPCOPY.format(index="[1:]")) == [(8, "TEN201")]


STATE = """
    import torch


    class State:
        def __init__(self, hidden):
            self.hidden = hidden

        def {name}(self):
            self.hidden = tuple(h.detach() for h in self.hidden)


    def run(model, batches):
        state = None
        for x in batches:
            out, state = model(x, state)
            out.sum().backward()
            state.detach()  # <-
"""


def test_a_method_a_class_of_the_file_defines_may_be_the_one_called():
    node, ctx = context_at(STATE.format(name="detach"))
    assert own_methods.may_be_own(node.value, ctx)
    node, ctx = context_at(STATE.format(name="cut"))
    assert not own_methods.may_be_own(node.value, ctx)


def test_a_detach_a_package_class_defines_is_not_taken_for_the_tensors():
    assert codes(STATE.format(name="detach")) == []
    assert codes(STATE.format(name="cut")) == [(18, "TEN104")]
