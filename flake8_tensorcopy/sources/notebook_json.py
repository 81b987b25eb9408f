"""A notebook's JSON text edited in place: only the `source` values of changed cells are replaced, so
every other byte stays as written (escapes such as `\\/`, number spellings, key order, duplicate keys,
indentation, line ends, the final newline)."""
from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import Callable, Optional, Union

_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")
_DECODER = json.JSONDecoder()

Span = tuple[int, int]  # start and end offsets of a JSON value in the text
Source = Union[str, list[str]]  # a cell's `source`: one string, or its lines


def replace_sources(text: str, sources: dict[int, Source]) -> Optional[str]:
    """`text` with the `source` of each cell (by index in the top-level `cells` array) replaced, written
    in the style of the value it replaces: list items keep its indentation and separators, and lines
    that did not change keep their exact spelling. None when a value cannot be located."""
    spans = source_spans(text)
    if spans is None or any(i >= len(spans) or spans[i] is None for i in sources):
        return None
    out, last = [], 0
    for index in sorted(sources):
        start, end = spans[index]
        out += [text[last:start], _written(text, start, end, sources[index])]
        last = end
    return "".join(out) + text[last:]


def source_spans(text: str) -> Optional[list[Optional[Span]]]:
    """Per cell of the top-level `cells` array, the span of its `source` value (None when it has none);
    the last of duplicate keys, as json.loads keeps it. None when the text has no such array."""
    try:
        members, _ = _object(text, _WS.match(text).end())
        if "cells" not in members:
            return None
        cells, _ = _array(text, members["cells"][0], _cell)
        return [fields.get("source") if isinstance(fields, dict) else None for fields in cells]
    except (ValueError, IndexError):
        return None


def _written(text: str, start: int, end: int, value: Source) -> str:
    ascii_only = text.isascii()  # an ASCII file stays ASCII: other characters are written \uXXXX
    if isinstance(value, str) or text[start] != "[":
        return json.dumps(value, ensure_ascii=ascii_only)
    items, _ = _array(text, start, _value)
    spelled = {}  # a line's text -> how the file spells it
    for a, b in reversed(items):
        line = json.loads(text[a:b])
        if isinstance(line, str):
            spelled[line] = text[a:b]
    if items:
        opening, closing = text[start + 1:items[0][0]], text[items[-1][1]:end - 1]
        if len(items) > 1:
            between = text[items[0][1]:items[1][0]]
        else:
            between = "," + opening if opening else ", " if '", "' in text else ","
    else:  # `[]`: the file's own indentation, one level deeper than the line of the key
        indent = _INDENT.match(text, text.rfind("\n", 0, start) + 1).group()
        head = re.match(r"\{(\r?\n)([ \t]*)", text)
        opening = head.group(1) + indent + head.group(2) if head else ""
        closing = head.group(1) + indent if head else ""
        between = "," + opening if head else ", "
    if not value:
        return "[]"
    return "[" + opening + between.join(spelled.get(v) or json.dumps(v, ensure_ascii=ascii_only)
                                        for v in value) + closing + "]"


def _object(text: str, i: int) -> tuple[dict[str, Span], int]:
    """The members of the object at `i` (key -> span of its value) and where the object ends."""
    if text[i] != "{":
        raise ValueError("not an object")
    members, i = {}, _WS.match(text, i + 1).end()
    if text[i] == "}":
        return members, i + 1
    while True:
        if text[i] != '"':
            raise ValueError("not a key")
        key, i = scanstring(text, i + 1)
        i = _WS.match(text, i).end()
        if text[i] != ":":
            raise ValueError("no colon")
        start = _WS.match(text, i + 1).end()
        _, end = _DECODER.raw_decode(text, start)
        members[key] = (start, end)
        i = _WS.match(text, end).end()
        if text[i] == "}":
            return members, i + 1
        if text[i] != ",":
            raise ValueError("no comma")
        i = _WS.match(text, i + 1).end()


def _array(text: str, i: int, item: Callable[[str, int], tuple]) -> tuple[list, int]:
    """`item(text, start)` -> (what it gives, end) for each element of the array at `i`; and its end."""
    if text[i] != "[":
        raise ValueError("not an array")
    items, i = [], _WS.match(text, i + 1).end()
    if text[i] == "]":
        return items, i + 1
    while True:
        found, end = item(text, i)
        items.append(found)
        i = _WS.match(text, end).end()
        if text[i] == "]":
            return items, i + 1
        if text[i] != ",":
            raise ValueError("no comma")
        i = _WS.match(text, i + 1).end()


def _cell(text: str, i: int) -> tuple[Optional[dict[str, Span]], int]:
    """A cell's members (None when it is not an object), and its end."""
    return _object(text, i) if text[i] == "{" else (None, _DECODER.raw_decode(text, i)[1])


def _value(text: str, i: int) -> tuple[Span, int]:
    """The span of the value at `i`, and its end."""
    end = _DECODER.raw_decode(text, i)[1]
    return (i, end), end
