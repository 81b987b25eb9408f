"""TEN201 claim: copy.deepcopy of a non-leaf tensor raises; of a view it copies the whole base."""
import re

import pytest
import torch

from fixture_tools import cases, load

E_DEEPCOPY = re.escape("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol")
BAD, FIXED = cases(load("TEN201", "bad")), cases(load("TEN201", "fixed"))


def test_non_leaf_raises():
    with pytest.raises(RuntimeError, match=E_DEEPCOPY):
        BAD["case_non_leaf"]()


def test_annotated_raises_on_a_non_leaf_argument():
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=E_DEEPCOPY):
        BAD["case_annotated"](x * 2)


def test_view_copies_whole_base_storage():
    big, copied = BAD["case_view"]()
    assert copied.untyped_storage().nbytes() == big.untyped_storage().nbytes() == 4_000_000


def test_fixed_forms():
    copied = FIXED["case_non_leaf"]()
    assert copied.grad_fn is None and not copied.requires_grad
    big, head = FIXED["case_view"]()
    assert head.untyped_storage().nbytes() == 40
    head.add_(1)
    assert big[:10].sum() == 0  # independent of the source
    x = torch.ones(2, requires_grad=True)
    assert torch.equal(FIXED["case_annotated"](x * 2), torch.full((2,), 2.0))
