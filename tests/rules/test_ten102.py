"""TEN102 (data-inplace-write): an in-place write through `.data` that autograd cannot see. Over the cases
of its bad fixture: the message names the tensor `.data` belongs to and how the write reaches it (a name
bound to `.data`, or the write's result kept), and the fix replaces that `.data` where it is made, at the
binding or at the kept write (where each finding is, tests/rules/test_fixtures.py)."""
from __future__ import annotations

import re

import pytest

from tests.support.edit_tools import replaced
from tests.support.rule_tools import case_findings, fixture_cases

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

MESSAGE = re.compile(r"in-place write through '(?P<via>[^']+)' \((?:bound to (?P<bound>\w+)\.data|kept as "
                     r"'(?P<kept>\w+)')\) changes '(?P<source>\w+)' behind autograd's back .*")


@pytest.mark.parametrize("case", fixture_cases("TEN102"))
def test_the_fix_copies_the_data_the_message_names_where_it_is_made(case):
    source, node, (finding,) = case_findings("TEN102", case)
    said = MESSAGE.fullmatch(finding.message)
    (edit,) = finding.fix.edits
    assert (replaced(source, edit), edit.text) == (f"{said['source']}.data", f"{said['source']}.detach().clone()")
    made = source.splitlines()[edit.start[0] - 1].strip()
    if said["bound"]:  # the alias is bound earlier in the def; the write goes through it
        assert said["bound"] == said["source"] and node.lineno < edit.start[0] < finding.line
        assert made.startswith(f"{said['via']} = {said['source']}.data")
    else:  # the write through `.data` itself, its result kept
        assert edit.start[0] == finding.line and made.startswith(f"{said['kept']} = {said['via']}")
