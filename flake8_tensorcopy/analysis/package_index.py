"""The package index: the modules of a package (of any size) listed once per process, each read once and
the words it mentions indexed, so "which modules may call `f`" is a lookup, not a scan of the package
per question; and the parsed modules, kept in caches bounded by the size of their sources (the least
recently used leave first), so a long flake8 run does not grow without bound.

A module is read when it is a regular file of at most LIMIT bytes. The listing is read again when a
folder of the package changed (a module added, removed, renamed); a module the lookup names is read
again when it changed (size or modification time). A module edited in place to mention a word it did
not is found once its package is indexed again: in the next process, or after `reset()`.
"""
from __future__ import annotations

import bisect
import hashlib
import os
import re
import stat
from collections import OrderedDict
from typing import Callable, Iterator, Optional

LIMIT = 1 << 20  # a module larger than this (generated code, vendored data) is not read
SOURCES = 8 << 20  # bytes of source whose parsed facts are kept between questions
PACKAGES = 16  # package indexes kept
SEARCHES = 8  # words a package's text is searched for before the index of all its words is built
# a word's uses: a name a `def` or `class` statement binds is not a use (every module of a package of
# scripts defining `main` does not call the others' `main`)
WORD = re.compile(rb"(?<!def )(?<!class )\b\w+")
_packages: "OrderedDict[str, Package]" = OrderedDict()


class Bounded:
    """A least-recently-used cache whose entries weigh `weight(value)`; past `budget`, the oldest leave."""

    def __init__(self, budget: int, weight: Callable):
        self.budget, self.weight, self.used = budget, weight, 0
        self.entries: OrderedDict = OrderedDict()

    def get(self, key, make: Callable):
        if key in self.entries:
            self.entries.move_to_end(key)
            return self.entries[key]
        value = self.entries[key] = make()
        self.used += self.weight(value)
        while self.used > self.budget and len(self.entries) > 1:
            _, old = self.entries.popitem(last=False)
            self.used -= self.weight(old)
        return value

    def clear(self) -> None:
        self.entries.clear()
        self.used = 0


class Package:
    """The modules of the package at `root` (its subpackages too), or the scripts in the folder `root` when
    it is no package, and the words each mentions. The first SEARCHES words asked are searched for in the
    package's text, read once (most runs ask a package about a few names: indexing every word of a large
    package cost more than the rest of the analysis); past that, every word is indexed, so many questions
    cost one lookup each."""

    def __init__(self, root: str):
        self.root = root
        self.folders, self.files = listing(root)
        self.stamp = _stamp(self.files)  # taken before any module is read: see `stamp`
        self.order = {f: i for i, f in enumerate(self.files)}
        self._where: Optional[dict[bytes, list[str]]] = None  # word -> the modules that mention it
        self._versions: dict[str, Optional[tuple]] = {}  # module -> the version its words were taken from
        self.reads = 0  # modules read to index their words (tests count them)
        self._text: Optional[tuple[bytes, list[int]]] = None  # the modules' bytes joined, and where each starts
        self._searches = 0

    def current(self) -> bool:
        return all(mtime(d) == m for d, m in self.folders)

    def mentioning(self, word: str) -> Iterator[str]:
        """The modules whose source holds the word `word` (a whole \\w+ word) other than as the name a
        `def` or `class` binds, in listing order."""
        if not word.isascii():  # the index splits at non-ASCII letters: those words are searched for
            pattern = re.compile(re.escape(word.encode()) + rb"(?<!\w" + re.escape(word.encode()) + rb")(?!\w)")
            yield from (f for f in self.files if (data := read(f)) is not None and pattern.search(data))
            return
        key = word.encode()
        if self._where is None and self._searches < SEARCHES:
            self._searches += 1
            candidates = self._search(key)
        else:
            candidates = list(self._index().get(key, ()))
        for file in candidates:
            if version(file) == self._versions.get(file) or key in self._reindex(file):
                yield file

    def mentions(self, file: str, word: str) -> bool:
        """Module `file` of the package holds the word `word` (as `mentioning` counts it), asked of its own
        text: no search of the package's text, no step towards indexing every word."""
        if file not in self.order:
            return False
        key = word.encode()
        if self._where is not None and word.isascii() and version(file) == self._versions.get(file):
            return file in self._index().get(key, ())
        if self._text is not None and version(file) == self._versions.get(file):
            text, starts = self._text
            i = self.order[file]
            data = text[starts[i]:starts[i + 1] if i + 1 < len(starts) else len(text)]
        else:
            data = read(file) or b""
        return re.search(re.escape(key) + rb"(?<!\w" + re.escape(key) + rb")(?<!def " + re.escape(key) + rb")"
                         rb"(?<!class " + re.escape(key) + rb")(?!\w)", data) is not None

    def _search(self, key: bytes) -> list[str]:
        """The modules whose text, as first read, holds the ASCII word `key`, in listing order."""
        text, starts = self._joined()
        found: list[str] = []
        for m in re.finditer(re.escape(key) + rb"(?<!\w" + re.escape(key) + rb")(?<!def " + re.escape(key) + rb")"
                             rb"(?<!class " + re.escape(key) + rb")(?!\w)", text):
            file = self.files[bisect.bisect_right(starts, m.start()) - 1]
            if not found or found[-1] != file:
                found.append(file)
        return found

    def _joined(self) -> tuple[bytes, list[int]]:
        if self._text is None:
            parts, starts, at = [], [], 0
            for file in self.files:
                self._versions[file] = version(file)
                data = read(file) or b""
                self.reads += 1
                starts.append(at)
                parts.append(data + b"\n")  # a word never runs on into the next module
                at += len(data) + 1
            self._text = b"".join(parts), starts
        return self._text

    def _index(self) -> dict[bytes, list[str]]:
        if self._where is None:
            where: dict[bytes, list[str]] = {}
            if self._text is not None:  # the text already read: its words, module by module
                text, starts = self._text
                for i, file in enumerate(self.files):
                    end = starts[i + 1] if i + 1 < len(starts) else len(text)
                    for w in set(WORD.findall(text, starts[i], end)):
                        where.setdefault(w, []).append(file)
                self._text = None
            else:
                for file in self.files:
                    for w in self._reindex(file):
                        where.setdefault(w, []).append(file)
            self._where = where
        return self._where

    def _reindex(self, file: str) -> frozenset:
        """The words of the module as it is now (recorded in the index when it changed since)."""
        self._versions[file] = version(file)
        data = read(file)
        self.reads += 1
        words = frozenset(WORD.findall(data)) if data is not None else frozenset()
        if self._where is not None:  # a module that changed since the index was built
            for w in words:
                found = self._where.setdefault(w, [])
                if file not in found:
                    found.append(file)
                    found.sort(key=self.order.__getitem__)
        return words


def listing(root: str) -> tuple[tuple, tuple]:
    """((folder, mtime) of each folder, the .py files) of the package at `root`: its subpackages (the
    folders holding an __init__.py), or only the folder `root` when it is no package."""
    package = os.path.exists(os.path.join(root, "__init__.py"))
    folders, files = [], []
    for folder, dirs, names in os.walk(root):
        folders.append((folder, mtime(folder)))
        dirs[:] = sorted(d for d in dirs if package and os.path.exists(os.path.join(folder, d, "__init__.py")))
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return tuple(folders), tuple(files)


def stamp(root: str) -> str:
    """A hash of the modules of the package at `root` and the version (size, modification time) of each,
    listed without reading one: while it is the same, every word lookup in the package answers the same."""
    return _stamp(listing(root)[1])


def _stamp(files) -> str:
    rows = "\n".join(f"{f}:{v[1:] if (v := version(f)) else None}" for f in files)
    return hashlib.sha256(rows.encode("utf-8", "surrogateescape")).hexdigest()


def state(path: str) -> Optional[str]:
    """What the analysis can tell of `path`: None when nothing is there, "dir" or "other" for what is no
    regular file, "large" past LIMIT, else the sha256 of its bytes (read once per version per process)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(info.st_mode):
        return "dir"
    if not stat.S_ISREG(info.st_mode):
        return "other"
    if info.st_size > LIMIT:
        return "large"
    key = (path, info.st_size, info.st_mtime_ns, info.st_ino)
    found = _states.get(key)
    if found is None:
        data = read(path)
        found = _states[key] = "unreadable" if data is None else hashlib.sha256(data).hexdigest()
    return found


_states: dict[tuple, str] = {}


def package(root: str) -> Package:
    """The index of the package at `root`, listed again when one of its folders changed."""
    known = _packages.get(root)
    if known is None or not known.current():
        known = _packages[root] = Package(root)
        while len(_packages) > PACKAGES:
            _packages.popitem(last=False)
    _packages.move_to_end(root)
    return known


def reset() -> None:
    """Forget every package index and parsed module (a server's next run, a test that edits files)."""
    _packages.clear()
    parsed.clear()
    _states.clear()


def mtime(folder: str) -> Optional[int]:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None


def version(file: str) -> Optional[tuple]:
    """(path, size, mtime) of a regular file of at most LIMIT bytes: the key its contents are cached by."""
    try:
        info = os.stat(file)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > LIMIT:
        return None
    return file, info.st_size, info.st_mtime_ns


def read(file: str) -> Optional[bytes]:
    """The bytes of a module; None when it cannot be read or is too large."""
    if version(file) is None:
        return None
    try:
        with open(file, "rb") as fh:
            data = fh.read(LIMIT + 1)
    except OSError:
        return None
    return data if len(data) <= LIMIT else None


class Parsed(Bounded):
    """(path, size, mtime) -> the parsed module's facts (or None), weighed by the length of their source."""

    def __init__(self, budget: int):
        super().__init__(budget, lambda facts: len(facts.source) if facts is not None else 1)


parsed = Parsed(SOURCES)
