"""Accumulation shapes read as what they are (analysis/accumulators.py): `total = total + loss` is
`total += loss`, and `log[step] = loss` with `step` bound by the loop adds an entry every step, as an
append does; neither resets the accumulator."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.engine import core as engine

LOOP = """
    import torch.nn.functional as F


    def train(model, loader, opt):
        total = 0.0
        log = {made}
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            {line}
        return total, log
"""


def codes(source: str) -> list[tuple[int, str]]:
    result = engine.analyse(textwrap.dedent(source), "t.py", [r for r in engine.RULES if r.default_on])
    assert result.errors == []
    return sorted((f.line, f.code) for f in result.findings)


@pytest.mark.parametrize("line", ["total = total + loss", "log[step] = loss", "total += loss"])
def test_an_accumulation_in_any_spelling_keeps_the_graph(line):
    assert codes(LOOP.format(made="{}", line=line)) == [(13, "TEN401")]


@pytest.mark.parametrize("line", ["total = total + loss.item()", "log[step] = loss.detach()",
                                  "log[0] = loss", "total = loss + 1"])
def test_numbers_detached_values_fixed_keys_and_rebinding_are_quiet(line):
    assert codes(LOOP.format(made="{}", line=line)) == []


def test_an_entry_of_a_tensor_is_a_copy_not_a_kept_reference():
    assert codes(LOOP.format(made="torch.zeros(10)", line="log[step] = loss").replace(
        "import torch.nn.functional as F", "import torch\n    import torch.nn.functional as F")) == []
