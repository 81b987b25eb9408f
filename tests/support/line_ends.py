"""A text with the line ends of a style: LF, CRLF, lone CR, or a mix."""
from __future__ import annotations

STYLES = ("lf", "crlf", "cr", "mixed")


def with_line_ends(text: str, style: str) -> str:
    """`text` (LF) with the line ends of `style`; `mixed` cycles LF, CRLF and CR (a CR before an empty line
    would join the next LF into one CRLF end: CRLF there)."""
    lines = text.split("\n")
    ends = {"lf": ["\n"], "crlf": ["\r\n"], "cr": ["\r"], "mixed": ["\n", "\r\n", "\r"]}[style]
    out = []
    for i, line in enumerate(lines[:-1]):
        end = ends[i % len(ends)]
        out.append(line + ("\r\n" if end == "\r" and not lines[i + 1] else end))
    return "".join(out) + lines[-1]
