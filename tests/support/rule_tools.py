"""Findings for the per-rule tests: on a snippet, of the default rules (plus any opt-in ones named) or of
one rule run alone; of one rule on a notebook made of code cells; of one rule in a `case_*` function of
its bad fixture."""
from __future__ import annotations

import ast
import textwrap

from tests.support.fixture_tools import fixture_path
from tests.support.notebook_tools import code_notebook
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE, RULES
from flake8_tensorcopy.sources.notebook import read_notebook

DEFAULT = [r for r in RULES if r.default_on]

# A torch training loop; {line} is the statement at the end of each step.
LOOP = """
import torch

def train(model, loader, optimizer, criterion):
    history = []
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        {line}
    return history, total
"""


def findings(source: str, *codes: str):
    rules = DEFAULT + [BY_CODE[c] for c in codes if not BY_CODE[c].default_on]
    return analyse(textwrap.dedent(source), "case.py", rules).findings


def codes(source: str) -> list[tuple[int, str]]:
    """Sorted (line, code) of the default rules' findings; the snippet must analyse without error."""
    result = analyse(textwrap.dedent(source), "t.py", DEFAULT)
    assert result.errors == []
    return sorted((f.line, f.code) for f in result.findings)


def findings_of(source: str, code: str):
    """The findings of one rule, run alone."""
    return [f for f in analyse(textwrap.dedent(source), "t.py", [BY_CODE[code]]).findings if f.code == code]


def notebook_findings(code: str, *cells: str):
    """(the notebook, the findings of one rule run alone) on a notebook of the given code cells."""
    nb = read_notebook(code_notebook(*cells))
    return nb, [f for f in analyse(nb.program, "nb.ipynb", [BY_CODE[code]], cell_ends=nb.cell_ends).findings
                if f.code == code]


def fixture_cases(code: str) -> list[str]:
    """The names of the `case_*` functions of the rule's bad fixture."""
    tree = ast.parse(fixture_path(code, "bad").read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("case_")]


def case_findings(code: str, case: str):
    """(the bad fixture's source, def `case`, the rule's findings inside it), the rule beside the defaults."""
    path = fixture_path(code, "bad")
    source = path.read_text(encoding="utf-8")
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == case)
    rules = DEFAULT + [BY_CODE[code]] * (not BY_CODE[code].default_on)
    return source, node, [f for f in analyse(source, str(path), rules).findings
                          if f.code == code and node.lineno <= f.line <= node.end_lineno]


def call_at(source: str, finding, method: str = "") -> ast.Call:
    """The outermost call that starts where the finding is (a call of `.method()`, if named)."""
    return next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
                and (n.lineno, n.col_offset) == (finding.line, finding.col)
                and (not method or isinstance(n.func, ast.Attribute) and n.func.attr == method))
