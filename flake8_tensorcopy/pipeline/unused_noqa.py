"""TEN905 after lint: each `# noqa: CODES` comment flake8 reads, with the run's findings on its logical line,
handed to the rule (rules/ten905.py decides which codes are unused and what its finding says).

A comment counts where the noqa reader (noqa.py) finds it for that logical line and where it is a real
comment of the program (not text in a string), at the same text in the lines the reader reads (a
notebook's cells): a line that IPython syntax hides from the program is not reported."""
from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from typing import Optional, Sequence

from ..rules.model import Edit, Finding, Rule
from ..text import python_line_ends, split_lines
from .noqa import NOQA_INLINE, Noqa, codes_of, without_codes


@dataclass(frozen=True)
class Directive:
    line: int
    col: int
    end_col: int
    codes: tuple[str, ...]


class Reading:
    """The rule's view of one comment's logical line (rules/ten905.py's Reading)."""

    def __init__(self, enabled: Sequence[str], found: Sequence[str], line: int, program_line: str,
                 comment: tuple[int, str]):
        self.enabled_codes, self.found = enabled, found
        self.line, self.program_line, self.comment = line, program_line, comment

    def enabled(self, code: str) -> bool:
        return any(c.startswith(code) for c in self.enabled_codes)

    def used(self, code: str) -> bool:
        return any(c.startswith(code) for c in self.found)

    def removal(self, codes: tuple[str, ...]) -> Optional[Edit]:
        col, text = self.comment
        new = without_codes(text, codes)
        if new is None:
            return None
        start = col if new else len(self.program_line[:col].rstrip(" \t\f"))
        return Edit((self.line, start), (self.line, col + len(text)), new)


def unused_noqa(rule: Rule, rules: Sequence[Rule], comments: Noqa, findings: Sequence[Finding],
                parsed: bool = True) -> list[Finding]:
    """`rule`'s findings (TEN905, the rule after lint) for the document `comments` reads, given the engine's
    `findings` before any noqa (of `rules`, the run's rules). Nothing for a file-level `# flake8: noqa`, nor
    for a program that does not parse (`parsed`: the engine parsed it; flake8 runs no plugin on such a file)."""
    if comments.whole_file or not rule.trigger.search("\n".join(comments.lines)):
        return []
    if not parsed and not _parses(comments.program):
        return []
    tokens = comments.comments
    if not tokens:
        return []
    enabled = [r.code for r in rules]
    program_lines = split_lines(comments.program)
    out: list[Finding] = []
    for line, (col, text) in sorted(tokens.items()):
        directive = _directive(comments, line, col, text)
        if directive is None:
            continue
        span = comments.span(line)
        found = [f.code for f in findings if f.line in span]
        program_line = program_lines[line - 1] if line <= len(program_lines) else ""
        out.extend(rule.check(directive, Reading(enabled, found, line, program_line, (col, text))))
    return out


def _directive(comments: Noqa, line: int, col: int, text: str) -> Optional[Directive]:
    """The comment token at (line, col) as the noqa flake8 reads for its logical line, or None when flake8
    reads another text there (an earlier line of the span, a string) or no code list."""
    match = NOQA_INLINE.search(text)
    codes = codes_of(match) if match else None
    if not codes:
        return None
    span = comments.span(line)
    if any(NOQA_INLINE.search(comments.lines[n - 1]) for n in span if n < line and n <= len(comments.lines)):
        return None
    if not 0 < line <= len(comments.lines) or not comments.lines[line - 1].endswith(text):
        return None  # the reader's line (a notebook cell's own text) does not end with this comment
    read = comments.directive(line)
    if read is None or read.group(0) != match.group(0) or codes_of(read) != codes:
        return None
    end = col + match.start("codes") + len(match.group("codes").rstrip(", \t"))
    return Directive(line, col + match.start(), end, tuple(codes))


def _parses(program: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(python_line_ends(program))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
