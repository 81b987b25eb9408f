"""The fixer on text: what it rewrites, what it leaves, and that a second run changes nothing."""
from __future__ import annotations

import pytest

from tests.support.fix_rules import GROW, SNAPSHOT, STRAY, SWAP
from tests.support.fixture_tools import fixture_path
from flake8_tensorcopy.engine.core import AnalysisError, select_rules
from flake8_tensorcopy.fix.fixer import FixError, fix_source
from flake8_tensorcopy.rules import BY_CODE, RULES

DEEPCOPY = '''\
import copy

import torch


def f(t: torch.Tensor, cfg):
    t = t[1:]
    # keep a copy of the input
    saved = copy.deepcopy(   t )   # odd spacing stays
    other = copy.deepcopy(cfg)
    return saved, other
'''


def test_rewrites_only_the_fixed_expression():
    out = fix_source(DEEPCOPY, rules=[BY_CODE["TEN201"]], unsafe=True)
    assert out.fixed == DEEPCOPY.replace("copy.deepcopy(   t )", "t.detach().clone()")
    assert [f.code for f in out.applied] == ["TEN201"] and out.remaining == []


@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_second_run_changes_nothing(code):
    source = fixture_path(code, "bad").read_text(encoding="utf-8")
    rules = select_rules(extend_select=[code])
    first = fix_source(source, rules=rules, unsafe=True)
    second = fix_source(first.fixed, rules=rules, unsafe=True)
    assert second.fixed == first.fixed and second.applied == []
    assert not any(f.code == code and f.fix for f in second.remaining)


def test_unsafe_fix_needs_the_flag():
    kept = fix_source(DEEPCOPY, rules=[BY_CODE["TEN201"]])
    assert kept.fixed == DEEPCOPY and [f.code for f in kept.remaining] == ["TEN201"]


def test_safe_fix_applies_by_default_and_unsafe_waits():
    source = "a = x.clone().detach()\nb = snapshot(y)\n"
    out = fix_source(source, rules=[SWAP, SNAPSHOT])
    assert out.fixed == "a = x.detach().clone()\nb = snapshot(y)\n"
    assert [f.code for f in out.remaining] == ["TEN991"]


def test_needed_import_added_once_in_the_import_block():
    source = '"""Doc."""\nimport os\nimport sys\n\nimport torch\n\na = snapshot(x)\nb = snapshot(y)\n'
    out = fix_source(source, rules=[SNAPSHOT], unsafe=True)
    assert out.fixed == ('"""Doc."""\nimport copy\nimport os\nimport sys\n\nimport torch\n\n'
                         'a = copy.deepcopy(x)\nb = copy.deepcopy(y)\n')
    assert fix_source(out.fixed, rules=[SNAPSHOT], unsafe=True).fixed == out.fixed


def test_existing_import_not_repeated():
    source = "import copy\n\nsnapshot(x)\n"
    assert fix_source(source, rules=[SNAPSHOT], unsafe=True).fixed == "import copy\n\ncopy.deepcopy(x)\n"


def test_noqa_finding_is_never_rewritten():
    source = ("a = x.clone().detach()  # noqa: TEN990\nb = x.clone().detach()  # noqa\n"
              "c = x.clone().detach()  # noqa: E501\nd = x.clone().detach()  # noqa:TEN9\n")
    out = fix_source(source, rules=[SWAP])
    assert out.fixed.splitlines() == ["a = x.clone().detach()  # noqa: TEN990", "b = x.clone().detach()  # noqa",
                                      "c = x.detach().clone()  # noqa: E501", "d = x.clone().detach()  # noqa:TEN9"]
    assert out.remaining == []  # suppressed findings are not reported either


def test_noqa_counted_on_ast_lines_past_a_form_feed():
    """str.splitlines() breaks at a form feed, ast does not: the noqa must still match its own line."""
    source = "x = 1\n\f\na = x.clone().detach()  # noqa: TEN990\nb = x.clone().detach()\n"
    out = fix_source(source, rules=[SWAP])
    assert out.fixed == source.replace("b = x.clone().detach()", "b = x.detach().clone()")


