"""Python's cyclic collector, told what it need not do while the engine runs. A syntax tree is thousands of
small objects that all live until the file is done; at the default threshold (a collection every 700
allocations) the collector walks them again and again, most of the plugin's overhead under flake8.

`tuned()` raises the threshold while a file is analysed and restores the caller's after; the first
time, it freezes what exists (the imported modules live to the end: no collection needs to look at them).
Collections still run, so memory stays bounded (switching the collector off tripled it).
"""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator

THRESHOLD = (20_000, 10, 10)  # a collection every 20,000 allocations, not 700
_frozen = []


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
