"""analysis/accumulators.py: what an accumulator across the steps of a loop is."""
from __future__ import annotations

import ast

import pytest

from tests.support.analysis_tools import context_at
from flake8_tensorcopy.analysis import accumulators


def statement(text: str) -> ast.stmt:
    return ast.parse(text).body[0]


@pytest.mark.parametrize("text, acc, value", [
    ("total += loss", "total", "loss"),
    ("stats[k] = stats[k] + v", "stats[k]", "v"),
    ("stats[k] = stats.get(k, 0) + v", "stats[k]", "v"),
    ("history.append(loss)", "history", "loss"),
    ("history.insert(0, loss)", "history", "loss"),
    ("total -= loss", None, None),
    ("stats[k] = other[k] + v", None, None),  # not the entry itself
    ("history.append(loss, key=1)", None, None),
    ("print(loss)", None, None),
])
def test_accumulation(text, acc, value):
    found = accumulators.accumulation(statement(text))
    if acc is None:
        assert found is None
    else:
        assert (ast.unparse(found[0]), [ast.unparse(v) for v in found[1]]) == (acc, [value])


@pytest.mark.parametrize("text, key", [("stats", "stats"), ("stats[k][j]", "stats"),
                                       ("self.history[k]", "self.history"), ("f()[0]", None)])
def test_root_key(text, key):
    assert accumulators.root_key(ast.parse(text, mode="eval").body) == key


TRAINING = """
    import torch
    def fit(model, loader, optimizer):
        total = 0.0
        for x, y in loader:
            loss = model(x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss  # <-
{after}
"""


def test_the_training_loop_an_accumulator_outlives():
    node, ctx = context_at(TRAINING.format(after=""))
    loop = accumulators.outlived_training_loop("total", node.target, ctx)
    assert isinstance(loop, ast.For) and loop.lineno == 5


def test_reset_inside_the_loop_bounds_what_is_kept():
    node, ctx = context_at(TRAINING.format(after="            total = 0.0"))
    assert accumulators.outlived_training_loop("total", node.target, ctx) is None


def test_a_loop_that_does_not_train_is_not_outlived():
    node, ctx = context_at(TRAINING.replace("            loss.backward()\n            optimizer.step()\n", "")
                           .format(after=""))
    assert accumulators.outlived_training_loop("total", node.target, ctx) is None
