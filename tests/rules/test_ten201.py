"""TEN201 (deepcopy of a tensor): on a view, only a view of part of its base copies more than the view; a
view that rearranges every element of a whole tensor (`small.unsqueeze(0)`, `small.t()`) spans the same
storage (fix review 5: a false positive in a course repository)."""
from __future__ import annotations

import copy

import pytest
import torch

from tests.support.rule_tools import findings_of

SOURCE = """
import copy
import torch

data = torch.rand(100, 784)
small = torch.rand(3, 4)
image = {view}
a = copy.deepcopy(image)
"""


@pytest.mark.parametrize("view, reported", [
    ("data[5]", True), ("data.narrow(0, 0, 2)", True), ("data[5].unsqueeze(0)", True), ("data[:2].t()", True),
    ("small.unsqueeze(0)", False), ("small.t()", False), ("small.view(-1)", False), ("small.T", False),
])
def test_only_a_view_of_part_of_its_base_is_reported(view, reported):
    assert bool(findings_of(SOURCE.format(view=view), "TEN201")) is reported


def test_the_deepcopy_of_a_rearranging_view_of_a_whole_tensor_copies_no_more_than_it():
    data, small = torch.rand(100, 784), torch.rand(3, 4)
    whole = small.untyped_storage().nbytes()
    for view in (small.unsqueeze(0), small.t(), small.view(-1), small.T):
        assert copy.deepcopy(view).untyped_storage().nbytes() == whole
    partial = copy.deepcopy(data[5])  # noqa: TEN201 - the claim: the copy holds the whole base storage
    assert partial.untyped_storage().nbytes() == data.untyped_storage().nbytes() > 784 * 4
