"""analysis/numbers.py: values that hold no autograd graph."""
from __future__ import annotations

import pytest

from tests.support.analysis_tools import context_at
from flake8_tensorcopy.analysis import numbers


def graph_free(value: str, before: str = "") -> bool:
    node, ctx = context_at(f"""
        import torch
        def as_number(t):
            return float(t)
        def f(loss, model, x):
            {before}
            kept = {value}  # <-
    """)
    return numbers.graph_free(node.value, ctx, 0)


@pytest.mark.parametrize("value", ["1.5", "loss.item()", "float(loss)", "loss.detach()", "as_number(loss)",
                                   "loss.item() * 2 + 1"])
def test_graph_free(value):
    assert graph_free(value)


@pytest.mark.parametrize("value", ["loss", "loss * 2", "model(x)", "loss.sum()"])
def test_not_graph_free(value):
    assert not graph_free(value)


def test_a_name_bound_to_a_number():
    assert graph_free("v", before="v = loss.item()")
    assert not graph_free("v", before="v = loss + 1")


@pytest.mark.parametrize("text, expected", [("3", True), ("(1, 2.0)", True), ("{'a': 1}", True),
                                            ("len(x)", True), ("t.item()", True), ("t", False), ("[t]", False)])
def test_plain_number(text, expected):
    import ast

    assert numbers.plain_number(ast.parse(text, mode="eval").body) is expected


def test_number_dict():
    node, ctx = context_at("""
        def f(losses):
            logs = {k: v.item() for k, v in losses.items()}
            kept = logs["ce"]  # <-
    """)
    assert numbers.number_dict(node.value.value, ctx)
    node, ctx = context_at("""
        def f(losses):
            logs = {k: v for k, v in losses.items()}
            kept = logs["ce"]  # <-
    """)
    assert not numbers.number_dict(node.value.value, ctx)
