"""The partial parse: a def or class that holds no hot line (no rule's trigger text) becomes a one-line
stub with its name, `def name(): pass`, on its header line; the other lines of it become blank. Line
numbers, names and scopes stay; the parser reads far less. Classes that hold a hot line are kept whole
(rules read what the class's other methods put on `self`); nothing inside a function is stubbed (rules
walk their whole function).

Units are found from the text alone (a header at the unit's indentation; the unit ends before the next
line that is indented no deeper), so the result is checked: a unit with an odd number of triple quotes
or a trailing backslash is kept whole, and the whole file is parsed instead when the stubbed text does
not parse, when a stub is not a def or class in the tree (it sat in a string), or when a hot line is
outside every function (module and class bodies: their rules walk the module, defs included).
"""
from __future__ import annotations

import ast
import bisect
import re
import warnings
from typing import Optional

HEADER = re.compile(r"([ \t]*)(?:@|def[ \t]|async[ \t]+def[ \t]|class[ \t])")
NAMED = re.compile(r"[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
CALLED = re.compile(r"(\w+)[ \t]*\(")


def parse_partial(source: str, hot: list[int]) -> Optional[ast.Module]:
    """The tree of `source` with its cold defs stubbed; None when the whole file must be parsed."""
    original = source.split("\n")
    kept = _kept(source, original, hot)
    if kept is None:
        return None
    lines = list(original)
    stubs: list[int] = []
    funcs: list[tuple[int, int]] = []
    _stub(lines, 0, len(lines), "", kept, stubs, funcs)
    if not stubs or not _inside(hot, funcs):  # nothing to gain, or hot module / class code: no parse wasted
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defs: set[int] = set()
    spans: list[tuple[int, int]] = []
    _outline(tree.body, defs, spans)
    if not defs.issuperset(n + 1 for n in stubs) or not _inside(hot, spans):  # the tree has the last word
        return None
    return tree


def _kept(source: str, lines: list[str], hot: list[int]) -> Optional[list[int]]:
    """`hot` plus the lines that keep the defs summaries read whole (analysis/summaries.py): the defs a
    kept def calls by name, and the defs holding a call of a kept def, to a fixed point; None when that
    takes more than a few rounds (then the whole file is parsed, so both trees give one answer)."""
    kept = sorted(hot)
    for _ in range(4):
        funcs: list[tuple[int, int]] = []
        _stub(list(lines), 0, len(lines), "", kept, [], funcs)
        names = {NAMED.match(lines[first - 1]).group(2) for first, _ in funcs if NAMED.match(lines[first - 1])}
        called = set(CALLED.findall("\n".join("\n".join(lines[first - 1:last]) for first, last in funcs)))
        more = {_line(source, m.start()) for m in DEF.finditer(source) if m.group(1) in called - names}
        if names:
            calls = re.compile(r"\b(?:%s)[ \t]*\(" % "|".join(map(re.escape, sorted(names))))
            more.update(_line(source, m.start()) for m in calls.finditer(source))
        grown = sorted(set(kept) | more)
        if grown == kept:
            return kept
        kept = grown
    return None


def _line(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


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


def _stub(lines: list[str], first: int, end: int, indent: str, hot: list[int], stubs: list[int],
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
            lines[i:j] = [""] * (j - i)
            lines[header] = stub
            stubs.append(header)
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
