"""A finding's own edits turn bad.py into fixed.py (import lines aside: adding or removing imports is
the fixer's job), for the rules whose fixed.py was written to be exactly the fix's output."""
from __future__ import annotations

import re

import pytest

from tests.support.edit_tools import fix_all
from tests.support.fixture_tools import by_hand, fixture_path, swap_defs
from tests.support.rule_tools import DEFAULT
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

EXPECT_COMMENT = re.compile(r"\s*# expect: .*$")


def apply_edits(source: str, edits) -> str:
    """Apply non-overlapping edits, last first, so earlier positions stay valid."""
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        start = offsets[edit.start[0] - 1] + edit.start[1]
        end = offsets[edit.end[0] - 1] + edit.end[1]
        source = source[:start] + edit.text + source[end:]
    return source


def code_lines(source: str) -> list[str]:
    return [EXPECT_COMMENT.sub("", line) for line in source.splitlines()
            if line.strip() and not re.match(r"\s*(import|from)\s", line)]


@pytest.mark.parametrize("code", ["TEN202", "TEN204", "TEN301"])
def test_fix_edits_produce_fixed_fixture(code):
    bad = fixture_path(code, "bad").read_text(encoding="utf-8")
    findings = analyse(bad, "bad.py", [BY_CODE[code]]).findings
    hand, expected = by_hand(code), fixture_path(code, "fixed").read_text(encoding="utf-8")
    assert findings and len([f for f in findings if f.fix is None]) == (3 if code == "TEN204" else 0)
    fixed = apply_edits(bad, [e for f in findings if f.fix is not None for e in f.fix.edits])
    assert code_lines(swap_defs(fixed, hand, expected)) == code_lines(expected)  # by hand: no fix there
    if code == "TEN301":
        assert all(f.fix.imports == ("copy",) for f in findings if "deepcopy" in f.fix.edits[0].text)


@pytest.mark.parametrize("code", ["TEN401", "TEN901", "TEN902", "TEN903"])
def test_fixed_fixture_is_exactly_what_the_fixes_produce(code):
    """Apart from the defs and classes whose findings have no fix: fixed.py rewrites those by hand."""
    bad, fixed = (fixture_path(code, v).read_text(encoding="utf-8") for v in ("bad", "fixed"))
    rules = DEFAULT + ([BY_CODE[code]] if not BY_CODE[code].default_on else [])
    produced = re.sub(r"  # expect: [^\n]*", "", fix_all(bad, rules))
    assert swap_defs(produced, by_hand(code), fixed) == fixed
