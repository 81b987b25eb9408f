"""Jupyter notebooks as one Python program, and back.

`read_notebook(text)` joins the code cells, in order, into one program (`Notebook.program`) so that the
engine sees names bound in one cell and used in another. Each cell is read as IPython reads it
(ipython_syntax.py: its common indent removed, magics, shell escapes and help lines turned into `pass`,
cells of another language blank), line for line, so line numbers never shift; a cell that still does
not parse is blanked and listed in `Notebook.errors`, so the other cells are still checked and fixed.
A comment line separates two cells, so fixes map back to their own cell: BOUNDARY, or, if a cell holds
that line, the first of `# --- tensorcopy: next cell 1 ---`, `... 2 ---`, ... that none holds.
`Notebook.cell_ends` lists the lines that end a cell, for the analysis (FileFacts.cell_ends): a
cell's last expression is its displayed output. `Notebook.locate(line)` maps a program line to (cell
number, line in cell) and `Notebook.column` a column; cell numbers are 1-based positions among all the
notebook's cells, markdown included, so `cell 3` is the third cell on screen.
`Notebook.with_program(fixed)` writes a changed program back into the code cells, keeping the IPython
lines and each cell's indent, and every byte of the file outside the changed cells' `source` values
(notebook_json.py); within a changed cell, the kept lines keep their own line ends (`\\r\\n` included),
new lines get the cell's most common one.
"""
from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from ..engine.core import AnalysisError, could_fire, parse
from ..engine.newer_fstrings import masked
from .ipython_syntax import automagic, read_cell
from .notebook_json import replace_sources
from ..text import split_lines
from ..rules import RULES

BOUNDARY = "# --- tensorcopy: next cell ---"  # a comment line between two cells of the program
_NUMBERED = "# --- tensorcopy: next cell {} ---"  # the boundary when a cell holds BOUNDARY itself
_LINE_END = re.compile(r"\r\n|\r|\n")


class NotebookError(ValueError):
    """Not a readable notebook; the message is one line."""


