"""A script exported from a notebook (Colab, Jupyter's "Download as .py") keeps IPython lines (`!pip install`,
`%matplotlib inline`, `files = !ls`) that no Python parses: it is analysed as the program IPython runs, line
for line, and never rewritten from that program (fix applies nothing, `--add-noqa` writes into the file's own
lines)."""
from __future__ import annotations

from flake8_tensorcopy.engine.core import select_rules
from flake8_tensorcopy.pipeline.lint import lint
from flake8_tensorcopy.sources.document import read_document
from tests.support.cli_tools import run_cli

EXPORTED = """import torch
!nvidia-smi
%matplotlib inline


def train(model, loader, opt):
    total = torch.zeros(())
    files = !ls
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
    return total
"""


def test_an_exported_notebook_is_analysed_as_ipython_runs_it_and_offers_no_fix():
    doc = read_document(EXPORTED, "train.py")
    assert doc.derived and doc.program.count("\n") == EXPORTED.count("\n")
    (finding,) = lint(doc, select_rules()).findings
    assert (finding.line, finding.code) == (14, "TEN401") and finding.fix is None


def test_a_script_that_parses_or_is_not_ipython_is_read_as_it_is():
    plain = "import torch\nx = '%d' % 3\n"
    assert not read_document(plain, "a.py").derived
    broken = EXPORTED + "def f(:\n"  # a syntax error IPython cannot explain either
    assert read_document(broken, "a.py").program == broken


def test_fix_never_writes_the_program_and_add_noqa_writes_into_the_files_own_lines(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(EXPORTED)
    fixed = run_cli("fix", "--unsafe-fixes", "--no-cache", path, cwd=tmp_path)
    assert fixed.returncode == 1 and path.read_text() == EXPORTED, fixed.stdout + fixed.stderr
    assert "[no fix]" in fixed.stdout
    added = run_cli("check", "--add-noqa", "--no-cache", path, cwd=tmp_path)
    assert added.returncode == 0, added.stdout + added.stderr
    assert path.read_text() == EXPORTED.replace("        total += loss\n", "        total += loss  # noqa: TEN401\n")
