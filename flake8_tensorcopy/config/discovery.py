"""Which files `check` and `fix` read: paths given, folders walked, with .gitignore-style excludes.

Walking a folder skips the default folders (`DEFAULT_EXCLUDES`), virtual environments (any folder with a
`pyvenv.cfg`), and what the project's `.gitignore` files say (those of the walked folders and of their
parents up to the repository root). A symlink met in the walk is followed only to a file inside the
walked folder (one outside is skipped, with a note); every real file is read once. A path named on the
command line, file or folder, is skipped only when an exclude (not .gitignore) matches the path itself, as
flake8 decides: a file named inside an excluded folder is checked. `force` (Ruff's --force-exclude, for
pre-commit, which names every file) also skips a named path inside an excluded folder.
"""
from __future__ import annotations

import codecs
import os
from dataclasses import dataclass, field
from typing import Sequence

from ..sources.fileio import read_regular
from .gitignore import Pattern, compile_patterns, excluded

SUFFIXES = (".py", ".pyi", ".ipynb")
IGNORE_FILE_LIMIT = 1 << 20  # bytes of a .gitignore read at most (one that is /dev/zero never ends)
DEFAULT_EXCLUDES = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".svn", ".tox", ".nox", ".venv", "venv", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".pytype", ".ipynb_checkpoints", "__pycache__", "__pypackages__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages",
)


@dataclass
class Found:
    files: list[str] = field(default_factory=list)  # sorted; `-` (stdin) and missing named paths kept
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why): symlinks out of the tree
    errors: list[tuple[str, str]] = field(default_factory=list)  # (folder, why): folders not listed


def default_excludes() -> list[Pattern]:
    return compile_patterns([name + "/" for name in DEFAULT_EXCLUDES], os.sep)


def discover(paths: Sequence[str], excludes: Sequence[Pattern], force: bool = False) -> Found:
    """The files to read, sorted, each real file once. A path that does not exist is kept, so reading it
    reports the error instead of silently skipping it."""
    found, candidates = Found(), {}  # candidates: path -> real path
    for path in paths:
        if path != "-" and os.path.isdir(path):
            if not _holds_cwd(path) and excluded_named(path, excludes, is_dir=True, parents=force):
                continue  # (`.` or a folder above it is never excluded by its own name)
            walk = _Walk(path, os.path.realpath(path), candidates, found)
            walk.folder(path, walk.inside, list(excludes) + _parent_gitignores(path))
        elif path == "-" or not os.path.exists(path) or not excluded_named(path, excludes, parents=force):
            candidates[path if path == "-" else os.path.normpath(path)] = path if path == "-" else None
    seen = set()
    for path in sorted(candidates):
        real = candidates[path] or os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            found.files.append(path)
    return found


@dataclass
class _Walk:
    root: str  # the folder named
    inside: str  # its real path: symlinks are followed only to files under it
    candidates: dict
    found: Found

    def folder(self, folder: str, real: str, patterns: list[Pattern]) -> None:
        patterns = patterns + _gitignore(folder)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:  # a folder that cannot be listed is an error, not a silent skip
            self.found.errors.append((os.path.normpath(folder), f"cannot read: {exc.strerror or exc}"))
            return
        for entry in entries:
            try:
                self.entry(entry, real, patterns)
            except OSError as exc:  # a symlink loop (ELOOP), an entry gone while walking: no crash
                if entry.name.endswith(SUFFIXES):  # a source file's name: said; anything else is not ours
                    self.found.skipped.append((os.path.normpath(entry.path), f"skipped: {exc.strerror or exc}"))

    def entry(self, entry: os.DirEntry, real: str, patterns: list[Pattern]) -> None:
        path = os.path.normpath(entry.path)
        link = entry.is_symlink()
        target = os.path.realpath(path) if link else os.path.join(real, entry.name)
        if entry.is_dir():
            if excluded(path, True, patterns) or os.path.isfile(os.path.join(path, "pyvenv.cfg")):
                return
            if not link:
                self.folder(path, target, patterns)
            elif not _within(target, self.inside):  # a link inside: its target is walked where it is
                self.found.skipped.append((path, f"skipped: a symlink to {target}, outside {self.root}"))
        elif entry.name.endswith(SUFFIXES) and entry.is_file() and not excluded(path, False, patterns):
            if link and not _within(target, self.inside):
                self.found.skipped.append((path, f"skipped: a symlink to {target}, outside {self.root}"))
            else:
                self.candidates[path] = target


def _within(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def excluded_named(path: str, patterns: Sequence[Pattern], is_dir: bool = False, parents: bool = True) -> bool:
    """A named path is excluded when it, or (`parents`) a folder between it and the current folder (for a
    path outside that folder: between it and the folder both are in), is."""
    path = os.path.abspath(path)
    if parents:
        top = os.path.commonpath([path, os.getcwd()])
        parts = os.path.relpath(path, top).split(os.sep)[:-1]
        if any(excluded(os.path.join(top, *parts[:i]), True, patterns) for i in range(1, len(parts) + 1)):
            return True
    return excluded(path, is_dir, patterns)


def _holds_cwd(folder: str) -> bool:
    """`folder` is the current folder or one above it."""
    return _within(os.getcwd(), os.path.abspath(folder))


def _gitignore(folder: str) -> list[Pattern]:
    try:
        data = read_regular(os.path.join(folder, ".gitignore"), IGNORE_FILE_LIMIT)
    except OSError:
        return []
    data = data[len(codecs.BOM_UTF8):] if data.startswith(codecs.BOM_UTF8) else data
    return compile_patterns(data.decode("utf-8", "surrogateescape").split("\n"), folder)


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
