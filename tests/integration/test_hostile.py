"""Hostile inputs from the adversarial review (issue 15): nothing hangs, blows up or loses an editor's text.
Each command runs with a timeout, so a hang fails the test instead of the suite."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from tests.support.cli_tools import ROOT

pytestmark = [pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX"),
              pytest.mark.slow]  # most tests run the commands in subprocesses, each with a timeout


def cli(*args, cwd, stdin=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "flake8_tensorcopy", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=30, env=env)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "ok.py").write_text("import torch\nx = torch.ones(2)\ny = torch.tensor(x)\n")
    os.mkfifo(tmp_path / "pipe.py")
    return tmp_path


def test_check_names_a_fifo_as_an_error_instead_of_blocking(tree):
    done = cli("check", "pipe.py", "ok.py", cwd=tree)
    assert done.returncode == 2
    assert b"pipe.py: error: cannot read: not a regular file" in done.stderr
    assert b"ok.py:3:5: TEN204" in done.stdout  # the other file is still checked


def test_fix_walks_past_a_fifo(tree):
    done = cli("fix", "--diff", ".", cwd=tree)
    assert done.returncode == 1 and b"+y = x.detach().clone()" in done.stdout


@pytest.mark.parametrize("command", [["check", "."], ["fix", "--diff", "."]])
def test_a_symlink_loop_in_a_walked_folder_is_a_note_not_a_traceback(tree, command):
    (tree / "pipe.py").unlink()
    os.symlink("loop2.py", tree / "loop1.py")
    os.symlink("loop1.py", tree / "loop2.py")
    os.symlink("dir_b", tree / "dir_a")
    os.symlink("dir_a", tree / "dir_b")
    done = cli(*command, cwd=tree)
    assert done.returncode == 1 and b"ok.py" in done.stdout  # the real file is still checked
    assert b"Traceback" not in done.stderr
    assert b"loop1.py: skipped: Too many levels of symbolic links" in done.stderr
    assert b"dir_a" not in done.stderr  # not a source file's name: nothing to say


@pytest.mark.parametrize("make", ["fifo", "dev-zero"])
def test_a_gitignore_that_never_ends_is_not_read_forever(tree, make):
    (tree / "pipe.py").unlink()
    if make == "fifo":
        os.mkfifo(tree / ".gitignore")
    else:
        os.symlink("/dev/zero", tree / ".gitignore")
    done = cli("check", ".", cwd=tree)
    assert done.returncode == 1 and b"TEN204" in done.stdout


def test_fix_stdin_that_cannot_be_decoded_is_echoed_back(tmp_path):
    data = b'x = "\xff"\n'
    done = cli("fix", "-", cwd=tmp_path, stdin=data)
    assert done.returncode == 2 and done.stdout == data and b"cannot decode" in done.stderr


@pytest.mark.parametrize("args", [("check", "many"), ("fix", "--diff", "--unsafe-fixes", "many")])
def test_a_closed_pipe_ends_quietly(tmp_path, args):
    (tmp_path / "many").mkdir()
    for i in range(300):  # far more output than a pipe buffers
        (tmp_path / "many" / f"t{i}.py").write_text((ROOT / "examples" / "train.py").read_text())
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "flake8_tensorcopy", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(1)
    proc.stdout.close()  # what `| head -c 1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 1 and b"Traceback" not in err


STUCK_POOL = """
import sys, threading
from flake8_tensorcopy.cli import main as cli
from flake8_tensorcopy.cli import pool

def interrupted_run(args):  # a run whose pool is stopped mid-way, its thread left waiting on a locked queue
    threading.Thread(target=threading.Event().wait).start()  # like the pool's thread: joined at exit
    try:
        for _ in pool.parallel_map(abs, range(100), 2):
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 2

