"""Which files `check` reads: .gitignore-style patterns, .gitignore files, default and user excludes."""
from __future__ import annotations

import os

import pytest

from tests.support.cli_tools import DEEPCOPY, reported, run_cli
from flake8_tensorcopy.config.discovery import default_excludes, discover
from flake8_tensorcopy.config.gitignore import compile_patterns, excluded


@pytest.mark.parametrize("pattern, path, is_dir, expected", [
    ("*.py", "a/b/c.py", False, True),
    ("c.py", "a/b/c.py", False, True),  # no slash: any depth
    ("/c.py", "a/c.py", False, False),  # leading slash: anchored at the base
    ("a/c.py", "a/c.py", False, True),
    ("b/c.py", "a/b/c.py", False, False),  # inner slash: anchored too
    ("**/b/c.py", "a/b/c.py", False, True),
    ("a/**", "a/b/c.py", False, True),
    ("a/**/c.py", "a/c.py", False, True),
    ("a/**/c.py", "a/x/y/c.py", False, True),
    ("gen/", "gen", False, False),  # trailing slash: folders only
    ("gen/", "gen", True, True),
    ("m?.py", "m1.py", False, True),
    ("m?.py", "m10.py", False, False),
    ("m[0-4].py", "m3.py", False, True),
    ("m[!0-4].py", "m3.py", False, False),
    ("\\#x.py", "#x.py", False, True),
    ("# comment", "# comment", False, False),
])
def test_gitignore_pattern_semantics(tmp_path, pattern, path, is_dir, expected):
    patterns = compile_patterns([pattern], str(tmp_path))
    assert excluded(str(tmp_path / path), is_dir, patterns) is expected


def test_last_match_wins_and_negation_reincludes(tmp_path):
    patterns = compile_patterns(["*.py", "!keep.py"], str(tmp_path))
    assert excluded(str(tmp_path / "drop.py"), False, patterns)
    assert not excluded(str(tmp_path / "keep.py"), False, patterns)


def make_tree(root, files):
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(DEEPCOPY)


def rel(root, found):
    return [os.path.relpath(p, root).replace(os.sep, "/") for p in found]


def test_walk_skips_default_folders_and_virtual_environments(tmp_path):
    make_tree(tmp_path, ["pkg/a.py", "pkg/b.pyi", "nb.ipynb", "pkg/notes.txt", ".venv/lib/x.py",
                         "pkg/__pycache__/a.py", ".git/hooks/h.py", "myenv/lib/y.py", "build/z.py"])
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr\n")
    found = discover([str(tmp_path)], default_excludes()).files
    assert rel(tmp_path, found) == ["nb.ipynb", "pkg/a.py", "pkg/b.pyi"]


def test_gitignore_files_of_the_walk_and_of_the_repository_above(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    make_tree(tmp_path, ["src/generated/g.py", "src/api_pb2.py", "src/ok.py", "src/sub/skip.py",
                         "src/sub/keep.py", "other/generated.py"])
    (tmp_path / "src" / "sub" / ".gitignore").write_text("*.py\n!keep.py\n")
    found = discover([str(tmp_path / "src")], default_excludes()).files  # the root's .gitignore applies
    assert rel(tmp_path, found) == ["src/ok.py", "src/sub/keep.py"]


def test_gitignore_outside_a_repository_is_not_read_from_parents(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    make_tree(tmp_path, ["proj/a.py"])
    assert rel(tmp_path, discover([str(tmp_path / "proj")], default_excludes()).files) == ["proj/a.py"]


def test_named_files_are_deduplicated_and_sorted(tmp_path):
    make_tree(tmp_path, ["b.py", "a/c.py"])
    found = discover([str(tmp_path / "b.py"), str(tmp_path), str(tmp_path / "a" / "c.py")], default_excludes()).files
    assert rel(tmp_path, found) == ["a/c.py", "b.py"]


def names(proc):
    return sorted({p for p, _, _ in reported(proc.stdout)})


def test_exclude_options_end_to_end(tmp_path):
    make_tree(tmp_path, ["src/a.py", "src/legacy/old.py", ".venv/v.py", "tests/t.py"])
    assert names(run_cli("check", ".", cwd=tmp_path)) == ["src/a.py", "src/legacy/old.py", "tests/t.py"]
    assert names(run_cli("check", "--extend-exclude", "legacy/,tests", ".", cwd=tmp_path)) == ["src/a.py"]
    # --exclude replaces the defaults: .venv is read again
    assert names(run_cli("check", "--exclude", "legacy/", ".", cwd=tmp_path)) == [
        ".venv/v.py", "src/a.py", "tests/t.py"]
    # a named path is skipped only when an exclude matches the path itself, file or folder (as in flake8)
    named = run_cli("check", "--extend-exclude", "legacy/", "src/legacy/old.py", "src/a.py", cwd=tmp_path)
    assert names(named) == ["src/a.py", "src/legacy/old.py"]
    assert names(run_cli("check", "--extend-exclude", "legacy/", "src/legacy", "src/a.py", cwd=tmp_path)) == [
        "src/a.py"]
    assert names(run_cli("check", "--extend-exclude", "old.py", "src/legacy/old.py", cwd=tmp_path)) == []
    # --force-exclude (pre-commit names every file): a named file inside an excluded folder is skipped too
    forced = run_cli("check", "--force-exclude", "--extend-exclude", "legacy/", "src/legacy/old.py", "src/a.py",
                     cwd=tmp_path)
    assert names(forced) == ["src/a.py"]
