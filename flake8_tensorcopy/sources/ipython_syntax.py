"""A notebook cell read as IPython reads it (IPython.core.inputtransformer2), as Python of the same
line count, so that line numbers never move.

IPython removes the indent of the cell's first non-blank line from every line that starts with it; runs
a cell whose first non-blank line is `%%name` as that cell magic; rewrites special syntax that starts a
logical line: `%magic`, `!shell`, `!!shell`, `?obj`, `,f a`, `;f a`, `/f a` (with their backslash
continuation lines), `x = %magic` and `x = !shell`, and a logical line ending in `obj?` or `obj??`; and
runs a one-line cell such as `pip install x` as a magic (automagic). Inside brackets, strings and
comments nothing is special. Here such a line becomes `pass` at its indentation (`x = None` for an
assignment) and its continuation lines become blank; a cell magic of another language (`%%bash`,
`%%writefile`) blanks the whole cell.
"""
from __future__ import annotations

import re
from typing import Optional

# Cell magics whose body is Python (the rest run another language or write a file).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "mprun", "pypy"})

# IPython 8's line magics and shell aliases, and ipykernel's: what a one-line cell may call without `%`.
AUTOMAGIC = frozenset("""
    alias alias_magic autoawait autocall automagic autosave bookmark cat cd clear colors conda config
    connect_info cp debug dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir less lf lk
    ll load load_ext loadpy logoff logon logstart logstate logstop ls lsmagic lx macro magic man matplotlib
    mkdir more mv notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun
    psearch psource pushd pwd pycat pylab qtconsole quickref recall rehashx reload_ext rep rerun reset
    reset_selective rm rmdir run save sc set_env sx system tb time timeit unalias unload_ext who who_ls whos
    xdel xmode""".split())

_INDENT = re.compile(r"[ \t]*")
_ESCAPE = re.compile(r"[ \t]*(?:[?,;]|%(?!=)|!(?!=)|/(?![/=]))")  # an operator such as `%=` is no escape
_MAGIC_RHS = re.compile(r"([ \t]*)(?:!(?!=)|%[ \t]*(?!\d)\w)")  # after `x =`: `!cmd`, `%name ...`
HELP_TARGET = 200  # the longest `obj.attr?` looked for: a longer match would cost time quadratic in it
_HELP_END = re.compile(r"%{0,2}(?!\d)[\w*]+(?:\.(?!\d)[\w*]+|\[-?[0-9]+\])*\?\??$")  # IPython's _help_end_re
_TOKEN = re.compile(r"(?P<comment>#)|(?P<quote>'''|\"\"\"|'|\")|(?P<open>[(\[{])|(?P<close>[)\]}])"
                    r"|(?P<op>(?:\*\*|//|>>|<<|[-+*/%&|^@<>!=:])?=+)")
_STRING_OR_COMMENT = re.compile(r"[#'\"]")  # a line without these only needs its brackets counted
_STRING_END = {q: re.compile(r"(?:[^\\]|\\.)*?" + q) for q in ("'''", '"""', "'", '"')}


def read_cell(lines: list[str]) -> tuple[list[str], str]:
    """(the cell's lines as the Python IPython runs, one for one; the indent IPython removed)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return list(lines), ""
    indent = _INDENT.match(lines[first]).group()
    lines = [line[len(indent):] if line.startswith(indent) else line for line in lines]
    head = lines[first]
    if head.startswith("%%") and not re.match(r"%%\w+\?", head):  # `%%time?` asks for help instead
        if (head[2:].split(None, 1) or [""])[0] not in PYTHON_CELL_MAGICS:
            return [""] * len(lines), indent
        return lines[:first] + [""] + _neutralise(lines[first + 1:]), indent
    return _neutralise(lines), indent


def neutralise(lines: list[str]) -> list[str]:
    """A cell's lines with IPython syntax replaced by Python of the same line count (and dedented)."""
    return read_cell(lines)[0]