cli.cmd_rules = interrupted_run
sys.argv = ["flake8-tensorcopy", "rules"]
cli.entry()
"""


def test_a_pool_stopped_mid_run_does_not_keep_the_process_alive(tmp_path):
    """A killed worker can leave the pool's queues locked, and Python joins the pool's thread at exit:
    the command ends anyway, with the status and message it chose."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", STUCK_POOL], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        err = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
    assert proc.returncode == 2 and err == b"interrupted\n"


@pytest.mark.parametrize("jobs", ["0", "-3", "two"])
def test_a_job_count_below_one_is_refused(tmp_path, jobs):
    done = cli("check", "-j", jobs, ".", cwd=tmp_path)
    assert done.returncode == 2 and b"1 or more" in done.stderr


def test_a_folder_without_python_files_says_so(tmp_path):
    done = cli("check", ".", cwd=tmp_path)
    assert done.returncode == 0 and b"no .py, .pyi or .ipynb file under ." in done.stderr


@pytest.mark.parametrize("name, text, message", [
    ("bad.ipynb", '{"cells": [1], "metadata": {}}', b"not a notebook: a cell is not an object"),
    ("meta.ipynb", '{"cells": [], "metadata": {"language_info": 5}}', b"'language_info' in metadata is not an object"),
    ("puny.py", "# -*- coding: punycode -*-\nx = 1\n", b"cannot decode as punycode"),
    ("numbers.ipynb", '{"cells": [{"cell_type": "code", "source": ["import torch\\n", 5]}], "metadata": {}}',
     b"not a notebook: the 'source' of cell 1 is not a string or a list of strings"),
    ("none.ipynb", '{"cells": [{"cell_type": "code", "source": null}], "metadata": {}}',
     b"not a notebook: the 'source' of cell 1 is not a string or a list of strings"),
    ("deep.ipynb", '{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}",
     b"not a notebook: invalid JSON: too deeply nested"),
], ids=["not-an-object", "language-info", "punycode", "numbers", "null", "deep"])
@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"], ["fix"]], ids=["check", "fix-diff", "fix"])
def test_malformed_inputs_are_input_errors_not_internal_ones(tmp_path, name, text, message, command):
    (tmp_path / name).write_text(text)
    done = cli(*command, name, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and b"internal error" not in done.stderr
    assert b"too deeply nested to fix" not in done.stderr and (tmp_path / name).read_text() == text


@pytest.mark.parametrize("pattern", ["[z-a]", "[!]", "[^]", "[[:alpha:]]*.py"])
def test_odd_exclude_patterns_are_no_traceback(tmp_path, pattern):
    (tmp_path / "a.py").write_text("import torch\nx = torch.ones(2)\ny = torch.tensor(x)\n")
    (tmp_path / ".gitignore").write_text(pattern + "\n")
    done = cli("check", ".", cwd=tmp_path)
    assert b"Traceback" not in done.stderr
    assert (done.returncode == 0) == (pattern == "[[:alpha:]]*.py")  # the POSIX class matches a.py


def test_a_pyproject_that_is_not_utf8_is_a_one_line_error(tmp_path):
    (tmp_path / "pyproject.toml").write_bytes(b'[tool.flake8-tensorcopy]\nselect = ["TEN1"] # \xff\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    done = cli("check", ".", cwd=tmp_path)
    assert done.returncode == 2 and b"not UTF-8" in done.stderr and b"Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["check", "fix"])
@pytest.mark.parametrize("make", ["fifo", "dev-zero", "too-large"])
def test_a_config_file_that_never_ends_is_refused_not_read(tree, make, command):
    config = tree / "ci.toml"
    if make == "fifo":
        os.mkfifo(config)  # opened for reading, it would block until a writer came
    elif make == "dev-zero":
        os.symlink("/dev/zero", config)  # read, it would fill memory
    else:
        config.write_text("[tool.flake8-tensorcopy]\n" + "# padding\n" * 200_000)
    done = cli(command, "--config", "ci.toml", "ok.py", cwd=tree)
    why = b"larger than 1 MiB" if make == "too-large" else b"not a regular file"
    assert done.returncode == 2 and done.stderr.count(b"\n") == 1 and why in done.stderr, done.stderr
    assert b"torch.tensor(x)" in (tree / "ok.py").read_bytes()  # untouched


TOML_TOMLLIB_CANNOT_HOLD = {
    "digits": "v = " + "1" * 4301,  # more digits than Python converts to an int
    "nesting": "v = " + "[" * 600 + "]" * 600,  # past the recursion limit
}


@pytest.mark.parametrize("command", [["check", "ok.py"], ["fix", "--diff", "ok.py"]])
@pytest.mark.parametrize("kind", TOML_TOMLLIB_CANNOT_HOLD)
def test_a_pyproject_tomllib_cannot_hold_is_skipped_when_it_has_no_table_of_ours(tree, kind, command):
    (tree / "pyproject.toml").write_text("[project]\nname = 'x'\n" + TOML_TOMLLIB_CANNOT_HOLD[kind] + "\n")
    done = cli(*command, cwd=tree)
    assert done.returncode == 1 and b"TEN204" in done.stdout and b"Traceback" not in done.stderr


@pytest.mark.parametrize("kind", TOML_TOMLLIB_CANNOT_HOLD)
def test_a_table_of_ours_tomllib_cannot_hold_is_a_one_line_error_everywhere(tree, kind):
    (tree / "pipe.py").unlink()
    (tree / "pyproject.toml").write_text("[tool.flake8-tensorcopy]\n" + TOML_TOMLLIB_CANNOT_HOLD[kind] + "\n")
    why = "too deeply nested" if kind == "nesting" else "Exceeds the limit (4300 digits)"
    for command in (["check", "ok.py"], ["fix", "ok.py"]):
        done = cli(*command, cwd=tree)
        assert done.returncode == 2 and done.stderr.decode().count("\n") == 1, done.stderr
        assert f"pyproject.toml: cannot read: {why}" in done.stderr.decode()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plugin = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "ok.py"], cwd=tree, env=env,
                            capture_output=True, text=True, timeout=60)
    assert "ok.py:1:1: TEN000 flake8-tensorcopy ignores its configuration: " in plugin.stdout
    assert why in plugin.stdout and " TEN204 " in plugin.stdout and "Traceback" not in plugin.stderr
    codemod = subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "-x",
                              "flake8_tensorcopy.adapters.codemod.TensorCopyCodemod", "--no-format", "ok.py"],
                             cwd=tree, env=env, capture_output=True, text=True, timeout=60)
    assert f"Skipped codemodding {tree / 'ok.py'}: flake8-tensorcopy: " in codemod.stderr
    assert why in codemod.stderr and "Traceback" not in codemod.stderr
    assert "torch.tensor(x)" in (tree / "ok.py").read_text()


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _busy(tmp_path, command):
    """A running `command` over 300 files, once its pool of two workers has started."""
    import time

    body = "".join(f"def f{i}(x):\n    y = x.exp()\n    z = y.detach()\n    z.add_(1)\n    return y\n\n"
                   for i in range(400))
    for i in range(300):
        (tmp_path / f"m{i}.py").write_text("import torch\n\n" + body)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-m", "flake8_tensorcopy", *command], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers = []
    for _ in range(200):  # until the pool has started (a bounded wait, not a timing assertion)
        workers = _children(parent.pid)
        if len(workers) >= 2:
            break
        time.sleep(0.05)
    assert len(workers) >= 2, "the pool never started"
    return parent, workers


