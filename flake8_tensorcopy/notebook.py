"""Jupyter notebooks as one Python program, and back.

`read_notebook(text)` joins the code cells, in order, into one program (`Notebook.program`) so that the
engine sees names bound in one cell and used in another. IPython syntax is neutralised line for line, so
line numbers never shift: `%magic` / `!shell` / `obj?` lines become `pass` at the same indentation,
`x = !cmd` becomes `x = None`, and a cell whose `%%cell_magic` runs another language becomes blank
lines; a comment line (BOUNDARY) separates two cells, so fixes map back to their own cell.
`Notebook.locate(line)` maps a program line to (cell number, line in cell); cell numbers are
1-based positions among all the notebook's cells, markdown included, so `cell 3` is the third cell on
screen. `Notebook.with_program(fixed)` writes a changed program back into the code cells, keeping the
IPython lines, the outputs, and the file's JSON layout (indent, key order, escaping, final newline).
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Optional

# Cell magics whose body is Python (the rest run another language or write a file).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "mprun", "pypy"})
BOUNDARY = "# --- tensorcopy: next cell ---"  # a comment line between two cells of the program
ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.]+(?:\s*,\s*[\w.]+)*\s*=\s*)[!%].*$")


class NotebookError(ValueError):
    """Not a readable notebook; the message is one line."""


@dataclass
class Notebook:
    data: dict
    text: str  # the file as read
    program: str  # code cells joined, IPython syntax neutralised
    owners: list[int]  # per program line: the index (0-based) of its cell in data["cells"]
    cell_lines: list[int]  # per program line: its 1-based line in the cell
    original: list[str]  # per program line: the cell's own text (IPython lines as written)

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in cell), both 1-based, for a 1-based program line."""
        if not self.owners:
            return 1, line
        i = min(max(line, 1), len(self.owners)) - 1
        return self.owners[i] + 1, self.cell_lines[i]

    def source_line(self, line: int) -> str:
        return self.original[line - 1] if 0 < line <= len(self.original) else ""

    def with_program(self, program: str) -> str:
        """The notebook's text with its code cells rewritten from `program` (this notebook's program after
        edits). The program keeps a boundary line between cells, so each cell gets back exactly its own
        lines, whatever the edits did to line counts; within a cell, lines the edits kept restore their
        original text (magics included). Lines added to a cell of another language (an import inserted at
        the top) go to the first Python cell. Returns the original text when no cell changed, or when the
        boundaries did not survive (then nothing is written)."""
        cells = self._code_cells()
        old, new = _segments(self.program), _segments(program)
        if not cells or len(old) != len(cells) or len(new) != len(cells):
            return self.text
        originals = _segments("\n".join(self.original))
        sources, moved = {}, []
        for index, before, after, texts in zip(cells, old, new, originals):
            lines = []
            matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
            for op, i1, i2, j1, j2 in matcher.get_opcodes():
                lines += texts[i1:i2] if op == "equal" else after[j1:j2]
            if lines != texts and self._foreign(index):
                moved += [line for line in lines if line not in texts]  # added lines leave a %%bash cell
                lines = texts
            sources[index] = lines
        if moved:
            python = [i for i in cells if not self._foreign(i)]
            if not python:
                return self.text
            sources[python[0]] = moved + sources[python[0]]
        changed = False
        for index, lines in sources.items():
            cell = self.data["cells"][index]
            before = _source_text(cell)
            after = "\n".join(lines) + ("\n" if lines and before.endswith("\n") else "")
            if after != before:
                changed = True
                as_list = re.findall(r"[^\n]*\n|[^\n]+$", after)
                cell["source"] = after if isinstance(cell.get("source"), str) else as_list
        return self._dump() if changed else self.text

    def _code_cells(self) -> list[int]:
        return [i for i, cell in enumerate(self.data["cells"])
                if isinstance(cell, dict) and cell.get("cell_type") == "code"]

    def _foreign(self, index: int) -> bool:
        """A cell of another language (`%%bash`, `%%writefile`): blank in the program, never edited."""
        lines = split_lines(_source_text(self.data["cells"][index]))
        return bool(lines) and lines[0].lstrip().startswith("%%") and neutralise(lines) == [""] * len(lines)

    def _dump(self) -> str:
        out = json.dumps(self.data, **self._layout())
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
    program, owners, cell_lines, original = [], [], [], []
    if any(not isinstance(cell, dict) for cell in data["cells"]):
        raise NotebookError("not a notebook: a cell is not an object")
    for index, cell in enumerate(data["cells"]):
        if cell.get("cell_type") != "code" or not python:
            continue
        raw = split_lines(_source_text(cell))
        if owners:  # a boundary line after the previous cell: edits never cross it (see with_program)
            program.append(BOUNDARY)
            owners.append(owners[-1])
            cell_lines.append(cell_lines[-1] + 1)
            original.append(BOUNDARY)
        program.extend(neutralise(raw))
        owners.extend([index] * len(raw))
        cell_lines.extend(range(1, len(raw) + 1))
        original.extend(raw)
    text_program = "\n".join(program) + ("\n" if program else "")
    return Notebook(data, text, text_program, owners, cell_lines, original)


def neutralise(lines: list[str]) -> list[str]:
    """A cell's lines with IPython syntax replaced by Python of the same line count."""
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(None, 1)[0] if lines[0].strip() != "%%" else ""
        if magic not in PYTHON_CELL_MAGICS:
            return [""] * len(lines)
        return [""] + neutralise(lines[1:])
    out, continued = [], False
    for line in lines:
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if continued:
            out.append("")
        elif stripped.startswith(("%", "!", "?")) or (stripped.endswith("?") and "#" not in stripped):
            out.append(indent + "pass")
        elif ASSIGNED_MAGIC.match(line):
            out.append(ASSIGNED_MAGIC.sub(lambda m: m.group(1) + "None", line))
        else:
            out.append(line)
            continue
        continued = line.endswith("\\")
    return out


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
