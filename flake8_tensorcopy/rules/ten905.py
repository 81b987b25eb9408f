"""A `# noqa` comment names TEN codes that suppress nothing on its line.

## What it does
Flags the TEN codes of a `# noqa: ...` comment that no finding of the run needs there (opt-in: enable
with `--extend-select TEN905`), as Ruff's RUF100 does for its own codes (RUF100 skips TEN codes). A code
counts only when the run enables a rule it names: `# noqa: TEN2` is unused when no TEN2xx finding
lands on that logical line, and a noqa naming an opt-in code that is off is not reported (the run
cannot know). A bare `# noqa`, a file-level `# flake8: noqa` and codes of other tools are left alone.

## Why is this bad?
A suppression that suppresses nothing hides the next real finding on that line: when the code changes
into a real `deepcopy` of a graph-attached tensor, nobody hears of it. `check --add-noqa` adds comments
for the findings of the day; this rule shows which of them the fixes since made unneeded.

## Example
```python
snapshot = weights.detach().clone()  # noqa: TEN201
```

## Use instead
```python
snapshot = weights.detach().clone()
```

## Fix safety
Safe: the fix removes the unused TEN codes from the list, and the whole comment (with the spaces before
it) only when nothing else is left in it; other codes and other comment text stay. A comment does not
change what Python runs. There is no fix where the edited comment would read as another noqa (a second
`# noqa` later in the same comment), or on a line a notebook's IPython syntax hides from the program.

## References
- Ruff, RUF100 unused-noqa: https://docs.astral.sh/ruff/rules/unused-noqa/
- flake8, "Selecting and Ignoring Violations": `# noqa: CODES` matches each code as a prefix
"""
from __future__ import annotations

from typing import Iterable, Optional, Protocol

from .model import Edit, Finding, Fix, FixAvailability, FixForm, FixSafety, Rule

CODE = "TEN905"


class Directive(Protocol):
    """One `# noqa: CODES` comment flake8 reads (pipeline/unused_noqa.py): positions in the program."""

    line: int
    col: int  # 0-based, where `# noqa` starts
    end_col: int  # where its codes end
    codes: tuple[str, ...]


class Reading(Protocol):
    """What the run knows of the comment's logical line."""

    def enabled(self, code: str) -> bool:
        """Whether the run enables a rule whose code starts with `code`."""

    def used(self, code: str) -> bool:
        """Whether a finding of the run on the logical line starts with `code`."""

    def removal(self, codes: tuple[str, ...]) -> Optional[Edit]:
        """The edit that removes `codes` from the comment, or None when it cannot be done safely."""


def check(directive: Directive, reading: Reading) -> Iterable[Finding]:
    """Called by the pipeline after lint, once per noqa comment (no AST node: `nodes` is empty). A code
    that matches TEN905 itself is never unused here: that comment suppresses this rule's own finding."""
    unused = tuple(c for c in dict.fromkeys(directive.codes) if c.startswith("TEN") and not CODE.startswith(c)
                   and reading.enabled(c) and not reading.used(c))
    if not unused:
        return
    edit = reading.removal(unused)
    fix = Fix((edit,), FixSafety.SAFE, description="remove the unused codes") if edit else None
    named = ", ".join(unused)
    message = RULE.message.format(codes=named, verb="suppresses" if len(unused) == 1 else "suppress")
    yield Finding(directive.line, directive.col, CODE, message, fix, directive.line, directive.end_col)


RULE = Rule(
    code=CODE,
    name="unused-noqa",
    message="unused noqa: {codes} {verb} nothing on this line",
    nodes=(),  # checked by the pipeline after lint (it needs the run's findings), never by the engine
    check=check,
    trigger=r"# [nN][oO][qQ][aA]:[^\n]*TEN",
    claim=("A comment does not change what Python runs: the parser drops it, so a function reads as the same "
           "tree with or without its noqa comment and removing an unused one changes no result."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(FixForm("the unused TEN codes are removed from the `# noqa` list, the comment when nothing is left",
                       FixSafety.SAFE),),
    default_on=False,
)
