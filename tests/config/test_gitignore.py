"""Exclude patterns match as git matches them: each .gitignore here is compared with what
`git ls-files --others --exclude-standard` lists in a real repository (odd brackets, POSIX classes,
escapes, `**`, negation, anchoring, folder-only patterns, non-ASCII bytes)."""
from __future__ import annotations

import os
import random
import subprocess

import pytest

from flake8_tensorcopy.config.discovery import discover

FILES = ["a/b/c.py", "a/c.py", "c.py", "gen/keep.py", "gen/x.py", "gen/sub/y.py", "m1.py", "m10.py", "m3.py",
         "#x.py", "z.py", "a.py", "]x.py", "-x.py", "x[.py", "*.py", "keep.py", "a/x/y/c.py", "aXb.py",
         "a/z/b.py", "1.py", "x.py", "!x.py", "^x.py", "b.py", "\\x.py", " s.py", "s .py", "A.py", "é.py",
         "sub/gen/q.py", "x/a/c.py", "[ab].py", "a/b.py/f.py"]
PATTERNS = ["*.py", "c.py", "/c.py", "//c.py", "a/c.py", "b/c.py", "**/b/c.py", "a/**", "a/**/c.py", "a/***/c.py",
            "a**b.py", "gen/", "/gen/", "gen//", "m?.py", "m[0-4].py", "m[!0-4].py", "m[^0-4].py", "\\#x.py",
            "# x.py", "[z-a]", "[z-a].py", "[!]", "[^]", "[!].py", "[[:alpha:]]*.py", "[[:digit:]].py",
            "[[:foo:]].py", "[[:alpha:]", "[[:alpha]", "[]]x.py", "[!]]x.py", "[a-]x.py", "x[.py", "\\*.py",
            "\\!x.py", "[\\]]x.py", "[a\\-z].py", "a\\", "\\", "!", "s\\ .py", "s .py  ", "?.py", "[é].py",
            "*.py\n!keep.py", "gen/\n!gen/keep.py", "gen/*\n!gen/keep.py", "*\n!*/\n!*.py", "a/**/", "**/gen"]
ATOMS = ["*", "**", "?", "[", "]", "!", "^", "-", "\\", "/", "a", "b", "c", "z", ".py", "[:alpha:]", ":", " ", "x",
         "gen", "é"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")
    return root


def disagreement(root, gitignore: str):
    (root / ".gitignore").write_text(gitignore + "\n")
    listed = subprocess.run(["git", "ls-files", "-o", "--exclude-standard", "-z"], cwd=root, capture_output=True,
                            check=True).stdout.decode().split("\0")
    git = {p for p in listed if p.endswith(".py")}
    ours = {os.path.relpath(p, root) for p in discover([str(root)], []).files}
    return {"only git reads": sorted(git - ours), "only we read": sorted(ours - git)}


@pytest.mark.parametrize("gitignore", PATTERNS)
def test_a_pattern_excludes_what_git_ignores(repo, gitignore):
    assert disagreement(repo, gitignore) == {"only git reads": [], "only we read": []}


def test_random_patterns_exclude_what_git_ignores(repo):
    rng = random.Random(14)
    for _ in range(150):
        lines = ["".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 3))]
        assert disagreement(repo, "\n".join(lines)) == {"only git reads": [], "only we read": []}, lines
