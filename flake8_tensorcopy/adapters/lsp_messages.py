"""The LSP messages of an editor's analysis (editor.py): diagnostics, workspace edits and code actions,
with positions in the units the client counts (UTF-16 unless both sides agreed on another encoding)."""
from __future__ import annotations

from lsprotocol import types as lsp

from ..rules import BY_CODE
from ..rules.docs import DOCS_URL
from ..rules.model import FixSafety
from .editor import LINE_BREAK, Analysis, Change, Problem, Source, fix_all_changes, fix_changes, noqa_change

NAME = "flake8-tensorcopy"
FIX_ALL = f"{lsp.CodeActionKind.SourceFixAll.value}.{NAME}"


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

    def actions(self, analysis: Analysis, uri: str, lines: range, only) -> list[lsp.CodeAction]:
        """The code actions for the findings on `lines` of `uri`, and fix-all; runs off the event loop."""
        wanted = lambda kind: not only or any(kind == o or kind.startswith(o + ".") for o in only)  # noqa: E731
        source, actions = analysis.source, []
        for problem in analysis.problems:
            if problem.finding is None or problem.uri != uri or problem.end[0] < lines.start \
                    or problem.start[0] >= lines.stop:
                continue
            diagnostic = [self.diagnostic(source, problem)]
            fix = problem.finding.fix
            changes = fix_changes(analysis, problem) if fix and wanted(lsp.CodeActionKind.QuickFix) else []
            if changes:
                actions.append(lsp.CodeAction(fix_title(problem), lsp.CodeActionKind.QuickFix, diagnostic,
                                              is_preferred=fix.safety is FixSafety.SAFE,
                                              edit=self.edit(source, changes)))
            noqa = noqa_change(analysis, problem) if wanted(lsp.CodeActionKind.QuickFix) else None
            if noqa is not None:
                actions.append(lsp.CodeAction(f"Disable {problem.code} for this line (# noqa)",
                                              lsp.CodeActionKind.QuickFix, diagnostic, edit=self.edit(source, [noqa])))
        changes = fix_all_changes(analysis) if wanted(FIX_ALL) else []
        if changes:
            actions.append(lsp.CodeAction(f"{NAME}: fix all safe findings", FIX_ALL, edit=self.edit(source, changes)))
        return actions


def fix_title(problem: Problem) -> str:
    """`Fix TEN204: hidden.detach().clone()` (what one short edit writes), `(unsafe)` for an unsafe fix."""
    fix = problem.finding.fix
    edits = [e.text for e in fix.edits if e.text.strip()]
    what = fix.description or (f"`{edits[0]}`" if len(edits) == 1 and len(edits[0]) <= 60 and "\n" not in edits[0]
                               else problem.message)
    return f"Fix {problem.code}: {what}" + (" (unsafe)" if fix.safety is FixSafety.UNSAFE else "")
