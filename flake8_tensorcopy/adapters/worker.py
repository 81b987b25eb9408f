"""The language server's analysis processes: a large file analysed in a worker holds that process's GIL,
never the server's, so hover, code actions and other documents are answered meanwhile.

`Pool.submit(call)` runs `call` (a `Call` of editor.py's work) in an idle worker and returns a future of
the event loop; `Pool.cancel(future)` stops the worker running it (an outdated version's analysis) and
starts another. A worker that dies fails its job with WorkerDied and is replaced; the server lives on.
Three workers in a row that die before answering anything leave the pool to run calls in threads, as
when no process can be started. Requests and replies are pickles framed by their length, over the
worker's stdin and a copy of its stdout (its own stdout is its stderr: a stray print cannot corrupt them).
Run as `python -m flake8_tensorcopy.adapters.worker`.
"""
from __future__ import annotations

import asyncio
import collections
import os
import pickle
import struct
import subprocess
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import IO, Any, Callable, Optional

from . import editor
from .schedule import off_loop

HEADER = struct.Struct(">Q")
JOBS: dict[str, Callable] = {
    "analyse": editor.analyse,
    "actions": lambda analysis, *rest: (editor.actions(analysis, *rest), analysis.fixed_all, analysis.commentable),
}


class WorkerDied(RuntimeError):
    pass


class WorkerError(RuntimeError):
    """An exception in the worker; its message is the worker's traceback."""


@dataclass(frozen=True)
class Call:
    name: str  # a key of JOBS
    args: tuple
    label: str = ""  # what the trace says of it

    def __call__(self):
        return JOBS[self.name](*self.args)


