"""The language server never blocks on a large file: analyses run in worker processes (adapters/worker.py).
Driven over stdio with `trace` on, the server's `$/logTrace` says when a worker starts a job, is stopped,
ends; the tests assert the order of what the client received, never a duration."""
from __future__ import annotations

import os
import re
import signal

from tests.support.server_tools import Server

BAD = ("import torch\n\n\ndef make():\n    w = torch.nn.Parameter(torch.ones(3))\n    hidden = w * 2\n"
       "    return torch.tensor(hidden)\n")
LARGE = BAD + "".join(f"\n\ndef step{i}(x):\n    y = x.detach()\n    return y + {i}\n" for i in range(4000))


def trace(message: dict) -> str:
    return message["params"]["message"] if message.get("method") == "$/logTrace" else ""


def index(events: list[dict], wanted) -> int:
    return next(i for i, m in enumerate(events) if wanted(m))


def started(uri: str, version: int):
    return lambda m: trace(m).endswith(f"analyse {uri} v{version}") and "started on worker" in trace(m)


def published(uri: str, version=None):
    return lambda m: (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                      and version in (None, m["params"].get("version")))


def test_a_small_document_is_answered_while_a_large_one_is_analysed(tmp_path):
    assert LARGE.count("\n") > 20000
    with Server(tmp_path, tmp_path / "server.log", trace=True) as server:
        large = server.open(tmp_path / "large.py", LARGE)
        server.wait(started(large, 1))
        small = server.open(tmp_path / "small.py", BAD)
        [diagnostic] = server.diagnostics([small])[small]
        titles = [a["title"] for a in server.actions(small, 6)]
        hover = server.request("textDocument/hover", {"textDocument": {"uri": small},
                                                      "position": {"line": 6, "character": 15}})
        answered = len(server.events)
        codes = {d["code"] for d in server.diagnostics([large])[large]}
        events = server.events
    assert diagnostic["code"] == "TEN204" and any(t.startswith("Fix TEN204") for t in titles)
    assert "TEN204" in hover["contents"]["value"] and codes == {"TEN204"}
    # the small document's diagnostics, its code actions and its hover all came before the large one's result
    assert index(events, started(large, 1)) < index(events, published(small)) < answered <= index(
        events, published(large))


def test_a_newer_version_stops_the_analysis_of_the_old_one(tmp_path):
    with Server(tmp_path, tmp_path / "server.log", trace=True) as server:
        uri = server.open(tmp_path / "large.py", LARGE)
        server.wait(started(uri, 1))
        server.change(uri, 2, LARGE.replace("torch.tensor(hidden)", "hidden.detach().clone()"))
        assert server.diagnostics([uri], 2)[uri] == []
        events = server.events
    cancelled = index(events, lambda m: re.search(r"cancelled on worker \d+: analyse .* v1$", trace(m)))
    assert index(events, started(uri, 1)) < cancelled < index(events, started(uri, 2)) < index(
        events, published(uri, 2))
    assert [m["params"]["version"] for m in events if published(uri)(m)] == [2]  # v1's result never shown


def test_a_worker_that_dies_is_replaced_and_the_server_lives_on(tmp_path):
    with Server(tmp_path, tmp_path / "server.log", trace=True) as server:
        uri = server.open(tmp_path / "large.py", LARGE)
        message = server.wait(started(uri, 1))
        pid = int(re.search(r"worker (\d+)", trace(message)).group(1))
        os.kill(pid, signal.SIGKILL)  # a worker of the server this test started
        [notice] = server.diagnostics([uri])[uri]
        assert notice["code"] == "TEN000" and "WorkerDied" in notice["message"]
        server.change(uri, 2, BAD)
        [diagnostic] = server.diagnostics([uri], 2)[uri]
        assert diagnostic["code"] == "TEN204" and server.client.proc.poll() is None
        events = server.events
    ended = index(events, lambda m: trace(m) == f"flake8-tensorcopy: worker {pid} ended (exit -9)")
    workers = [i for i, m in enumerate(events) if re.search(r"worker \d+ started$", trace(m))]
    assert len(workers) == 3 and workers[1] < ended < workers[2]  # two at the start, then its replacement
    assert ended < index(events, published(uri, 1)) < index(events, published(uri, 2))


def test_without_workers_the_server_analyses_in_threads(tmp_path):
    """`workers: 0`: the same answers from threads of the server's own process (no worker is started)."""
    with Server(tmp_path, tmp_path / "server.log", trace=True, workers=0) as server:
        uri = server.open(tmp_path / "small.py", BAD)
        [diagnostic] = server.diagnostics([uri])[uri]
        titles = [a["title"] for a in server.actions(uri, 6)]
        events = server.events
    assert diagnostic["code"] == "TEN204" and "Disable TEN204 for this line (# noqa)" in titles
    assert not any("worker" in trace(m) for m in events)
