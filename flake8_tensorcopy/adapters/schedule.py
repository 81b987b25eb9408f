"""When the language server analyses a document: debounced, one analysis of a document at a time, off the
event loop, and only the newest version's result delivered.

A change (re)starts the document's timer; when it fires, `take(key)` snapshots the document (on the
event loop) and `run(job)` starts the job it returns: by default in a daemon thread (the server hands
them to worker processes, worker.py), so a slow document never stops the loop nor another document's
analysis. A request that comes while the document's job runs cancels it when `cancel(future)` can (a
worker is stopped), else waits for it; then the newest text is analysed. A result whose document changed
(or closed) meanwhile is dropped, never delivered."""
from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Optional

Job = Callable[[], Any]


def off_loop(loop: asyncio.AbstractEventLoop, job: Job) -> asyncio.Future:
    """Run `job` in a daemon thread; its result (or exception) comes back as a future of `loop`."""
    future = loop.create_future()

    def settle(result, error):
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work():
        try:
            result, error = job(), None
        except BaseException as exc:  # noqa: BLE001 - handed to the loop, never raised in the thread
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass

    threading.Thread(target=work, name="tensorcopy-analysis", daemon=True).start()
    return future


@dataclass
class Slot:
    generation: int = 0  # bumped by every request; a result of an older one is dropped
    timer: Optional[asyncio.TimerHandle] = None
    running: bool = False
    again: bool = False  # a request came while the job ran
    future: Optional[asyncio.Future] = None  # of the running job


class Scheduler:
    """`request(key)` after each change; `take(key)` -> a job or None (closed); `deliver(key, result)`
    with the job's result (an exception is delivered as the result too)."""

    def __init__(self, take: Callable[[Hashable], Optional[Job]], deliver: Callable[[Hashable, Any], None],
                 delay: float = 0.3, run: Optional[Callable[[Job], asyncio.Future]] = None,
                 cancel: Callable[[asyncio.Future], bool] = lambda future: False):
        self.take, self.deliver, self.delay, self.cancel = take, deliver, delay, cancel
        self.run = run or (lambda job: off_loop(asyncio.get_running_loop(), job))
        self.slots: dict[Hashable, Slot] = {}
        self.started = 0  # jobs started, for tests
        self.dropped = 0  # results dropped as outdated
        self.cancelled = 0  # running jobs stopped for a newer version

    def request(self, key: Hashable, delay: Optional[float] = None) -> None:
        slot = self.slots.setdefault(key, Slot())
        slot.generation += 1
        if slot.timer is not None:
            slot.timer.cancel()
        wait = self.delay if delay is None else delay
        slot.timer = asyncio.get_running_loop().call_later(wait, self._start, key)

    def forget(self, key: Hashable) -> None:
        """The document closed: nothing more is delivered for it (its running job is cancelled if it can be)."""
        slot = self.slots.pop(key, None)
        if slot is not None and slot.timer is not None:
            slot.timer.cancel()
        if slot is not None and slot.future is not None:
            self.cancel(slot.future)

    def _start(self, key: Hashable) -> None:
        slot = self.slots.get(key)
        if slot is None:
            return
        slot.timer = None
        if slot.running:
            slot.again = True
            if self.cancel(slot.future):  # its done callback starts the newest version
                self.cancelled += 1
            return
        job = self.take(key)
        if job is None:
            return
        slot.running, generation = True, slot.generation
        self.started += 1
        future = slot.future = self.run(job)
        future.add_done_callback(lambda done: self._done(key, slot, generation, done))

    def _done(self, key: Hashable, slot: Slot, generation: int, future: asyncio.Future) -> None:
        slot.running, slot.future = False, None
        try:
            if self.slots.get(key) is slot and slot.generation == generation and not future.cancelled():
                self.deliver(key, future.exception() or future.result())
            else:
                self.dropped += 1
        finally:  # a failure to deliver must not leave the document's newer text unanalysed
            if slot.again and self.slots.get(key) is slot:
                slot.again = False
                if slot.timer is None:  # else the pending timer starts it
                    self._start(key)
