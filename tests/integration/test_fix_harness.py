"""scripts/fix_harness.py: each check catches the broken fix it is for, and a clean fix passes.

The run over the corpora is a CI step (.ci/run), not a test: it needs the corpus cache.
"""
from __future__ import annotations

import ast
import dataclasses

import pytest

from tests.support.cli_tools import load_script

from flake8_tensorcopy.engine.core import AnalysisError
from flake8_tensorcopy.fix.fixer import Outcome, fix_source, reported
from flake8_tensorcopy.rules import RULES

harness = load_script("fix_harness")

SOURCE = '''import copy

import torch


def f(w: torch.Tensor, cfg):
    t = torch.ones(3, requires_grad=True) * w
    return copy.deepcopy(t), copy.copy(cfg)
'''
FIXED = SOURCE.replace("copy.deepcopy(t)", "t.detach().clone()")


def _outcome(fixed: str, source: str = SOURCE) -> Outcome:
    """The outcome of a fixer that turned `source` into `fixed` by fixing its first TEN201 finding."""
    finding = [f for f in reported(source, "t.py", RULES)[0] if f.code == "TEN201"][0]
    out = Outcome(source, fixed, applied=[finding], passes=[(source, [finding])])
    try:
        out.remaining = reported(fixed, "t.py", RULES)[0]
    except AnalysisError:
        pass
    return out


def test_the_real_fix_passes():
    outcome = fix_source(SOURCE, "t.py", RULES, unsafe=True)
    assert outcome.fixed == FIXED
    assert harness.broken(outcome, "t.py") == []


@pytest.mark.parametrize("fixed, says", [
    (FIXED.replace("t.detach().clone()", "t.detach(.clone()"), "does not compile"),
    (FIXED.replace("t.detach().clone()", "u.detach().clone()"), "pyflakes: line 8: undefined name 'u'"),
    (FIXED.replace("import copy\n", "import copy\nimport os\n"), "pyflakes: line 2: 'os' imported but unused"),
    (FIXED.replace("copy.copy(cfg)", "copy.deepcopy(t)"), "TEN201 reported again at line 8"),
    (FIXED.replace("copy.copy(cfg)", "copy.deepcopy(t)"), "a second fix run changes it again (TEN201)"),
    (FIXED.replace("copy.copy(cfg)", "{}.detach()"), "new call .detach() on '{}', a dict, list, tuple or set"),
])
def test_each_kind_of_broken_fix_is_a_failure(fixed, says):
    problems = harness.broken(_outcome(fixed), "t.py")
    assert any(says in p for p in problems), problems


def test_a_finding_left_unfixed_in_the_fixed_statement_is_not_a_failure():
    source = SOURCE.replace("copy.copy(cfg)", "copy.deepcopy(t)")
    fixed = source.replace("copy.deepcopy(t)", "t.detach().clone()", 1)  # the second is left, as it was
    assert harness.reported_again(_outcome(fixed, source), harness.parse(fixed, "t.py"), "t.py") == ([], [])
    twice = "copy.deepcopy(t), copy.deepcopy(t)"
    fixed = source.replace(twice, "t.detach().clone(), " + twice)  # a fix that kept what it fixed
    assert harness.reported_again(_outcome(fixed, source), harness.parse(fixed, "t.py"), "t.py") == (
        ["TEN201 reported again at line 8 after its fix"], [])


def test_another_rules_finding_a_fix_exposes_is_listed_not_failed():
    """A fix rewrites a statement into one another rule reports (TEN903's `.data` -> `.detach()`, then a write
    through the alias that TEN101 reports, its own fix withheld): shown in the report, not a failure."""
    source = "import torch\nx = torch.ones(3)\ny = x.data\ny.add_(1)\nz = x * 2\n"
    fixed = source.replace("x.data", "x.detach()")
    (applied,) = [f for f in reported(source, "t.py", RULES)[0] if f.code == "TEN903"]
    outcome = Outcome(source, fixed, applied=[applied], passes=[(source, [applied])],
                      remaining=reported(fixed, "t.py", RULES)[0])
    again, exposed = harness.reported_again(outcome, harness.parse(fixed, "t.py"), "t.py")
    assert again == [] and [e.split(" at ")[0] for e in exposed] == ["TEN101"]


def test_line_map_follows_inserted_lines():
    assert harness.line_map("a\nb\nc\n", "x\na\nB\nc\n") == {1: [2], 2: [3], 3: [4]}


def test_a_message_the_original_had_is_not_new_when_a_fix_moves_its_lines():
    """pyflakes's `redefinition of unused 'f' from line 3` names a line, which an added import moves."""
    before = "import torch\n\n\ndef f():\n    pass\n\n\ndef f():\n    pass\n"
    after = "import copy\n" + before + "copy.deepcopy(torch)\n"
    assert harness.new_pyflakes(harness.parse(before, "t.py"), harness.parse(after, "t.py"), "t.py") == []
    worse = after.replace("copy.deepcopy(torch)", "undefined_name")
    new = harness.new_pyflakes(harness.parse(before, "t.py"), harness.parse(worse, "t.py"), "t.py")
    assert [m for _, m in new] == ["'copy' imported but unused", "undefined name 'undefined_name'"]


def _with_fix(outcome: Outcome, **changes) -> Outcome:
    """`outcome` with its one applied fix changed (`tensors=()`: a fix that names no proven value)."""
    finding = outcome.applied[0]
    changed = dataclasses.replace(finding, fix=dataclasses.replace(finding.fix, **changes))
    return Outcome(outcome.source, outcome.fixed, applied=[changed], passes=[(outcome.source, [changed])])


def test_a_fix_with_its_proof_is_counted_as_proven():
    outcome = fix_source(SOURCE, "t.py", RULES, unsafe=True)
    proven: list[str] = []
    assert harness.without_proof(outcome, "t.py", proven) == []
    assert proven == ["TEN201"]


def test_a_fix_that_adds_a_method_without_proof_is_a_failure():
    outcome = _with_fix(fix_source(SOURCE, "t.py", RULES, unsafe=True), tensors=())
    (problem,) = harness.without_proof(outcome, "t.py", [])
    assert "adds .clone() with no value proven a tensor" in problem


def test_a_fix_whose_value_the_analysis_does_not_prove_is_a_failure():
    cfg = next(n for n in ast.walk(ast.parse(SOURCE)) if isinstance(n, ast.Name) and n.id == "cfg"
               and isinstance(n.ctx, ast.Load))
    outcome = _with_fix(fix_source(SOURCE, "t.py", RULES, unsafe=True),
                        tensors=((cfg.lineno, cfg.col_offset, cfg.end_lineno, cfg.end_col_offset),))
    (problem,) = harness.without_proof(outcome, "t.py", [])
    assert "'cfg' is not proven a tensor" in problem


def test_a_fix_that_only_reorders_calls_needs_no_proof():
    source = "def f(x):\n    return x.clone().detach()\n"
    outcome = fix_source(source, "t.py", RULES, unsafe=True)
    assert outcome.fixed == "def f(x):\n    return x.detach().clone()\n"  # TEN902 moves detach() first
    assert harness.without_proof(outcome, "t.py", []) == []
