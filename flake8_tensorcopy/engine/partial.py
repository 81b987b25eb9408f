"""The partial parse, for a file that does not parse whole (engine.tree_for): a def or class that holds no
hot line (no rule's trigger text) becomes a one-line stub with its name, `def name(): pass`, on its
header line; the other lines of it become blank, so a syntax error there is left to flake8. Line numbers,
names and scopes stay. Classes that hold a hot line are kept whole (rules read what the class's other
methods put on `self`); nothing inside a function is stubbed (rules walk their whole function).

Units are found from the text alone (a header at the unit's indentation; the unit ends before the next
line that is indented no deeper), so the result is checked: a unit with an odd number of triple quotes or
a trailing backslash is kept whole, and there is no partial tree (the file's syntax error is reported)
when the stubbed text does not parse, when a stub is not a def or class in the tree (it sat in a string),
or when a hot line is outside every function (module and class bodies: their rules walk the module, defs
included).
"""
from __future__ import annotations

import ast
import bisect
import re
import warnings
from typing import Optional

from ..analysis.facts import lines_of

HEADER = re.compile(r"([ \t]*)(?:@|def[ \t]|async[ \t]+def[ \t]|class[ \t])")
NAMED = re.compile(r"[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
CLASS_LINE = re.compile(r"[ \t]*class[ \t]+\w+[ \t]*(?:\([^()#\n]*\))?[ \t]*:[ \t]*")
CALLED = re.compile(r"\b(\w+)\b[ \t]*\(")


def parse_partial(source: str, hot: list[int]) -> Optional[ast.Module]:
    """The tree of `source` with its cold defs stubbed; None when the whole file must be parsed."""
    original = source.split("\n")
    kept, text = sorted(hot), None
    for _ in range(4):  # a stub that a summary would read is kept whole, to a fixed point
        lines = list(original)
        stubs: list[tuple[int, int, int]] = []
        funcs: list[tuple[int, int]] = []
        _stub(lines, 0, len(lines), "", kept, stubs, funcs)
        if not stubs or not _inside(hot, funcs):  # nothing to gain, or hot module / class code: no parse wasted
            return None
        text = text or _CallText(source)
        more = text.needed(original, funcs, stubs)
        if not more:
            break
        kept = sorted(set(kept) | more)
    else:
        return None  # summaries chain through many defs: the whole tree gives the same answer for less
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defs: set[int] = set()
    spans: list[tuple[int, int]] = []
    _outline(tree.body, defs, spans)
    if not defs.issuperset(header + 1 for header, _, _ in stubs) or not _inside(hot, spans):
        return None  # the tree has the last word
    return tree


class _CallText:
    """Where the text calls each name (`name(`) and defines it (`def name`), by line, found once."""

    def __init__(self, source: str):
        self.calls = lines_of(CALLED, source)  # (line, name), in line order
        self.defs: dict[str, list[int]] = {}
        for line, name in lines_of(DEF, source):
            self.defs.setdefault(name, []).append(line)

    def needed(self, lines: list[str], funcs: list, stubs: list) -> set[int]:
        """Lines that keep stubbed defs whole because summaries (analysis/summaries.py) read them: a def
        a kept def calls by name, and a def or class holding a call of a kept def."""
        names = {m.group(2) for m in (NAMED.match(lines[first - 1]) for first, _ in funcs) if m}
        stubbed = {m.group(2) for m in (NAMED.match(lines[header]) for header, _, _ in stubs) if m}
        hot, cold = _Spans(funcs), _Spans([(i + 1, j) for _, i, j in stubs])
        called = {name for line, name in self.calls if name in stubbed and hot.holds(line)}
        more = {line for name in called - names for line in self.defs.get(name, ()) if cold.holds(line)}
        more.update(line for line, name in self.calls if name in names and cold.holds(line))
        return more


class _Spans:
    """Disjoint (first, last) line spans, asked whether they hold a line."""

    def __init__(self, spans: list[tuple[int, int]]):
        self.spans = sorted(spans)
        self.firsts = [first for first, _ in self.spans]

    def holds(self, line: int) -> bool:
        k = bisect.bisect_right(self.firsts, line) - 1
        return k >= 0 and line <= self.spans[k][1]


def _inside(lines: list[int], spans: list[tuple[int, int]]) -> bool:
    """Every line lies in one of the disjoint (first, last) spans."""
    spans = sorted(spans)
    starts = [first for first, _ in spans]
    for line in lines:
        k = bisect.bisect_right(starts, line) - 1
        if k < 0 or spans[k][1] < line:
            return False
    return True


def _outline(body: list, defs: set, spans: list) -> None:
    """Lines of the defs and classes outside functions, and the spans of the functions."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.add(node.lineno)
            spans.append((node.lineno, node.end_lineno))
        elif isinstance(node, ast.ClassDef):
            defs.add(node.lineno)
            _outline(node.body, defs, spans)
        else:  # if / for / while / with / try / except handlers: statements of the same scope
            for field in ("body", "orelse", "finalbody", "handlers"):
                _outline(getattr(node, field, None) or [], defs, spans)
            for case in getattr(node, "cases", ()):
                _outline(case.body, defs, spans)


def _stub(lines: list[str], first: int, end: int, indent: str, hot: list[int], stubs: list,
          funcs: list[tuple[int, int]], stub_cold: bool = True) -> None:
    """Stub the cold units whose header sits at exactly `indent` in lines[first:end] (0-based) and
    record the stub lines and the 1-based (def line, last line) of the hot functions; hot classes
    recurse to record their hot methods, stubbing nothing (stub_cold False). A line indented less than
    `indent` ends the block."""
    i = first
    while i < end:
        m = HEADER.match(lines[i])
        if not m or m.group(1) != indent:
            text = lines[i].lstrip()
            if indent and text and text[0] not in "#)]}" and len(lines[i]) - len(text) < len(indent):
                return
            i += 1
            continue
        j, header = _unit(lines, i, end, indent)
        if header is None:
            i = j
            continue
        kind, name = NAMED.match(lines[header]).groups()
        k = bisect.bisect_left(hot, i + 1)
        if k < len(hot) and hot[k] <= j:  # a hot line in lines i+1 .. j (1-based)
            if kind == "def":
                funcs.append((header + 1, j))
            else:
                body = _body_indent(lines, header + 1, j, indent)
                if body is not None:
                    _stub(lines, header + 1, j, body, hot, stubs, funcs, stub_cold=False)
        elif stub_cold and _closed(lines, i, j):
            stub = f"{indent}{'def ' + name + '(): pass' if kind == 'def' else 'class ' + name + ': pass'}"
            if kind == "class" and CLASS_LINE.fullmatch(lines[header]):  # keep its bases: nn.Module or not
                stub = lines[header].rstrip() + " pass"
            lines[i:j] = [""] * (j - i)
            lines[header] = stub
            stubs.append((header, i, j))
        i = j


def _unit(lines: list[str], i: int, end: int, indent: str) -> tuple[int, Optional[int]]:
    """(end, header line) of the unit starting at line i: its decorators, then the def / class line,
    then everything indented deeper (blank lines, comments and closing brackets do not end it)."""
    header = i if NAMED.match(lines[i]) else None
    j = i + 1
    while j < end:
        line = lines[j]
        text = line.lstrip()
        if text and text[0] not in "#)]}" and len(line) - len(text) <= len(indent):
            if header is None and line.startswith(indent) and len(line) - len(text) == len(indent):
                if text.startswith("@"):
                    j += 1
                    continue
                if NAMED.match(line):
                    header = j
                    j += 1
                    continue
            break
        j += 1
    return j, header


def _body_indent(lines: list[str], start: int, end: int, indent: str) -> Optional[str]:
    """The indentation of the first def / class / decorator inside a class, if deeper than the class."""
    for n in range(start, end):
        m = HEADER.match(lines[n])
        if m and len(m.group(1)) > len(indent):
            return m.group(1)
    return None


def _closed(lines: list[str], i: int, j: int) -> bool:
    """No string or line continuation crosses the unit's edges (as far as text can tell)."""
    text = "\n".join(lines[i:j])
    return text.count('"""') % 2 == 0 and text.count("'''") % 2 == 0 and not text.rstrip().endswith("\\")
