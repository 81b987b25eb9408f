"""TEN202 (copy-copy-tensor): `copy.copy(t)` of a tensor, in any import form. Over the cases of its bad
fixture: the message names the tensor the call copies, and the fix writes the copy the message advises
in place of the call (where each finding is, tests/rules/test_fixtures.py)."""
from __future__ import annotations

import ast

import pytest

from tests.support.edit_tools import replaced
from tests.support.rule_tools import call_at, case_findings, fixture_cases

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


@pytest.mark.parametrize("case", fixture_cases("TEN202"))
def test_the_fix_replaces_the_call_with_the_copy_the_message_advises(case):
    source, _, (finding,) = case_findings("TEN202", case)
    call = call_at(source, finding)
    copied = ast.unparse(call.args[0])
    assert f"copy.copy() of tensor '{copied}' " in finding.message
    advice = finding.message.rsplit("; use ", 1)[1].removesuffix(" for a copy")
    assert advice == f"{copied}.detach().clone()"
    (edit,) = finding.fix.edits
    assert (replaced(source, edit), edit.text) == (ast.get_source_segment(source, call), advice)
