"""`flake8-tensorcopy server`: a language server over stdio (pygls), for Python files and notebooks.

Diagnostics on open, change (debounced) and save; code actions: each finding's own fix (safe ones
preferred, unsafe ones labelled), `# noqa: CODE` on the reported line, and the safe fixes of the whole
file (`source.fixAll.flake8-tensorcopy`, as `fix` applies them); a hover with the rule's page. Notebooks
come through LSP 3.17 notebook sync and are read as `check` reads them. Analyses and code actions run in
worker processes (worker.py; `initializationOptions.workers`, default 2, 0 for threads), an outdated
analysis is stopped (schedule.py), and every failure of it, a worker's death included, becomes a log
message and one diagnostic: the server lives on. With `trace` on, `$/logTrace` tells what the workers do.
The work itself is editor.py's; this module only speaks the protocol.
"""
from __future__ import annotations

import os
import sys
import traceback
from typing import Optional

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..rules import BY_CODE
from ..rules.docs import DOCS_URL
from .editor import FIX_ALL, NOTICE, Analysis, Cell, Problem, Source
from .lsp_messages import NAME, Messages
from .schedule import Scheduler
from .worker import Call, Pool
NOTEBOOKS = lsp.NotebookDocumentSyncOptions(
    notebook_selector=[lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage("python")],
                                                           notebook="*")], save=True)


