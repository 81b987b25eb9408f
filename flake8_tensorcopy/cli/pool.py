"""Worker processes for `check` and `fix` that end with their parent.

Workers ignore Ctrl-C (the parent decides what an interrupt means) and, on Linux, ask the kernel to
send them SIGTERM when the parent dies, so `kill <parent>` leaves no orphans. On an interrupt or any
error the parent stops its workers at once instead of waiting for slow files. A pool stopped that way
may leave its queues locked by a killed worker, so its thread can wait forever at interpreter exit:
`abandoned()` tells the command-line entry to end the process without that wait.
"""
from __future__ import annotations

import os
import signal
import threading
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")
PR_SET_PDEATHSIG = 1
_stopped = False  # a pool of this process was stopped mid-run


def _worker_start(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: workers still end when the parent closes the pool
        return
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int, chunksize: int = 1) -> Iterator[R]:
    """fn over items in `workers` processes, results in order; stops the workers at once on an error."""
    pool = ProcessPoolExecutor(workers, initializer=_worker_start, initargs=(os.getpid(),))
    try:
        yield from pool.map(fn, items, chunksize=chunksize)
    except BaseException:
        global _stopped
        _stopped = True
        _quiet_teardown()
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False)
        raise
    pool.shutdown()


def abandoned() -> bool:
    """Whether a pool was stopped on an error or an interrupt in this process."""
    return _stopped


def _quiet_teardown() -> None:
    """The pool's thread may still try to hand a result to a future that map() cancelled when its consumer
    stopped (a race in concurrent.futures): that is the teardown we asked for, not an error to print."""
    previous = threading.excepthook

    def hook(args):
        if not issubclass(args.exc_type, InvalidStateError):
            previous(args)

    threading.excepthook = hook
