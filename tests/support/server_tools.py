"""`flake8-tensorcopy server` driven over stdio as an editor drives it (lsp_client.py), for the tests that
compare it with the other front ends: open files and notebooks, wait for their diagnostics, ask for code
actions. Every message received is kept in order (`events`), so a test can assert what came before what."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

from tests.support.lsp_client import LspClient

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 120  # seconds any one wait may take on a loaded machine; a silent server fails, never hangs


class Server:
    def __init__(self, cwd: Path, log: Path, trace: bool = False, **options):
        self.log = open(log, "wb")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.client = LspClient([sys.executable, "-m", "flake8_tensorcopy", "server"], str(cwd), env, self.log)
        self.events: list[dict] = []  # every notification received, in order
        self.published: dict[str, dict] = {}  # by uri: the last publishDiagnostics params
        self.client.request("initialize", {
            "processId": os.getpid(), "rootUri": cwd.as_uri(), "trace": "messages" if trace else "off",
            "capabilities": {"notebookDocument": {"synchronization": {}}},
            "initializationOptions": {"debounce": 0, **options}}, DEADLINE)
        self.client.notify("initialized", {})

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        self.client.close()
        self.log.close()

    def _seen(self, message: dict) -> dict:
        if "method" in message and "id" not in message:
            self.events.append(message)
            if message["method"] == "textDocument/publishDiagnostics":
                self.published[message["params"]["uri"]] = message["params"]
        return message

    def wait(self, condition, timeout: float = DEADLINE) -> dict:
        """The first message after which `condition(message)` holds (every message is recorded on the way)."""
        return self.client.wait_for(lambda m: bool(condition(self._seen(m))), timeout)

    def request(self, method: str, params: dict):
        ident = next(self.client.ids)
        self.client.send({"id": ident, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == ident and "method" not in m)
        assert "error" not in reply, reply
        self.events.append({"reply": method, "params": params})
        return reply["result"]

    def open(self, path: Path, text: Optional[str] = None, version: int = 1) -> str:
        uri = path.as_uri()
        self.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version,
            "text": path.read_text() if text is None else text}})
        return uri

    def change(self, uri: str, version: int, text: str) -> None:
        self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                      "contentChanges": [{"text": text}]})

    def open_notebook(self, path: Path, cells: list[tuple[str, str]]) -> list[str]:
        """Open a notebook of (kind, text) cells ("code" or "markdown"); the cells' uris."""
        uri = path.as_uri()
        uris = [f"{uri}#cell{i}" for i in range(len(cells))]
        self.client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": uri, "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2 if k == "code" else 1, "document": u}
                                           for u, (k, _) in zip(uris, cells)]},
            "cellTextDocuments": [{"uri": u, "languageId": "python" if k == "code" else "markdown", "version": 1,
                                   "text": t} for u, (k, t) in zip(uris, cells)]})
        return uris

    def diagnostics(self, uris: list[str], version: int = 1) -> dict[str, list[dict]]:
        """The diagnostics of each of `uris` at `version` (waiting until all are published)."""
        def done(_):
            return all(self.published.get(u, {}).get("version") == version for u in uris)

        if not done(None):
            self.wait(done)
        return {u: self.published[u]["diagnostics"] for u in uris}

    def actions(self, uri: str, line: int, only=None) -> list[dict]:
        at = {"line": line, "character": 0}
        return self.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": {"start": at, "end": at},
            "context": {"diagnostics": [], **({"only": only} if only else {})}}) or []


def apply(text: str, edits: list[dict]) -> str:
    """A document's text after LSP edits (ASCII text: characters are UTF-16 units)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(p: dict) -> int:
        return starts[min(p["line"], len(lines))] + p["character"]

    for edit in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                       reverse=True):
        text = text[:offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]):]
    return text
