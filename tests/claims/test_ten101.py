"""TEN101 claim: a write through y.detach() reaches y (and breaks backward when y was saved)."""
import pytest
import torch

from fixture_tools import cases, load

E_VER = "one of the variables needed for gradient computation has been modified by an inplace operation"
BAD, FIXED = cases(load("TEN101", "bad")), cases(load("TEN101", "fixed"))


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_case_shows_hazard(name):
    if name == "case_mutates_source_without_grad":
        data, _ = BAD[name]()
        assert not torch.equal(data, torch.arange(4.0))  # the caller's tensor changed
        assert data._version > 0
        return
    with pytest.raises(RuntimeError, match=E_VER):
        BAD[name]()


@pytest.mark.parametrize("name", sorted(FIXED))
def test_fixed_case_is_safe(name):
    assert sorted(FIXED) == sorted(BAD)
    if name == "case_mutates_source_without_grad":
        data, normalized = FIXED[name]()
        assert torch.equal(data, torch.arange(4.0))
        assert torch.allclose(normalized, torch.arange(4.0) - 1.5)
        return
    x, y, copy = FIXED[name]()
    assert y._version == 0  # nothing wrote into the source
    assert x.grad is not None and torch.isfinite(x.grad).all()
    assert copy.untyped_storage().data_ptr() != y.untyped_storage().data_ptr()
