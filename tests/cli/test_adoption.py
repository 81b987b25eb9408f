"""Adopting the linter on a large codebase: `check --add-noqa`, `--statistics`, `--exit-zero`, and
`explain` by a rule's name (issue 25)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from tests.support.cli_tools import BAD, DEEPCOPY, ROOT, notebook_text, reported, run_cli
from flake8_tensorcopy.pipeline.noqa import add_comments, with_codes

FLAKE8 = [sys.executable, "-m", "flake8", "--select", "TEN"]


def test_with_codes_merges_into_a_noqa_and_adds_one_after_other_comments():
    assert with_codes("x = 1", ["TEN101"]) == "x = 1  # noqa: TEN101"
    assert with_codes("x = 1  # noqa: E501", ["TEN101"]) == "x = 1  # noqa: E501,TEN101"
    assert with_codes("x = 1  # noqa:E501, # why", ["TEN101"]) == "x = 1  # noqa:E501,TEN101, # why"
    assert with_codes("x = 1  # noqa", ["TEN101"]) == "x = 1  # noqa"  # bare: already suppressed
    assert with_codes("x = 1  # noqa: TEN1", ["TEN101"]) == "x = 1  # noqa: TEN1"
    assert with_codes("x = 1  # type: int", ["TEN1", "TEN2"]) == "x = 1  # type: int  # noqa: TEN1,TEN2"


def test_the_comment_goes_where_flake8_reads_it_never_into_a_string():
    source = 'y = f("""\n# text\n""")\nz = (g(1),\n     2)\nw = h(1) + \\\n    2  # noqa: E501\n'
    text, changed = add_comments(source, [(1, "TEN201"), (4, "TEN104"), (6, "TEN101")])
    assert changed == 3 and ast.dump(ast.parse(text)) == ast.dump(ast.parse(source))
    assert text.splitlines() == ['y = f("""', "# text", '""")  # noqa: TEN201', "z = (g(1),  # noqa: TEN104",
                                 "     2)", "w = h(1) + \\", "    2  # noqa: E501,TEN101"]


def test_add_noqa_silences_check_and_flake8_and_keeps_the_bytes_around_it(tmp_path):
    (tmp_path / "a.py").write_bytes(b"\xef\xbb\xbf" + BAD.replace("\n", "\r\n").encode())
    (tmp_path / "b.py").write_text(DEEPCOPY.replace("(t)\n", "(t)  # noqa: E501\n"))
    (tmp_path / "train.ipynb").write_text(notebook_text())
    before = reported(run_cli("check", ".", cwd=tmp_path).stdout)
    assert len(before) > 3
    added = run_cli("check", "--add-noqa", ".", cwd=tmp_path)
    assert added.returncode == 0 and added.stdout == ""
    assert f"added or extended {len(before)} noqa comment(s) in 3 file(s)" in added.stderr
    data = (tmp_path / "a.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and data.count(b"\r\n") == BAD.count("\n") and b"\n" not in data.replace(
        b"\r\n", b"")
    assert "copy.deepcopy(t)  # noqa: E501,TEN201" in (tmp_path / "b.py").read_text()
    cell = json.loads((tmp_path / "train.ipynb").read_text())["cells"][3]["source"]
    assert cell[-1] == "    saved = copy.deepcopy(h)  # noqa: TEN201"
    after = run_cli("check", ".", cwd=tmp_path)
    assert after.returncode == 0 and after.stdout == ""
    flake8 = subprocess.run([*FLAKE8, "a.py", "b.py"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert flake8.returncode == 0 and flake8.stdout == ""
    assert run_cli("check", "--add-noqa", "-", stdin=DEEPCOPY, cwd=tmp_path).returncode == 2


def test_statistics_count_per_code_as_flake8_does(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(DEEPCOPY)
    ours = run_cli("check", "--statistics", "-q", "a.py", "b.py", cwd=tmp_path)
    theirs = subprocess.run([*FLAKE8, "--statistics", "a.py", "b.py"], cwd=tmp_path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    counts = [line for line in ours.stdout.splitlines() if not line.startswith(("a.py", "b.py"))]
    assert counts and counts == [line for line in theirs.stdout.splitlines() if not line.startswith(("a.py", "b.py"))]


def test_exit_zero_keeps_the_findings_and_errors_still_count(tmp_path):
    (tmp_path / "a.py").write_text(DEEPCOPY)
    proc = run_cli("check", "--exit-zero", "a.py", cwd=tmp_path)
    assert proc.returncode == 0 and " TEN201 " in proc.stdout
    (tmp_path / "broken.py").write_text("import copy\nx = copy.deepcopy(\n")
    assert run_cli("check", "--exit-zero", ".", cwd=tmp_path).returncode == 2


def test_explain_takes_a_rule_name(tmp_path):
    by_name = run_cli("explain", "deepcopy-tensor", cwd=tmp_path)
    assert by_name.returncode == 0 and by_name.stdout == run_cli("explain", "TEN201", cwd=tmp_path).stdout
    assert run_cli("explain", "no-such-rule", cwd=tmp_path).returncode == 2
