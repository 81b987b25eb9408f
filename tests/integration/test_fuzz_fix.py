"""Fuzzing the fixer (issue 6) with programs composed from the fixtures' vocabulary: every fix output
parses and compiles, is a fixed point, and differs from the input only where findings were reported.

Written against `flake8_tensorcopy.fix.fixer.fix_source(source, unsafe=True)`, built on the fixer branch.
"""
from __future__ import annotations

import ast
import difflib

import pytest
from hypothesis import given

from tests.support.programs import compiles, programs

pytestmark = pytest.mark.slow  # the fixer over generated programs


def fixed_text(source: str) -> str:
    from flake8_tensorcopy.fix.fixer import fix_source  # imported here: a missing fixer fails these tests only

    out = fix_source(source, unsafe=True)
    return out if isinstance(out, str) else out.fixed  # the text, or an outcome that carries it


def is_import(line: str) -> bool:
    stripped = line.strip()
    if not stripped:
        return True
    try:
        body = ast.parse(stripped).body
    except SyntaxError:
        return False
    return all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body)


@given(programs())
def test_fix_output_parses_compiles_and_is_a_fixed_point(source):
    fixed = fixed_text(source)
    ast.parse(fixed)
    assert compiles(fixed) or not compiles(source)
    assert fixed_text(fixed) == fixed


@given(programs())
def test_fix_changes_only_reported_lines(source):
    from flake8_tensorcopy.fix.fixer import fix_source

    # Every pass's applied findings: a fix may reveal a finding the first pass could not see
    # (`x.detach()` -> `x = x.detach()` makes `x` a tensor, and its `.data` a TEN903 finding).
    applied = fix_source(source, unsafe=True).applied
    fixable = set()
    for f in applied:
        for edit in f.fix.edits if f.fix else ():
            fixable.update(range(edit.start[0], edit.end[0] + 1))
    fixed = fixed_text(source)
    before, after = source.splitlines(), fixed.splitlines()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        changed = set(range(i1 + 1, i2 + 1))
        if tag == "insert" or not changed:
            assert all(is_import(line) for line in after[j1:j2]), after[j1:j2]  # added imports only
            continue
        assert changed <= fixable | {n for n in changed if is_import(before[n - 1])}, (
            tag, before[i1:i2], after[j1:j2], sorted(fixable))
