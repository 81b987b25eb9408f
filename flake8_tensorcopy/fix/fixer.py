"""Applying the findings' own fixes to a source text, to a fixed point, and checking the result.

`fix_source` is the whole fixer on text: analyse with the engine, drop findings suppressed by `# noqa`,
apply the fixes allowed (safe ones; unsafe ones only when asked), add the imports they need, verify
that the result still parses, and repeat until no allowed fix is left. It never touches files.
"""
from __future__ import annotations

import dataclasses

import bisect
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import libcst as cst
from pyflakes import checker as pyflakes_checker
from pyflakes import messages as pyflakes_messages

from ..engine.core import AnalysisError, parse
from ..pipeline.lint import Document, lint
from .imports import add_imports, remove_copy_imports
from ..rules.model import Edit, Finding, FixSafety, Rule
from .not_tensor import new_receivers, suspect_calls
from ..rules import RULES

MAX_PASSES = 8
LINE_END = re.compile(r"\r\n|\r|\n")  # the line breaks `ast` counts; str.splitlines counts more
CellEnds = Callable[[str], frozenset]  # a notebook's program -> the lines that end a cell


class FixError(Exception):
    """The fixes could not be applied safely; the text is left as it was."""


@dataclass
class Outcome:
    source: str
    fixed: str
    applied: list[Finding] = field(default_factory=list)  # positions in the text of the pass that fixed them
    remaining: list[Finding] = field(default_factory=list)  # positions in `fixed`
    errors: list[str] = field(default_factory=list)  # rule failures (bugs of ours)
    dropped: dict[int, str] = field(default_factory=dict)  # id of a remaining finding -> why its fix was refused
    passes: list[tuple[str, list[Finding]]] = field(default_factory=list)  # (text a pass started from, its fixes)

    @property
    def changed(self) -> bool:
        return self.fixed != self.source


