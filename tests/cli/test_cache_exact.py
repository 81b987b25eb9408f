"""The cache of `check` keys each entry on exactly what the analysis read beside the file (cli/cache.py,
analysis/project.py): a neighbour read two imports away invalidates it, even when its answer was
memoised while another file was analysed; a module that shadows an import invalidates it; an edit of a
module the analysis never read does not; and a run that every entry answers imports no rule and no
analysis. Findings are the same with and without the cache at every package size."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.cli_tools import ROOT, run_cli
from tests.support.scaling_cases import CONVERT, package, write_files

from flake8_tensorcopy.cli import cache

OWN = {cache.ENV: ""}  # each test's cache is the default one, in its project folder
A = "import torch\nfrom .b import make\n\n\ndef run():\n    return torch.tensor(make())\n"
CHAIN = {"pyproject.toml": "[tool.flake8-tensorcopy]\n", "pkg/__init__.py": "", "pkg/a0.py": A, "pkg/a1.py": A,
         "pkg/b.py": "from .c import build\n\n\ndef make():\n    return build()\n",
         "pkg/c.py": "import torch\n\n\ndef build():\n    return torch.ones(3)\n",
         "pkg/u.py": "def unrelated():\n    return 1\n"}
NOT_A_TENSOR = "def build():\n    return [1.0, 2.0]\n"


def check(root, *args: str) -> subprocess.CompletedProcess:
    return run_cli("check", *args, "pkg", cwd=root, env=OWN)


def entries(root) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / cache.FOLDER / "entries").glob("*.json"))]


def mark_entries(root) -> None:
    """Rename every cached finding, so a run that serves it from the cache says so."""
    for path in (root / cache.FOLDER / "entries").glob("*.json"):
        path.write_text(path.read_text().replace('"message": "', '"message": "CACHED '))


@pytest.mark.parametrize("jobs", ["-j1", "-j2"])
def test_a_neighbour_two_imports_away_invalidates_every_file_that_read_it(tmp_path, jobs):
    """a0.py and a1.py call b.make(), which returns c.build(): b's summary is memoised once (while a0.py
    is analysed) and served to a1.py, which must still depend on c.py."""
    write_files(tmp_path, CHAIN)
    first = check(tmp_path, jobs)
    assert first.stdout.count("TEN204") == 2, first.stdout
    reads = {e["items"][0]["path"]: {p.rsplit("/", 1)[-1] for p, _ in e["reads"]}
             for e in entries(tmp_path) if e["items"]}
    assert set(reads) == {"pkg/a0.py", "pkg/a1.py"}
    assert all({"b.py", "c.py"} <= r and "u.py" not in r for r in reads.values()), reads
    (tmp_path / "pkg" / "c.py").write_text(NOT_A_TENSOR)
    changed = check(tmp_path, jobs)
    assert changed.returncode == 0 and "TEN204" not in changed.stdout, changed.stdout
    assert check(tmp_path, jobs, "--no-cache").stdout == changed.stdout


def test_an_edit_of_a_module_the_analysis_did_not_read_keeps_every_entry(tmp_path):
    write_files(tmp_path, CHAIN)
    check(tmp_path, "-j1")
    mark_entries(tmp_path)
    (tmp_path / "pkg" / "u.py").write_text("def unrelated():\n    return 2\n")  # new bytes, nothing asks for it
    (tmp_path / "pkg" / "new.py").write_text("VALUE = 3\n")  # a new module that mentions no name asked about
    again = check(tmp_path, "-j1")
    assert again.stdout.count("CACHED ") == 2, again.stdout


def test_a_module_that_shadows_an_import_invalidates_the_entry(tmp_path):
    """`from .b import make` reads pkg/b/__init__.py until a pkg/b.py appears: Python then imports b.py."""
    files = {k: v for k, v in CHAIN.items() if k != "pkg/b.py"}
    files["pkg/b/__init__.py"] = CHAIN["pkg/b.py"].replace("from .c", "from ..c")
    write_files(tmp_path, files)
    assert check(tmp_path, "-j1").stdout.count("TEN204") == 2
    (tmp_path / "pkg" / "b.py").write_text("def make():\n    return [1.0]\n")
    shadowed = check(tmp_path, "-j1")
    assert shadowed.returncode == 0 and "TEN204" not in shadowed.stdout, shadowed.stdout


def test_a_new_caller_in_a_changed_package_is_found_and_an_unchanged_answer_kept(tmp_path):
    """The word lookups of an entry are asked again of a package that changed: a new module that calls
    the def is a miss, an edit that adds no caller is not."""
    write_files(tmp_path, {"pyproject.toml": "[tool.flake8-tensorcopy]\n", "pkg/__init__.py": "",
                           "pkg/convert.py": CONVERT,
                           "pkg/run.py": "from .convert import to_tensor\n\n\ndef run(x):\n"
                                         "    return to_tensor([x])\n"})
    assert "TEN204" not in check(tmp_path, "-j1").stdout
    mark_entries(tmp_path)
    (tmp_path / "pkg" / "other.py").write_text("def other():\n    return 1\n")
    assert check(tmp_path, "-j1").returncode == 0  # the answer did not change: still a hit (nothing to report)
    (tmp_path / "pkg" / "caller.py").write_text("import torch\nfrom .convert import to_tensor\n\n"
                                                "to_tensor(torch.zeros(2))\n")
    found = check(tmp_path, "-j1")
    assert "convert.py:5:" in found.stdout and "CACHED" not in found.stdout, found.stdout


def test_a_warm_run_imports_no_rule_and_no_analysis(tmp_path):
    write_files(tmp_path, CHAIN)
    check(tmp_path, "-j1")
    probe = ("import sys\nfrom flake8_tensorcopy.cli import main\ncode = main.main(['check', '-j1', 'pkg'])\n"
             "print(sorted(m for m in sys.modules if m.startswith('flake8_tensorcopy')))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT), **OWN})
    assert done.stdout.count("TEN204") == 2, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1].replace("'", '"'))
    heavy = [m for m in loaded if m.split(".", 1)[-1].startswith((
        "rules.ten", "rules.context", "analysis.facts", "analysis.project", "analysis.summaries", "pipeline.noqa",
        "sources.notebook", "cli.pool"))]
    assert heavy == [] and "flake8_tensorcopy.cli.check" in loaded


@pytest.mark.parametrize("size", [4, 16])
def test_findings_are_the_same_with_and_without_the_cache_at_every_package_size(tmp_path, size):
    write_files(tmp_path, {"pyproject.toml": "[tool.flake8-tensorcopy]\n", **package(size)})
    plain = check(tmp_path, "--no-cache", "-j1")
    cold, warm = check(tmp_path, "-j2"), check(tmp_path, "-j1")
    assert plain.stdout == cold.stdout == warm.stdout and plain.stdout.count("TEN204") == size
    (tmp_path / "pkg" / "m1.py").write_text("def f1(values):\n    return values\n")  # m0 calls f1 no more with...
    (tmp_path / "pkg" / "m0.py").write_text("def f0(values):\n    return values\n")  # ...and m0's callers: fewer
    after, fresh = check(tmp_path, "-j1"), check(tmp_path, "--no-cache", "-j1")
    assert after.stdout == fresh.stdout and after.stdout.count("TEN204") < size
