"""Runtime proof: for every rule with a fix, the fixer's output of the rule's bad fixture compiles,
no longer reports the rule, runs, and passes the rule's own `assert_fixed` claim with real torch.

Generic over the registry: a rule added with a fix is covered here without touching this file."""
from __future__ import annotations

import ast
import importlib.util
import shutil

import pytest

from tests.support.fixture_tools import by_hand, cases, fixture_path, load, swap_defs
from flake8_tensorcopy.cli.main import main
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules.model import FixAvailability
from flake8_tensorcopy.rules import BY_CODE, RULES

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

FIXABLE = [r.code for r in RULES if r.fix is not FixAvailability.NEVER]


def import_path(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fixed_by_fixer(request, tmp_path):
    code = request.param
    target = tmp_path / f"fixed_by_fixer_{code}.py"
    shutil.copyfile(fixture_path(code, "bad"), target)
    # the rules the fixture is checked with: every default-on rule and its own (fixed.py is clean under them);
    # exit 1 when findings without a fix remain (in the defs fixed.py rewrites by hand)
    assert main(["fix", "--unsafe-fixes", "--extend-select", code, str(target)]) == (1 if by_hand(code) else 0)
    return code, target


def test_every_fixable_rule_is_covered():
    assert FIXABLE and all(fixture_path(c, "bad").exists() for c in FIXABLE)


@pytest.mark.parametrize("fixed_by_fixer", FIXABLE, indirect=True)
def test_fixer_output_removes_the_hazard(fixed_by_fixer):
    code, target = fixed_by_fixer
    source = target.read_text(encoding="utf-8")
    compile(source, str(target), "exec")
    left = [f for f in analyse(source, str(target), [BY_CODE[code]]).findings if f.code == code]
    assert all(f.fix is None for f in left) and bool(left) == bool(by_hand(code))
    # the defs the fixer leaves, as fixed.py rewrites them by hand: then nothing is left
    source = swap_defs(source, by_hand(code), fixture_path(code, "fixed").read_text(encoding="utf-8"))
    target.write_text(source, encoding="utf-8")
    assert [f for f in analyse(source, str(target), [BY_CODE[code]]).findings if f.code == code] == []
    fixed = cases(import_path(target, f"fixer_output_{code}"))
    assert sorted(fixed) == sorted(cases(import_path(fixture_path(code, "bad"), f"bad_{code}")))
    load(code, "claim").assert_fixed(fixed)


@pytest.mark.parametrize("fixed_by_fixer", FIXABLE, indirect=True)
def test_fixer_output_is_the_fixed_fixture(fixed_by_fixer):
    """fixed.py documents what the fix produces: the same functions, apart from comments and docstrings
    (imports may differ: the fixer adds what a fix needs but never removes one left unused), except the
    defs whose findings have no fix: the fixer leaves those as bad.py has them."""
    code, target = fixed_by_fixer
    output, hand = target.read_text(encoding="utf-8"), by_hand(code)
    fixed, bad = (fixture_path(code, v).read_text(encoding="utf-8") for v in ("fixed", "bad"))
    assert _code_only(swap_defs(output, hand, fixed)) == _code_only(fixed)
    assert _code_only(swap_defs(output, hand, bad)) == _code_only(output)


def _code_only(source: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(
                body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return "\n".join(ast.dump(n) for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom)))
