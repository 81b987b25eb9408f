"""What the analysis reads beside a file while it is recorded: the paths read or probed, and the word lookups.

Kept apart from project.py so that the cache of `check` can record and verify entries without importing
the analysis itself (a file no rule could fire on never loads it).
"""
from __future__ import annotations

import contextlib
from typing import Iterator

READS = "reads"  # memo entry: path -> the facts read there (None: probed, or nothing parsed)
MENTIONS = "mentions"  # memo entry: (package root, word) -> (the package's stamp, the modules the index named)
recorders: list["Reads"] = []  # the recordings open now, innermost last


class Reads:
    """What the findings of the files analysed while `recording()` depend on beside their own text: the
    paths read or probed, and the word lookups, by package root and word, with the modules they named."""

    def __init__(self):
        self.paths: set[str] = set()
        self.mentions: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}

    def add(self, facts) -> None:
        """The closure of the records from `facts` (a FileFacts) through every module it read."""
        seen, stack = {id(facts)}, [facts]
        while stack:
            here = stack.pop()
            for path, other in here.memo.get(READS, {}).items():
                self.paths.add(path)
                if other is not None and id(other) not in seen:
                    seen.add(id(other))
                    stack.append(other)
            self.mentions.update(here.memo.get(MENTIONS, {}))


@contextlib.contextmanager
def recording() -> Iterator[Reads]:
    reads = Reads()
    recorders.append(reads)
    try:
        yield reads
    finally:
        recorders.remove(reads)
