"""Counting a regex's work: a plain backtracking matcher over the parse `re` itself makes, which counts
every step it takes (CPython's engine backtracks the same way, minus some shortcuts, and exposes no
counter). `Counting(pattern)` stands in for a compiled pattern (finditer, search, fullmatch), so code
such as `Trigger` runs unchanged on it. Supports what the rules' triggers use: literals, classes,
categories, `.`, groups, alternation, greedy and lazy repeats, anchors, `\\b`, lookahead."""
from __future__ import annotations

import re
import sys
from re import _constants as C
from re import _parser

WORD = re.compile(r"\w")


class Match:
    def __init__(self, start: int, end: int):
        self._span = (start, end)

    def start(self) -> int:
        return self._span[0]

    def end(self) -> int:
        return self._span[1]


class Counting:
    def __init__(self, pattern: re.Pattern):
        parsed = _parser.parse(pattern.pattern, pattern.flags)
        self.items = list(parsed.data)
        self.dotall = bool(parsed.state.flags & re.DOTALL)
        self.multiline = bool(parsed.state.flags & re.MULTILINE)
        self.steps = 0

    # ---- the compiled-pattern interface --------------------------------------------------------
    def search(self, text: str, pos: int = 0):
        for start in range(pos, len(text) + 1):
            end = self._at(text, start, None)
            if end is not None:
                return Match(start, end)
        return None

    def finditer(self, text: str):
        pos = 0
        while pos <= len(text):
            m = self.search(text, pos)
            if m is None:
                return
            yield m
            pos = m.end() if m.end() > m.start() else m.end() + 1

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize):
        text = text[:endpos]
        end = self._at(text, pos, len(text))
        return None if end is None else Match(pos, end)

    # ---- matching ------------------------------------------------------------------------------
    def _at(self, text, start, want):
        found = []

        def done(p):
            if want is None or p == want:
                found.append(p)
                return True
            return False

        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 50_000))
        try:
            self._seq(text, self.items, 0, start, done)
        finally:
            sys.setrecursionlimit(limit)
        return found[0] if found else None

    def _seq(self, text, items, i, pos, k):
        self.steps += 1
        if i == len(items):
            return k(pos)
        op, av = items[i]

        def rest(p):
            return self._seq(text, items, i + 1, p, k)

        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return pos < len(text) and self._char(op, av, text[pos]) and rest(pos + 1)
        if op is C.SUBPATTERN:
            return self._seq(text, list(av[-1].data), 0, pos, rest)
        if op is C.BRANCH:
            for alternative in av[1]:
                if self._seq(text, list(alternative.data), 0, pos, rest):
                    return True
            return False
        if op is C.AT:
            return self._anchor(av, text, pos) and rest(pos)
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, sub = av
            if direction == 1:
                holds = self._seq(text, list(sub.data), 0, pos, lambda p: True)
            else:  # a lookbehind has one width: the text it checks ends here
                start = pos - sub.getwidth()[0]
                holds = start >= 0 and self._seq(text, list(sub.data), 0, start, lambda p: p == pos)
            return holds == (op is C.ASSERT) and rest(pos)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self._repeat(text, av, pos, rest, greedy=op is C.MAX_REPEAT)
        raise NotImplementedError(f"regex_steps: {op}")

    def _repeat(self, text, av, pos, k, greedy):
        low, high, sub = av
        body = list(sub.data)
        if len(body) == 1 and body[0][0] in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):  # one character
            run = 0
            while run < high and pos + run < len(text) and self._char(*body[0], text[pos + run]):
                self.steps += 1
                run += 1
            counts = range(run, low - 1, -1) if greedy else range(low, run + 1)
            for n in counts:
                self.steps += 1
                if k(pos + n):
                    return True
            return False

        def more(count, p):
            if not greedy and count >= low and k(p):
                return True
            if count < high and self._seq(text, body, 0, p, lambda q: q != p and more(count + 1, q)):
                return True
            return greedy and count >= low and k(p)

        return more(0, pos)

    def _char(self, op, av, ch) -> bool:
        self.steps += 1
        if op is C.LITERAL:
            return ord(ch) == av
        if op is C.NOT_LITERAL:
            return ord(ch) != av
        if op is C.ANY:
            return self.dotall or ch != "\n"
        return self._in_class(av, ch)

    @staticmethod
    def _in_class(members, ch) -> bool:
        negate, hit = False, False
        for op, av in members:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                hit = hit or ord(ch) == av
            elif op is C.RANGE:
                hit = hit or av[0] <= ord(ch) <= av[1]
            elif op is C.CATEGORY:
                hit = hit or _category(av, ch)
            else:
                raise NotImplementedError(f"regex_steps: class member {op}")
        return hit != negate

    def _anchor(self, where, text, pos) -> bool:
        if where is C.AT_BEGINNING_STRING or (where is C.AT_BEGINNING and not self.multiline):
            return pos == 0
        if where is C.AT_BEGINNING:
            return pos == 0 or text[pos - 1] == "\n"
        if where is C.AT_END_STRING:
            return pos == len(text)
        if where is C.AT_END:
            at_end = pos == len(text) or (pos == len(text) - 1 and text[pos] == "\n")
            return at_end or (self.multiline and text[pos] == "\n")
        if where in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
            before = pos > 0 and bool(WORD.match(text[pos - 1]))
            after = pos < len(text) and bool(WORD.match(text[pos]))
            return (before != after) == (where is C.AT_BOUNDARY)
        raise NotImplementedError(f"regex_steps: anchor {where}")


def _category(category, ch) -> bool:
    tests = {C.CATEGORY_WORD: lambda c: bool(WORD.match(c)), C.CATEGORY_SPACE: str.isspace,
             C.CATEGORY_DIGIT: str.isdecimal}
    for positive, test in tests.items():
        if category is positive:
            return test(ch)
    negated = {C.CATEGORY_NOT_WORD: C.CATEGORY_WORD, C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
               C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT}
    if category in negated:
        return not _category(negated[category], ch)
    raise NotImplementedError(f"regex_steps: category {category}")