@dataclass
class Notebook:
    data: dict
    text: str  # the file as read
    program: str  # code cells joined, read as IPython reads them
    owners: list[int]  # per program line: the index (0-based) of its cell in data["cells"]
    cell_lines: list[int]  # per program line: its 1-based line in the cell
    original: list[str]  # per program line: the cell's own text (IPython lines as written)
    ends: list[str]  # per program line: its line end in the cell ("" for a last line without one)
    shifts: list[int]  # per program line: the columns IPython's dedent removed from it
    indents: dict[int, str]  # per code cell index: the indent IPython removes from the cell
    frozen: set[int]  # code cell indexes never edited: cells of another language, unparsable cells
    errors: list[tuple[int, str]]  # (cell number, one-line message) for each cell that does not parse
    boundary: str = BOUNDARY  # the program line between two cells: no cell's line is this text

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in cell), both 1-based, for a 1-based program line."""
        if not self.owners:
            return 1, line
        i = min(max(line, 1), len(self.owners)) - 1
        return self.owners[i] + 1, self.cell_lines[i]

    def column(self, line: int, col: int) -> int:
        """A column of a 1-based program line as a column of the cell's own line (same base as `col`)."""
        return col + self.shifts[line - 1] if 0 < line <= len(self.shifts) else col

    @property
    def cell_ends(self) -> frozenset[int]:
        return cell_ends(self.program, self.boundary)

    def source_line(self, line: int) -> str:
        return self.original[line - 1] if 0 < line <= len(self.original) else ""

    def with_program(self, program: str) -> str:
        """The notebook's text with its code cells rewritten from `program` (this notebook's program after
        edits). The program keeps a boundary line between cells, so each cell gets back exactly its own
        lines, whatever the edits did to line counts; within a cell, lines the edits kept restore their
        original text (magics included), and new lines get the cell's indent back. Lines added to a
        frozen cell (an import inserted at the top) go to the first other code cell. Returns the original
        text when no cell changed, or when the boundaries did not survive (then nothing is written)."""
        cells = self._code_cells()
        program_lines = split_lines(self.program)
        old, new = self._segments(program_lines), self._segments(split_lines(program))
        if not cells or len(old) != len(cells) or len(new) != len(cells):
            return self.text
        is_boundary = [line == self.boundary for line in program_lines]
        originals = self._segments([text + end for text, end in zip(self.original, self.ends)], is_boundary)
        usual = {index: _usual_end(texts) for index, texts in zip(cells, originals)}
        sources, moved = {}, []
        for index, before, after, texts in zip(cells, old, new, originals):
            lines, added = self._rewritten(index, before, after, texts, usual[index])
            if lines != texts and index in self.frozen:
                moved += added
                lines = texts
            sources[index] = lines
        if moved:
            python = [i for i in cells if i not in self.frozen]
            if not python:
                return self.text
            first = python[0]
            sources[first] = [_indented(self.indents[first], line) + usual[first] for line in moved] + sources[first]
        changed = {}
        for index, texts in zip(cells, originals):
            cell = self.data["cells"][index]
            before = _source_text(cell)
            ends_with_newline = _LINE_END.search(before[-1:]) is not None
            after = _joined(_cell_magic_first(sources[index], texts), usual[index], ends_with_newline)
            if after != before:
                as_list = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", after)  # as nbformat splits
                source = cell.get("source")
                changed[index] = after if isinstance(source, str) else as_list + _empty_tail(source or [])
        if not changed:
            return self.text
        spliced = replace_sources(self.text, changed)
        return spliced if spliced is not None else self._dump(changed)

    def _rewritten(self, index: int, before: list[str], after: list[str], texts: list[str], end: str):
        """(a cell's new lines: kept lines as written, new ones indented as the cell and ended with `end`;
        the lines added), from its program lines `before` and `after` the edits and its own lines `texts`
        (with their line ends)."""
        lines, added = [], []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
            if op == "equal":
                lines += texts[i1:i2]
            else:
                lines += [_indented(self.indents[index], line) + end for line in after[j1:j2]]
                added += [line for line in after[j1:j2] if line.strip()]
        return lines, added

    def _segments(self, lines: list, at: Optional[list[bool]] = None) -> list[list]:
        """`lines` cell by cell: split at the boundary lines (at the indexes where `at` is true, if given)."""
        out: list[list] = [[]]
        for i, line in enumerate(lines):
            if (at[i] if at is not None else line == self.boundary):
                out.append([])
            else:
                out[-1].append(line)
        return out

    def _code_cells(self) -> list[int]:
        return [i for i, cell in enumerate(self.data["cells"])
                if isinstance(cell, dict) and cell.get("cell_type") == "code"]

    def _dump(self, sources: dict) -> str:
        """The whole file written again, with new `source` values (when they cannot be spliced in)."""
        cells = [{**cell, "source": sources[i]} if i in sources else cell for i, cell in enumerate(self.data["cells"])]
        out = json.dumps({**self.data, "cells": cells}, **self._layout())
        out += "\n" if self.text.endswith("\n") else ""
        return out.replace("\n", "\r\n") if "\r\n" in self.text else out  # JSON strings escape their own breaks

    def _layout(self) -> dict:
        """The json.dumps arguments that reproduce the file as read (nbformat's own, if none does)."""
        head = re.match(r"\{\r?\n([ \t]+)\"", self.text)
        indent = (len(head.group(1)) if set(head.group(1)) == {" "} else head.group(1)) if head else None
        original, text = json.loads(self.text), self.text.replace("\r\n", "\n").rstrip("\n")
        for separators in ((",", ": "), (", ", ": "), (",", ":")):
            for ensure_ascii in (False, True):
                layout = {"indent": indent, "separators": separators, "ensure_ascii": ensure_ascii}
                if json.dumps(original, **layout) == text:
                    return layout
        return {"indent": 1, "separators": (",", ": "), "ensure_ascii": False}


def read_notebook(text: str) -> Notebook:
    """Parse a notebook's JSON text. Raises NotebookError for anything that is not an nbformat 4 notebook.
    A notebook whose kernel is not Python gives an empty program."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"not a notebook: invalid JSON: {exc}") from None
    except RecursionError:
        raise NotebookError("not a notebook: invalid JSON: too deeply nested") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no 'cells' list (nbformat 4 is supported)")
    python = _is_python(data)
    if any(not isinstance(cell, dict) for cell in data["cells"]):
        raise NotebookError("not a notebook: a cell is not an object")
    nb = Notebook(data, text, "", [], [], [], [], [], {}, set(), [])
    cells = [(i, _source_text(cell, i + 1)) for i, cell in enumerate(data["cells"])
             if cell.get("cell_type") == "code" and python]
    ends = [_LINE_END.findall(source) for _, source in cells]
    cells = [(i, split_lines(source)) for i, source in cells]
    read = [read_cell(raw) for _, raw in cells]
    # Cells are parsed only where a rule could look (like a .py file, which is parsed only then).
    checked = bool(could_fire("\n".join(line for lines, _ in read for line in lines), RULES))
    program: list[Optional[str]] = []  # None: a boundary, its text chosen once every line is known
    previous = None  # the last code cell's index
    for (index, raw), (lines, indent), line_ends in zip(cells, read, ends):
        error = _parse_error(lines) if checked else None
        if error and automagic(lines):
            lines, error = automagic(lines), None
        if error or (any(map(str.strip, raw)) and not any(map(str.strip, lines))):  # a %%bash-like cell
            nb.frozen.add(index)
            lines = [""] * len(raw)
        if error:
            nb.errors.append((index + 1, error))
        if previous is not None:  # a boundary line after the previous cell: edits never cross it
            after = nb.cell_lines[-1] + 1 if nb.owners and nb.owners[-1] == previous else 1
            _append(nb, program, None, None, "\n", previous, after, 0)
        for n, (line, text_line) in enumerate(zip(lines, raw), 1):
            shift = len(indent) if text_line.startswith(indent) and not error else 0
            _append(nb, program, line, text_line, line_ends[n - 1] if n <= len(line_ends) else "", index, n, shift)
        nb.indents[index], previous = indent, index
    nb.boundary = _free_boundary(set(program))
    program = [nb.boundary if line is None else line for line in program]
    nb.original = [nb.boundary if text is None else text for text in nb.original]
    nb.program = "\n".join(program) + ("\n" if program else "")
    return nb


def _free_boundary(lines: set) -> str:
    """BOUNDARY, or the first numbered boundary, that is none of the program's `lines`."""
    boundary, n = BOUNDARY, 0
    while boundary in lines:
        n += 1
        boundary = _NUMBERED.format(n)
    return boundary


