"""The hand-kept overlay of Python builtins, checked against real torch: what it says each gives for a tensor."""
from __future__ import annotations

import builtins
import warnings

import pytest
import torch

from flake8_tensorcopy.analysis import builtins_api


def attached_scalar() -> torch.Tensor:
    return torch.tensor(2.5, dtype=torch.float64, requires_grad=True) * 1.5


def call(name, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(builtins, name)(*args)


@pytest.mark.parametrize("name", sorted(builtins_api.VALUE_BUILTINS))
def test_value_builtins_never_give_a_tensor(name):
    x = attached_scalar()
    args = {"isinstance": (x, torch.Tensor), "hasattr": (x, "grad"), "len": (x.reshape(1),)}.get(name, (x,))
    try:
        result = call(name, *args)
    except TypeError:
        assert name in ("round", "chr", "ord"), name  # Tensor has no __round__; chr wants an int, ord a string
        return
    assert not isinstance(result, torch.Tensor)


@pytest.mark.parametrize("name", ["abs", "max", "min", "sum", "pow", "list", "sorted"])
def test_builtins_left_out_keep_the_graph(name):
    x = attached_scalar()
    args = {"max": (x, x), "min": (x, x), "sum": ([x, x],), "pow": (x, 2), "abs": (x,)}.get(name, (x.expand(2, 1),))
    result = call(name, *args)
    first = result[0] if isinstance(result, list) else result
    assert not builtins_api.gives_value(name) and first.grad_fn is not None
