"""Excludes for paths outside the working folder: matched as flake8 matches them (a pattern without a slash
names a path component; one with a slash is a path relative to where it was given, `../` included)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.cli_tools import DEEPCOPY, reported, run_cli
from flake8_tensorcopy.config.discovery import discover, excluded_named
from flake8_tensorcopy.config.gitignore import compile_patterns, excluded, option_patterns
from flake8_tensorcopy.config.settings import Options, selection

FILES = ("slow.py", "fast.py", "sub/a.py", "sub/b.py", "other/slow.py")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """`outside/dir` holding FILES, and a working folder `work` beside it (neither holds the other)."""
    root = tmp_path / "outside" / "dir"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("import os\n")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return root


def found(root, *patterns, force=False, paths=None):
    opts = Options(paths=[str(p) for p in (paths or [root])], extend_exclude=list(patterns))
    files = discover(opts.paths, selection(opts).excludes, force).files
    return sorted(os.path.relpath(f, root).replace(os.sep, "/") for f in files)


@pytest.mark.parametrize("pattern, left", [
    ("slow.py", ["fast.py", "sub/a.py", "sub/b.py"]),  # a bare name: any component, at any depth
    ("sub", ["fast.py", "other/slow.py", "slow.py"]),  # a folder's name
    ("sub/", ["fast.py", "other/slow.py", "slow.py"]),  # folders only
    ("sl*.py", ["fast.py", "sub/a.py", "sub/b.py"]),  # a glob without a slash is a component too
    ("dir", []),  # the named folder itself
    ("other/slow.py", list(sorted(FILES))),  # a slash anchors at the working folder, which does not hold it
    ("../outside/dir/sub", ["fast.py", "other/slow.py", "slow.py"]),  # `../` moves the base
    ("./../outside/dir/sub/a.py", ["fast.py", "other/slow.py", "slow.py", "sub/b.py"]),
])
def test_exclude_matches_a_tree_outside_the_working_folder(tree, pattern, left):
    assert found(tree, pattern) == left


def test_named_file_inside_an_excluded_outside_folder_is_checked_unless_forced(tree):
    named = [tree / "sub" / "a.py", tree / "fast.py"]
    assert found(tree, "sub", paths=named) == ["fast.py", "sub/a.py"]  # as flake8: only the path itself counts
    assert found(tree, "sub", paths=named, force=True) == ["fast.py"]
    assert found(tree, "a.py", paths=named) == ["fast.py"]  # the named file's own name


def test_working_folder_is_not_excluded_by_its_own_name(tree, monkeypatch):
    monkeypatch.chdir(tree)
    assert found(tree, "dir", paths=["."]) == list(sorted(FILES))


def test_a_pattern_still_anchors_at_its_base_inside_it(tmp_path):
    """Inside its base nothing changed: `/c.py` and `b/c.py` are anchored there; outside, they say nothing."""
    base, elsewhere = tmp_path / "base", tmp_path / "elsewhere"
    assert excluded(str(base / "c.py"), False, compile_patterns(["/c.py"], str(base)))
    assert not excluded(str(base / "a" / "c.py"), False, compile_patterns(["/c.py"], str(base)))
    assert not excluded(str(elsewhere / "c.py"), False, compile_patterns(["/c.py"], str(base)))
    assert not excluded(str(elsewhere / "b" / "c.py"), False, compile_patterns(["b/c.py"], str(base)))
    assert excluded(str(elsewhere / "b" / "c.py"), False, compile_patterns(["c.py"], str(base)))
    assert not excluded(str(elsewhere / "keep.py"), False, compile_patterns(["*.py", "!keep.py"], str(base)))


def test_option_patterns_resolve_leading_dot_segments(tmp_path):
    base = tmp_path / "proj"
    (pattern,) = option_patterns(["../shared/slow.py"], str(base))
    assert pattern.base == str(tmp_path) and pattern.anchored
    assert excluded(str(tmp_path / "shared" / "slow.py"), False, [pattern])
    assert not excluded(str(tmp_path / "other" / "shared" / "slow.py"), False, [pattern])
    (negated,) = option_patterns(["!../shared/keep.py"], str(base))
    assert negated.negate and negated.base == str(tmp_path)


def test_editor_and_codemod_question_excludes_a_file_outside_the_working_folder(tree):
    """The server and the codemod ask `excluded_named` of one file: a bare name matches it, or its folder."""
    patterns = option_patterns(["sub/"], os.getcwd())
    assert excluded_named(str(tree / "sub" / "a.py"), patterns)
    assert not excluded_named(str(tree / "fast.py"), patterns)
    assert not excluded_named(str(tree / "sub" / "a.py"), option_patterns(["dir/sub/"], os.getcwd()))


@pytest.mark.parametrize("command", ["check", "fix"])
def test_check_and_fix_skip_an_excluded_file_outside_the_working_folder(tmp_path, command):
    root, work = tmp_path / "outside" / "dir", tmp_path / "work"
    (root / "slow").mkdir(parents=True)
    work.mkdir()
    (root / "slow" / "bad.py").write_text(DEEPCOPY)
    (root / "bad.py").write_text(DEEPCOPY)
    args = [command, "--no-cache", "--extend-exclude", "slow", root] + (["--diff"] if command == "fix" else [])
    result = run_cli(*args, cwd=work)
    assert [p for p, _, _ in reported(result.stdout)] == [str(root / "bad.py")]


PATTERNS = ("slow.py", "sub", "sl*.py", "dir", "other/slow.py", "../outside/dir/sub")


def test_agrees_with_flake8_on_a_tree_outside_the_working_folder(tree):
    """flake8 itself, run from the working folder with each pattern, reads the files we read."""
    for pattern in PATTERNS:
        run = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "F401", "--extend-exclude",
                              pattern, str(tree)], capture_output=True, text=True, cwd=os.getcwd())
        theirs = sorted({os.path.relpath(line.split(":")[0], tree).replace(os.sep, "/")
                         for line in run.stdout.splitlines()})
        assert theirs == found(tree, pattern), pattern
