"""The LSP messages of an editor's analysis (editor.py): diagnostics, workspace edits and code actions,
with positions in the units the client counts (UTF-16 unless both sides agreed on another encoding)."""
from __future__ import annotations

from lsprotocol import types as lsp

from ..rules import BY_CODE
from ..rules.docs import DOCS_URL
from .editor import LINE_BREAK, Action, Analysis, Change, Problem, Source

NAME = "flake8-tensorcopy"


class Messages:
    def __init__(self, codec):
        self.codec = codec  # pygls's PositionCodec of the session
        self.lines: dict[str, list[str]] = {}  # by uri: its lines, split once

    def position(self, source: Source, uri: str, at: tuple[int, int]) -> lsp.Position:
        """A (line, character) position as the client counts it (UTF-16 units unless agreed otherwise)."""
        lines = self.lines.get(uri)
        if lines is None:
            lines = self.lines[uri] = LINE_BREAK.split(source.text_of(uri))
        line = lines[at[0]] if at[0] < len(lines) else ""
        return lsp.Position(at[0], self.codec.client_num_units(line[:at[1]]))

    def range(self, source: Source, uri: str, start, end) -> lsp.Range:
        return lsp.Range(self.position(source, uri, start), self.position(source, uri, end))

    def diagnostic(self, source: Source, problem: Problem) -> lsp.Diagnostic:
        rule = BY_CODE.get(problem.code)
        return lsp.Diagnostic(
            self.range(source, problem.uri, problem.start, problem.end), problem.message,
            severity=lsp.DiagnosticSeverity.Warning if rule else lsp.DiagnosticSeverity.Information,
            code=problem.code, source=NAME,
            code_description=lsp.CodeDescription(DOCS_URL.format(code=problem.code)) if rule else None)

    def edit(self, source: Source, changes: list[Change]) -> lsp.WorkspaceEdit:
        edits: dict[str, list[lsp.TextEdit]] = {}
        for c in changes:
            edits.setdefault(c.uri, []).append(lsp.TextEdit(self.range(source, c.uri, c.start, c.end), c.text))
        return lsp.WorkspaceEdit(changes=edits)

    def actions(self, analysis: Analysis, found: list[Action]) -> list[lsp.CodeAction]:
        """editor.py's actions as LSP code actions."""
        source = analysis.source
        return [lsp.CodeAction(a.title, a.kind, [self.diagnostic(source, a.problem)] if a.problem else None,
                               is_preferred=a.preferred or None, edit=self.edit(source, list(a.changes)))
                for a in found]
