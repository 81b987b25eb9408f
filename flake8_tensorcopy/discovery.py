"""Which files `check` reads: paths given, folders walked, with .gitignore-style excludes.

Excludes use .gitignore syntax (`*`, `?`, `[a-z]`, `**`, a trailing `/` for folders only, a leading or
inner `/` to anchor at the pattern's base folder, `!` to re-include). Walking a folder skips the default
folders (`DEFAULT_EXCLUDES`), virtual environments (any folder with a `pyvenv.cfg`), and what the
project's `.gitignore` files say (those of the walked folders and of their parents up to the repository
root). The excludes (not .gitignore) also apply to files named on the command line, as in flake8, from
the current folder down.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from .fileio import read_regular

SUFFIXES = (".py", ".pyi", ".ipynb")
IGNORE_FILE_LIMIT = 1 << 20  # bytes of a .gitignore read at most (one that is /dev/zero never ends)
DEFAULT_EXCLUDES = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".pytype", ".ipynb_checkpoints", "__pycache__", "__pypackages__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
)


@dataclass(frozen=True)
class Pattern:
    base: str  # absolute folder the pattern is relative to
    regex: re.Pattern
    negate: bool = False
    dir_only: bool = False

    def verdict(self, path: str, is_dir: bool) -> Optional[bool]:
        """True: excluded, False: re-included, None: the pattern says nothing about `path`."""
        if self.dir_only and not is_dir:
            return None
        rel = os.path.relpath(path, self.base)
        if rel.startswith(".."):
            return None
        return (not self.negate) if self.regex.match(rel.replace(os.sep, "/")) else None


def compile_patterns(lines: Iterable[str], base: str) -> list[Pattern]:
    """Patterns from .gitignore-style lines (comments and blank lines skipped)."""
    base = os.path.abspath(base)
    out = []
    for line in lines:
        line = line.rstrip("\n\r")
        if line.endswith(" ") and not line.endswith("\\ "):
            line = line.rstrip(" ")
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\"):  # `\#x`, `\!x`: literal
            line = line[1:] if line[1:2] in ("#", "!") else line
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        body = _translate(line.lstrip("/"))
        try:
            regex = re.compile(("^" if anchored else "^(?:.*/)?") + body + "$")
        except re.error:  # `[z-a]`: git's wildmatch matches nothing with a broken bracket expression
            regex = NEVER
        out.append(Pattern(base, regex, negate, dir_only))
    return out


NEVER = re.compile(r"(?!)")
POSIX_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
                 "space": r" \t\n\r\f\v", "xdigit": "0-9A-Fa-f",
                 "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "blank": r" \t", "cntrl": r"\x00-\x1f\x7f",
                 "print": r"\x20-\x7e", "graph": r"\x21-\x7e"}


def _bracket_end(pattern: str, i: int):
    """Index of the `]` closing the bracket expression that starts after pattern[i - 1] == '[' (a `]`
    first in the set, or right after `!`, is a member; `[:alpha:]` is a class), else None."""
    j = i + (pattern[i:i + 1] in ("!", "^"))
    j += pattern[j:j + 1] == "]"
    while j < len(pattern):
        if pattern.startswith("[:", j) and ":]" in pattern[j + 2:]:
            j = pattern.index(":]", j + 2) + 2
        elif pattern[j] == "]":
            return j
        else:
            j += 1
    return None


def _bracket_body(inner: str) -> str:
    """A bracket expression's members as a regex set body: POSIX classes expanded, `\\` and `[` escaped."""
    out, k = [], 0
    while k < len(inner):
        match = re.match(r"\[:(\w+):\]", inner[k:])
        if match and match.group(1) in POSIX_CLASSES:
            out.append(POSIX_CLASSES[match.group(1)])
            k += match.end()
        else:
            out.append("\\" + inner[k] if inner[k] in "\\[]" else inner[k])
            k += 1
    return "".join(out)