def _gone(workers) -> bool:
    import time

    for _ in range(200):
        if not any(_alive(w) for w in workers):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc to find the workers")
@pytest.mark.parametrize("command", [("check", "-j", "2", "."), ("fix", "--diff", "-j", "2", ".")])
def test_sigterm_ends_the_workers_with_their_parent(tmp_path, command):
    import signal

    parent, workers = _busy(tmp_path, command)
    parent.send_signal(signal.SIGTERM)
    parent.wait(timeout=30)
    assert _gone(workers)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc to find the workers")
@pytest.mark.parametrize("command", [("check", "-j", "2", "."), ("fix", "--diff", "-j", "2", ".")])
def test_ctrl_c_is_quiet_and_stops_the_workers(tmp_path, command):
    import signal

    parent, workers = _busy(tmp_path, command)
    parent.send_signal(signal.SIGINT)
    err = parent.communicate(timeout=30)[1]
    assert parent.returncode == 2 and b"interrupted" in err and b"Traceback" not in err
    assert _gone(workers)


def test_a_folder_that_cannot_be_listed_is_an_error(tmp_path, monkeypatch, capsys):
    from flake8_tensorcopy.cli.main import main

    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "a.py").write_text("x = 1\n")
    real = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "-j", "1", "."]) == 2
    assert "locked: error: cannot read: Permission denied" in capsys.readouterr().err


