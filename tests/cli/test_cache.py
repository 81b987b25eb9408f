"""The cache of `check` (cli/cache.py): the same findings as without it, a changed neighbour seen, a corrupt
entry a miss, concurrent runs safe, `--no-cache` touching nothing, `cache clean` emptying it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from tests.support.cli_tools import ROOT, run_cli
from tests.support.project_tools import CONVERT, write

from flake8_tensorcopy.cli import cache

OWN = {cache.ENV: ""}  # each test's cache is the default one, in its project folder
FIXTURES = sorted((ROOT / "fixtures").glob("TEN*/bad.py"))


def project(tmp_path):
    """A project of every rule's bad fixture, with its pyproject.toml."""
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-tensorcopy]\nextend-select = ['TEN9']\n")
    for path in FIXTURES:
        shutil.copy(path, tmp_path / f"{path.parent.name.lower()}.py")
    return tmp_path


def entries(folder):
    return sorted((folder / cache.FOLDER / "entries").glob("*.json"))


def test_findings_are_the_same_cold_warm_and_without_the_cache(tmp_path):
    root = project(tmp_path)
    plain = run_cli("check", "--no-cache", "-j1", ".", cwd=root, env=OWN)
    cold = run_cli("check", "-j1", ".", cwd=root, env=OWN)
    warm = run_cli("check", "-j1", ".", cwd=root, env=OWN)
    assert plain.returncode == cold.returncode == warm.returncode == 1
    assert plain.stdout == cold.stdout == warm.stdout and plain.stdout.count("TEN") >= len(FIXTURES)
    assert len(entries(root)) == len(FIXTURES)
    assert (root / cache.FOLDER / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (root / cache.FOLDER / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_a_hit_is_served_from_the_entry_and_no_cache_neither_reads_nor_writes(tmp_path):
    root = project(tmp_path)
    before = run_cli("check", "-j1", ".", cwd=root, env=OWN).stdout
    for entry in entries(root):  # the same entries, their findings renamed: a run that reads them says so
        entry.write_text(entry.read_text().replace('"message": "', '"message": "CACHED '))
    assert run_cli("check", "-j1", ".", cwd=root, env=OWN).stdout.count("CACHED ") == before.count("\n")
    assert run_cli("check", "-j1", "--no-cache", ".", cwd=root, env=OWN).stdout == before
    shutil.rmtree(root / cache.FOLDER)
    assert run_cli("check", "-j1", "--no-cache", ".", cwd=root, env=OWN).stdout == before
    assert not (root / cache.FOLDER).exists()


def test_a_changed_neighbour_changes_the_finding(tmp_path):
    """TEN204 in convert.py is decided by a caller in run.py: editing only run.py must be seen."""
    write(tmp_path, {"pyproject.toml": "[tool.flake8-tensorcopy]\n", "pkg/__init__.py": "", "pkg/convert.py": CONVERT,
                     "pkg/run.py": "import torch\nfrom .convert import to_tensor\n\n\ndef run(x):\n"
                                   "    return to_tensor(torch.ones(3) * x)\n"})
    target = os.path.join("pkg", "convert.py")
    first = run_cli("check", "-j1", target, cwd=tmp_path, env=OWN)
    again = run_cli("check", "-j1", target, cwd=tmp_path, env=OWN)
    assert "convert.py:6:" in first.stdout and "TEN204" in first.stdout and again.stdout == first.stdout
    (tmp_path / "pkg" / "run.py").write_text("from .convert import to_tensor\n\n\ndef run(x):\n"
                                             "    return to_tensor([x, x])\n")
    changed = run_cli("check", "-j1", target, cwd=tmp_path, env=OWN)
    assert changed.returncode == 0 and "TEN204" not in changed.stdout, changed.stdout
    (tmp_path / "pkg" / "helpers.py").write_text("import torch\nfrom .convert import to_tensor\n\n"
                                                 "to_tensor(torch.zeros(2))\n")  # a new caller, a new module
    added = run_cli("check", "-j1", target, cwd=tmp_path, env=OWN)
    assert "convert.py:6:" in added.stdout, added.stdout


def test_a_corrupt_entry_is_a_miss(tmp_path):
    root = project(tmp_path)
    good = run_cli("check", "-j1", ".", cwd=root, env=OWN)
    bad = [b"", b"\xff\xfe not json", b"[1, 2]", json.dumps({"key": "other"}).encode(), b'{"items": 3',
           json.dumps({"items": [{"nope": 1}], "cell_errors": []}).encode()]
    for n, entry in enumerate(entries(root)):
        text = bad[n % len(bad)]
        entry.write_bytes(text if b"nope" not in text else text[:-1] + f', "key": "{entry.stem}"}}'.encode())
    again = run_cli("check", "-j1", ".", cwd=root, env=OWN)
    assert (again.returncode, again.stdout) == (good.returncode, good.stdout), again.stderr
    assert "Traceback" not in again.stderr
    assert all(json.loads(e.read_text())["key"] == e.stem for e in entries(root))  # rewritten whole


def test_concurrent_runs_do_not_corrupt_the_cache(tmp_path):
    root = project(tmp_path)
    for n in range(3):  # more files, so the runs overlap
        for path in FIXTURES:
            shutil.copy(path, root / f"copy{n}_{path.parent.name.lower()}.py")
    expected = run_cli("check", "--no-cache", "-j1", ".", cwd=root, env=OWN).stdout
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **OWN}
    runs = [subprocess.Popen([sys.executable, "-m", "flake8_tensorcopy", "check", "-j1", "."], cwd=root, env=environ,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outputs = [run.communicate()[0] for run in runs]
    assert outputs == [expected] * 3
    assert len(entries(root)) == 4 * len(FIXTURES)
    assert all(json.loads(e.read_text())["key"] == e.stem for e in entries(root))
    assert not [p for p in (root / cache.FOLDER / "entries").iterdir() if p.name.startswith(".tmp-")]
    assert run_cli("check", "-j1", ".", cwd=root, env=OWN).stdout == expected


def test_cache_clean_and_the_size_bound(tmp_path):
    root = project(tmp_path)
    run_cli("check", "-j1", ".", cwd=root, env=OWN)
    assert cache.prune(str(root / cache.FOLDER), keep=3) == len(FIXTURES) - 3 and len(entries(root)) == 3
    proc = run_cli("cache", "clean", cwd=root, env=OWN)
    assert proc.returncode == 0 and not (root / cache.FOLDER).exists()
    (root / "other").mkdir()
    (root / "other" / "keep.txt").write_text("")
    assert not cache.clean(str(root / "other")) and (root / "other" / "keep.txt").exists()  # not a tagged cache


def test_fix_diff_is_the_same_from_the_cache_and_fix_itself_does_not_use_it(tmp_path):
    root = project(tmp_path)
    plain = run_cli("fix", "--diff", "--no-cache", "-j1", ".", cwd=root, env=OWN)
    assert not (root / cache.FOLDER).exists()
    cold = run_cli("fix", "--diff", "-j1", ".", cwd=root, env=OWN)
    stored = entries(root)
    warm = run_cli("fix", "--diff", "-j1", ".", cwd=root, env=OWN)
    assert plain.returncode == cold.returncode == warm.returncode == 1 and "+++ " in plain.stdout
    assert (plain.stdout, plain.stderr) == (cold.stdout, cold.stderr) == (warm.stdout, warm.stderr)
    assert len(stored) == len(FIXTURES) and entries(root) == stored
    shutil.rmtree(root / cache.FOLDER)
    run_cli("fix", "--check", "-j1", ".", cwd=root, env=OWN)
    assert not (root / cache.FOLDER).exists()  # only --diff is cached: a fix that writes is never skipped