def allowed(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return bool(fix and fix.edits) and (fix.safety is FixSafety.SAFE or (unsafe and fix.safety is FixSafety.UNSAFE))


def ast_lines(source: str) -> list[str]:
    """The lines as `ast` numbers them, without their line ends."""
    return LINE_END.split(source)


def reported(source: str, filename: str, rules: Sequence[Rule], tensor_functions: Sequence[str] = (),
             cell_ends: Optional[CellEnds] = None) -> tuple[list[Finding], list[str]]:
    """The findings of `rules` not suppressed by `# noqa`, and the rules' own errors."""
    doc = Document(filename, source, cell_ends=cell_ends(source) if cell_ends else frozenset())
    linted = lint(doc, rules, tensor_functions)
    return linted.findings, linted.errors


def fix_source(source: str, filename: str = "<stdin>", rules: Sequence[Rule] = RULES,
               unsafe: bool = False, max_passes: int = MAX_PASSES, tensor_functions: Sequence[str] = (),
               cell_ends: Optional[CellEnds] = None, fixable: bool = True) -> Outcome:
    """Fix `source`. Raises AnalysisError when it cannot be parsed, FixError when a fixed text would not.
    `cell_ends`: for a notebook's program, the function that finds its cell ends (sources.notebook.cell_ends),
    asked again on each pass's text (fixes move lines). With `fixable` False (a program derived from the
    file, not its text: sources.document), nothing is applied and every finding remains."""
    outcome = Outcome(source, source)
    text = source
    for _ in range(max_passes + 1):
        findings, errors = reported(text, filename, rules, tensor_functions, cell_ends)
        outcome.errors = errors
        todo = [f for f in findings if allowed(f, unsafe)] if fixable else []
        messages = _pyflakes(text, filename) if todo else []
        refused = _refused(text, todo, filename, messages) if todo else {}
        todo = [f for f in todo if id(f) not in refused]
        if not todo:
            outcome.fixed = text
            outcome.remaining = findings if fixable else [dataclasses.replace(f, fix=None) for f in findings]
            outcome.dropped = refused
            return outcome
        fixed, applied, imports = apply(text, todo)
        outcome.errors += [f"{f.code} fix at line {f.line} points outside the text"
                           for f in _strays(todo, applied, text)]
        if fixed == text:  # nothing applicable changed the text: stop rather than spin
            outcome.fixed, outcome.remaining = text, findings
            return outcome
        if imports:
            fixed = _with_imports(fixed, imports)
        verify(fixed, filename)
        fixed = _without_unused_copy(messages, fixed, filename)
        outcome.passes.append((text, applied))
        text = fixed
        outcome.applied.extend(applied)
    raise FixError(f"the fixes did not settle after {max_passes} passes (a bug in flake8-tensorcopy)")


def apply(text: str, findings: Sequence[Finding]) -> tuple[str, list[Finding], set[str]]:
    """Apply the fixes that do not overlap an earlier one; identical edits count once."""
    starts = _line_starts(text)
    newline = _newline(text)
    taken: list[tuple[int, int, str]] = []  # sorted, pairwise apart
    applied, imports = [], set()
    for finding in sorted(findings, key=lambda f: (_first(f.fix.edits), f.code)):
        spans = [_span(e, starts, text, newline) for e in finding.fix.edits]
        if any(s is None for s in spans):
            continue  # a position outside the text: the rule's bug, reported as a remaining finding
        fresh = [s for s in spans if not _taken(taken, s)]
        if any(_overlaps_taken(taken, s) for s in fresh) or _self_overlap(fresh):
            continue  # the next pass sees it again, on the text this pass produces
        for s in fresh:
            bisect.insort(taken, s)
        applied.append(finding)
        imports.update(finding.fix.imports)
    pieces, done = [], 0
    for start, end, new in taken:
        pieces += [text[done:start], new]
        done = end
    return "".join(pieces) + text[done:], applied, imports


def _taken(taken: list, span: tuple[int, int, str]) -> bool:
    i = bisect.bisect_left(taken, span)
    return i < len(taken) and taken[i] == span


def _overlaps_taken(taken: list, span: tuple[int, int, str]) -> bool:
    """`span` conflicts with one of `taken` (sorted, pairwise apart, so their ends are sorted too): only
    the few that start at or before its end and end at or after its start can, found by bisection."""
    i = bisect.bisect_right(taken, (span[1], float("inf")))
    while i > 0 and taken[i - 1][1] >= span[0]:
        i -= 1
        if _overlap(span, taken[i]):
            return True
    return False


def _refused(text: str, todo: Sequence[Finding], filename: str, messages: list) -> dict[int, str]:
    """Why each fix that would break the program is refused, by id (see _problems). The fixes are checked
    together (one pyflakes run); only when that finds a problem are the fixes that may cause it (whose
    text mentions a new name; any, for a call on a non-tensor) checked one by one (a run per fix was
    quadratic in the file's size). `messages`: what pyflakes says of `text`."""
    unbound = _unbound(messages)
    refused: dict[int, str] = {}
    remaining = list(todo)
    problem = _problems(text, unbound, remaining, filename)
    while problem:
        names, calls = problem
        suspects = [f for f in remaining if names and not calls and _mentions(f, names, text)] or remaining
        for f in suspects:
            alone = _problems(text, unbound, [f], filename)
            if alone:
                refused[id(f)] = _why(alone)
        if not any(id(f) in refused for f in suspects):  # they break the program only together
            refused.update((id(f), _why(problem)) for f in suspects)
        remaining = [f for f in remaining if id(f) not in refused]
        problem = _problems(text, unbound, remaining, filename)
    return refused


def _why(problem: tuple[list[str], list]) -> str:
    names, calls = problem
    if calls:
        recv, method, what = calls[0]
        return f"the fix would call .{method}() on '{recv}', {what}"
    return f"the fix would leave {', '.join(repr(n) for n in names)} undefined or unbound"


def _mentions(finding: Finding, names: Sequence[str], text: str) -> bool:
    """A name occurs in the text a fix replaces or in its replacement."""
    words = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    starts, newline = _line_starts(text), _newline(text)
    spans = [_span(e, starts, text, newline) for e in finding.fix.edits]
    return any(words.search(s[2]) or words.search(text, s[0], s[1]) for s in spans if s is not None)


def _problems(text: str, unbound: list[str], findings: Sequence[Finding], filename: str):
    """What fixing `findings` in `text` would break, or None: (names left undefined or unbound that
    `unbound` does not list, as `memory = memory.detach()` making a global local; calls of a method a
    value the analysis knows is not a tensor lacks, as `.detach()` on a dict, a module, an int)."""
    fixed, applied, imports = apply(text, findings)
    if not applied:
        return None
    try:
        calls = _new_suspect_calls(text, fixed, applied, filename)
        after = _unbound(_pyflakes(add_imports(fixed, imports) if imports else fixed, filename))
    except Exception:  # noqa: BLE001 - verify() reports a text that does not parse
        return None
    names = sorted(set(after) - set(unbound))
    return (names, calls) if names or calls else None


def _new_suspect_calls(text: str, fixed: str, findings: Sequence[Finding], filename: str) -> list[tuple]:
    """Calls on known non-tensors (not_tensor.py) on the fixed lines, on receivers that had none there."""
    before_lines, after_lines, shift = set(), set(), 0
    for edit in sorted((e for f in findings for e in f.fix.edits), key=lambda e: (e.start, e.end)):
        (start, _), (end, _) = edit.start, edit.end
        grown = edit.text.count("\n") - (end - start)
        before_lines.update(range(start, end + 1))
        after_lines.update(range(start + shift, end + shift + grown + 1))
        shift += grown
    before = suspect_calls(parse(text, filename), text, sorted(before_lines))
    after = suspect_calls(parse(fixed, filename), fixed, sorted(after_lines))
    return new_receivers(before, after)


def _pyflakes(text: str, filename: str) -> list:
    return pyflakes_checker.Checker(parse(text, filename), filename).messages


def _unbound(messages: list) -> list[str]:
    """Names pyflakes finds undefined, or read before their local binding."""
    return [str(m.message_args[0]) for m in messages
            if isinstance(m, (pyflakes_messages.UndefinedName, pyflakes_messages.UndefinedLocal))]


def _unused(messages: list) -> set[str]:
    return {str(m.message_args[0]) for m in messages if isinstance(m, pyflakes_messages.UnusedImport)}


def _without_unused_copy(messages: list, fixed: str, filename: str) -> str:
    """`fixed` without the imports from `copy` that its fixes left unused (`copy.deepcopy(t)` was the last use)."""
    gone = _unused(_pyflakes(fixed, filename)) - _unused(messages)
    if not gone:
        return fixed
    try:
        return remove_copy_imports(fixed, gone)
    except Exception:  # noqa: BLE001 - LibCST cannot parse every file ast can: keep the import
        return fixed


def verify(text: str, filename: str) -> None:
    """The fixed text must parse with both `ast` and LibCST, or nothing is written."""
    try:
        parse(text, filename)
    except AnalysisError as exc:
        raise FixError(f"the fixed text would not parse ({exc}); left unchanged (a bug in flake8-tensorcopy)") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cst.parse_module(text)
    except Exception as exc:  # ParserSyntaxError is not a SyntaxError
        raise FixError(f"LibCST cannot parse the fixed text ({type(exc).__name__}); left unchanged") from None


def _with_imports(text: str, modules: set[str]) -> str:
    try:
        return add_imports(text, modules)
    except Exception as exc:  # LibCST cannot parse every file ast can
        raise FixError(f"cannot add 'import {', '.join(sorted(modules))}' ({type(exc).__name__}); "
                       "left unchanged") from None


def _strays(todo: Sequence[Finding], applied: Sequence[Finding], text: str) -> list[Finding]:
    """The findings not applied because an edit points outside the text."""
    done = {id(f) for f in applied}
    starts, newline = _line_starts(text), _newline(text)
    return [f for f in todo if id(f) not in done and f.fix.edits
            and any(_span(e, starts, text, newline) is None for e in f.fix.edits)]


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in LINE_END.finditer(text)]


