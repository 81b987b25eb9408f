"""Per-rule snapshots of what a user sees: `check`'s full messages and `fix --diff --unsafe-fixes`'s
diffs on the rule's fixtures, compared with tests/snapshots/TENxxx.txt.

A change shows as a unified diff of the snapshot; when it is intended, rewrite the snapshots with
`TEN_UPDATE_SNAPSHOTS=1 python -m pytest tests/integration/test_snapshots.py` and review the change in git."""
from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tests.support.fixture_tools import ROOT
from flake8_tensorcopy.cli.main import main
from flake8_tensorcopy.rules import RULES

SNAPSHOTS = ROOT / "tests" / "snapshots"
UPDATE = "TEN_UPDATE_SNAPSHOTS"


def transcript(code: str, capsys) -> str:
    """The commands run in fixtures/ on the rule's three fixtures (the default rules and this one on),
    each followed by its exit code and standard output."""
    files = [f"{code}/{variant}.py" for variant in ("bad", "good", "fixed")]
    parts = []
    for command in (["check", "-j1", "-q"], ["fix", "--diff", "--unsafe-fixes", "-j1"]):
        args = [*command, "--extend-select", code, *files]
        capsys.readouterr()
        status = main(args)
        out, err = capsys.readouterr()
        assert status in (0, 1), err
        parts.append(f"$ flake8-tensorcopy {' '.join(args)}\n(exit {status})\n{out}")
    return "\n".join(parts)


def compare(path: Path, actual: str, update: bool) -> None:
    """Rewrite `path` when updating; otherwise fail with a unified diff unless it holds `actual`."""
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"no snapshot {path.name}: run with {UPDATE}=1 to write it", pytrace=False)
    expected = path.read_text(encoding="utf-8")
    if expected != actual:
        diff = difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                    f"{path.name} (committed)", f"{path.name} (now)")
        pytest.fail(f"{path.name} changed ({UPDATE}=1 rewrites it):\n{''.join(diff)}", pytrace=False)


@pytest.mark.parametrize("code", [r.code for r in RULES])
def test_messages_and_fix_diffs_match_the_snapshot(code, capsys, monkeypatch):
    monkeypatch.chdir(ROOT / "fixtures")
    compare(SNAPSHOTS / f"{code}.txt", transcript(code, capsys), os.environ.get(UPDATE) == "1")


def test_every_snapshot_belongs_to_a_rule():
    assert sorted(p.stem for p in SNAPSHOTS.glob("*.txt")) == sorted(r.code for r in RULES)


def test_a_changed_snapshot_fails_with_a_diff_and_updating_rewrites_it(tmp_path):
    path = tmp_path / "TEN000.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    compare(path, "a\nb\n", update=False)
    with pytest.raises(pytest.fail.Exception) as failed:
        compare(path, "a\nc\n", update=False)
    assert "-b\n+c\n" in str(failed.value) and f"{UPDATE}=1" in str(failed.value)
    compare(path, "a\nc\n", update=True)
    assert path.read_text(encoding="utf-8") == "a\nc\n"
    with pytest.raises(pytest.fail.Exception, match="no snapshot"):
        compare(tmp_path / "missing.txt", "x", update=False)
