"""`.gitignore`-style patterns, matched as git matches them (its wildmatch, on the path's bytes).

Why not `pathspec` (1.1.1, GitIgnoreSpec): compared with `git ls-files -o --exclude-standard` over the
patterns in tests/config/test_gitignore.py it raises on `[z-a]`, a lone `!` or a trailing `\\`, ignores POSIX
classes (`[[:alpha:]]` matches nothing), escapes in a bracket (`[a\\-z]` becomes a range), and, asked
folder by folder as a walk must, it prunes folders `*` / `!*/` re-includes. This module agrees with git
on all of them; the test runs git to keep it so.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

NEVER = re.compile(r"(?!)")
UP = re.compile(r"(?:\.\.?/+)+")  # leading `./` and `../` segments
CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z", "lower": "a-z",
           "space": " \t\n\r", "xdigit": "0-9A-Fa-f", "blank": " \t", "cntrl": "\x00-\x1f\x7f",
           "print": " -~", "graph": "!-~", "punct": "!-/:-@[-`{-~"}


@dataclass(frozen=True)
class Pattern:
    base: str  # absolute folder the pattern is relative to
    regex: re.Pattern  # over the relative path's bytes, as latin-1 text
    negate: bool = False
    dir_only: bool = False
    anchored: bool = False  # the pattern holds a `/` other than a trailing one: it names a path below `base`

    def verdict(self, rel: str, is_dir: bool) -> Optional[bool]:
        """True: excluded, False: re-included, None: says nothing. `rel`: see `relative`."""
        if self.dir_only and not is_dir:
            return None
        return (not self.negate) if self.regex.match(rel) else None

    def verdict_at(self, path: str, rel: Optional[str], is_dir: bool) -> Optional[bool]:
        """The verdict on `path` (absolute; `rel` its path relative to `base`, None outside it). Outside
        `base`, a pattern without a `/` (a bare name or glob: `slow.py`, `*.ipynb`, `build/`) is matched
        against the path's last component, as flake8 and Ruff match a name; an anchored one says nothing."""
        if rel is None:
            if self.anchored:
                return None
            rel = os.fsencode(os.path.basename(path)).decode("latin-1")
        return self.verdict(rel, is_dir)


def relative(path: str, base: str) -> Optional[str]:
    """`path` (absolute) relative to `base`, `/`-separated, its bytes as latin-1; None outside `base`."""
    rel = os.path.relpath(path, base)
    if rel == ".." or rel.startswith(".." + os.sep):
        return None
    return os.fsencode(rel.replace(os.sep, "/")).decode("latin-1")


def compile_patterns(lines: Iterable[str], base: str) -> list[Pattern]:
    """Patterns from .gitignore-style lines (comments and blank lines skipped). Lines read from a file
    come as bytes decoded with `surrogateescape`, so each keeps its exact bytes."""
    base = os.path.abspath(base)
    out = []
    for line in lines:
        line = _trim(line.rstrip("\r\n").encode("utf-8", "surrogateescape").decode("latin-1"))
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        line = line[negate:]
        dir_only = line.endswith("/")
        line = line[:-1] if dir_only else line
        if not line:
            continue
        anchored = "/" in line
        body = _translate(line[1:] if line.startswith("/") else line)
        regex = NEVER if body is None else re.compile(("^" if anchored else "^(?:.*/)?") + body + "$", re.S)
        out.append(Pattern(base, regex, negate, dir_only, anchored))
    return out


def option_patterns(lines: Iterable[str], base: str) -> list[Pattern]:
    """Patterns of an option or a table: as in a .gitignore, but leading `./` and `../` segments move the base,
    as flake8 resolves such a path (`../shared/slow.py` from a project names a file beside it). git matches
    no path through `..`, so a .gitignore keeps `compile_patterns`."""
    out = []
    for line in lines:
        negate, body = line.startswith("!"), line[line.startswith("!"):]
        up = UP.match(body)
        if up:
            out += compile_patterns(["!" * negate + "/" + body[up.end():]], os.path.join(base, up.group()))
        else:
            out += compile_patterns([line], base)
    return out