def test_sarif_names_a_file_whose_name_is_not_utf8(tmp_path):
    import json

    name = os.fsencode(str(tmp_path)) + b"/bad\xff.py"
    with open(name, "w") as fh:
        fh.write("import torch\nx = torch.ones(2)\ny = torch.tensor(x)\n")
    done = cli("check", "--format", "sarif", ".", cwd=tmp_path)
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    (result,) = json.loads(done.stdout)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad%FF.py"


# ---- root fixing another user's file: nothing about the file but its text changes -------------------
BAD = "import torch\nx = torch.ones(2)\ny = torch.tensor(x)\n"
FIXED = BAD.replace("torch.tensor(x)", "x.detach().clone()")


def test_fix_keeps_owner_group_setuid_setgid_and_xattrs(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(BAD)
    owner = 12345 if os.geteuid() == 0 else os.getuid()  # as root: another user's file
    group = 12345 if os.geteuid() == 0 else os.getgid()
    os.chown(path, owner, group)
    os.chmod(path, 0o6751)
    os.setxattr(path, "user.origin", b"kept")
    done = cli("fix", "a.py", cwd=tmp_path)
    assert done.returncode == 0 and path.read_text() == FIXED
    st = os.stat(path)
    assert (st.st_uid, st.st_gid, oct(stat.S_IMODE(st.st_mode))) == (owner, group, oct(0o6751))
    assert os.getxattr(path, "user.origin") == b"kept"


def test_fix_keeps_hard_links_together(tmp_path):
    """A rename would leave the other name on the old text: the file is rewritten in place."""
    path, other = tmp_path / "a.py", tmp_path / "other_name.py"
    path.write_text(BAD)
    os.link(path, other)
    done = cli("fix", "a.py", cwd=tmp_path)
    assert done.returncode == 0 and path.read_text() == other.read_text() == FIXED
    assert os.stat(path).st_ino == os.stat(other).st_ino
    assert sorted(os.listdir(tmp_path)) == ["a.py", "other_name.py"]  # the backup is gone


def test_a_failed_in_place_write_puts_the_original_back(tmp_path, monkeypatch):
    from flake8_tensorcopy.sources import fileio

    path = tmp_path / "a.py"
    path.write_bytes(BAD.encode())
    os.link(path, tmp_path / "other_name.py")
    real = fileio._write_at

    def write_at(fd, data, offset):
        if offset == 0 and bytes(data) != BAD.encode():  # the new text over the old: half written, disk full
            real(fd, data[:10], offset)
            raise OSError(28, "No space left on device")
        real(fd, data, offset)

    monkeypatch.setattr(fileio, "_write_at", write_at)
    with pytest.raises(fileio.FileError, match="No space left on device; the original is untouched"):
        fileio.replace(str(path), BAD.encode(), FIXED.encode())
    assert path.read_text() == BAD and sorted(os.listdir(tmp_path)) == ["a.py", "other_name.py"]


def test_when_even_the_original_cannot_be_put_back_the_backup_is_named(tmp_path, monkeypatch):
    from flake8_tensorcopy.sources import fileio

    path = tmp_path / "a.py"
    path.write_bytes(BAD.encode())
    os.link(path, tmp_path / "other_name.py")

    def ftruncate(fd, length):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(fileio.os, "ftruncate", ftruncate)
    saved = r"its original content is saved in .*\.a\.py\..*\.tenfix-backup"
    with pytest.raises(fileio.FileError, match=saved) as info:
        fileio.replace(str(path), BAD.encode(), FIXED.encode())
    backup = str(info.value).rsplit(" ", 1)[1]
    assert open(backup).read() == BAD


def _fix_under_a_size_limit(tmp_path, name):
    """`fix name` with a file-size limit one byte above the file's size: the fix (which grows the file)
    cannot be written. SIGXFSZ ignored, so the write fails with EFBIG instead of killing the process."""
    import resource
    import signal

    limit = os.path.getsize(tmp_path / name) + 1

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "fix", name], cwd=tmp_path, env=env,
                          capture_output=True, timeout=60, preexec_fn=limited)