class TensorCopyServer(LanguageServer):
    def __init__(self):
        super().__init__(NAME, __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOKS)
        self.pool = Pool(event=self.trace)
        self.scheduler = Scheduler(self.snapshot, self.publish, run=self.pool.submit, cancel=self.pool.cancel)
        self.results: dict[str, Analysis] = {}  # by document (or notebook) uri: the last one published
        self.shown: dict[str, set[str]] = {}  # by document: the uris (cells) that have diagnostics
        self.shut_down = False

    def snapshot(self, key: str):
        """The job that analyses the document `key` as it is now; None when it is closed."""
        source = self.source(key)
        return None if source is None else Call("analyse", (source,), f"analyse {key} v{source.version}")

    def trace(self, text: str) -> None:
        if self.protocol.trace not in (None, lsp.TraceValue.Off):
            self.log_trace(lsp.LogTraceParams(f"{NAME}: {text}"))

    def source(self, key: str) -> Optional[Source]:
        workspace = self.workspace
        notebook = workspace.get_notebook_document(notebook_uri=key)
        path = to_fs_path(key) or os.path.join(os.getcwd(), os.path.basename(key))
        if notebook is not None:
            cells = tuple(Cell(c.document, c.kind == lsp.NotebookCellKind.Code,
                               workspace.get_text_document(c.document).source) for c in notebook.cells)
            return Source(key, path if path.endswith(".ipynb") else path + ".ipynb", notebook.version, cells=cells)
        doc = workspace.text_documents.get(key)
        if doc is None:
            return None
        return Source(key, path if path.endswith((".py", ".pyi")) else path + ".py", doc.version, doc.source)

    def publish(self, key: str, result) -> None:
        """Publish an analysis (or say why there is none); a failure here is logged, never raised."""
        try:
            self._publish(key, result)
        except Exception as exc:  # noqa: BLE001 - a bug of ours must not stop the server
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"{NAME}: {key}: cannot publish: "
                                                         f"{type(exc).__name__}: {exc}"))

    def _publish(self, key: str, result) -> None:
        if isinstance(result, Exception):
            message = f"internal error: {type(result).__name__}: {result}".split("\n")[0]
            self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"{NAME}: {key}: " + "".join(
                traceback.format_exception(type(result), result, result.__traceback__))))
            source = self.source(key)
            if source is None:
                return
            first = source.cells[0].uri if source.cells else key
            result = Analysis(source, [Problem(first, (0, 0), (0, 0), NOTICE, message)])
        self.results[key] = result
        by_uri: dict[str, list[lsp.Diagnostic]] = {} if result.source.cells is not None else {key: []}
        messages = self.messages()
        for problem in result.problems:
            by_uri.setdefault(problem.uri, []).append(messages.diagnostic(result.source, problem))
        for cell in result.source.cells or ():
            if cell.code:
                by_uri.setdefault(cell.uri, [])
        for uri in self.shown.get(key, set()) - set(by_uri):
            by_uri[uri] = []
        for uri, diagnostics in by_uri.items():
            version = self._version(uri)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, diagnostics, version))
        self.shown[key] = {uri for uri, diagnostics in by_uri.items() if diagnostics}

    def _version(self, uri: str) -> Optional[int]:
        doc = self.workspace.text_documents.get(uri)
        return doc.version if doc is not None else None

    def clear(self, key: str) -> None:
        self.scheduler.forget(key)
        self.results.pop(key, None)
        for uri in self.shown.pop(key, set()):
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))

    def key_of(self, uri: str) -> str:
        """The document a text document belongs to: its notebook for a cell."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        return notebook.uri if notebook is not None else uri

    def current(self, uri: str) -> Optional[Analysis]:
        """The analysis of the document holding `uri`, if it is of the text the editor has now."""
        key = self.key_of(uri)
        analysis, source = self.results.get(key), self.source(key)
        if analysis is None or source is None or analysis.source != source:
            return None
        return analysis

    def messages(self) -> Messages:
        return Messages(self.workspace.position_codec)


server = TensorCopyServer()


@server.feature(lsp.INITIALIZE)
def initialize(ls: TensorCopyServer, params: lsp.InitializeParams) -> None:
    options = params.initialization_options
    delay = options.get("debounce") if isinstance(options, dict) else None
    if isinstance(delay, (int, float)) and 0 <= delay <= 10:
        ls.scheduler.delay = float(delay)
    workers = options.get("workers") if isinstance(options, dict) else None
    if isinstance(workers, int) and 0 <= workers <= 16:
        ls.pool.size = workers
    ls.protocol.trace = params.trace or lsp.TraceValue.Off


@server.feature(lsp.SHUTDOWN)
def shutdown(ls: TensorCopyServer, params: None) -> None:
    ls.shut_down = True


@server.feature(lsp.EXIT)
def exit_now(ls: TensorCopyServer, params: None) -> None:
    """End at once: an analysis still running in a thread, or the collection of its objects at
    interpreter exit, would keep the process alive for seconds (exit code 1 without a shutdown, per LSP)."""
    ls.pool.close()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0 if ls.shut_down else 1)


def python_file(doc) -> bool:
    return doc.language_id == "python" or doc.uri.endswith((".py", ".pyi"))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: TensorCopyServer, params: lsp.DidOpenTextDocumentParams) -> None:
    if python_file(params.text_document):
        ls.scheduler.request(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: TensorCopyServer, params: lsp.DidChangeTextDocumentParams) -> None:
    if params.text_document.uri in ls.scheduler.slots:
        ls.scheduler.request(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: TensorCopyServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri in ls.scheduler.slots:
        ls.scheduler.request(params.text_document.uri, delay=0)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
async def did_close(ls: TensorCopyServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.clear(params.text_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
async def notebook_open(ls: TensorCopyServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    ls.scheduler.request(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
async def notebook_change(ls: TensorCopyServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    ls.scheduler.request(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
async def notebook_save(ls: TensorCopyServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
    ls.scheduler.request(params.notebook_document.uri, delay=0)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
async def notebook_close(ls: TensorCopyServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    ls.clear(params.notebook_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL]))
async def code_action(ls: TensorCopyServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    analysis = ls.current(params.text_document.uri)
    if analysis is None:  # not analysed yet, or the text changed since: positions would be wrong
        return []
    uri, lines = params.text_document.uri, range(params.range.start.line, params.range.end.line + 1)
    only = [str(getattr(kind, "value", kind)) for kind in params.context.only or ()] or None
    call = Call("actions", (analysis, uri, lines, only), f"code actions {uri}:{lines.start + 1}")
    try:
        found, analysis.fixed_all, analysis.commentable = await ls.pool.submit(call, urgent=True)
    except Exception as exc:  # noqa: BLE001 - a worker that died or failed: no actions, said in the log
        ls.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, f"{NAME}: {uri}: no code actions: "
                                                   f"{type(exc).__name__}: {exc}"))
        return []
    return ls.messages().actions(analysis, found)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: TensorCopyServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
    analysis, uri, at = ls.current(params.text_document.uri), params.text_document.uri, params.position
    spans = [(p, ls.messages().range(analysis.source, uri, p.start, p.end)) for p in analysis.problems
             if p.uri == uri and p.code in BY_CODE] if analysis else []
    found = [p for p, r in spans if (r.start.line, r.start.character) <= (at.line, at.character)
             <= (r.end.line, r.end.character)]
    if not found:
        return None
    text = "\n\n".join(f"**{p.code}** {BY_CODE[p.code].summary} [{p.code} documentation]"
                       f"({DOCS_URL.format(code=p.code)})" for p in dict((p.code, p) for p in found).values())
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text))


def serve() -> int:
    server.start_io()
    return 0
