"""TEN203 claim: a kept clone stays in the graph (CloneBackward0 holding the step's graph), and
.numpy() on it raises; .detach().clone() holds no graph."""
import pytest
import torch

from fixture_tools import cases, load

E_NUMPY = "Can't call numpy\\(\\) on Tensor that requires grad"
BAD, FIXED = cases(load("TEN203", "bad")), cases(load("TEN203", "fixed"))


def test_history_keeps_each_steps_graph():
    history = BAD["case_history"]()
    for kept in history:
        assert type(kept.grad_fn).__name__ == "CloneBackward0"
        assert kept.grad_fn.next_functions[0][0] is not None  # the step's graph is still referenced


def test_snapshot_is_still_in_the_graph():
    layer, initial = BAD["case_snapshot"]()
    assert initial.requires_grad and initial.grad_fn is not None
    (initial * 2).sum().backward()
    assert layer.weight.grad is not None  # gradients flow back into the "frozen" copy's source


def test_numpy_of_clone_raises():
    with pytest.raises(RuntimeError, match=E_NUMPY):
        BAD["case_numpy"]()


def test_fixed_forms_hold_no_graph():
    assert all(h.grad_fn is None and not h.requires_grad for h in FIXED["case_history"]())
    layer, initial = FIXED["case_snapshot"]()
    assert initial.grad_fn is None and not initial.requires_grad
    assert FIXED["case_numpy"]().shape == (2, 1)
