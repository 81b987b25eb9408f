"""The registry: codes unique and valid, every rule documented, with fixtures and a claim test."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from flake8_tensorcopy.rules.model import FixSafety, RuleSpec
from flake8_tensorcopy.rules import RULES, catalog_entry, module_specs

ROOT = Path(__file__).resolve().parent.parent


def test_the_catalog_says_what_the_rule_modules_say():  # else: python scripts/gen_docs.py
    modules = module_specs()
    assert [catalog_entry(r) for r in RULES] == [catalog_entry(m) for m in modules]
    for lazy, real in zip(RULES, modules):
        assert lazy.nodes == real.nodes and lazy.trigger.patterns == real.trigger.patterns
        assert lazy.check.module == real.check.__module__


def test_codes_unique_and_valid():
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"TEN[1-9]\d\d", c) for c in codes)
    assert codes == sorted(codes)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_is_documented(rule):
    headings = [h for h in re.findall(r"^## (.+)$", rule.doc, re.M) if h != "Known problems"]
    assert headings == list(RuleSpec.docs_sections)  # "Known problems" may stand before References
    assert rule.summary and rule.message and rule.claim
    assert (rule.code.startswith("TEN9")) == (not rule.default_on)
    if rule.fix_safety is not FixSafety.NONE:
        fix_text = rule.doc.split("## Fix safety", 1)[1].split("##", 1)[0].lower()
        assert rule.fix_safety.value in fix_text


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_has_fixtures_and_claim_test(rule):
    for variant in ("bad", "good", "fixed", "claim"):
        assert (ROOT / "fixtures" / rule.code / f"{variant}.py").is_file()
    text = (ROOT / "fixtures" / rule.code / "claim.py").read_text()
    assert "def assert_hazard(" in text and "def assert_fixed(" in text  # run by tests/test_claims.py


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_trigger_matches_every_bad_fixture(rule):
    source = (ROOT / "fixtures" / rule.code / "bad.py").read_text()
    assert rule.trigger.search(source)


def test_linter_never_imports_torch():  # the import statements, not the docs' examples
    for path in (ROOT / "flake8_tensorcopy").rglob("*.py"):
        assert not [name for name in imported(ast.parse(path.read_text(encoding="utf-8")))
                    if name.split(".")[0] == "torch"], path


def test_no_line_of_the_package_reads_as_a_torch_import():
    """Not even in a docstring: a text search for `import torch` (as reviewers and auditors run) finds
    nothing; docs.runnable() adds the imports to the rule docs' examples."""
    for path in (ROOT / "flake8_tensorcopy").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.findall(r"^[ \t]*(?:import|from)[ \t]+torch\b", text, re.M), path


def imported(tree: ast.Module) -> list[str]:
    """Every module an import statement of the tree names (a relative import counts as its own package)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append(node.module or "")
    return found


def test_the_import_check_sees_imports_inside_functions_but_not_in_docstrings():
    tree = ast.parse('"""import torch"""\ndef f():\n    from torch import nn\n    import copy, torch.nn\n')
    assert imported(tree) == ["torch", "copy", "torch.nn"]
