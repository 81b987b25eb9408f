"""TEN905 (unused-noqa, opt-in): which TEN codes of a `# noqa` comment it reports as suppressing nothing,
which it leaves alone, and what its safe fix leaves. How the pipeline reads the comments and that every
front end gives the rule: tests/pipeline/test_unused_noqa.py."""
from __future__ import annotations

import re

import pytest

from tests.support.fixture_tools import fixture_path
from tests.support.noqa_tools import CLEAN, DEEPCOPY, HEAD, WITH_TEN905, unused
from flake8_tensorcopy.engine.core import select_rules
from flake8_tensorcopy.fix.fixer import fix_source


@pytest.mark.parametrize("line, comment, codes", [
    (CLEAN, "# noqa: TEN201", "TEN201"),
    (CLEAN, "# noqa: TEN2", "TEN2"),  # a prefix with no TEN2xx finding on the line
    (CLEAN, "# noqa: E501, TEN101,TEN201", "TEN101, TEN201"),
    (DEEPCOPY, "# noqa: TEN201,TEN101", "TEN101"),  # TEN201 is used, TEN101 is not
    (CLEAN, "# NOQA:TEN201", "TEN201"),
])
def test_reports_the_codes_no_finding_needs(line, comment, codes):
    col = len(line) + 3
    [(at, column, message)] = unused(f"{HEAD}{line}  {comment}\n")
    assert (at, column) == (8, col) and message.startswith(f"unused noqa: {codes} ")


@pytest.mark.parametrize("line, comment", [
    (DEEPCOPY, "# noqa: TEN201"), (DEEPCOPY, "# noqa: TEN2"), (DEEPCOPY, "# noqa: TEN"),
    (CLEAN, "# noqa"),  # bare
    (CLEAN, "# noqa: E501,F401"),  # other tools' codes
    (CLEAN, "# noqa: TEN903"),  # an opt-in code the run leaves off: it cannot know
    (CLEAN, "# noqa: TEN999"),  # a code that names no rule
    (CLEAN, "# noqa: ten201"),  # names no code (flake8 matches case-sensitively)
    (CLEAN, "# noqa: TEN905,TEN201"),  # its own code silences its finding, as flake8 would
    (CLEAN + '; s = "# noqa: TEN201"', ""),  # text in a string is not a comment
])
def test_leaves_alone(line, comment):
    assert unused(f"{HEAD}{line}  {comment}\n") == []


def test_an_opt_in_code_counts_once_the_run_enables_it():
    source = f"{HEAD}    return hidden.data  # noqa: TEN903\n"
    assert unused(source) == []
    assert unused(source.replace("hidden.data", "hidden.detach()"), select_rules(extend_select=["TEN903", "TEN905"]))
    assert unused(source, select_rules(extend_select=["TEN903", "TEN905"])) == []  # TEN903 fires: used


def test_fix_removes_the_comment_with_the_spaces_before_it_and_settles():
    source = f"{HEAD}{CLEAN}   # noqa: TEN201\n    # noqa: TEN101\n"
    out = fix_source(source, rules=WITH_TEN905)
    assert out.fixed == f"{HEAD}{CLEAN}\n\n" and [f.code for f in out.applied] == ["TEN905", "TEN905"]
    assert out.remaining == [] and fix_source(out.fixed, rules=WITH_TEN905).fixed == out.fixed


def test_the_fixer_turns_bad_into_fixed():
    bad, fixed = (fixture_path("TEN905", v).read_text(encoding="utf-8") for v in ("bad", "fixed"))
    produced = fix_source(bad, rules=WITH_TEN905).fixed
    assert re.sub(r"  # expect: [^\n]*", "", produced) == fixed
