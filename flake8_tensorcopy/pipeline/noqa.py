"""`# noqa` comments, read exactly as flake8 reads them, for every front end.

flake8's own patterns when flake8 is importable (an identical copy otherwise): `# noqa` (bare, one
space, any case), `# noqa:CODES` (codes `[A-Z]+[0-9]+`, matched by prefix and case-sensitively: `ten101`
names nothing and suppresses nothing), and a file-level `# flake8: noqa` on a line of its own (with
codes after it too: flake8 skips the whole file either way). A comment on any physical line of a
logical line that spans lines without a bracket's line break (a multi-line string, a backslash) covers
all of them, as flake8's `_noqa_line_mapping` maps them."""
from __future__ import annotations

import io
import re
import tokenize
from functools import cached_property
from typing import Iterable, Optional, Sequence

from ..text import python_line_ends, split_keeping_ends

try:
    from flake8.defaults import NOQA_FILE, NOQA_INLINE_REGEXP as NOQA_INLINE
except ImportError:  # pragma: no cover - flake8 is a dependency; the copy is compared in the tests
    NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
    NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.I)

CODE_SEPARATOR = re.compile(r"[,\s]")  # flake8.utils.COMMA_SEPARATED_LIST_RE


def file_ignored(lines: Sequence[str]) -> bool:
    """`# flake8: noqa` on a line of its own: flake8 reports nothing for the file."""
    return any(NOQA_FILE.match(line) for line in lines)


def codes_of(match: re.Match) -> Optional[list[str]]:
    """The codes a noqa comment names, as flake8 splits them; None for a bare `# noqa`."""
    text = match.group("codes")
    return None if text is None else [c.strip() for c in CODE_SEPARATOR.split(text) if c.strip()]


def suppresses(text: str, code: str) -> bool:
    """Whether the noqa text of a line (see `logical_texts`) suppresses `code`."""
    match = NOQA_INLINE.search(text)
    if match is None:
        return False
    codes = codes_of(match)
    return codes is None or code.startswith(tuple(codes))


def logical_ranges(program: str) -> Optional[list[range]]:
    """The physical-line ranges flake8 reads one noqa text from (its `_noqa_line_mapping`), or None when
    the program does not tokenize (flake8 then reads each line alone)."""
    scanned = scan(program)
    return scanned[0] if scanned else None


def scan(program: str) -> Optional[tuple[list[range], dict[int, tuple[int, str]]]]:
    """(`logical_ranges`, each comment token as {line: (column, text)}), or None when the program does not
    tokenize."""
    ranges, comments, low, high = [], {}, None, -1
    try:  # line ends as Python reads them (a lone \r too): lines numbered as split_lines numbers them
        for tok in tokenize.generate_tokens(io.StringIO(python_line_ends(program)).readline):
            if tok.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = (tok.start[1], tok.string)
            low = tok.start[0] if low is None else min(low, tok.start[0])
            high = max(high, tok.end[0])
            if tok.type in (tokenize.NL, tokenize.NEWLINE):
                ranges.append(range(low, high + 1))
                low, high = None, -1
    except (tokenize.TokenError, SyntaxError):
        return None
    return ranges, comments


