"""The small value types shared by the engine, the rules and the adapters."""
from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, ClassVar, Iterable, Optional

if TYPE_CHECKING:  # pragma: no cover
    from .context import Context


class FixSafety(enum.Enum):
    NONE = "none"
    SAFE = "safe"
    UNSAFE = "unsafe"


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


@dataclass(frozen=True)
class Finding:
    line: int  # 1-based
    col: int  # 0-based, in characters
    code: str
    message: str
    fix: Optional[Fix] = None
    end_line: int = 0
    end_col: int = 0

    @property
    def text(self) -> str:
        return f"{self.code} {self.message}"


@dataclass(frozen=True)
class RuleSpec:
    """Everything a rule says about itself; the docstring holds the documentation."""

    code: str
    name: str
    message: str
    nodes: tuple[type, ...]
    check: Callable[[ast.AST, "Context"], Iterable[Finding]]
    trigger: re.Pattern
    claim: str
    doc: str
    fix_safety: FixSafety = FixSafety.NONE
    default_on: bool = True
    summary: str = ""
    hot: Optional[re.Pattern] = None  # where findings can be; defaults to `trigger`
    docs_sections: ClassVar[tuple[str, ...]] = (
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "References",
    )
