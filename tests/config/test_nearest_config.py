"""Ruff's way in every front end: in a monorepo run from its root, each file uses the nearest
`[tool.flake8-tensorcopy]` above it (a nested table governs the files under it, whole, its patterns relative
to it): flake8 (the plugin), check, fix, the codemod and the language server give the per-file answer."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.support.cli_tools import ROOT, reported, run_cli
from tests.support.server_tools import Server

TWO_SOURCES = ("import copy\nfrom mylib import fetch, load\n\n\ndef f():\n    a = load()\n    return copy.copy(a)\n"
               "\n\ndef g():\n    b = fetch()\n    return copy.copy(b)\n")
LOAD_LINE, FETCH_LINE = 7, 12  # TEN202 where the copied value comes from a declared tensor function
FILES = ["a.py", "sub/b.py", "sub/gen/c.py"]
PER_FILE = {"a.py": [(LOAD_LINE, "TEN202")], "sub/b.py": [(FETCH_LINE, "TEN202")]}  # c.py: excluded by sub's


def monorepo(root):
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(TWO_SOURCES)
    (root / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\ntensor-functions = ["load"]\n')
    (root / "sub" / "pyproject.toml").write_text(
        '[tool.flake8-tensorcopy]\ntensor-functions = ["fetch"]\nextend-exclude = ["gen/"]\n')


def by_file(stdout: str) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list] = {}
    for path, pos, code in reported(stdout):
        out.setdefault(os.path.normpath(path), []).append((int(pos.split(":")[0]), code))
    return out


def codemod(cwd):
    cmd = [sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.adapters.codemod.TensorCopyCodemod",
           "--no-format", "--unsafe-fixes", "."]
    subprocess.run(cmd, cwd=cwd, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, check=True)


def changed_lines(before: str, after: str) -> list[int]:
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return [i + 1 for i, (a, b) in enumerate(zip(old, new)) if a != b]


def test_every_front_end_uses_each_files_nearest_table(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    monorepo(root)
    assert by_file(run_cli("check", "-q", ".", cwd=root).stdout) == PER_FILE
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "."], capture_output=True, text=True,
                            cwd=root, env={**os.environ, "PYTHONPATH": str(ROOT)})
    # flake8 owns the choice of files (c.py is not excluded for it), the table's tensor-functions are c.py's own
    assert by_file(flake8.stdout) == {**PER_FILE, "sub/gen/c.py": [(FETCH_LINE, "TEN202")]}, flake8.stderr
    fixed, modded = tmp_path / "fixed", tmp_path / "modded"
    shutil.copytree(root, fixed)
    shutil.copytree(root, modded)
    run_cli("fix", "-q", "--unsafe-fixes", ".", cwd=fixed)
    codemod(modded)
    for name in FILES:
        assert (modded / name).read_text() == (fixed / name).read_text(), name
        expected = [line for line, _ in PER_FILE.get(name, [])]
        assert changed_lines(TWO_SOURCES, (fixed / name).read_text()) == expected, name
    with Server(root, tmp_path / "server.log") as server:
        uris = {name: server.open(root / name) for name in FILES}
        published = server.diagnostics(list(uris.values()))
    got = {name: [(d["range"]["start"]["line"] + 1, d["code"]) for d in published[uri]] for name, uri in uris.items()}
    assert got == {**PER_FILE, "sub/gen/c.py": []}


def test_the_plugin_says_a_nested_table_is_unusable_on_the_files_it_governs(tmp_path):
    monorepo(tmp_path)
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\ntensor-functionz = ["fetch"]\n')
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "-j", "1", "."], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    found = by_file(proc.stdout)
    assert found["a.py"] == [(LOAD_LINE, "TEN202")] and "Traceback" not in proc.stderr
    for name in ("sub/b.py", "sub/gen/c.py"):  # the defaults (no declared functions) and one notice each
        assert found[name] == [(1, "TEN000")], proc.stdout
    assert proc.stdout.count("unknown key 'tensor-functionz'") == 2