def excluded(path: str, is_dir: bool, patterns: Sequence[Pattern]) -> bool:
    """The last pattern that matches `path` decides (git's rule); see `Pattern.verdict_at` for a path outside
    a pattern's base."""
    path, rels, decision = os.path.abspath(path), {}, False
    for pattern in patterns:
        if pattern.base not in rels:
            rels[pattern.base] = relative(path, pattern.base)
        verdict = pattern.verdict_at(path, rels[pattern.base], is_dir)
        if verdict is not None:
            decision = verdict
    return decision


def matches(path: str, patterns: Sequence[Pattern]) -> bool:
    """Whether any pattern matches `path` or a folder between the pattern's base and it (negations aside)."""
    path = os.path.abspath(path)
    for pattern in patterns:
        rel = relative(path, pattern.base)
        if rel is None:
            continue
        parts = rel.split("/")
        if any(pattern.verdict("/".join(parts[:i]), i < len(parts)) for i in range(1, len(parts) + 1)):
            return True
    return False


def _trim(line: str) -> str:
    """Trailing spaces dropped unless escaped with a backslash (git's trim_trailing_spaces)."""
    last_space, i = None, 0
    while i < len(line):
        if line[i] == " ":
            last_space = i if last_space is None else last_space
        else:
            i += line[i] == "\\"
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


def _translate(pattern: str) -> Optional[str]:
    """A regex for one wildmatch pattern (WM_PATHNAME), or None when git matches nothing with it (an
    unclosed or malformed bracket, a trailing backslash)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            if j - i > 1 and (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/"):
                out.append(".*" if j == n else "(?:.*/)?")  # `**`: any folders, `**/`: none or some
                j += j < n
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "\\":
            if i + 1 == n:
                return None
            out.append(re.escape(pattern[i + 1]))
            i += 2
        elif c == "[":
            bracket = _bracket(pattern, i + 1)
            if bracket is None:
                return None
            regex, i = bracket
            out.append(regex)
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _bracket(pattern: str, i: int) -> Optional[tuple[str, int]]:
    """The bracket expression that starts at pattern[i] (after its `[`) as a regex, and the index after
    its `]`; None when it is unclosed or names an unknown class. Follows git's wildmatch: the first
    member may be `]`, `\\` escapes, `a-z` is a range (its start always a member), `[:alpha:]` a class."""
    negated = pattern[i:i + 1] in ("!", "^")
    i += negated
    members, prev, first = [], None, True
    while i < len(pattern) and (first or pattern[i] != "]"):
        first, c = False, pattern[i]
        if c == "\\":
            if i + 1 == len(pattern):
                return None
            c = pattern[i + 1]
            members.append(re.escape(c))
            prev, i = c, i + 2
        elif c == "-" and prev is not None and i + 1 < len(pattern) and pattern[i + 1] != "]":
            end, i = pattern[i + 1], i + 2
            if end == "\\":
                if i == len(pattern):
                    return None
                end, i = pattern[i], i + 1
            if prev < end:
                members.append(f"{re.escape(prev)}-{re.escape(end)}")
            prev = None
        elif c == "[" and pattern.startswith(":", i + 1):
            close = pattern.find("]", i + 2)
            if close < 0:
                return None
            if pattern[close - 1] != ":" or close - 1 < i + 2:  # no `:]`: the `[` is a member
                members.append(re.escape("["))
                prev, i = "[", i + 1
                continue
            name = pattern[i + 2:close - 1]
            if name not in CLASSES:
                return None
            members.append(CLASSES[name].replace("\\", "\\\\").replace("]", "\\]").replace("[", "\\["))
            prev, i = None, close + 1
        else:
            members.append(re.escape(c))
            prev, i = c, i + 1
    if i >= len(pattern):
        return None
    body = "".join(members)
    return ("[^/" + body + "]" if negated else "(?!/)[" + body + "]"), i + 1