def _translate(pattern: str) -> str:
    out, i, n = [], 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            c = pattern[i]
            i += 1
            if c == "*":
                out.append("[^/]*")
            elif c == "?":
                out.append("[^/]")
            elif c == "\\" and i < n:
                out.append(re.escape(pattern[i]))
                i += 1
            elif c == "[" and _bracket_end(pattern, i) is not None:
                end = _bracket_end(pattern, i)
                negated = pattern[i] in "!^"
                inner = pattern[i + negated:end]
                out.append("[" + ("^" if negated else "") + _bracket_body(inner) + "]")
                i = end + 1
            else:
                out.append(re.escape(c))
    return "".join(out)


def excluded(path: str, is_dir: bool, patterns: Sequence[Pattern]) -> bool:
    """The last pattern that matches `path` decides (git's rule)."""
    path = os.path.abspath(path)
    decision = False
    for pattern in patterns:
        verdict = pattern.verdict(path, is_dir)
        if verdict is not None:
            decision = verdict
    return decision


def matches(path: str, patterns: Sequence[Pattern]) -> bool:
    """Whether any pattern matches `path` or a folder between the pattern's base and it (negations aside)."""
    path = os.path.abspath(path)
    for pattern in patterns:
        rel = os.path.relpath(path, pattern.base)
        if rel.startswith(".."):
            continue
        parts = rel.split(os.sep)
        for i in range(1, len(parts) + 1):
            if pattern.verdict(os.path.join(pattern.base, *parts[:i]), i < len(parts)):
                return True
    return False


def default_excludes() -> list[Pattern]:
    return compile_patterns([name + "/" for name in DEFAULT_EXCLUDES], os.sep)


def discover(paths: Sequence[str], excludes: Sequence[Pattern]) -> list[str]:
    """Files to check, sorted and without duplicates. `-` (stdin) is kept as given; a path that does not
    exist is kept too, so the check reports it as an error instead of silently skipping it."""
    found: dict[str, None] = {}
    for path in paths:
        if path != "-" and os.path.isdir(path):
            _walk(path, list(excludes) + _parent_gitignores(path), found)
        elif path == "-" or not os.path.exists(path) or not _excluded_with_parents(path, excludes):
            found[path if path == "-" else os.path.normpath(path)] = None
    return sorted(found)


def _walk(folder: str, patterns: list[Pattern], found: dict) -> None:
    patterns = patterns + _gitignore(folder)
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:  # a folder that cannot be listed is reported (check names it as an error), not skipped
        found[os.path.normpath(folder)] = None
        return
    for entry in entries:
        path = os.path.normpath(entry.path)
        if entry.is_dir(follow_symlinks=False):
            if not excluded(path, True, patterns) and not os.path.isfile(os.path.join(path, "pyvenv.cfg")):
                _walk(path, patterns, found)
        elif entry.name.endswith(SUFFIXES) and entry.is_file() and not excluded(path, False, patterns):
            found[path] = None


def _excluded_with_parents(path: str, patterns: Sequence[Pattern]) -> bool:
    """A named file is excluded when it, or a folder between the current folder and it, is."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path, os.getcwd())
    parts = rel.split(os.sep)[:-1] if not rel.startswith("..") else []
    for i in range(1, len(parts) + 1):
        if excluded(os.path.join(os.getcwd(), *parts[:i]), True, patterns):
            return True
    return excluded(path, False, patterns)


def _gitignore(folder: str) -> list[Pattern]:
    try:
        data = read_regular(os.path.join(folder, ".gitignore"), IGNORE_FILE_LIMIT)
    except OSError:
        return []
    return compile_patterns(data.decode("utf-8", "replace").splitlines(), folder)


def _parent_gitignores(folder: str) -> list[Pattern]:
    """The .gitignore files above `folder`, from the repository root down; none outside a repository."""
    folder = os.path.abspath(folder)
    if os.path.exists(os.path.join(folder, ".git")):
        return []  # the repository root: its own .gitignore is read by the walk
    chain, current = [], os.path.dirname(folder)
    while True:
        chain.append(current)
        if os.path.exists(os.path.join(current, ".git")):
            return [p for d in reversed(chain) for p in _gitignore(d)]
        parent = os.path.dirname(current)
        if parent == current:
            return []
        current = parent