@pytest.mark.parametrize("linked", [True, False], ids=["hard-linked", "ordinary"])
def test_a_write_stopped_by_a_file_size_limit_leaves_the_original(tmp_path, linked):
    big = "import torch\n" + "".join(f"a{i} = {i}\n" for i in range(300)) + BAD.split("\n", 1)[1] * 2
    (tmp_path / "a.py").write_text(big)
    if linked:
        os.link(tmp_path / "a.py", tmp_path / "other_name.py")
    done = _fix_under_a_size_limit(tmp_path, "a.py")
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    assert done.stderr.decode().splitlines() == ["a.py: not written: File too large; the original is untouched",
                                                 "0 finding(s) fixed, 0 remaining"]  # the summary is on stderr too
    assert (tmp_path / "a.py").read_text() == big
    assert sorted(os.listdir(tmp_path)) == ["a.py"] + ["other_name.py"] * linked  # no backup, no temporary
    if linked:
        assert os.stat(tmp_path / "a.py").st_ino == os.stat(tmp_path / "other_name.py").st_ino


# ---- file names that hold a newline cannot forge output lines ----------------------------------------
FORGED = "ok.py:9:9: TEN999 forged\nx.py"


@pytest.mark.parametrize("args", [("check",), ("check", "--show-source"), ("check", "--format", "github"),
                                  ("fix", "--diff"), ("fix", "--check"), ("fix",)])
@pytest.mark.parametrize("content", [BAD.encode(), b'x = "\xff"\n'], ids=["finding", "error"])
def test_a_file_name_with_a_newline_cannot_forge_an_output_line(tmp_path, args, content):
    (tmp_path / FORGED).write_bytes(content)
    done = cli(*args, ".", cwd=tmp_path)
    lines = (done.stdout + done.stderr).decode().splitlines()
    assert not any(line.startswith(("x.py", "ok.py:9:9")) for line in lines), lines
    assert any('ok.py:9:9: TEN999 forged\\nx.py"' in line or "forged%0Ax.py" in line for line in lines), lines
    assert done.returncode == (2 if content != BAD.encode() else 0 if args == ("fix",) else 1)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_carry_the_name_as_it_is(tmp_path, fmt):
    import json

    (tmp_path / FORGED).write_text(BAD)
    done = cli("check", "--format", fmt, ".", cwd=tmp_path)
    report = json.loads(done.stdout)
    if fmt == "json":
        assert [f["path"] for f in report["findings"]] == [FORGED]
    else:
        (result,) = report["runs"][0]["results"]
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri == "ok.py%3A9%3A9%3A%20TEN999%20forged%0Ax.py"
