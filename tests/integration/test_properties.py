"""Property-based robustness (issue 6): generated programs never crash the engine or the plugin, and
programs built from the fixtures' vocabulary get the same findings every time, from every adapter.

The number of examples comes from the hypothesis profile (tests/conftest.py): HYPOTHESIS_PROFILE=long
runs them for longer.
"""
from __future__ import annotations

import ast
import dataclasses
import re

import hypothesmith
import pytest
from hypothesis import given, settings

from tests.support.programs import programs, run_plugin
from flake8_tensorcopy.engine.core import AnalysisError, analyse, could_fire, partial_tree
from flake8_tensorcopy.rules import RULES

pytestmark = pytest.mark.slow  # generated programs through the engine and the plugin
# Every rule (opt-in ones too), past the pre-filter, so a generated program is always walked.
ALWAYS = [dataclasses.replace(r, trigger=re.compile("")) for r in RULES]
SLOW = settings(settings.default, max_examples=max(1, settings.default.max_examples // 3))


def survives(source: str) -> None:
    """The engine either analyses the source or refuses it in one line; the plugin never raises."""
    try:
        result = analyse(source, "generated.py", ALWAYS)
    except AnalysisError as exc:
        assert "\n" not in str(exc)
        return
    assert result.errors == []
    tree = ast.parse(source)
    out = run_plugin(tree, source.splitlines(keepends=True), "generated.py")
    assert not [o for o in out if o[2].startswith("TEN000")], out


@SLOW
@given(hypothesmith.from_grammar())
def test_grammar_generated_programs_never_crash(source):
    survives(source)


@SLOW
@given(hypothesmith.from_node())
def test_libcst_generated_programs_never_crash(source):
    survives(source)


def as_tuples(findings) -> list[tuple]:
    return [(f.line, f.col, f.code, f.message, f.fix) for f in findings]


@given(programs())
def test_composed_programs_are_analysed_deterministically(source):
    ast.parse(source)  # the composition is valid Python
    first = analyse(source, "composed.py", RULES)
    assert first.errors == [] and first.parsed == bool(could_fire(source, RULES))
    again = analyse(source, "composed.py", RULES)
    assert as_tuples(first.findings) == as_tuples(again.findings)
    lines = source.splitlines(keepends=True)
    for f in first.findings:
        assert 0 < f.line <= f.end_line <= len(lines)
        for edit in f.fix.edits if f.fix else ():
            assert (0, 0) < edit.start <= edit.end and edit.end[0] <= len(lines)
    plugin = [(line, col, text.split()[0]) for line, col, text, _ in
              run_plugin(ast.parse(source), lines, "composed.py")]
    assert plugin == [(f.line, f.col, f.code) for f in first.findings]
    partial = partial_tree(source, RULES)  # the tree a file that does not parse falls back to
    if partial is not None:
        assert as_tuples(analyse(source, "composed.py", RULES, tree=partial).findings) == as_tuples(first.findings)
