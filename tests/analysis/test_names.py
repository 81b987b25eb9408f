"""Every name heuristic matches its must-cases and none of its must-not cases, on whole words."""
from __future__ import annotations

import pytest

from flake8_tensorcopy.analysis import names

CASES = [(n, h, ident, True) for n, h in names.ALL.items() for ident in h.must] + \
        [(n, h, ident, False) for n, h in names.ALL.items() for ident in h.must_not]


def test_every_heuristic_has_cases_both_ways():
    assert all(h.must and h.must_not for h in names.ALL.values())
    assert {"PARAM_UPDATE_FUNC", "MODULE_NAME", "LOSS_FUNC", "PARAM_NAME"} <= set(names.ALL)


@pytest.mark.parametrize("name, heuristic, identifier, expected", CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_heuristic(name, heuristic, identifier, expected):
    assert heuristic(identifier) is expected


@pytest.mark.parametrize("identifier, expected", [
    ("_init_weights", ("init", "weights")), ("emaUpdate", ("ema", "update")), ("QNet2", ("q", "net")),
    ("self._finalizer", ("self", "finalizer")), ("LSTMCell", ("lstm", "cell")), ("", ()), (None, ()),
])
def test_words(identifier, expected):
    assert names.words(identifier) == expected
