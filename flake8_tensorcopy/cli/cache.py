"""The content-hash cache of `check` (and `fix --diff`): a file's findings are kept under a key made of
everything they depend on, so an unchanged tree is checked again without analysing it.

The key hashes the tool (its version and the size and modification time of every module of it), the
rules and `tensor-functions` chosen for the file, its name and bytes, and its neighbours: the analysis
reads other modules of the file's package (callers, imported defs and values), so the key holds the
path, size and modification time of every .py file under the package's top folder (for a script: under
its folder), a superset of what the analysis may read. A changed neighbour changes the key.

The folder is `.flake8-tensorcopy-cache/` beside the project's pyproject.toml (else in the current
folder; or $FLAKE8_TENSORCOPY_CACHE_DIR), marked as Ruff marks `.ruff_cache`: a CACHEDIR.TAG and a
.gitignore of `*`. An entry is one JSON file written to a temporary name and renamed, so concurrent runs
never see half an entry; one that cannot be read or decoded is a miss. Past MAX_ENTRIES, the oldest
entries are removed. Only complete reports are kept (a file with an error is analysed again).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from typing import Iterable, Optional

from .. import __version__

FOLDER = ".flake8-tensorcopy-cache"
ENV = "FLAKE8_TENSORCOPY_CACHE_DIR"
MAX_ENTRIES = 20_000
TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
       "# This file is a cache directory tag created by flake8-tensorcopy.\n")
RELATIVE_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.+)", re.M)


def folder_for(config_root: Optional[str]) -> str:
    """The cache folder of a project whose pyproject.toml is in `config_root` (None: the current folder);
    $FLAKE8_TENSORCOPY_CACHE_DIR instead when it is set."""
    return os.environ.get(ENV) or os.path.join(config_root or os.getcwd(), FOLDER)


def key(path: str, data: bytes, parts: Iterable[str]) -> str:
    """The key of one file's findings: its bytes, its neighbours, the tool, and `parts` (its options)."""
    digest = hashlib.sha256()
    for part in (tool_fingerprint(), os.path.abspath(path), *parts, neighbours(path, data)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(data)
    return digest.hexdigest()


def load(folder: str, entry: str) -> Optional[dict]:
    """The entry stored under `entry`; None when there is none or it cannot be read (a miss)."""
    try:
        with open(_entry_path(folder, entry), encoding="utf-8") as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and found.get("key") == entry else None


def store(folder: str, entry: str, value: dict) -> None:
    """Write one entry atomically (a temporary file renamed over it); a folder that cannot be written
    costs the cache, never the run."""
    try:
        _prepare(folder)
        fd, temp = tempfile.mkstemp(dir=os.path.join(folder, "entries"), prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({**value, "key": entry}, fh)
            os.replace(temp, _entry_path(folder, entry))
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        pass


def prune(folder: str, keep: int = MAX_ENTRIES) -> int:
    """Remove the oldest entries past `keep` (by modification time); how many were removed."""
    entries = os.path.join(folder, "entries")
    try:
        names = [e for e in os.scandir(entries) if e.name.endswith(".json")]
    except OSError:
        return 0
    if len(names) <= keep:
        return 0
    removed = 0
    for old in sorted(names, key=_mtime)[:len(names) - keep]:
        try:
            os.unlink(old.path)
            removed += 1
        except OSError:
            pass
    return removed


def clean(folder: str) -> bool:
    """Remove the cache folder; False when there was none. Only a folder this tool tagged is removed."""
    if not os.path.isfile(os.path.join(folder, "CACHEDIR.TAG")):
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


@functools.lru_cache(maxsize=None)
def tool_fingerprint() -> str:
    """The version, and the size and modification time of each of the tool's files: a changed checkout
    (an upgrade, an edit of a rule) invalidates every entry."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return __version__ + ";" + _listing(package)


def neighbours(path: str, data: bytes) -> str:
    """What the analysis may read beside `path` (see analysis/project.py): every .py file under the
    outermost package folder that holds it (for a script: under its folder, where `import sub.mod` looks),
    or under the folder a relative import of the file climbs to, if that is higher."""
    if path in ("-", "stdin", "<stdin>"):
        return ""
    here = os.path.dirname(os.path.abspath(path))
    top = here
    while os.path.exists(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
        if not os.path.exists(os.path.join(os.path.dirname(top), "__init__.py")):
            break
        top = os.path.dirname(top)
    climb = max((len(dots) for dots in RELATIVE_IMPORT.findall(data)), default=1) - 1  # `from ..` climbs one
    base = here
    for _ in range(climb):
        base = os.path.dirname(base)
    return _listing(os.path.commonpath([top, base]))


@functools.lru_cache(maxsize=None)
def _listing(root: str) -> str:
    """A hash of the path, size and modification time of each .py file under `root` (symlinked folders
    followed once, virtual environments and this cache skipped). Once per process: a `check` run is short."""
    rows, seen = [], set()
    for folder, dirs, names in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if d != FOLDER and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg")))
        for name in sorted(n for n in names if n.endswith(".py")):
            file = os.path.join(folder, name)
            try:
                info = os.stat(file)
            except OSError:
                continue
            rows.append(f"{file}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("\n".join(rows).encode("utf-8", "surrogateescape")).hexdigest()


def _prepare(folder: str) -> None:
    """The folder with its tag, its .gitignore and its entries folder."""
    entries = os.path.join(folder, "entries")
    if os.path.isdir(entries):
        return
    os.makedirs(entries, exist_ok=True)
    for name, text in (("CACHEDIR.TAG", TAG), (".gitignore", "# Automatically created by flake8-tensorcopy.\n*\n")):
        target = os.path.join(folder, name)
        if not os.path.exists(target):
            fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(temp, target)


def _entry_path(folder: str, entry: str) -> str:
    return os.path.join(folder, "entries", f"{entry}.json")


def _mtime(entry: os.DirEntry) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0
