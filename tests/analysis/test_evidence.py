"""The kinds of the value lattice (analysis/evidence.py): text-compatible, and joined exactly."""
from __future__ import annotations

import pytest

from flake8_tensorcopy.analysis.evidence import (LIKELY_TENSOR, MODULE, NDARRAY, PARAM, SURE_TENSOR, TENSOR,
                                                 TENSORISH, Kind, join)


def test_a_kind_is_its_text():
    """Reports, the generated API model and the not-a-tensor table spell kinds as text."""
    assert TENSOR == "tensor" and hash(TENSOR) == hash("tensor") and "tensor" in SURE_TENSOR
    assert f"{MODULE}" == "module" and str(NDARRAY) == "ndarray"
    assert {Kind(k.value) for k in Kind} == set(Kind)


@pytest.mark.parametrize("kinds, joined", [
    ([TENSOR, TENSOR], TENSOR),
    ([TENSOR], TENSOR),
    ([TENSOR, PARAM], None),  # different answers on different paths: unknown, not a guess
    ([TENSOR, None], None),  # a path with no answer
    ([MODULE, NDARRAY], None),
    ([], None),
])
def test_join_is_exact(kinds, joined):
    assert join(kinds) == joined


def test_proven_and_guessed_tensors_are_different_kinds():
    assert TENSORISH - SURE_TENSOR == {LIKELY_TENSOR}
