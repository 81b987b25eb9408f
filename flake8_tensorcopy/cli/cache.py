"""The content-hash cache of `check` (and `fix --diff`): a file's findings are kept under a key made of
everything they depend on, so an unchanged tree is checked again without analysing it.

The key hashes the tool (its version and the size and modification time of every module of it), the
rules and `tensor-functions` chosen for the file, its name and bytes. The entry records what else the
findings were made from (analysis/project.py records it): each neighbour the analysis read or probed
(an import's candidates, a package's __init__.py files), by the sha256 of its bytes (or that nothing was
there), and each word lookup in a package's index with the modules it named, with the package's stamp
(its listing and each module's size and modification time). A hit is an entry whose neighbours hash the
same and whose packages have the same stamp, or, for a package that changed, whose word lookups name
the same modules (asked of a fresh index): a changed neighbour, a new caller, a new module shadowing an
import all invalidate it, and an unrelated edit does not. Checking an entry reads no rule and parses
nothing: a warm run of an unchanged tree imports neither the rules' code nor the analysis.

The folder is `.flake8-tensorcopy-cache/` beside the project's pyproject.toml (else in the current
folder; or $FLAKE8_TENSORCOPY_CACHE_DIR), marked as Ruff marks `.ruff_cache`: a CACHEDIR.TAG and a
.gitignore of `*`. An entry is one JSON file written to a temporary name and renamed, so concurrent runs
never see half an entry; one that cannot be read or decoded is a miss. Past MAX_ENTRIES, the oldest
entries are removed. Only complete reports are kept (a file with an error is analysed again).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from typing import Iterable, Iterator, Optional

from .. import __version__

FOLDER = ".flake8-tensorcopy-cache"
ENV = "FLAKE8_TENSORCOPY_CACHE_DIR"
MAX_ENTRIES = 20_000
TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
       "# This file is a cache directory tag created by flake8-tensorcopy.\n")


def folder_for(config_root: Optional[str]) -> str:
    """The cache folder of a project whose pyproject.toml is in `config_root` (None: the current folder);
    $FLAKE8_TENSORCOPY_CACHE_DIR instead when it is set."""
    return os.environ.get(ENV) or os.path.join(config_root or os.getcwd(), FOLDER)


def key(path: str, data: bytes, parts: Iterable[str]) -> str:
    """The key of one file's findings: its bytes, its name, the tool, and `parts` (its options)."""
    digest = hashlib.sha256()
    for part in (tool_fingerprint(), os.path.abspath(path), *parts):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    digest.update(data)
    return digest.hexdigest()


def load(folder: str, entry: str) -> Optional[dict]:
    """The entry stored under `entry` when its neighbours are as they were; None when there is none, it
    cannot be read, or something it was made from changed (a miss)."""
    try:
        with open(_entry_path(folder, entry), encoding="utf-8") as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or found.get("key") != entry:
        return None
    try:
        return found if _fresh(found["reads"], found["mentions"]) else None
    except (KeyError, TypeError, ValueError):  # an entry of another shape
        return None


@contextlib.contextmanager
def recording() -> Iterator[Optional[dict]]:
    """What the analysis inside reads beside the file, as `store` keeps it."""
    from ..analysis import package_index, reads as recorded

    with recorded.recording() as reads:
        deps: dict = {}
        yield deps
    deps["reads"] = sorted([p, package_index.state(p)] for p in reads.paths)
    deps["mentions"] = [[root, stamp, word, list(files)]
                        for (root, word), (stamp, files) in sorted(reads.mentions.items())]


def store(folder: str, entry: str, value: dict, deps: dict) -> None:
    """Write one entry atomically (a temporary file renamed over it); a folder that cannot be written
    costs the cache, never the run."""
    import tempfile  # imported to write: a warm run only reads

    try:
        _prepare(folder)
        fd, temp = tempfile.mkstemp(dir=os.path.join(folder, "entries"), prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({**value, **deps, "key": entry}, fh)
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
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return True


@functools.lru_cache(maxsize=None)
def tool_fingerprint() -> str:
    """The version, and the size and modification time of each of the tool's files: a changed checkout
    (an upgrade, an edit of a rule) invalidates every entry."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return __version__ + ";" + _listing(package)


def _fresh(reads: list, mentions: list) -> bool:
    """Whether every neighbour hashes as recorded, and every word lookup names the same modules."""
    if not reads and not mentions:
        return True
    from ..analysis import package_index  # the index only: no rule, no parser

    if any(package_index.state(path) != state for path, state in reads):
        return False
    for root, stamp, word, files in mentions:
        if _stamp(root) != stamp and list(package_index.package(root).mentioning(word)) != files:
            return False
    return True


def _stamp(root: str) -> str:
    """The package's stamp, taken once per run (`forget` starts a run)."""
    if root not in _stamps:
        from ..analysis import package_index

        _stamps[root] = package_index.stamp(root)
    return _stamps[root]


def forget() -> None:
    """Take the packages' stamps again (a new run in the same process)."""
    _stamps.clear()


_stamps: dict[str, str] = {}


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
    import tempfile

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
