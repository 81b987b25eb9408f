"""`flake8-tensorcopy fix` as users run it: --diff, --check, stdin, exit codes, -j."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.support.fix_tools import BAD, FIXED, run_fix

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLEAN = "import torch\n\nx = torch.zeros(3)\n"


def test_without_unsafe_flag_nothing_changes_and_findings_remain(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(BAD)
    code, out, err = run_fix(capsys, f)
    assert code == 1 and f.read_text() == BAD
    assert f"{f}:10:12: TEN201 copy.deepcopy() of tensor 't'" in out and "[unsafe fix: --unsafe-fixes]" in out
    assert "0 finding(s) fixed, 1 remaining (1 with an unsafe fix: --unsafe-fixes)" in err  # stderr in every format
    assert "remaining" not in out


def test_clean_file_exit_0(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(CLEAN)
    assert run_fix(capsys, f)[0] == 0 and f.read_text() == CLEAN


def test_diff_writes_nothing_and_labels_fixes(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(BAD)
    code, out, _ = run_fix(capsys, "--diff", "--unsafe-fixes", f)
    assert code == 1 and f.read_text() == BAD
    assert f"{f}:10:12: TEN201 " in out and "[would fix, unsafe]" in out
    assert f"--- {f}\n+++ {f}\n" in out
    assert "-    return copy.deepcopy(t)\n+    return t.detach().clone()\n" in out


def test_diff_marks_missing_final_newline(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(BAD.rstrip("\n"))
    out = run_fix(capsys, "--diff", "--unsafe-fixes", f)[1]
    assert "+    return t.detach().clone()\n\\ No newline at end of file\n" in out


def test_check_writes_nothing_and_sets_exit_code(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(BAD)
    code, out, err = run_fix(capsys, "--check", "--unsafe-fixes", f)
    assert code == 1 and f.read_text() == BAD and out == ""
    assert "1 fix(es) would be applied, 0 finding(s) would remain" in err
    f.write_text(FIXED)
    assert run_fix(capsys, "--check", "--unsafe-fixes", f)[0] == 0


def test_select_and_ignore_on_the_command_line(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(BAD)
    assert run_fix(capsys, "--unsafe-fixes", "--ignore", "TEN201", f)[0] == 0 and f.read_text() == BAD
    assert run_fix(capsys, "--unsafe-fixes", "--select", "TEN1", f)[0] == 0 and f.read_text() == BAD
    assert run_fix(capsys, "--unsafe-fixes", "--select", "TEN1", "--extend-select", "TEN201", f)[0] == 0
    assert f.read_text() == FIXED


def test_noqa_line_kept(tmp_path, capsys):
    f = tmp_path / "a.py"
    f.write_text(BAD.replace("copy.deepcopy(t)", "copy.deepcopy(t)  # noqa: TEN201"))
    before = f.read_text()
    assert run_fix(capsys, "--unsafe-fixes", f)[0] == 0 and f.read_text() == before


def stdin_run(data: bytes, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "fix", *args, "-"], input=data, cwd=ROOT,
                          capture_output=True)


def test_stdin_to_stdout():
    done = stdin_run(BAD.encode(), "--unsafe-fixes", "--stdin-filename", "src/train.py")
    assert done.returncode == 0 and done.stdout == FIXED.encode()
    assert b"src/train.py:10:12: TEN201 " in done.stderr


def test_stdin_unparsable_gives_the_text_back():
    data = BAD.encode() + b"x = y.detach()(\n"
    done = stdin_run(data, "--unsafe-fixes")
    assert done.returncode == 2 and done.stdout == data and b"cannot parse" in done.stderr


def test_stdin_with_other_paths_is_a_usage_error(capsys):
    code, _, err = run_fix(capsys, "-", "a.py")
    assert code == 2 and "cannot be combined" in err


def test_parallel_output_is_in_input_order(tmp_path, capsys):
    names = [f"f{i:02d}.py" for i in range(12)]
    for i, name in enumerate(names):
        (tmp_path / name).write_text(BAD if i % 3 else CLEAN)
    code, out, _ = run_fix(capsys, "--unsafe-fixes", "-j", "2", tmp_path)
    assert code == 0
    reported = [line.split(":")[0] for line in out.splitlines() if "[fixed" in line]
    assert reported == [str(tmp_path / n) for i, n in enumerate(names) if i % 3]
    assert all((tmp_path / n).read_text() == (FIXED if i % 3 else CLEAN) for i, n in enumerate(names))
