"""analysis/clones.py: which clone() calls an expression keeps."""
from __future__ import annotations

import ast

import pytest

from flake8_tensorcopy.analysis.clones import is_clone, kept_clones


def kept(text: str) -> list[str]:
    return [ast.unparse(c) for c in kept_clones(ast.parse(text, mode="eval").body)]


@pytest.mark.parametrize("text, clones", [
    ("x.clone()", ["x.clone()"]),
    ("x.clone().cpu().float()", ["x.clone()"]),  # moved and cast: still the clone's graph
    ("(a.clone(), [b.clone().view(-1)])", ["a.clone()", "b.clone()"]),
    ("{'h': h.clone(), 'n': 3}", ["h.clone()"]),
    ("x.detach().clone()", []),
    ("x.data.clone()", []),
    ("x.detach().cpu().clone()", []),  # detached before the moves
    ("x.clone().sum()", []),  # a new value computed from the clone, not the clone
    ("f(x.clone())", []),
])
def test_kept_clones(text, clones):
    assert kept(text) == clones


def test_is_clone_needs_a_clone_method_call():
    assert is_clone(ast.parse("t.clone(memory_format=m)", mode="eval").body)
    assert not is_clone(ast.parse("torch.clone", mode="eval").body)
    assert not is_clone(ast.parse("t.clone", mode="eval").body)
