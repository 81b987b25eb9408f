"""Text fit for one output line, whatever the source or a file name holds: every message goes through here
(rules/context.py), so no front end can print a forged line or a raw terminal escape."""
from __future__ import annotations

import re

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
