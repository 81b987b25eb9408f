"""TEN903 claim: writes through .data are invisible to autograd (no version bump, silently wrong
gradient); through .detach() they are seen (version bump, backward raises instead)."""
import pytest
import torch

from fixture_tools import cases, load

E_VER = "one of the variables needed for gradient computation has been modified by an inplace operation"


def assert_hazard(bad: dict) -> None:
    p = bad["case_write_between_forward_and_backward"]()
    assert torch.equal(p.grad, torch.tensor([2.0, 4.0]))  # no error, but the true gradient is [4, 8]
    p = bad["case_alias_write_is_invisible"]()
    assert torch.equal(p.detach(), torch.tensor([3.0, 5.0])) and p._version == 0  # changed, unseen
    model = bad["case_named_parameters_loop"]()
    assert all(torch.equal(p.grad, torch.zeros_like(p)) for p in model.parameters())  # true grad is 2p


def assert_fixed(fixed: dict) -> None:
    with pytest.raises(RuntimeError, match=E_VER):
        fixed["case_write_between_forward_and_backward"]()
    p = fixed["case_alias_write_is_invisible"]()
    assert torch.equal(p.detach(), torch.tensor([3.0, 5.0])) and p._version == 1  # autograd saw it
    with pytest.raises(RuntimeError, match=E_VER):
        fixed["case_named_parameters_loop"]()


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN903", "bad")))


def test_fixed_cases_are_safe():
    bad, fixed = cases(load("TEN903", "bad")), cases(load("TEN903", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)