def automagic(lines: list[str]) -> Optional[list[str]]:
    """A cell read as IPython's automagic reads it, or None when it does not apply: a cell of one line (after
    its leading blank lines) whose first word names a line magic runs as that magic (`pip install x`,
    `ls /data`). IPython does so unless a variable shadows the name; here, only when the cell is not
    Python (`ls` alone stays the name it may well be)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    word = re.match(r"[ \t]*([\w.]+)(?:[ \t]|$)", lines[first]) if first == len(lines) - 1 else None
    if word is None or word.group(1).split(".")[0] not in AUTOMAGIC:
        return None
    return lines[:first] + [_INDENT.match(lines[first]).group() + "pass"]


def _neutralise(lines: list[str]) -> list[str]:
    out, state, i, begin = list(lines), LogicalLines(), 0, 0
    while i < len(lines):
        line = lines[i]
        if state.at_start:
            begin = i
            assigned = None if _ESCAPE.match(line) else _magic_assignment(line)
            if assigned is not None or _ESCAPE.match(line):
                end = i
                while lines[end].endswith("\\") and end + 1 < len(lines):
                    end += 1
                out[i:end + 1] = [assigned or _INDENT.match(line).group() + "pass"] + [""] * (end - i)
                i = end + 1
                continue
        code_end = state.feed(line)
        ends = state.at_start or (i == len(lines) - 1 and not state.quote)  # the cell ends a logical line too
        if ends and code_end == len(line) and line.endswith("?") and \
                _HELP_END.search(line, max(0, len(line) - HELP_TARGET)):
            out[begin:i + 1] = [_INDENT.match(lines[begin]).group() + "pass"] + [""] * (i - begin)
        i += 1
    return out


def _magic_assignment(line: str) -> Optional[str]:
    """`x = None` for a line `x = !cmd` or `x = %magic args` (the first `=` outside brackets), else None."""
    if "=" not in line or ("!" not in line and "%" not in line):
        return None
    depth, pos = 0, 0
    while True:
        m = _TOKEN.search(line, pos)
        if m is None or m.lastgroup == "comment":
            return None
        if m.lastgroup == "quote":
            end = _STRING_END[m.group()].match(line, m.end())
            if end is None:
                return None
            pos = end.end()
            continue
        if m.lastgroup == "op" and m.group() == "=" and depth == 0:
            rhs = _MAGIC_RHS.match(line, m.end())
            return line[:m.end()] + rhs.group(1) + "None" if rhs else None
        depth += {"open": 1, "close": -1}.get(m.lastgroup, 0)
        pos = m.end()


class LogicalLines:
    """Python's logical lines, fed one physical line at a time: open brackets, an open string and a
    backslash continuation carry a logical line over to the next physical line."""

    def __init__(self) -> None:
        self.depth = 0
        self.quote: Optional[str] = None
        self.continued = False

    @property
    def at_start(self) -> bool:
        """Whether the next physical line starts a logical line."""
        return not (self.depth or self.quote or self.continued)

    def feed(self, line: str) -> int:
        """Read one physical line; returns where its code ends (a comment's start, else its length)."""
        # A line that is only a backslash continues no logical line yet: the next one starts it.
        joins = line.endswith("\\") and (not self.at_start or bool(line[:-1].strip()))
        pos, self.continued = 0, False
        if self.quote:
            end = _STRING_END[self.quote].match(line)
            if end is None:
                if len(self.quote) == 1 and not _odd_backslashes(line):
                    self.quote = None  # an unterminated string ends with its line
                return len(line)
            pos, self.quote = end.end(), None
        elif not _STRING_OR_COMMENT.search(line):
            self.depth = max(0, self.depth + sum(map(line.count, "([{")) - sum(map(line.count, ")]}")))
            self.continued = joins
            return len(line)
        while True:
            m = _TOKEN.search(line, pos)
            if m is None:
                break
            if m.lastgroup == "comment":
                return m.start()
            if m.lastgroup == "quote":
                end = _STRING_END[m.group()].match(line, m.end())
                if end is None:
                    if len(m.group()) == 3 or _odd_backslashes(line):
                        self.quote = m.group()
                    return len(line)
                pos = end.end()
                continue
            if m.lastgroup == "open":
                self.depth += 1
            elif m.lastgroup == "close":
                self.depth = max(0, self.depth - 1)
            pos = m.end()
        self.continued = joins
        return len(line)


def _odd_backslashes(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1
