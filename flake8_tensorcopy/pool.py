"""Worker processes for `check` and `fix` that end with their parent.

Workers ignore Ctrl-C (the parent decides what an interrupt means) and, on Linux, ask the kernel to
send them SIGTERM when the parent dies, so `kill <parent>` leaves no orphans. On an interrupt or any
error the parent stops its workers at once instead of waiting for slow files.
"""
from __future__ import annotations

import signal
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")
PR_SET_PDEATHSIG = 1


def _worker_start() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: workers still end when the parent closes the pool
        pass


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int, chunksize: int = 1) -> Iterator[R]:
    """fn over items in `workers` processes, results in order; stops the workers at once on an error."""
    pool = ProcessPoolExecutor(workers, initializer=_worker_start)
    try:
        yield from pool.map(fn, items, chunksize=chunksize)
    except BaseException:
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
