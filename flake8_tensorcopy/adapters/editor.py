"""What an editor asks of an open document, without any protocol: its problems (findings and notices, in
the positions of the text the editor holds: a notebook's own cells) and the text changes of a fix, of
fixing all safe findings, and of a `# noqa` comment. The language server (server.py) only converts
these to LSP messages; everything here runs off its event loop."""
from __future__ import annotations

import bisect
import difflib
import io
import json
import re
import tokenize
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..config.discovery import excluded_named
from ..config.settings import nearest
from ..engine.core import AnalysisError, select_rules
from ..pipeline.lint import Document, lint
from ..pipeline.noqa import with_codes
from ..rules import BY_CODE
from ..rules.model import Finding, FixSafety
from ..sources.document import read_document

NOTICE = "TEN000"  # not a rule: a file, a cell or a configuration that could not be used
QUICK_FIX, FIX_ALL = "quickfix", "source.fixAll.flake8-tensorcopy"  # the kinds of code action (LSP's names)
LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line ends of both Python and LSP


@dataclass(frozen=True)
class Cell:
    uri: str
    code: bool  # False: a markdown (or raw) cell
    text: str


@dataclass(frozen=True)
class Source:
    """One open document as the editor holds it: a Python file's text, or a notebook's cells."""

    uri: str
    path: str  # where it is on disk (configuration is found from there)
    version: Optional[int]
    text: str = ""
    cells: Optional[tuple[Cell, ...]] = None  # a notebook

    def text_of(self, uri: str) -> str:
        if self.cells is None:
            return self.text
        return next((c.text for c in self.cells if c.uri == uri), "")


@dataclass(frozen=True)
class Change:
    """Replace text between two (0-based line, character column) positions of the document `uri`."""

    uri: str
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True)
class Action:
    """A code action: `changes` to the document, for `problem` (None: the fix-all of the file)."""

    title: str
    kind: str  # QUICK_FIX or FIX_ALL
    changes: tuple[Change, ...]
    problem: Optional["Problem"] = None
    preferred: bool = False


@dataclass
class Problem:
    uri: str
    start: tuple[int, int]  # 0-based line, character column, in the text of `uri`
    end: tuple[int, int]
    code: str
    message: str
    finding: Optional[Finding] = None  # None for a notice


@dataclass
class Analysis:
    source: Source
    problems: list[Problem] = field(default_factory=list)
    doc: Optional[Document] = None
    rules: tuple = ()
    tensor_functions: tuple[str, ...] = ()
    fixed_all: Optional[list[Change]] = None  # fix_all_changes, computed once
    commentable: Optional[set[int]] = None  # program lines a comment can end, found once when asked


def notebook_json(cells: Sequence[Cell]) -> str:
    """The notebook file of the editor's cells, for read_document (a Python notebook, nbformat 4)."""
    return json.dumps({"cells": [{"cell_type": "code" if c.code else "markdown", "metadata": {}, "source": c.text}
                                 for c in cells],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5})


def analyse(source: Source) -> Analysis:
    """The document's problems: its findings as `check` reports them, and a notice for what could not be
    used (its configuration, a cell or the file that does not parse). Never raises but for a bug of ours."""
    result = Analysis(source)
    notices = []
    try:
        chosen = nearest(source.path)  # the file's nearest table, read again when it changes
        if excluded_named(source.path, chosen.excludes):
            return result  # as `check` skips it: no problems
        result.rules = tuple(BY_CODE[c] for c in chosen.codes_for(source.path))
        result.tensor_functions = chosen.tensor_functions
    except Exception as exc:  # a ConfigError: the defaults, said once on the document
        result.rules = tuple(select_rules())
        notices.append((0, f"flake8-tensorcopy ignores its configuration: {exc}".split("\n")[0]))
    first = source.cells[0].uri if source.cells else source.uri
    try:
        doc = read_document(notebook_json(source.cells) if source.cells is not None else source.text,
                            source.path)
        linted = lint(doc, result.rules, result.tensor_functions)
    except (AnalysisError, ValueError) as exc:  # NotebookError is a ValueError
        line = re.search(r"at line (\d+)", str(exc))
        notices.append((int(line.group(1)) - 1 if line and source.cells is None else 0,
                        f"flake8-tensorcopy could not analyse this file: {exc}"))
        result.problems = [_notice(source, first, line, message) for line, message in notices]
        return result
    result.doc = doc
    notices += [(0, f"internal error: {error}") for error in linted.errors]
    result.problems = [_notice(source, first, line, message) for line, message in notices]
    for cell, message in doc.cells.errors if doc.cells else ():
        result.problems.append(_notice(source, source.cells[cell - 1].uri, 0, f"cell not analysed: {message}"))
    for finding, item in zip(linted.findings, linted.items):
        uri = source.cells[item.cell - 1].uri if item.cell else source.uri
        start, end = (item.line - 1, item.column - 1), (item.end_line - 1, item.end_column - 1)
        if end <= start:
            end = (start[0], max(start[1], len(item.source_line)))
        result.problems.append(Problem(uri, start, end, item.code, item.message, finding))
    return result


def _notice(source: Source, uri: str, line: int, message: str) -> Problem:
    lines = LINE_BREAK.split(source.text_of(uri))
    line = min(max(line, 0), len(lines) - 1)
    return Problem(uri, (line, 0), (line, len(lines[line])), NOTICE, message)


def _commentable(program: str) -> set[int]:
    """The lines (1-based) that end outside a string and a backslash continuation: a comment can go there."""
    try:
        return {t.start[0] for t in tokenize.generate_tokens(io.StringIO(program).readline)
                if t.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)}
    except (tokenize.TokenError, SyntaxError):
        return set()


