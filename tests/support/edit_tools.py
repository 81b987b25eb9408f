"""Applying a finding's fix edits to source text, the way the fixer will, and reading what an edit replaces
(used by rule tests)."""
from __future__ import annotations

from flake8_tensorcopy.engine.core import analyse


def _offset(source: str):
    """(line, col) -> index into `source`."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return lambda pos: starts[pos[0] - 1] + pos[1]


def replaced(source: str, edit) -> str:
    """The text of `source` an edit replaces ('' for an insertion)."""
    offset = _offset(source)
    return source[offset(edit.start):offset(edit.end)]


def apply_edits(source: str, edits) -> str:
    offset = _offset(source)
    out = source
    for edit in sorted(edits, key=lambda e: offset(e.start), reverse=True):
        out = out[: offset(edit.start)] + edit.text + out[offset(edit.end):]
    return out


def fix_all(source: str, rules) -> str:
    """Every fix of every finding applied at once (fixes of one pass never overlap in the fixtures)."""
    findings = analyse(source, "fixture.py", rules).findings
    return apply_edits(source, [e for f in findings if f.fix for e in f.fix.edits])