def test_select_and_ignore_choose_the_rules():
    source = fixture_path("TEN201", "bad").read_text(encoding="utf-8")
    assert not fix_source(source, rules=select_rules(ignore=["TEN201"]), unsafe=True).changed
    assert not fix_source(source, rules=select_rules(select=["TEN101"]), unsafe=True).changed
    assert fix_source(source, rules=select_rules(select=["TEN2"]), unsafe=True).changed


def test_overlapping_fixes_settle_over_passes():
    out = fix_source("a = f(x.clone().detach()).clone().detach()\n", rules=[SWAP])
    assert out.fixed == "a = f(x.detach().clone()).detach().clone()\n"
    assert len(out.applied) == 2


def test_fix_that_never_settles_is_refused():
    with pytest.raises(FixError, match="did not settle"):
        fix_source("grow(1)\n", rules=[GROW])


def test_edit_outside_the_line_is_not_applied():
    out = fix_source("y = stray(1)\n", rules=[STRAY])
    assert out.fixed == "y = stray(1)\n" and [f.code for f in out.remaining] == ["TEN993"]
    assert out.errors == ["TEN993 fix at line 1 points outside the text"]


def test_unparsable_source_raises():
    with pytest.raises(AnalysisError):
        fix_source("x = y.detach()(\n", rules=RULES)


def test_crlf_and_missing_final_newline_kept_with_an_import():
    source = "import os\r\n\r\na = snapshot(x)"
    out = fix_source(source, rules=[SNAPSHOT], unsafe=True)
    assert out.fixed == "import copy\r\nimport os\r\n\r\na = copy.deepcopy(x)"


def test_non_ascii_columns():
    source = ("import copy\nimport torch\n\n\ndef f(t: torch.Tensor):\n    t = t[1:]\n"
              "    s = 'çà'; return copy.deepcopy(t)\n")
    out = fix_source(source, rules=[BY_CODE["TEN201"]], unsafe=True)
    assert out.fixed == source.replace("copy.deepcopy(t)", "t.detach().clone()").replace("import copy\n", "")


def test_stdlib_import_opens_its_own_section_before_third_party_imports():
    source = "from __future__ import annotations\n\nimport torch\nfrom torch import nn\n\na = snapshot(x)\n"
    out = fix_source(source, rules=[SNAPSHOT], unsafe=True)
    assert out.fixed == ("from __future__ import annotations\n\nimport copy\n\nimport torch\nfrom torch import nn\n\n"
                         "a = copy.deepcopy(x)\n")


def test_import_opens_a_block_after_the_docstring():
    out = fix_source('"""Doc."""\n\n# about a\na = snapshot(x)\n', rules=[SNAPSHOT], unsafe=True)
    assert out.fixed == '"""Doc."""\n\nimport copy\n\n# about a\na = copy.deepcopy(x)\n'


def test_a_fix_that_would_leave_a_name_unbound_is_dropped_with_its_reason():
    from tests.support.fix_rules import REBIND
    from flake8_tensorcopy.fix.fixer import fix_source

    source = "memory = 1\n\n\ndef step():\n    keep(memory)\n\n\ndef local(m):\n    keep(m)\n"
    outcome = fix_source(source, "t.py", [REBIND])
    assert outcome.fixed == source.replace("    keep(m)", "    m = keep(m)")  # the parameter is safe to rebind
    (left,) = outcome.remaining
    assert left.line == 5 and "'memory'" in outcome.dropped[id(left)]


def test_fix_tags_a_dropped_fix_with_its_reason():
    from tests.support.fix_rules import REBIND
    from flake8_tensorcopy.cli import fix as fixcmd
    from flake8_tensorcopy.fix.fixer import fix_source

    outcome = fix_source("memory = 1\n\n\ndef step():\n    keep(memory)\n", "t.py", [REBIND])
    (left,) = outcome.remaining
    tag = fixcmd._tag(left, False, outcome.dropped[id(left)])
    assert tag == "fix dropped: the fix would leave 'memory' undefined or unbound"


def test_a_form_feed_does_not_stop_a_fix_on_a_non_ascii_line():
    """Columns are converted on the lines ast counts (a form feed does not end one), so a fix on a line
    with non-ASCII text is placed right in a file that holds a form feed."""
    source = "x = 1\n\f\ns = 'é'; a = x.clone().detach()\n"
    out = fix_source(source, rules=[SWAP])
    assert out.fixed == "x = 1\n\f\ns = 'é'; a = x.detach().clone()\n"