def _newline(text: str) -> str:
    match = LINE_END.search(text)
    return match.group() if match else "\n"


def _span(edit: Edit, starts: list[int], text: str, newline: str) -> Optional[tuple[int, int, str]]:
    """An edit as (start offset, end offset, replacement) in `text`; None if it points outside a line."""
    offsets = []
    for line, col in (edit.start, edit.end):
        if not 0 < line <= len(starts) or col < 0:
            return None
        line_end = starts[line] if line < len(starts) else len(text)
        content = text[starts[line - 1]:line_end].rstrip("\r\n")
        if col > len(content):
            return None
        offsets.append(starts[line - 1] + col)
    if offsets[0] > offsets[1]:
        return None
    return offsets[0], offsets[1], edit.text.replace("\n", newline) if newline != "\n" else edit.text


def _overlap(a: tuple[int, int, str], b: tuple[int, int, str]) -> bool:
    """Two edits conflict when their ranges overlap, or touch while one of them is an insertion."""
    if a[0] == a[1] or b[0] == b[1]:
        return a[0] <= b[1] and b[0] <= a[1]
    return a[0] < b[1] and b[0] < a[1]


def _self_overlap(spans: list) -> bool:
    return any(_overlap(a, b) for i, a in enumerate(spans) for b in spans[i + 1:])


def _first(edits: Sequence[Edit]) -> tuple:
    return min((e.start, e.end) for e in edits)
