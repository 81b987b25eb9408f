"""TEN201 claim: copy.deepcopy of a non-leaf tensor raises; of a view it copies the whole base."""
import re

import pytest

from fixture_tools import cases, load

E_DEEPCOPY = re.escape("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol")


def assert_hazard(bad: dict) -> None:
    with pytest.raises(RuntimeError, match=E_DEEPCOPY):
        bad["case_non_leaf"]()
    big, copied = bad["case_view"]()
    assert copied.untyped_storage().nbytes() == big.untyped_storage().nbytes() == 4_000_000


def assert_fixed(fixed: dict) -> None:
    copied = fixed["case_non_leaf"]()
    assert copied.grad_fn is None and not copied.requires_grad
    big, head = fixed["case_view"]()
    assert head.untyped_storage().nbytes() == 40
    head.add_(1)
    assert big[:10].sum() == 0  # independent of the source


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN201", "bad")))


def test_fixed_cases_are_safe():
    assert_fixed(cases(load("TEN201", "fixed")))
