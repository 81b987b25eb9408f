"""`flake8-tensorcopy check` end to end in a subprocess: output, exit codes, stdin, errors, -j, progress."""
from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.support.cli_tools import BAD, DEEPCOPY, ROOT, reported, run_cli
from tests.support.fixture_tools import FIXTURES, expectations


def test_findings_match_the_fixture_annotations_and_exit_1(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    proc = run_cli("check", "bad.py", cwd=tmp_path)
    got = {(int(pos.split(":")[0]), int(pos.split(":")[1]), code) for _, pos, code in reported(proc.stdout)}
    assert got == expectations(FIXTURES / "TEN101" / "bad.py")
    assert all(line.startswith("bad.py:") for line in proc.stdout.splitlines())
    assert proc.returncode == 1


def test_clean_files_exit_0_with_nothing_on_stdout(tmp_path):
    (tmp_path / "good.py").write_text((FIXTURES / "TEN101" / "good.py").read_text())
    proc = run_cli("check", ".", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "1 file checked, 0 findings" in proc.stderr


def test_stdin_uses_the_stdin_filename(tmp_path):
    proc = run_cli("check", "--stdin-filename", "pkg/buffer.py", "-", stdin=DEEPCOPY, cwd=tmp_path)
    assert reported(proc.stdout) == [("pkg/buffer.py", "7:12", "TEN201")]
    assert proc.returncode == 1
    anonymous = run_cli("check", "-", stdin=DEEPCOPY, cwd=tmp_path)
    assert reported(anonymous.stdout) == [("stdin", "7:12", "TEN201")]


def test_broken_files_are_one_error_line_each_and_the_rest_is_still_checked(tmp_path):
    (tmp_path / "a_syntax.py").write_text("def f(:\n    x = y.detach()\n")
    (tmp_path / "b_latin.py").write_bytes(b"x = '\xe9t\xe9'\n")  # not UTF-8, no coding cookie
    (tmp_path / "c_bad.py").write_text(DEEPCOPY)
    (tmp_path / "d_broken.ipynb").write_text("{not json")
    proc = run_cli("check", ".", "missing.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert reported(proc.stdout) == [("c_bad.py", "7:12", "TEN201")]
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert [e.split(":")[0] for e in errors] == ["a_syntax.py", "b_latin.py", "d_broken.ipynb", "missing.py"]
    assert "cannot parse at line 1" in errors[0] and "cannot decode" in errors[1]
    assert "invalid JSON" in errors[2] and "No such file" in errors[3]
    assert "5 files checked, 1 finding (TEN201: 1), 4 errors" in proc.stderr


def test_a_coding_cookie_is_honoured(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\n" + DEEPCOPY.encode() + b"s = '\xe9'\n")
    proc = run_cli("check", "latin.py", cwd=tmp_path)
    assert reported(proc.stdout) == [("latin.py", "8:12", "TEN201")]


def test_output_is_sorted_and_the_same_with_a_pool(tmp_path):
    for i in reversed(range(40)):  # enough files for the pool to start with -j2
        (tmp_path / f"m{i:02d}.py").write_text(DEEPCOPY if i % 3 else BAD)
    serial = run_cli("check", "-j1", ".", cwd=tmp_path)
    parallel = run_cli("check", "-j2", ".", cwd=tmp_path)
    assert serial.stdout == parallel.stdout
    keys = [(p, tuple(map(int, pos.split(":")))) for p, pos, _ in reported(serial.stdout)]
    assert keys == sorted(keys) and len({p for p, _ in keys}) == 40
    assert serial.returncode == parallel.returncode == 1


def test_show_source_prints_the_line_and_a_caret_under_the_column(tmp_path):
    (tmp_path / "t.py").write_text(DEEPCOPY.replace("    ", "\t"))
    out = run_cli("check", "--show-source", "t.py", cwd=tmp_path).stdout.splitlines()
    assert out[0].startswith("t.py:7:9: TEN201")
    assert out[1] == "    \treturn copy.deepcopy(t)"
    assert out[2] == "    \t       ^"


def test_summary_counts_per_code_and_quiet_silences_it(tmp_path):
    (tmp_path / "a.py").write_text(BAD)
    (tmp_path / "b.py").write_text(DEEPCOPY)
    proc = run_cli("check", ".", cwd=tmp_path)
    assert "2 files checked, 9 findings (TEN101: 8, TEN201: 1) in " in proc.stderr
    assert run_cli("check", "-q", ".", cwd=tmp_path).stderr == ""


def test_noqa_suppresses_by_code(tmp_path):
    src = DEEPCOPY.replace("copy.deepcopy(t)", "copy.deepcopy(t)  # noqa: TEN201")
    (tmp_path / "a.py").write_text(src)
    (tmp_path / "b.py").write_text(DEEPCOPY.replace("copy.deepcopy(t)", "copy.deepcopy(t)  # noqa: E501"))
    proc = run_cli("check", ".", cwd=tmp_path)
    assert [p for p, _, _ in reported(proc.stdout)] == ["b.py"]


def test_select_ignore_and_invalid_codes(tmp_path):
    (tmp_path / "a.py").write_text(BAD + "\n" + DEEPCOPY.replace("def f", "def g"))
    assert {c for *_, c in reported(run_cli("check", "--select", "TEN2", "a.py", cwd=tmp_path).stdout)} == {"TEN201"}
    assert {c for *_, c in reported(run_cli("check", "--ignore", "TEN1", "a.py", cwd=tmp_path).stdout)} == {"TEN201"}
    bad = run_cli("check", "--select", "TEN77", "a.py", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()] and "'--select'" in bad.stderr


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path):
    for i in range(120):
        (tmp_path / f"m{i:03d}.py").write_text("x = 1\n")
    proc = run_cli("check", "-j1", ".", cwd=tmp_path)
    assert proc.stderr.splitlines() == [proc.stderr.strip()]  # the summary line only
    assert "[" not in proc.stderr


def test_progress_bar_on_a_terminal_for_a_long_run(tmp_path):
    for i in range(120):
        (tmp_path / f"m{i:03d}.py").write_text("x = 1\n")
    assert _stderr_on_a_terminal(["check", "-j1", "."], tmp_path).count("120/120 files") == 1
    (tmp_path / "few").mkdir()
    (tmp_path / "few" / "a.py").write_text("x = 1\n")
    assert "files" not in _stderr_on_a_terminal(["check", "few"], tmp_path).replace("1 file checked", "")


def _stderr_on_a_terminal(args, cwd) -> str:
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "flake8_tensorcopy", *args], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait()
    os.close(master)
    return b"".join(chunks).decode()


def test_explain_and_rules(tmp_path):
    page = run_cli("explain", "ten201", cwd=tmp_path)
    assert page.returncode == 0 and page.stdout.startswith("# TEN201: ") and "## Fix safety" in page.stdout
    assert run_cli("explain", "TEN999", cwd=tmp_path).returncode == 2
    listing = run_cli("rules", cwd=tmp_path).stdout.splitlines()
    assert listing[0].split()[:5] == ["code", "name", "default", "fix", "safety"]
    assert any(line.split()[:5] == ["TEN201", "deepcopy-tensor", "on", "sometimes", "unsafe"] for line in listing)
    assert any(line.split()[:5] == ["TEN102", "data-inplace-write", "on", "never", "-"] for line in listing)  # withheld
    ten204 = ["TEN204", "tensor-from-tensor", "on", "sometimes", "safe"]
    assert any(line.split()[:5] == ten204 for line in listing)