def _append(nb: Notebook, program: list, line: Optional[str], text: Optional[str], end: str, owner: int,
            cell_line: int, shift: int):
    program.append(line)
    nb.original.append(text)
    nb.ends.append(end)
    nb.owners.append(owner)
    nb.cell_lines.append(cell_line)
    nb.shifts.append(shift)


def _parse_error(lines: list[str]) -> Optional[str]:
    """Why a cell, read as IPython reads it, is not Python (None when it is, or when it is but for a newer
    Python's f-strings, which the engine blanks: engine.newer_fstrings)."""
    text = "\n".join(lines)
    try:
        parse(text, "<cell>")
    except AnalysisError as exc:
        blanked = masked(text)
        try:
            if blanked is not None:
                parse(blanked, "<cell>")
                return None
        except AnalysisError:
            pass
        return str(exc)
    return None


def _cell_magic_first(lines: list[str], texts: list[str]) -> list[str]:
    """A cell's new lines with those added above its `%%time`-like first line (`texts` is the cell as it
    was) moved just below it: above it, the magic would no longer be a cell magic. Lines carry their ends."""
    head = next((line for line in texts if line.strip()), "")
    if not head.lstrip().startswith("%%") or head not in lines:
        return lines
    k, prefix = lines.index(head), texts[:texts.index(head)]  # blank lines the cell had above its magic
    added = lines[:k]
    for line in prefix:
        same = [a for a in added if a.strip() == line.strip()]  # a blank line, whatever its end
        if same:
            added.remove(same[0])
    return prefix + [head] + added + lines[k + 1:]


def _joined(lines: list[str], end: str, ends_with_newline: bool) -> str:
    """A cell's source from its lines (each with its own end, if any): every line but the last ends with
    a line end (`end` where it has none), the last with one only when the cell did (`ends_with_newline`)."""
    bodies = [line.rstrip("\r\n") for line in lines]
    out = [body + (line[len(body):] or end) for body, line in zip(bodies[:-1], lines)]
    if lines:
        last = lines[-1][len(bodies[-1]):] or end
        out.append(bodies[-1] + (last if ends_with_newline else ""))
    return "".join(out)


def _usual_end(texts: list[str]) -> str:
    """The most common line end of a cell's lines (`texts`, with their ends); `\\n` when none has one."""
    ends = Counter(line[len(line.rstrip("\r\n")):] for line in texts)
    ends.pop("", None)
    return ends.most_common(1)[0][0] if ends else "\n"  # a tie: the end met first


def _indented(indent: str, line: str) -> str:
    return indent + line if line.strip() else line


def cell_ends(program: str, boundary: str = BOUNDARY) -> frozenset[int]:
    """The 1-based lines of a notebook's program (this one's, or one fixed from it) that end a code cell: the
    line before each boundary, and the last. What a cell's last expression is: its displayed output."""
    lines = split_lines(program)
    ends = {n - 1 for n, line in enumerate(lines, 1) if line == boundary and n > 1}
    return frozenset(ends | ({len(lines)} if lines else set()))


def _empty_tail(source: list) -> list:
    """The empty strings a cell's `source` list ends with (Colab writes one): kept when the cell is rewritten."""
    tail = len(source)
    while tail and source[tail - 1] == "":
        tail -= 1
    return source[tail:]


def _source_text(cell: dict, number: int = 0) -> str:
    """A cell's `source`: a string or a list of strings; NotebookError naming cell `number` otherwise."""
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    raise NotebookError(f"not a notebook: the 'source' of cell {number} is not a string or a list of strings")


def _is_python(data: dict) -> bool:
    meta = _table(data, "metadata", "the notebook")
    language: Optional[str] = _table(meta, "language_info", "metadata").get("name") or \
        _table(meta, "kernelspec", "metadata").get("language")
    return language is None or str(language).lower() in ("python", "python3", "ipython", "ipython3")


def _table(data: dict, key: str, where: str) -> dict:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise NotebookError(f"not a notebook: '{key}' in {where} is not an object")
    return value
