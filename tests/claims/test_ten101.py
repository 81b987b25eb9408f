"""TEN101 claim: a write through y.detach() reaches y (and breaks backward when y was saved)."""
import pytest
import torch

from fixture_tools import cases, load

E_VER = "one of the variables needed for gradient computation has been modified by an inplace operation"


def assert_hazard(bad: dict) -> None:
    """Every bad case shows the hazard: the source changes, and backward raises where it was saved."""
    for name, case in bad.items():
        if name == "case_mutates_source_without_grad":
            data, _ = case()
            assert not torch.equal(data, torch.arange(4.0)) and data._version > 0  # the caller's tensor changed
        else:
            with pytest.raises(RuntimeError, match=E_VER):
                case()


def assert_fixed(fixed: dict) -> None:
    """The same cases, fixed: no write reaches the source and backward works."""
    for name, case in fixed.items():
        if name == "case_mutates_source_without_grad":
            data, normalized = case()
            assert torch.equal(data, torch.arange(4.0))
            assert torch.allclose(normalized, torch.arange(4.0) - 1.5)
            continue
        x, y, copy = case()
        assert y._version == 0  # nothing wrote into the source
        assert x.grad is not None and torch.isfinite(x.grad).all()
        assert copy.untyped_storage().data_ptr() != y.untyped_storage().data_ptr()


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN101", "bad")))


def test_fixed_cases_are_safe():
    bad, fixed = cases(load("TEN101", "bad")), cases(load("TEN101", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)