def fix_changes(analysis: Analysis, problem: Problem) -> list[Change]:
    """The changes of one finding's own fix (and the import it needs); [] when it has none or it would
    not parse."""
    from ..fix.fixer import apply, verify  # LibCST is imported only once a fix is asked for
    from ..fix.imports import add_imports

    finding, doc = problem.finding, analysis.doc
    if finding is None or doc is None or not finding.fix or not finding.fix.edits:
        return []
    fixed, applied, imports = apply(doc.program, [finding])
    if not applied:
        return []
    try:
        fixed = add_imports(fixed, imports) if imports else fixed
        verify(fixed, doc.path)
    except Exception:  # noqa: BLE001 - a FixError, or LibCST cannot parse it: no action rather than a broken one
        return []
    return _changes_to(analysis, fixed)


def fix_all_changes(analysis: Analysis) -> list[Change]:
    """The changes of `fix` (safe fixes, imports added, to a fixed point) on the document."""
    if analysis.fixed_all is None:
        analysis.fixed_all = _fix_all(analysis)
    return analysis.fixed_all


def _fix_all(analysis: Analysis) -> list[Change]:
    from ..fix.fixer import fix_source

    doc = analysis.doc
    if doc is None or not any(p.finding and p.finding.fix and p.finding.fix.safety is FixSafety.SAFE
                              for p in analysis.problems):
        return []
    try:
        outcome = fix_source(doc.program, doc.path, analysis.rules, tensor_functions=analysis.tensor_functions)
    except Exception:  # noqa: BLE001 - AnalysisError, FixError: nothing to offer
        return []
    return _changes_to(analysis, outcome.fixed) if outcome.changed else []


def _changes_to(analysis: Analysis, program: str) -> list[Change]:
    """The changes that turn the document into the one of `program` (its notebook cells for a notebook)."""
    source, doc = analysis.source, analysis.doc
    if doc.cells is None:
        return text_changes(source.uri, source.text, program)
    cells = json.loads(doc.cells.with_program(program))["cells"]
    changes = []
    for cell, new in zip(source.cells, cells):
        changes += text_changes(cell.uri, cell.text, "".join(new["source"]))
    return changes


def text_changes(uri: str, old: str, new: str) -> list[Change]:
    """The smallest changes (one per changed run of lines, trimmed to the characters that differ)."""
    a, b = _lines(old), _lines(new)
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(old)]
    offsets = [0]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    changes = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        before, after = "".join(a[i1:i2]), "".join(b[j1:j2])
        head = len(_common_prefix(before, after))
        tail = len(_common_prefix(before[head:][::-1], after[head:][::-1]))
        start, end = offsets[i1] + head, offsets[i2] - tail
        changes.append(Change(uri, _position(starts, start), _position(starts, end), after[head:len(after) - tail]))
    return changes


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect.bisect_right(starts, offset) - 1
    return line, offset - starts[line]


def noqa_change(analysis: Analysis, problem: Problem) -> Optional[Change]:
    """`# noqa: CODE` at the end of the reported line, added to a noqa comment already there."""
    if problem.finding is None or analysis.doc is None:
        return None
    if analysis.commentable is None:
        analysis.commentable = _commentable(analysis.doc.program)
    if problem.finding.line not in analysis.commentable:
        return None
    line = problem.start[0]
    lines = LINE_BREAK.split(analysis.source.text_of(problem.uri))
    if line >= len(lines):
        return None
    text = lines[line]
    edited = with_codes(text, [problem.code])
    if edited == text:
        return None  # a bare `# noqa`, or one naming the code, already silences it
    return Change(problem.uri, (line, 0), (line, len(text)), edited)


def actions(analysis: Analysis, uri: str, lines: range, only: Optional[Sequence[str]] = None) -> list[Action]:
    """The actions for the findings on `lines` of `uri` (their fixes, their noqa), and fix-all, of the kinds
    `only` asks for (a kind asked covers its sub-kinds; None: every kind)."""
    wanted = lambda kind: not only or any(kind == o or kind.startswith(o + ".") for o in only)  # noqa: E731
    found = []
    for problem in analysis.problems:
        if problem.finding is None or problem.uri != uri or problem.end[0] < lines.start \
                or problem.start[0] >= lines.stop or not wanted(QUICK_FIX):
            continue
        fix = problem.finding.fix
        changes = fix_changes(analysis, problem) if fix else []
        if changes:
            found.append(Action(fix_title(problem), QUICK_FIX, tuple(changes), problem,
                                preferred=fix.safety is FixSafety.SAFE))
        noqa = noqa_change(analysis, problem)
        if noqa is not None:
            found.append(Action(f"Disable {problem.code} for this line (# noqa)", QUICK_FIX, (noqa,), problem))
    changes = fix_all_changes(analysis) if wanted(FIX_ALL) else []
    if changes:
        found.append(Action("flake8-tensorcopy: fix all safe findings", FIX_ALL, tuple(changes)))
    return found


def fix_title(problem: Problem) -> str:
    """`Fix TEN204: hidden.detach().clone()` (what one short edit writes), `(unsafe)` for an unsafe fix."""
    fix = problem.finding.fix
    edits = [e.text for e in fix.edits if e.text.strip()]
    what = fix.description or (f"`{edits[0]}`" if len(edits) == 1 and len(edits[0]) <= 60 and "\n" not in edits[0]
                               else problem.message)
    return f"Fix {problem.code}: {what}" + (" (unsafe)" if fix.safety is FixSafety.UNSAFE else "")
