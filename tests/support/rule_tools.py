"""Findings of the default rules, plus any opt-in ones named, on a snippet (used by the per-rule tests)."""
from __future__ import annotations

import textwrap

from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE, RULES

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
