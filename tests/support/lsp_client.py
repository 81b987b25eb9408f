"""A minimal language-server client over stdio (JSON-RPC 2.0 with Content-Length framing) for tests.

A reader thread parses the server's messages into a queue, so every wait has a deadline and a test can
never hang on a silent server. Requests the server sends to the client are answered with `null`.
"""
from __future__ import annotations

import itertools
import json
import queue
import subprocess
import threading
import time
from typing import IO, Callable, Optional


class LspError(AssertionError):
    pass


def read_message(stream: IO[bytes]) -> Optional[dict]:
    """One framed message from `stream`, or None at end of stream."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    if length is None:
        raise LspError("message without Content-Length header")
    body = stream.read(length)
    return json.loads(body.decode("utf-8")) if len(body) == length else None


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class LspClient:
    def __init__(self, cmd: list, cwd: str, env: dict, stderr: IO) -> None:
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr)
        self.inbox: queue.Queue = queue.Queue()
        self.seen: list = []  # every message received, for failure reports
        self.ids = itertools.count(1)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while (message := read_message(self.proc.stdout)) is not None:
                self.inbox.put(message)
        except (OSError, ValueError, LspError) as exc:
            self.inbox.put({"client-error": repr(exc)})
        self.inbox.put(None)

    def send(self, message: dict) -> None:
        self.proc.stdin.write(frame({"jsonrpc": "2.0", **message}))
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def wait_for(self, wanted: Callable[[dict], bool], timeout: float) -> dict:
        """The first message (in arrival order) for which `wanted` is true; LspError after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LspError(f"no matching message within {timeout}s; received: {self.seen}")
            try:
                message = self.inbox.get(timeout=remaining)
            except queue.Empty:
                continue
            if message is None:
                raise LspError(f"server closed its output (exit {self.proc.poll()}); received: {self.seen}")
            self.seen.append(message)
            if "id" in message and "method" in message:  # a request from the server
                self.send({"id": message["id"], "result": None})
            if wanted(message):
                return message

    def request(self, method: str, params: dict, timeout: float) -> dict:
        ident = next(self.ids)
        self.send({"id": ident, "method": method, "params": params})
        reply = self.wait_for(lambda m: m.get("id") == ident and "method" not in m, timeout)
        if "error" in reply:
            raise LspError(f"{method} failed: {reply['error']}")
        return reply["result"]

    def close(self, timeout: float = 10) -> None:
        """Polite shutdown and exit; kill the server if it does not stop in time."""
        try:
            if self.proc.poll() is None:
                self.request("shutdown", {}, timeout)
                self.notify("exit", {})
                self.proc.wait(timeout)
        except (LspError, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass
