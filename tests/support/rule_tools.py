"""Findings for the per-rule tests: on a snippet, of the default rules (plus any opt-in ones named) or of
one rule run alone; of one rule on a notebook made of code cells."""
from __future__ import annotations

import textwrap

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

