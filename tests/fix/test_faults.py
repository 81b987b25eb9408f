"""The fixer under faults: every original file ends up untouched or fully fixed, never truncated,
and the exit code (2) and message say what happened."""
from __future__ import annotations

import errno
import os
import subprocess
import sys

from tests.support.fix_tools import BAD, FIXED, leftovers, run_fix
from flake8_tensorcopy.sources import fileio

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(tmp_path, n=1):
    files = []
    for i in range(n):
        f = tmp_path / f"m{i}.py"
        f.write_text(BAD)
        files.append(f)
    return files


def test_read_only_file_refused(tmp_path, capsys):
    f, = make(tmp_path)
    os.chmod(f, 0o444)
    code, _, err = run_fix(capsys, "--unsafe-fixes", f)
    assert code == 2 and f"{f}: not written: the file is read-only" in err
    assert f.read_text() == BAD and leftovers(tmp_path) == []


def test_file_removed_between_read_and_write(tmp_path, capsys, monkeypatch):
    f, = make(tmp_path)
    real = fileio.replace

    def remove_first(path, original, new):
        os.unlink(path)
        return real(path, original, new)

    monkeypatch.setattr(fileio, "replace", remove_first)
    code, _, err = run_fix(capsys, "--unsafe-fixes", f)
    assert code == 2 and "removed since it was read" in err
    assert not f.exists() and leftovers(tmp_path) == []  # not recreated


def test_file_changed_between_read_and_write(tmp_path, capsys, monkeypatch):
    f, = make(tmp_path)
    real = fileio.replace

    def edit_first(path, original, new):
        with open(path, "a") as fh:
            fh.write("# edited meanwhile\n")
        return real(path, original, new)

    monkeypatch.setattr(fileio, "replace", edit_first)
    code, _, err = run_fix(capsys, "--unsafe-fixes", f)
    assert code == 2 and f"{f}: not written: the file changed since it was read" in err
    assert f.read_text() == BAD + "# edited meanwhile\n" and leftovers(tmp_path) == []


def test_full_disk_leaves_the_original(tmp_path, capsys, monkeypatch):
    files = make(tmp_path, 2)
    real = fileio._write_at

    def full_disk(fd, data, offset):  # writes half of what it is given, then fails as a full disk does
        real(fd, data[: len(data) // 2], offset)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio, "_write_at", full_disk)
    code, _, err = run_fix(capsys, "--unsafe-fixes", "-j", "1", *files)
    assert code == 2 and err.count("not written: No space left on device; the original is untouched") == 2
    assert all(f.read_text() == BAD for f in files) and leftovers(tmp_path) == []


def test_interrupt_mid_run(tmp_path, capsys, monkeypatch):
    files = make(tmp_path, 3)
    real_replace, calls = os.replace, []

    def interrupt_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(fileio.os, "replace", interrupt_second)
    code, _, err = run_fix(capsys, "--unsafe-fixes", "-j", "1", *files)
    assert code == 2 and "interrupted; 1 file(s) written are fully fixed, the others untouched" in err
    assert [f.read_text() for f in files] == [FIXED, BAD, BAD] and leftovers(tmp_path) == []


def test_another_fixer_wins_the_race(tmp_path, capsys, monkeypatch):
    """A second fixer rewrites the file after this one read it: this one refuses to write over it."""
    f, = make(tmp_path)
    real = fileio.replace

    def race(path, original, new):
        subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "fix", "--unsafe-fixes", path], cwd=ROOT,
                       check=True, capture_output=True)
        return real(path, original, new)

    monkeypatch.setattr(fileio, "replace", race)
    code, _, err = run_fix(capsys, "--unsafe-fixes", f)
    assert code == 2 and "changed since it was read" in err
    assert f.read_text() == FIXED and leftovers(tmp_path) == []


def test_two_fixers_at_once(tmp_path):
    files = make(tmp_path, 30)
    cmd = [sys.executable, "-m", "flake8_tensorcopy", "fix", "--unsafe-fixes", "-j", "1", str(tmp_path)]
    procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    results = [(p.wait(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert all(f.read_text() == FIXED for f in files) and leftovers(tmp_path) == []
    for code, err in results:
        refused = [line for line in err.splitlines() if "not written" in line]
        assert all("changed since it was read" in line for line in refused)
        assert code == (2 if refused else 0)


def test_ctrl_c_on_a_parallel_run(tmp_path):
    """A real SIGINT once the first file is reported: each file is untouched or fully fixed."""
    import signal

    files = make(tmp_path, 120)
    cmd = [sys.executable, "-m", "flake8_tensorcopy", "fix", "--unsafe-fixes", "-j", "2", str(tmp_path)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate()
    assert "[fixed, unsafe]" in first
    contents = [f.read_text() for f in files]
    assert set(contents) <= {BAD, FIXED} and leftovers(tmp_path) == []
    if proc.returncode == 2:
        written = contents.count(FIXED)
        assert f"interrupted; {written} file(s) written are fully fixed, the others untouched" in err
    else:  # the run was already over when the signal came
        assert proc.returncode == 0 and contents.count(FIXED) == len(files)
