"""TEN202 claim: copy.copy of a tensor shares storage and cuts the graph; detach().clone() does not share."""
import torch

from fixture_tools import cases, load


def shares(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def assert_hazard(bad: dict) -> None:
    w, hidden, saved = bad["case_non_leaf"]()
    assert shares(saved, hidden) and saved.is_leaf and saved.grad_fn is None
    (saved * 2).sum().backward()
    assert w.grad is None  # the gradient never reaches the source
    source, dup = bad["case_from_import"]()
    assert torch.equal(source, torch.ones(4))  # the write into the "copy" changed the source
    t = torch.zeros(2)
    assert shares(bad["case_annotated"](t), t)


def assert_fixed(fixed: dict) -> None:
    w, hidden, saved = fixed["case_non_leaf"]()
    assert not shares(saved, hidden) and not saved.requires_grad
    assert torch.equal(saved, hidden.detach())
    source, dup = fixed["case_from_import"]()
    assert torch.equal(source, torch.zeros(4)) and torch.equal(dup, torch.ones(4))
    t = torch.zeros(2)
    assert not shares(fixed["case_annotated"](t), t)


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN202", "bad")))


def test_fixed_cases_are_safe():
    assert_fixed(cases(load("TEN202", "fixed")))
