"""The registry: codes unique and valid, every rule documented, with fixtures and a claim test."""
from __future__ import annotations

import ast
import dataclasses
import functools
import re
from importlib import import_module
from pathlib import Path

import pytest

from flake8_tensorcopy.engine.core import select_rules
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.rules.model import FixAvailability, FixForm, FixSafety, Rule
from flake8_tensorcopy.rules import MODULES, RULES, catalog_entry, module_rules
from flake8_tensorcopy.rules.docs import fix_metadata, rule_page

ROOT = Path(__file__).resolve().parents[2]


def test_the_catalog_says_what_the_rule_modules_say():  # else: python scripts/gen_docs.py
    modules = module_rules()
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
    assert headings == list(Rule.docs_sections)  # "Known problems" may stand before References
    assert rule.summary and rule.message and rule.claim
    assert (rule.code.startswith("TEN9")) == (not rule.default_on)
    fix_text = rule.doc.split("## Fix safety", 1)[1].split("##", 1)[0].lower()
    assert all(safety.value in fix_text for safety in rule.fix_safeties)


@pytest.mark.parametrize("module", MODULES)
def test_each_rule_module_declares_its_rule(module):
    rule = import_module(f"flake8_tensorcopy.rules.{module}").RULE
    assert isinstance(rule, Rule) and rule.code == module.upper()
    assert rule.doc == import_module(f"flake8_tensorcopy.rules.{module}").__doc__


def test_fix_availability_and_forms_agree():
    check = RULES[0].check
    with pytest.raises(ValueError, match="fix=never with 1 fix forms"):
        Rule(code="TEN999", name="x", message="m", nodes=(), check=check, trigger="x", claim="", doc="",
             fix_forms=(FixForm("x", FixSafety.SAFE),))
    with pytest.raises(ValueError, match="fix=sometimes with 0 fix forms"):
        Rule(code="TEN999", name="x", message="m", nodes=(), check=check, trigger="x", claim="", doc="",
             fix=FixAvailability.SOMETIMES)
    with pytest.raises(ValueError, match="must say what it changes"):
        Rule(code="TEN999", name="x", message="m", nodes=(), check=check, trigger="x", claim="", doc="",
             fix=FixAvailability.ALWAYS, fix_forms=(FixForm("x", FixSafety.UNSAFE),))


@functools.lru_cache(maxsize=None)
def fixture_findings() -> list:
    """Every finding of every rule on the fixtures (the review cases too), claims aside."""
    rules = select_rules(extend_select=["TEN"])
    return [f for p in sorted((ROOT / "fixtures").rglob("*.py")) if p.name != "claim.py"
            for f in lint(Document(str(p), p.read_text(encoding="utf-8")), rules).findings]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_declared_fixes_are_the_fixes_the_rule_makes(rule):
    """Every safety a rule declares shows on its fixtures, and it makes no fix of a safety it does not
    declare; a rule that always fixes leaves no finding without a fix."""
    fixes = [f.fix for f in fixture_findings() if f.code == rule.code]
    assert fixes
    made = {f.safety for f in fixes if f is not None}
    assert made == set(rule.fix_safeties)
    if rule.fix_offered is FixAvailability.ALWAYS:
        assert None not in fixes


def test_a_withheld_form_reports_the_finding_without_its_fix():
    """A fix form withheld until it is precise enough leaves its findings without a fix in every front end
    (the engine drops it), and the rule's metadata says so; lifted, the same finding has the fix."""
    from tests.support.fix_rules import SNAPSHOT

    source = "import copy\nsnapshot(x)\n"
    offered = lint(Document("t.py", source), [SNAPSHOT]).findings
    withheld_rule = dataclasses.replace(SNAPSHOT, fix_forms=tuple(dataclasses.replace(f, withheld="0 of 3 right")
                                                                  for f in SNAPSHOT.fix_forms))
    withheld = lint(Document("t.py", source), [withheld_rule]).findings
    assert [f.code for f in offered] == [f.code for f in withheld] == [SNAPSHOT.code]
    assert offered[0].fix is not None and withheld[0].fix is None
    assert withheld[0].withheld and not offered[0].withheld  # `fix` tags it "fix withheld", not "no fix"
    assert withheld_rule.fix_offered is FixAvailability.NEVER and withheld_rule.fix_safeties == ()
    metadata = fix_metadata(withheld_rule)
    assert metadata["fix"] == "never" and metadata["fix_forms"][0]["withheld"] == "0 of 3 right"
    assert "no fix (withheld)" in rule_page(withheld_rule) and "**Withheld**: 0 of 3 right" in rule_page(withheld_rule)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_forms_of_one_safety_are_withheld_together(rule):
    """A fix is matched to its form by its safety (Rule.withholds): forms that share one are withheld alike."""
    for safety in {f.safety for f in rule.fix_forms}:
        assert len({bool(f.withheld) for f in rule.fix_forms if f.safety is safety}) == 1


@pytest.mark.parametrize("module", MODULES)
def test_rule_modules_stay_short(module):
    """A rule module holds the rule, not analysis other rules could use: about 250 lines of code."""
    path = ROOT / "flake8_tensorcopy" / "rules" / f"{module}.py"
    text = path.read_text(encoding="utf-8")
    docstring = ast.parse(text).body[0]
    assert len(text.splitlines()) - docstring.end_lineno <= 250, path


@pytest.mark.parametrize("module", MODULES)
def test_a_rule_module_imports_no_other_rule(module):
    """What two rules share lives in analysis/ (or rules/edits.py, rules/context.py), not in a rule."""
    tree = ast.parse((ROOT / "flake8_tensorcopy" / "rules" / f"{module}.py").read_text(encoding="utf-8"))
    relative = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1]
    assert not [m for m in relative if re.fullmatch(r"ten\d+", m)]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_has_fixtures_and_claim_test(rule):
    for variant in ("bad", "good", "fixed", "claim"):
        assert (ROOT / "fixtures" / rule.code / f"{variant}.py").is_file()
    text = (ROOT / "fixtures" / rule.code / "claim.py").read_text()
    assert "def assert_hazard(" in text and "def assert_fixed(" in text  # run by tests/rules/test_claims.py


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
