"""The small value types shared by the engine, the rules and the adapters."""
from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable, Iterator, Optional, Union


class FixSafety(enum.Enum):
    """How safe one fix is: `fix` applies safe fixes, `fix --unsafe-fixes` unsafe ones too."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class FixAvailability(enum.Enum):
    """Whether a rule's findings come with a fix: never, for some findings, or for every one."""

    NEVER = "never"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@dataclass(frozen=True)
class FixForm:
    """One kind of fix a rule makes: `what` it writes (and for which findings), its safety, and for an
    unsafe fix the behaviour it `changes`. A form is `withheld` (the reason, with the evidence: fixes
    judged on code the rules were not tuned on, ecosystem/fix-record.toml) until it is as precise as a fix
    must be: its findings are then reported without a fix, by every front end."""

    what: str
    safety: FixSafety
    changes: str = ""
    withheld: str = ""


@dataclass(frozen=True)
class Edit:
    """Replace source text between two (line, col) positions; lines 1-based, cols in characters."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


@dataclass(frozen=True)
class Fix:
    edits: tuple[Edit, ...]
    safety: FixSafety
    imports: tuple[str, ...] = ()  # modules the replacement needs, e.g. ("copy",)
    description: str = ""
    # ast spans (line, col, end line, end col; cols in UTF-8 bytes) of the values the fix adds a tensor method
    # to or rebinds, each proven a tensor where it stands (edits.tensor_fix): what the fix harness checks again
    tensors: tuple[tuple[int, int, int, int], ...] = ()


@dataclass(frozen=True)
class Finding:
    line: int  # 1-based
    col: int  # 0-based, in characters
    code: str
    message: str
    fix: Optional[Fix] = None
    end_line: int = 0
    end_col: int = 0
    withheld: bool = False  # the rule made a fix of a form it withholds (FixForm.withheld): `fix` is None

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"


class Trigger:
    """The text a rule needs before it can fire: any of `patterns`, each searched on its own (CPython's
    regex engine jumps to a pattern's literal prefix, but tries an alternation or a `(?m)^` at every
    character). With `line_start`, a match counts only when the text before it on its line
    fullmatches that pattern, or is longer than LINE_START_LIMIT characters: checking each of many
    matches on one long line from the line's start would be quadratic, so such a match just counts.
    With `groups` (sizes that split `patterns` into consecutive groups), the text must hold a match of
    every group (`.backward(` and `+=` somewhere in the file): each pattern is still searched on its own,
    where one regex of lookaheads from the file's start would try an alternation at every character."""

    LINE_START_LIMIT = 400

    def __init__(self, *patterns: str, line_start: Optional[str] = None, groups: tuple[int, ...] = ()):
        assert not groups or sum(groups) == len(patterns)
        self._sources = patterns, line_start
        self.groups = groups

    @functools.cached_property
    def patterns(self) -> tuple[re.Pattern, ...]:  # compiled when first searched: a run the cache answers never is
        return tuple(re.compile(p) for p in self._sources[0])

    @functools.cached_property
    def line_start(self) -> Optional[re.Pattern]:
        return re.compile(self._sources[1]) if self._sources[1] is not None else None

    def finditer(self, source: str) -> Iterator[re.Match]:
        if self.groups and not self._every_group(source):
            return
        for pattern in self.patterns:
            yield from self._matches(pattern, source)

    def _every_group(self, source: str) -> bool:
        start = 0
        for size in self.groups:
            if not any(next(self._matches(p, source), None) for p in self.patterns[start:start + size]):
                return False
            start += size
        return True

    def _matches(self, pattern: re.Pattern, source: str) -> Iterator[re.Match]:
        for m in pattern.finditer(source):
            start = m.start()
            if self.line_start is None:
                yield m
                continue
            window = max(0, start - self.LINE_START_LIMIT - 1)
            newline = source.rfind("\n", window, start)
            if (newline < 0 and window > 0) or self.line_start.fullmatch(source, newline + 1, start):
                yield m

    def search(self, source: str) -> Optional[re.Match]:
        return next(self.finditer(source), None)

    @classmethod
    def of(cls, spec: Union[str, tuple, "Trigger"]) -> "Trigger":
        """A rule module's TRIGGER / HOT: one regex, a tuple of them (any), or a Trigger."""
        if isinstance(spec, Trigger):
            return spec
        return cls(*spec) if isinstance(spec, tuple) else cls(spec)


TriggerSpec = Union[str, tuple[str, ...], Trigger]


@dataclass(frozen=True)
class Rule:
    """Everything a rule says about itself, declared once as `RULE = Rule(...)` in its module; the module's
    docstring (`doc`) holds the documentation, its first line the summary. `fix` says whether findings
    come with a fix, `fix_forms` which fixes there are and how safe each is."""

    code: str
    name: str
    message: str
    nodes: tuple[type, ...]
    check: Callable[..., Iterable[Finding]]  # (node, rules.context.Context); with no `nodes`, see ten905
    trigger: TriggerSpec  # the text the rule needs before it can fire (see Trigger.of)
    claim: str
    doc: str
    fix: FixAvailability = FixAvailability.NEVER
    fix_forms: tuple[FixForm, ...] = ()
    default_on: bool = True
    hot: Optional[TriggerSpec] = None  # where findings can be; defaults to `trigger`
    whole_file: bool = False  # reads defs other than the one it reports in: never a partial tree
    docs_sections: ClassVar[tuple[str, ...]] = (
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "References",
    )

    def __post_init__(self):
        object.__setattr__(self, "trigger", Trigger.of(self.trigger))
        object.__setattr__(self, "hot", Trigger.of(self.hot) if self.hot is not None else self.trigger)
        if (self.fix is FixAvailability.NEVER) != (not self.fix_forms):
            raise ValueError(f"{self.code}: fix={self.fix.value} with {len(self.fix_forms)} fix forms")
        if any(f.safety is FixSafety.UNSAFE and not f.changes for f in self.fix_forms):
            raise ValueError(f"{self.code}: an unsafe fix form must say what it changes")

    @property
    def summary(self) -> str:
        doc = self.doc.strip()
        return doc.splitlines()[0] if doc else ""

    @property
    def offered_forms(self) -> tuple[FixForm, ...]:
        """The fix forms `fix` applies: those not withheld."""
        return tuple(f for f in self.fix_forms if not f.withheld)

    @property
    def fix_offered(self) -> FixAvailability:
        """Whether findings come with a fix a front end applies: `fix`, unless every form is withheld."""
        return self.fix if self.offered_forms else FixAvailability.NEVER

    @property
    def fix_safeties(self) -> tuple[FixSafety, ...]:
        """The safeties of the fixes the rule offers, safe first, each once."""
        return tuple(s for s in FixSafety if any(f.safety is s for f in self.offered_forms))

    def withholds(self, fix: "Fix") -> bool:
        """`fix` is of a withheld form: the rule's forms of its safety are all withheld (a rule's forms
        differ in safety where it has several)."""
        forms = [f for f in self.fix_forms if f.safety is fix.safety]
        return bool(forms) and all(f.withheld for f in forms)
