"""`check --format json|sarif|github`, and `rules --format json`."""
from __future__ import annotations

import json

import jsonschema
import pytest

from tests.support.cli_tools import BAD, DEEPCOPY, ROOT, notebook_text, run_cli
from flake8_tensorcopy.pipeline.lint import Item
from flake8_tensorcopy.cli.formats import github_line, render
from flake8_tensorcopy.rules import RULES

SCHEMA_NAME = "sarif-schema-2.1.0.json"
# The official OASIS schema, copied from shared/data so the suite needs nothing beside the checkout.
SCHEMA_PLACES = [ROOT / "tests" / "data"]


@pytest.fixture
def project(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(DEEPCOPY)
    (tmp_path / "nb.ipynb").write_text(notebook_text())
    (tmp_path / "z_broken.py").write_text("def f(:\n    return copy.deepcopy(x)\n")
    return tmp_path


def test_json_schema(project):
    proc = run_cli("check", "--format", "json", ".", cwd=project)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2
    assert doc["version"] == 1 and doc["tool"]["name"] == "flake8-tensorcopy"
    assert doc["summary"] == {"files": 4, "findings": 10, "errors": 1, "by_code": {"TEN101": 8, "TEN201": 2}}
    first = doc["findings"][0]
    assert set(first) == {"path", "cell", "line", "column", "end_line", "end_column", "code", "name", "message",
                          "fix", "url"}
    where = (first["path"], first["cell"], first["line"], first["column"], first["code"])
    assert where == ("a.py", None, 9, 5, "TEN101")
    assert first["url"].endswith("docs/rules/TEN101.md") and first["fix"] in ("safe", "unsafe", None)
    nb = [f for f in doc["findings"] if f["path"] == "nb.ipynb"]
    assert [(f["cell"], f["line"], f["column"]) for f in nb] == [(4, 3, 13)]
    assert doc["errors"] == [{"path": "z_broken.py", "message": "cannot parse at line 1: invalid syntax"}]


def test_json_format_is_documented():
    page = (ROOT / "docs" / "json-format.md").read_text()
    keys = ["version", "tool", "summary", "findings", "errors", "path", "cell", "line", "column", "end_line",
            "end_column", "code", "name", "message", "fix", "url", "by_code"]
    assert all(f"`{key}`" in page for key in keys)


def sarif_schema() -> dict:
    for place in SCHEMA_PLACES:
        if (place / SCHEMA_NAME).is_file():
            return json.loads((place / SCHEMA_NAME).read_text())
    raise AssertionError(f"{SCHEMA_NAME} not found in {SCHEMA_PLACES}")


def test_sarif_is_valid_against_the_official_schema(project):
    proc = run_cli("check", "--format", "sarif", ".", cwd=project)
    doc = json.loads(proc.stdout)
    schema = sarif_schema()
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    validator(schema).validate(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    for meta in rules:
        assert meta["shortDescription"]["text"] and meta["fullDescription"]["text"] and meta["name"]
        assert meta["helpUri"].endswith(f"docs/rules/{meta['id']}.md")
        assert meta["defaultConfiguration"]["level"] == "warning"
        assert meta["properties"]["fix"] in ("never", "sometimes", "always")
    assert rules[[r["id"] for r in rules].index("TEN204")]["properties"]["fix_safety"] == ["safe"]
    results = run["results"]
    assert len(results) == 10
    first = results[0]
    assert first["ruleId"] == "TEN101" and rules[first["ruleIndex"]]["id"] == "TEN101"
    assert first["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "a.py"},
        "region": {"startLine": 9, "startColumn": 5, "endLine": 9, "endColumn": 21},
    }
    nb = [r for r in results if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "nb.ipynb"]
    assert nb[0]["properties"] == {"cell": 4, "line": 3, "column": 13}
    assert run["invocations"][0]["executionSuccessful"] is False
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"].startswith("cannot parse")


def test_sarif_with_nothing_found_is_valid(tmp_path):
    (tmp_path / "ok.py").write_text("x = 1\n")
    proc = run_cli("check", "--format", "sarif", "ok.py", cwd=tmp_path)
    doc = json.loads(proc.stdout)
    jsonschema.validators.validator_for(sarif_schema())(sarif_schema()).validate(doc)
    assert doc["runs"][0]["results"] == [] and proc.returncode == 0


def test_github_annotations(project):
    lines = run_cli("check", "--format", "github", ".", cwd=project).stdout.splitlines()
    assert lines[0].startswith("::warning file=a.py,line=9,col=5,endLine=9,endColumn=21,title=TEN101::TEN101 ")
    assert any(line.startswith("::warning file=nb.ipynb,title=TEN201::cell 4, line 3, column 13: ") for line in lines)
    assert lines[-1] == "::error file=z_broken.py::cannot parse at line 1: invalid syntax"


def test_github_escapes_properties_and_data():
    item = Item("dir,a:b%.py", 3, 4, "TEN201", "100% wrong\nreally", 3, 9)
    assert github_line(item) == ("::warning file=dir%2Ca%3Ab%25.py,line=3,col=4,endLine=3,endColumn=9,"
                                 "title=TEN201::TEN201 100%25 wrong%0Areally")


def test_text_format_of_a_notebook_item():
    item = Item("nb.ipynb", 2, 5, "TEN101", "msg", 2, 9, cell=3)
    assert render("text", [item], [], 1) == "nb.ipynb:cell 3:2:5: TEN101 msg\n"


def test_rules_json(tmp_path):
    proc = run_cli("rules", "--format", "json", cwd=tmp_path)
    listed = json.loads(proc.stdout)
    assert [r["code"] for r in listed] == [r.code for r in RULES]
    for entry, rule in zip(listed, RULES):
        assert entry["default_on"] is rule.default_on and entry["fix"] == rule.fix_offered.value
        assert entry["fix_safety"] == [s.value for s in rule.fix_safeties]
        assert [f["safety"] for f in entry["fix_forms"]] == [f.safety.value for f in rule.fix_forms]
        assert [f.get("withheld", "") for f in entry["fix_forms"]] == [f.withheld for f in rule.fix_forms]
        assert set(entry) == {"code", "name", "summary", "default_on", "fix", "fix_safety", "fix_forms", "url"}
    ten204 = listed[[r["code"] for r in listed].index("TEN204")]
    assert ten204["fix"] == "sometimes" and ten204["fix_safety"] == ["safe"]  # its unsafe form is withheld
    assert ten204["fix_forms"][2]["safety"] == "unsafe" and ten204["fix_forms"][2]["withheld"]
