"""Python's cyclic collector, told what it need not do while the engine runs. A syntax tree is thousands of
small objects that all live until the file is done; at the default threshold (a collection every 700
allocations) the collector walks them again and again, most of the plugin's overhead under flake8.

`tuned()` raises the threshold while a file is analysed and restores the caller's after; the first
time, it freezes what exists (the imported modules live to the end: no collection needs to look at them).
Collections still run, so memory stays bounded (switching the collector off tripled it).

After each file, what it left alive (the package's parsed modules, kept for the next file) is frozen too:
flake8's own full collections would walk it again and again (14 of them were 15 % of flake8's CPU time
with the plugin). Garbage that only the collector can free (a cycle) may sit among the frozen objects, so
when memory has doubled since the last full collection, one runs over all of them: memory stays within
twice what is alive, and the full collections cost time linear in the run.
"""
from __future__ import annotations

import contextlib
import gc
import sys
from typing import Iterator

THRESHOLD = (20_000, 10, 10)  # a collection every 20,000 allocations, not 700
_frozen = []
_settled = [0]  # memory blocks allocated after the last full collection


def freeze_once() -> None:
    """Move what exists now to the collector's permanent generation, once per process."""
    if not _frozen:
        gc.freeze()
        _frozen.append(True)


@contextlib.contextmanager
def tuned() -> Iterator[None]:
    freeze_once()
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        settle()


def settle() -> None:
    """Freeze what lives now; once the allocated blocks have doubled since the last full collection,
    collect over everything (sys.getallocatedblocks costs nothing; counting the frozen objects walks them)."""
    gc.freeze()
    if sys.getallocatedblocks() > 2 * _settled[0]:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        _settled[0] = sys.getallocatedblocks()