class Noqa:
    """The suppressions of one document: `program` is what is tokenized, `lines` the text each line's
    comment is read from (a notebook's cells; the program's own lines otherwise)."""

    def __init__(self, program: str, lines: Sequence[str]):
        self.program = program
        self.lines = lines
        self.whole_file = file_ignored(lines)
        self.any_inline = any("noqa" in line.lower() for line in lines)  # else no line needs tokenizing

    @cached_property
    def scanned(self) -> Optional[tuple[list[range], dict[int, tuple[int, str]]]]:
        return scan(self.program)

    @cached_property
    def spans(self) -> dict[int, range]:
        """Each physical line's logical-line range (lines flake8 could not map are left out)."""
        return {n: span for span in (self.scanned or ((),))[0] for n in span}

    @property
    def comments(self) -> Optional[dict[int, tuple[int, str]]]:
        """The program's comment tokens, {line: (column, text)}; None when it does not tokenize."""
        return self.scanned[1] if self.scanned else None

    def directive(self, line: int) -> Optional[re.Match]:
        """The noqa match flake8 reads for a finding on `line` (in `text_for(line)`), or None."""
        return NOQA_INLINE.search(self.text_for(line)) if self.any_inline else None

    def span(self, line: int) -> range:
        """The physical lines whose comments cover a finding on `line`."""
        return self.spans.get(line, range(line, line + 1))

    def text_for(self, line: int) -> str:
        """The text flake8 searches for a noqa comment for a finding on `line`."""
        return "\n".join(self.lines[n - 1] for n in self.span(line) if 0 < n <= len(self.lines))

    def suppressed(self, line: int, code: str) -> bool:
        return self.whole_file or (self.any_inline and suppresses(self.text_for(line), code))


def with_codes(line: str, codes: Sequence[str]) -> str:
    """`line` (without its end) with `codes` added to its noqa comment, or a new `# noqa: CODES` after it."""
    match = NOQA_INLINE.search(line)
    if match is None:
        return line.rstrip(" \t") + "  # noqa: " + ",".join(codes)
    named = codes_of(match)
    if named is None:
        return line  # a bare noqa already suppresses every code
    more = [c for c in codes if not c.startswith(tuple(named))]
    if not more:
        return line
    end = match.start("codes") + len(match.group("codes").rstrip(", \t"))
    return f"{line[:end]},{','.join(more)}{line[end:]}"


def add_comments(program: str, findings: Iterable[tuple[int, str]]) -> tuple[str, int]:
    """`program` with a noqa comment for each (line, code), on the line of the finding's logical line that
    flake8 reads it from: the last (a comment there is after any multi-line string), or one that holds a
    noqa already, extended. Returns the text and how many lines changed."""
    lines = split_keeping_ends(program)
    comments = Noqa(program, [line.rstrip("\r\n") for line in lines])
    wanted: dict[int, list[str]] = {}
    for line, code in findings:
        span = comments.span(line)
        target = next((n for n in span if NOQA_INLINE.search(comments.lines[n - 1])), span[-1])
        if code not in wanted.setdefault(target, []):
            wanted[target].append(code)
    changed = 0
    for target, codes in wanted.items():
        if not 0 < target <= len(lines):
            continue
        body = comments.lines[target - 1]
        new = with_codes(body, sorted(codes))
        if new != body:
            lines[target - 1] = new + lines[target - 1][len(body):]
            changed += 1
    return "".join(lines), changed


def without_codes(comment: str, codes: Sequence[str]) -> Optional[str]:
    """The comment token `comment` with `codes` removed from its noqa list: "" when nothing is left (the
    comment goes), other text kept. None when the result would read as another noqa (a second `# noqa`
    after it, a `# flake8: noqa`) or when `comment` names none of `codes`."""
    match = NOQA_INLINE.search(comment)
    named = codes_of(match) if match else None
    if not named or not set(codes) & set(named):
        return None
    start = match.start("codes")
    core = re.sub(r"[,\s]+$", "", match.group("codes"))
    pieces = re.findall(r"([,\s]*)([^,\s]+)", core)  # (separator before, code)
    kept = [(sep, code) for sep, code in pieces if code not in codes]
    after = comment[start + len(core):]
    if kept:
        new = comment[:start] + "".join((sep if i else "") + code for i, (sep, code) in enumerate(kept)) + after
    else:
        before, rest = comment[:match.start()], after.lstrip(", \t")
        if not before.strip():
            new = "" if not rest.strip() else rest if rest.startswith("#") else "# " + rest
        else:
            new = before.rstrip() + ("  " + rest if rest.strip() else "")
    again = NOQA_INLINE.search(new)
    reads = codes_of(again) if again else None
    if NOQA_FILE.match(new) or (reads != [c for _, c in kept] if kept else again is not None):
        return None
    return new
