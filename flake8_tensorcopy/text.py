"""Text as output shows it: messages as one printable line, file names quoted when they could forge a line
or drive a terminal, and lines as Python counts them. Every message goes through here (rules/context.py).
"""
from __future__ import annotations

import re

# Characters that would end or forge a line, or drive a terminal: C0 and C1 controls, DEL, line separators.
NEEDS_QUOTES = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
ESCAPED = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029"\\\\]')  # and the quote and backslash
ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def shown(name: str) -> str:
    """A file name as text output prints it: as it is, unless it holds a control character or a line
    separator (a name with a newline could forge an output line); then in double quotes with C escapes,
    as git quotes paths: `"a\\nb.py"`. JSON and SARIF encode names themselves."""
    if not NEEDS_QUOTES.search(name):
        return name
    return '"' + ESCAPED.sub(_escape, name) + '"'


def _escape(match: re.Match) -> str:
    char = match.group()
    return ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (\\n, \\r\\n, \\r; not form feeds), without line ends."""
    lines = re.split(r"\r\n|\r|\n", text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def split_keeping_ends(text: str) -> list[str]:
    """Lines with their ends, split only where Python's tokenizer splits."""
    return [line for line in re.split(r"(?<=\n)|(?<=\r)(?!\n)", text) if line]


MAX_QUOTED = 80  # characters of source code a message quotes; longer code loses its middle to "..."
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # C0 controls, DEL, C1 controls: what drives a terminal


def one_line(code: str, limit: int = MAX_QUOTED) -> str:
    """Source code as a message quotes it: each run of whitespace (line breaks too) becomes one space, and
    past `limit` characters the middle gives way to "..." (the start and the end say most)."""
    text = " ".join(code.split())
    if len(text) <= limit:
        return text
    head = (limit - 3) * 2 // 3
    return text[:head] + "..." + text[len(text) - (limit - 3 - head):]


def printable(text: str) -> str:
    """`text` as one line of printable characters: whitespace runs (line breaks, line separators) become
    one space, and every other control character a C escape (`\\x1b`)."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", " ".join(text.split()))


def python_line_ends(source: str) -> str:
    """`source` with every line end (\\r\\n, a lone \\r) written \\n, as Python's tokenizer reads it: line and
    column numbers stay the same, and a count of \\n over the text gives lines whatever the file's line ends."""
    return source.replace("\r\n", "\n").replace("\r", "\n") if "\r" in source else source


PERCENT_CELL = re.compile(r"#[ \t]*%%")  # `# %%` / `#%%`: a cell of a percent-format script (VS Code, Jupytext, Spyder)


def percent_cell_ends(source: str) -> frozenset[int]:
    """The lines that end a cell of a percent-format script, run cell by cell in an interactive window, where
    a cell's last expression is its displayed output: the line before each `# %%` marker at a line's start,
    and the last line; empty for a script with no marker."""
    lines = split_lines(source)
    markers = [n for n, line in enumerate(lines, 1) if PERCENT_CELL.match(line)]
    if not markers:
        return frozenset()
    return frozenset({n - 1 for n in markers if n > 1} | {len(lines)})
