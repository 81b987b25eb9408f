"""`lint`: one document's findings as every front end reports them. The engine analyses the program, `#
noqa` drops what the user suppressed, and a notebook's findings are placed in their cells.

check, fix, the flake8 plugin, the codemod, the scripts and the language server all call `lint`; a
front end only decides how to read its input (sources/) and how to show the result."""
from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Optional, Protocol, Sequence

from ..engine.core import analyse
from ..rules.model import Finding, Rule
from ..text import split_lines


class Cells(Protocol):
    """How a notebook's program maps back to its cells (sources/notebook.py's Notebook)."""

    original: list[str]  # per program line: the cell's own text
    errors: list[tuple[int, str]]  # (cell number, message) for each cell that does not parse

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in the cell) of a program line."""

    def column(self, line: int, col: int) -> int:
        """A program line's column as a column of the cell's own line."""

    def source_line(self, line: int) -> str:
        """The cell's own text of a program line."""


@dataclass(frozen=True)
class Document:
    """What the engine reads of one file: its program (a notebook's code cells joined, `cells` mapping
    them back) and the name it is reported under."""

    path: str
    program: str
    cells: Optional[Cells] = None
    cell_ends: frozenset = frozenset()  # the program's lines that end a notebook cell (its displayed output)
    derived: bool = False  # the program is the file's text with IPython lines neutralised: nothing is written back


@dataclass(frozen=True)
class Item:
    """One reported finding. `line`/`column` are 1-based, in the cell for a notebook (`cell` is set)."""

    path: str
    line: int
    column: int
    code: str
    message: str
    end_line: int
    end_column: int
    cell: Optional[int] = None
    source_line: str = ""
    fix: Optional[str] = None  # "safe" / "unsafe" when the finding carries a fix
    note: str = ""  # `fix`: what became of its fix ("would fix, safe", "no fix", ...)

    @property
    def sort_key(self):
        return self.path, self.cell or 0, self.line, self.column, self.code


@dataclass
class Linted:
    findings: list[Finding] = field(default_factory=list)  # positions in the program; noqa applied
    items: list[Item] = field(default_factory=list)  # the same findings as reported
    errors: list[str] = field(default_factory=list)  # rules that failed (bugs of ours), one line each
    parsed: bool = False  # False when the pre-filter ruled the file out


def lint(doc: Document, rules: Sequence[Rule], tensor_functions: Iterable[str] = (),
         tree: Optional[ast.Module] = None, noqa: bool = True) -> Linted:
    """The findings of `doc` that `rules` report. Raises engine.core.AnalysisError when the program cannot
    be analysed. `noqa=False` keeps suppressed findings (flake8 applies `# noqa` itself); TEN905's findings
    (unused noqa codes) are made either way, from the findings before any noqa."""
    result = analyse(doc.program, doc.path, rules, tree=tree, tensor_functions=tensor_functions,
                     cell_ends=doc.cell_ends)
    after = [r for r in rules if not r.nodes]  # TEN905: reads the findings, checked here, not by the engine
    found = result.findings
    lines = lines_of(doc) if found or after else []
    comments = None
    if found or after:
        from .noqa import Noqa  # flake8's noqa pattern: imported only for a file with findings or TEN905 on

        comments = Noqa(doc.program, lines)
    if after and not result.errors:  # a rule that failed may have missed a finding a comment is there for
        from .unused_noqa import unused_noqa

        found = sorted(found + [f for r in after for f in unused_noqa(r, rules, comments, found, result.parsed)],
                       key=lambda f: (f.line, f.col, f.code))
    findings = [f for f in found if not (noqa and comments.suppressed(f.line, f.code))]
    if doc.derived:  # a fix is made for the neutralised program, not for the file: none is offered
        findings = [dataclasses.replace(f, fix=None) for f in findings]
    return Linted(findings, [to_item(f, doc, lines) for f in findings], result.errors, result.parsed)


def lines_of(doc: Document) -> list[str]:
    """The lines `# noqa` and source lines are read from: the cells' own text for a notebook."""
    return doc.cells.original if doc.cells is not None else split_lines(doc.program)


def to_item(f: Finding, doc: Document, lines: Sequence[str], note: str = "") -> Item:
    """A finding as reported: in its cell for a notebook (`lines`: from `lines_of(doc)`)."""
    cells = doc.cells
    if cells is None:
        text = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        return Item(doc.path, f.line, f.col + 1, f.code, f.message, f.end_line or f.line, f.end_col + 1, None,
                    text, f.fix.safety.value if f.fix else None, note)
    cell, line = cells.locate(f.line)
    end_line = cells.locate(f.end_line)[1] if f.end_line else line
    return Item(doc.path, line, cells.column(f.line, f.col) + 1, f.code, f.message, end_line,
                cells.column(f.end_line or f.line, f.end_col) + 1, cell, cells.source_line(f.line),
                f.fix.safety.value if f.fix else None, note)
