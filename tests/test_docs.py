"""The generated rule pages and README table match the rules' docstrings."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_explain_prints_the_doc_page():
    proc = subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "explain", "TEN101"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and "## Why is this bad?" in proc.stdout and "TEN101" in proc.stdout