def write_frame(stream: IO[bytes], value: Any) -> None:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(body)) + body)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next value, or None at the end of the stream."""
    head = stream.read(HEADER.size)
    if len(head) < HEADER.size:
        return None
    (size,) = HEADER.unpack(head)
    body = stream.read(size)
    return pickle.loads(body) if len(body) == size else None


WARM_UP = "import torch\n\n\ndef f(w: torch.nn.Parameter):\n    return torch.tensor(w * 2)\n"


def warm_up() -> None:
    """Import and build what analyses and fixes need (LibCST too) before the first job: a worker starts
    ahead of its work, so its first answer is as quick as the next ones."""
    try:
        source = editor.Source("warm-up", os.path.join(os.getcwd(), "warm_up.py"), 0, WARM_UP)
        editor.actions(editor.analyse(source), "warm-up", range(0, 5))
    except Exception:  # noqa: BLE001 - the first job will say what is wrong
        pass


def main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    warm_up()
    while (call := read_frame(sys.stdin.buffer)) is not None:
        try:
            reply = ("ok", call())
        except BaseException:  # noqa: BLE001 - said to the server, which reports it on the document
            reply = ("error", traceback.format_exc())
        write_frame(replies, reply)


class Worker:
    def __init__(self, pool: "Pool"):
        package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        path = os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))
        self.proc = subprocess.Popen([sys.executable, "-m", "flake8_tensorcopy.adapters.worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, "PYTHONPATH": path})
        self.pool, self.future, self.answered, self.stopped, self.label = pool, None, False, False, ""
        threading.Thread(target=self._read, name=f"tensorcopy-worker-{self.proc.pid}", daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                reply = read_frame(self.proc.stdout)
            except Exception as exc:  # noqa: BLE001 - a reply that cannot be read: the worker is done for
                reply = None
                self.pool.later(self.pool.event, f"worker {self.proc.pid}: unreadable reply: {exc}")
            if reply is None:
                break
            self.pool.later(self.pool.replied, self, reply)
        code = self.proc.wait()
        self.pool.later(self.pool.died, self, code)

    def stop(self) -> None:
        self.stopped = True
        try:
            self.proc.kill()
        except OSError:
            pass


class Pool:
    def __init__(self, size: int = 2, event: Callable[[str], None] = lambda text: None):
        self.size, self.event = size, event
        self.workers: list[Worker] = []
        self.waiting: collections.deque = collections.deque()  # (call, future) not yet sent
        self.failures = 0  # workers in a row that died before answering
        self.loop: Optional[asyncio.AbstractEventLoop] = None

    def submit(self, call: Call, urgent: bool = False) -> asyncio.Future:
        self.loop = asyncio.get_running_loop()
        if self.size <= 0:
            return off_loop(self.loop, call)
        future = self.loop.create_future()
        (self.waiting.appendleft if urgent else self.waiting.append)((call, future))
        self._fill()
        self._dispatch()
        return future

    def cancel(self, future: asyncio.Future) -> bool:
        """Stop the job of `future`: dropped if waiting, its worker killed (and replaced) if running. False
        for a job it cannot stop (one run in a thread): it is left to finish."""
        running = next((w for w in self.workers if w.future is future), None)
        waiting = [(c, f) for c, f in self.waiting if f is not future]
        if running is None and len(waiting) == len(self.waiting):
            return False
        self.waiting = collections.deque(waiting)
        if running is not None:
            self.workers.remove(running)
            running.stop()
            self.event(f"cancelled on worker {running.proc.pid}: {running.label}")
            self._fill()
        cancelled = future.cancel()
        self._dispatch()
        return cancelled

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []

    def later(self, callback, *args) -> None:
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: the server is exiting
            pass

    def _fill(self) -> None:
        while len(self.workers) < self.size:
            try:
                worker = Worker(self)
            except OSError as exc:
                self._give_up(f"cannot start a worker: {exc}")
                return
            self.workers.append(worker)
            self.event(f"worker {worker.proc.pid} started")

    def _dispatch(self) -> None:
        for worker in [w for w in self.workers if w.future is None]:
            while self.waiting and worker.future is None:
                call, future = self.waiting.popleft()
                if future.done():
                    continue
                try:
                    body = pickle.dumps(call, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as exc:  # noqa: BLE001 - a bug of ours: this job fails, the worker is fine
                    future.set_exception(WorkerError(f"cannot hand the job to a worker: {exc}"))
                    continue
                worker.future, worker.label = future, call.label
                try:
                    worker.proc.stdin.write(HEADER.pack(len(body)) + body)
                    worker.proc.stdin.flush()
                except (OSError, ValueError):  # it died: its reader says so, failing the job (died)
                    worker.proc.kill()
                    continue
                self.event(f"started on worker {worker.proc.pid}: {call.label}")

    def replied(self, worker: Worker, reply) -> None:
        future, worker.future, worker.answered = worker.future, None, True
        self.failures = 0
        if future is not None and not future.done():
            status, value = reply
            if status == "ok":
                future.set_result(value)
            else:
                future.set_exception(WorkerError(value.strip().splitlines()[-1] + "\n" + value))
        self._dispatch()

    def died(self, worker: Worker, code: int) -> None:
        if worker.stopped:
            return  # cancelled or closed: already replaced
        self.event(f"worker {worker.proc.pid} ended (exit {code})")
        if worker in self.workers:
            self.workers.remove(worker)
        if worker.future is not None and not worker.future.done():
            worker.future.set_exception(WorkerDied(f"the analysis process ended (exit {code}) on this document"))
        self.failures = 0 if worker.answered else self.failures + 1
        if self.failures >= 3:
            self._give_up("three workers in a row ended before answering")
        self._fill()
        self._dispatch()

    def _give_up(self, why: str) -> None:
        """Run every call in a thread from now on; the calls waiting start now."""
        self.event(f"analysis in threads from now on: {why}")
        self.size = 0
        waiting, self.waiting = self.waiting, collections.deque()
        for call, future in waiting:
            off_loop(self.loop, call).add_done_callback(lambda done, f=future: _settle(f, done))


def _settle(future: asyncio.Future, done: asyncio.Future) -> None:
    if not future.done():
        if done.exception() is not None:
            future.set_exception(done.exception())
        else:
            future.set_result(done.result())


if __name__ == "__main__":
    main()
