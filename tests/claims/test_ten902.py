"""TEN902 claim: clone().detach() and detach().clone() give equal, detached copies; only the
clone-first order records a CloneBackward0 node on the way."""
import torch
from torch.overrides import TorchFunctionMode

from fixture_tools import cases, load


class GraphNodeRecorder(TorchFunctionMode):
    """Records the autograd node type of every tensor produced while active."""

    def __init__(self):
        super().__init__()
        self.nodes = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if isinstance(result, torch.Tensor) and result.grad_fn is not None:
            self.nodes.append(type(result.grad_fn).__name__)
        return result


def run(case):
    with GraphNodeRecorder() as recorder:
        original, copy = case()
    assert torch.equal(copy, original.detach())  # identical values
    assert copy.grad_fn is None and not copy.requires_grad and copy.is_leaf
    assert copy.untyped_storage().data_ptr() != original.untyped_storage().data_ptr()  # a real copy
    return recorder.nodes


def assert_hazard(bad: dict) -> None:
    for name, case in bad.items():
        assert "CloneBackward0" in run(case), name


def assert_fixed(fixed: dict) -> None:
    for name, case in fixed.items():
        assert "CloneBackward0" not in run(case), name


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN902", "bad")))


def test_fixed_cases_are_safe():
    bad, fixed = cases(load("TEN902", "bad")), cases(load("TEN902", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)
