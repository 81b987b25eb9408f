"""Every fixture reports exactly what its `# expect:` annotations say: code, line and column."""
from __future__ import annotations

import pytest

from tests.support.fixture_tools import expectations, fixture_path
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.rules import RULES

VARIANTS = ("bad", "good", "fixed")


def rules_for(code):
    return [r for r in RULES if r.default_on or r.code == code]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_fixture_findings_match_annotations(code, variant):
    path = fixture_path(code, variant)
    source = path.read_text(encoding="utf-8")
    result = lint(Document(str(path), source), rules_for(code))  # TEN905 is checked after the engine
    assert result.errors == []
    got = {(f.line, f.col + 1, f.code) for f in result.findings}
    assert got == expectations(path)


@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_bad_fixture_has_findings_of_its_rule(code):
    assert any(c == code for _, _, c in expectations(fixture_path(code, "bad")))
