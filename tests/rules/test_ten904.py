"""TEN904 (kept-then-written, opt-in): a tensor kept by reference, then written in place. Over the cases of
its bad fixture: the line the message names is a later in-place write of the kept name in the same def,
the holder it names is the store's, and the fix keeps the clone the message advises in place of the name
(where each finding is, tests/rules/test_fixtures.py)."""
from __future__ import annotations

import re

import pytest

from tests.support.edit_tools import replaced
from tests.support.rule_tools import case_findings, fixture_cases

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

MESSAGE = re.compile(r"'(?P<name>\w+)' is kept by reference in '(?P<holder>[^']+)' and then written in place "
                     r"at line (?P<line>\d+): the kept value changes too; keep (?P<advice>\S+)")


@pytest.mark.parametrize("case", fixture_cases("TEN904"))
def test_the_message_names_the_later_write_and_the_fix_keeps_a_clone(case):
    source, node, (finding,) = case_findings("TEN904", case)
    said = MESSAGE.fullmatch(finding.message)
    name, written, lines = said["name"], int(said["line"]), source.splitlines()
    assert finding.line < written <= node.end_lineno
    assert re.search(rf"\b{name}\s*[-+*/]=|\b{name}\.\w+_\(", lines[written - 1]), lines[written - 1]
    assert lines[finding.line - 1].lstrip().startswith(said["holder"])
    (edit,) = finding.fix.edits
    assert (edit.start[0], replaced(source, edit), edit.text) == (finding.line, name, said["advice"])
    assert said["advice"] == f"{name}.clone()"
