"""F-strings of a newer Python than the one running (PEP 701, Python 3.12: the same quotes nested in a
replacement field, `f"{x["key"]}"`; backslashes and comments in fields), which this Python's parser rejects:
the file is parsed with each such literal's text blanked, as a plain string of the same length and lines.
Line and column numbers stay; what the literal computes is not analysed (a log message, mostly).

`masked(source)` returns the text with those literals blanked, or None when there are none, or when a
literal cannot be blanked in place (a single-quoted f-string whose fields span lines).
"""
from __future__ import annotations

import ast
import re
import warnings
from typing import Optional

START = re.compile(r"([rRbBuUfF]{0,2})('''|\"\"\"|'|\")")


def masked(source: str) -> Optional[str]:
    out, i, changed = [], 0, False
    while i < len(source):
        char = source[i]
        if char == "#":
            end = source.find("\n", i)
            end = len(source) if end < 0 else end
            out.append(source[i:end])
            i = end
            continue
        m = START.match(source, i) if char in "rRbBuUfF'\"" and not _in_word(source, i) else None
        if m is None:
            out.append(char)
            i += 1
            continue
        prefix, quote = m.groups()
        end = _string_end(source, m.end(), quote, "f" in prefix.lower())
        if end is None:
            return None
        literal = source[i:end]
        if "f" in prefix.lower() and not _parses(literal):
            body = literal[m.end() - i:len(literal) - len(quote)]
            if len(quote) == 1 and "\n" in body:
                return None
            literal = literal[:m.end() - i] + re.sub(r"[^\n]", " ", body) + quote
            changed = True
        out.append(literal)
        i = end
    return "".join(out) if changed else None


def _in_word(source: str, i: int) -> bool:
    return i > 0 and (source[i - 1].isalnum() or source[i - 1] == "_")


def _string_end(s: str, i: int, quote: str, fstring: bool) -> Optional[int]:
    """The position after the quote that closes the literal whose text starts at `i`; None if it never does."""
    while i < len(s):
        if s.startswith(quote, i):
            return i + len(quote)
        char = s[i]
        if char == "\\":
            i += 2
        elif fstring and char in "{}" and s.startswith(char * 2, i):
            i += 2  # `{{` and `}}` are literal braces
        elif fstring and char == "{":
            found = _field_end(s, i + 1)
            if found is None:
                return None
            i = found
        elif char == "\n" and len(quote) == 1:
            return None
        else:
            i += 1
    return None


def _field_end(s: str, i: int) -> Optional[int]:
    """The position after the `}` that closes a replacement field whose expression starts at `i`: brackets
    balance, strings (f-strings among them) are skipped, and after a `:` at depth 0 the format spec is text
    with nested fields only."""
    depth, spec = 0, False
    while i < len(s):
        char = s[i]
        m = START.match(s, i) if not spec and char in "rRbBuUfF'\"" and not _in_word(s, i) else None
        if m is not None:
            end = _string_end(s, m.end(), m.group(2), "f" in m.group(1).lower())
            if end is None:
                return None
            i = end
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return i + 1 if char == "}" else None
            depth -= 1
        elif char == ":" and depth == 0 and not spec and not s.startswith(":=", i):
            spec = True
        i += 1
    return None


def _parses(literal: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(literal, mode="eval")
        return True
    except (SyntaxError, ValueError):
        return False
