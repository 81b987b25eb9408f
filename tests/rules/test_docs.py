"""The generated rule pages and README table match the rules' docstrings."""
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_tensorcopy.rules.docs import code_blocks, runnable
from flake8_tensorcopy.engine.core import select_rules
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.rules import RULES

ROOT = Path(__file__).resolve().parents[2]


def test_generated_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_explain_prints_the_doc_page():
    proc = subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "explain", "TEN101"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and "## Why is this bad?" in proc.stdout and "TEN101" in proc.stdout


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_example_is_flagged_and_use_instead_is_not(rule):
    """The rule's own doc, run through the engine with the default rules and this one selected: every
    Example block gives a finding of the rule, no "Use instead" block gives any finding."""
    examples = [runnable(b) for b in code_blocks(rule.doc, "Example")]  # as the doc page shows them
    instead = [runnable(b) for b in code_blocks(rule.doc, "Use instead")]
    assert examples and instead
    rules = select_rules(extend_select=[rule.code])
    for block in examples:
        result = lint(Document(f"{rule.code}_example.py", block), rules)  # TEN905: after the engine
        assert result.errors == [] and rule.code in {f.code for f in result.findings}, block
    for block in instead:
        result = lint(Document(f"{rule.code}_use_instead.py", block), rules)
        assert result.errors == [] and result.findings == [], (block, result.findings)


def test_code_blocks_reads_only_its_section():
    doc = ("Summary.\n\n## Example\n```python\na = 1\n```\ntext\n```python\nb = 2\n```\n\n"
           "## Use instead\n```python\nc\n```\n")
    assert code_blocks(doc, "Example") == ["a = 1\n", "b = 2\n"]
    assert code_blocks(doc, "Use instead") == ["c\n"]
    assert code_blocks(doc, "Fix safety") == []
