"""Jupyter notebooks as one Python program, and back.

`read_notebook(text)` joins the code cells, in order, into one program (`Notebook.program`) so that the
engine sees names bound in one cell and used in another. Each cell is read as IPython reads it
(ipython_syntax.py: its common indent removed, magics, shell escapes and help lines turned into `pass`,
cells of another language blank), line for line, so line numbers never shift; a cell that still does
not parse is blanked and listed in `Notebook.errors`, so the other cells are still checked and fixed.
A comment line (BOUNDARY) separates two cells, so fixes map back to their own cell.
`Notebook.cell_ends` (`cell_ends(program)`) lists the lines that end a cell, for the analysis
(FileFacts.cell_ends): a cell's last expression is its displayed output. `Notebook.locate(line)` maps
a program line to (cell number, line in cell) and `Notebook.column` a column; cell numbers are 1-based
positions among all the notebook's cells, markdown included, so
`cell 3` is the third cell on screen. `Notebook.with_program(fixed)` writes a changed program back into
the code cells, keeping the IPython lines and each cell's indent, and every byte of the file outside the
changed cells' `source` values (notebook_json.py).
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Optional

from ..engine.core import AnalysisError, could_fire, parse
from .ipython_syntax import automagic, read_cell
from .notebook_json import replace_sources
from ..rules import RULES

BOUNDARY = "# --- tensorcopy: next cell ---"  # a comment line between two cells of the program


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
    shifts: list[int]  # per program line: the columns IPython's dedent removed from it
    indents: dict[int, str]  # per code cell index: the indent IPython removes from the cell
    frozen: set[int]  # code cell indexes never edited: cells of another language, unparsable cells
    errors: list[tuple[int, str]]  # (cell number, one-line message) for each cell that does not parse

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
        return cell_ends(self.program)

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
        old, new = _segments(self.program), _segments(program)
        if not cells or len(old) != len(cells) or len(new) != len(cells):
            return self.text
        originals = _segments("\n".join(self.original))
        sources, moved = {}, []
        for index, before, after, texts in zip(cells, old, new, originals):
            lines, added = self._rewritten(index, before, after, texts)
            if lines != texts and index in self.frozen:
                moved += added
                lines = texts
            sources[index] = lines
        if moved:
            python = [i for i in cells if i not in self.frozen]
            if not python:
                return self.text
            sources[python[0]] = [_indented(self.indents[python[0]], line) for line in moved] + sources[python[0]]
        changed = {}
        for index, texts in zip(cells, originals):
            cell = self.data["cells"][index]
            lines, before = _cell_magic_first(sources[index], texts), _source_text(cell)
            after = "\n".join(lines) + ("\n" if lines and before.endswith("\n") else "")
            if after != before:
                as_list = re.findall(r"[^\n]*\n|[^\n]+$", after)
                changed[index] = after if isinstance(cell.get("source"), str) else as_list
        if not changed:
            return self.text
        spliced = replace_sources(self.text, changed)
        return spliced if spliced is not None else self._dump(changed)

    def _rewritten(self, index: int, before: list[str], after: list[str], texts: list[str]):
        """(a cell's new lines: kept lines as written, new ones indented as the cell; the lines added),
        from its program lines `before` and `after` the edits and its own lines `texts`."""
        lines, added = [], []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
            if op == "equal":
                lines += texts[i1:i2]
            else:
                lines += [_indented(self.indents[index], line) for line in after[j1:j2]]
                added += [line for line in after[j1:j2] if line.strip()]
        return lines, added

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
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("not a notebook: no 'cells' list (nbformat 4 is supported)")
    python = _is_python(data)
    if any(not isinstance(cell, dict) for cell in data["cells"]):
        raise NotebookError("not a notebook: a cell is not an object")
    nb = Notebook(data, text, "", [], [], [], [], {}, set(), [])
    cells = [(i, split_lines(_source_text(cell))) for i, cell in enumerate(data["cells"])
             if cell.get("cell_type") == "code" and python]
    read = [read_cell(raw) for _, raw in cells]
    # Cells are parsed only where a rule could look (like a .py file, which is parsed only then).
    checked = bool(could_fire("\n".join(line for lines, _ in read for line in lines), RULES))
    program: list[str] = []
    previous = None  # the last code cell's index
    for (index, raw), (lines, indent) in zip(cells, read):
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
            _append(nb, program, BOUNDARY, BOUNDARY, previous, after, 0)
        for n, (line, text_line) in enumerate(zip(lines, raw), 1):
            shift = len(indent) if text_line.startswith(indent) and not error else 0
            _append(nb, program, line, text_line, index, n, shift)
        nb.indents[index], previous = indent, index
    nb.program = "\n".join(program) + ("\n" if program else "")
    return nb


def _append(nb: Notebook, program: list[str], line: str, text: str, owner: int, cell_line: int, shift: int):
    program.append(line)
    nb.original.append(text)
    nb.owners.append(owner)
    nb.cell_lines.append(cell_line)
    nb.shifts.append(shift)


def _parse_error(lines: list[str]) -> Optional[str]:
    """Why a cell, read as IPython reads it, is not Python (None when it is)."""
    try:
        parse("\n".join(lines), "<cell>")
    except AnalysisError as exc:
        return str(exc)
    return None


def _cell_magic_first(lines: list[str], texts: list[str]) -> list[str]:
    """A cell's new lines with those added above its `%%time`-like first line (`texts` is the cell as it
    was) moved just below it: above it, the magic would no longer be a cell magic."""
    head = next((line for line in texts if line.strip()), "")
    if not head.lstrip().startswith("%%") or head not in lines:
        return lines
    k, prefix = lines.index(head), texts[:texts.index(head)]  # blank lines the cell had above its magic
    added = lines[:k]
    for line in prefix:
        if line in added:
            added.remove(line)
    return prefix + [head] + added + lines[k + 1:]


def _indented(indent: str, line: str) -> str:
    return indent + line if line.strip() else line


def cell_ends(program: str) -> frozenset[int]:
    """The 1-based lines of a notebook's program (this one's, or one fixed from it) that end a code cell: the
    line before each boundary, and the last. What a cell's last expression is: its displayed output."""
    lines = split_lines(program)
    ends = {n - 1 for n, line in enumerate(lines, 1) if line == BOUNDARY and n > 1}
    return frozenset(ends | ({len(lines)} if lines else set()))


def _segments(program: str) -> list[list[str]]:
    """A program's lines, cell by cell (split at the boundary lines)."""
    out: list[list[str]] = [[]]
    for line in split_lines(program):
        if line == BOUNDARY:
            out.append([])
        else:
            out[-1].append(line)
    return out


def split_lines(text: str) -> list[str]:
    """Lines as Python's tokenizer counts them (\\n, \\r\\n, \\r; not form feeds), without line ends."""
    lines = re.split(r"\r\n|\r|\n", text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _source_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


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
