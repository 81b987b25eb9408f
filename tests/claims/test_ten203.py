"""TEN203 claim: a kept clone stays in the graph (CloneBackward0 holding the step's graph), and
.numpy() on it raises; .detach().clone() holds no graph."""
import pytest
import torch

from fixture_tools import cases, load

E_NUMPY = "Can't call numpy\\(\\) on Tensor that requires grad"


def assert_hazard(bad: dict) -> None:
    for kept in bad["case_history"]():
        assert type(kept.grad_fn).__name__ == "CloneBackward0"
        assert kept.grad_fn.next_functions[0][0] is not None  # the step's graph is still referenced
    layer, penalty = bad["case_snapshot"]()
    assert penalty.item() > 0  # the weights did move away from the snapshot...
    assert torch.count_nonzero(layer.weight.grad) == 0  # ...but the gradient through the clone cancels
    with pytest.raises(RuntimeError, match=E_NUMPY):
        bad["case_numpy"]()


def assert_fixed(fixed: dict) -> None:
    assert all(h.grad_fn is None and not h.requires_grad for h in fixed["case_history"]())
    layer, penalty = fixed["case_snapshot"]()
    assert torch.allclose(layer.weight.grad, torch.full((3, 3), 1.0))  # d/dw (w - w0)^2 = 2 * 0.5
    assert fixed["case_numpy"]().shape == (2, 1)


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN203", "bad")))


def test_fixed_cases_are_safe():
    assert_fixed(cases(load("TEN203", "fixed")))
