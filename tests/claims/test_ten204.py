"""TEN204 claim: torch.tensor(t) / new_tensor(t) warn and cut the graph; legacy constructors alias."""
import re
import warnings

import pytest
import torch

from fixture_tools import cases, load

W_TENSOR = re.escape("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone()")


def shares(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def assert_hazard(bad: dict) -> None:
    for name in ("case_tensor", "case_tensor_dtype", "case_new_tensor"):
        with pytest.warns(UserWarning, match=W_TENSOR):
            result = bad[name]()
        assert result.grad_fn is None and not result.requires_grad
    with pytest.warns(UserWarning, match=W_TENSOR):
        bad["case_tensor_requires_grad"]()
    source, made = bad["case_legacy"]()
    assert shares(source, made) and torch.equal(source, torch.ones(3))  # an alias, not a copy


def assert_fixed(fixed: dict) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = fixed["case_tensor"]()
        assert result.grad_fn is None and torch.equal(result, torch.full((3,), 2.0))
        converted = fixed["case_tensor_dtype"]()
        assert converted.dtype == torch.float64 and torch.equal(converted, torch.arange(3.0, dtype=torch.float64))
        leaf = fixed["case_tensor_requires_grad"]()
        assert leaf.is_leaf and leaf.requires_grad and torch.equal(leaf, torch.ones(2))
        made = fixed["case_new_tensor"]()
        assert made.dtype == torch.float64 and made.grad_fn is None
        assert torch.equal(made, torch.full((2,), 3.0, dtype=torch.float64))
        source, made = fixed["case_legacy"]()
        assert not shares(source, made) and torch.equal(source, torch.zeros(3))


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN204", "bad")))


def test_fixed_cases_are_safe():
    assert_fixed(cases(load("TEN204", "fixed")))


def test_fixed_forms_equal_what_torch_tensor_builds():
    t = torch.arange(6.0).reshape(2, 3).t()
    with pytest.warns(UserWarning):
        reference = torch.tensor(t, dtype=torch.float64)
    replacement = t.detach().to(dtype=torch.float64, copy=True)
    assert torch.equal(reference, replacement) and reference.dtype == replacement.dtype
    base = torch.zeros(1, dtype=torch.float16)
    with pytest.warns(UserWarning):
        reference = base.new_tensor(t)
    assert torch.equal(reference, t.detach().to(base, copy=True)) and reference.dtype == torch.float16
