"""`flake8-tensorcopy check`: find the files, run the engine on each (in a process pool when there are
enough), and report sorted findings. Exit 1 when anything is reported, 0 when clean, 2 on errors."""
from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Sequence, TextIO

from ..sources import fileio
from ..config.pyproject import ConfigError
from ..config.discovery import discover
from ..engine.core import AnalysisError, analyse, suppressed
from .formats import render, shown
from ..rules.model import Finding
from ..sources.notebook import Notebook, NotebookError, read_notebook, split_lines
from .progress import Progress
from ..rules import BY_CODE
from ..config.settings import Options, selection

FILES_PER_WORKER = 16  # below this many files per extra process, a pool costs more than it saves


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
class FileReport:
    path: str
    items: list[Item] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said on stderr, not an error
    cell_errors: list[tuple[int, str]] = field(default_factory=list)  # (cell number, message) in a notebook


@dataclass(frozen=True)
class Task:
    path: str  # what to open ("-" for stdin)
    display: str  # what to print
    codes: tuple[str, ...]
    tensor_functions: tuple[str, ...]
    source: Optional[bytes] = None  # stdin's bytes, read up front


def run_check(opts: Options, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr  # looked up per call: callers may redirect them
    started = time.perf_counter()
    try:
        tasks, notes = plan(opts)
    except ConfigError as exc:
        print(f"flake8-tensorcopy: error: {exc}", file=err)
        return 2
    try:
        reports = notes + run(tasks, opts.jobs or os.cpu_count() or 1, Progress(len(tasks), err))
    except KeyboardInterrupt:
        print("flake8-tensorcopy: interrupted", file=err)
        return 2
    items = sorted((i for r in reports for i in r.items), key=lambda i: i.sort_key)
    errors = []
    for r in sorted(reports, key=lambda r: r.path):
        for message in r.errors:
            print(f"{shown(r.path)}: error: {message}", file=err)
            errors.append((r.path, message))
        for cell, message in r.cell_errors:  # a notebook cell that does not parse; the others are checked
            print(f"{shown(r.path)}:cell {cell}: error: {message}", file=err)
            errors.append((r.path, f"cell {cell}: {message}"))
    for report in reports if not opts.quiet else ():
        for note in report.notes:
            print(f"{shown(report.path)}: {note}", file=err)
    out.write(render(opts.format, items, errors, len(tasks), show_source=opts.show_source))
    if not opts.quiet:
        print(summary(len(tasks), items, errors, time.perf_counter() - started), file=err)
        if not tasks:
            where = ", ".join(map(shown, opts.paths or ["."]))
            print(f"flake8-tensorcopy: no .py, .pyi or .ipynb file under {where} (after the excludes: "
                  f"--exclude, --extend-exclude, .gitignore)", file=err)
    return 2 if errors else 1 if items else 0


def plan(opts: Options) -> tuple[list[Task], list[FileReport]]:
    """The files to check and the rules for each, from the options and the configuration; and a report
    for each folder that could not be listed or symlink that was skipped."""
    chosen = selection(opts)
    stdin = sys.stdin.buffer.read() if "-" in opts.paths else None
    found = discover(opts.paths, chosen.excludes)
    tasks = []
    for path in found.files:
        display = (opts.stdin_filename or "stdin") if path == "-" else path
        tasks.append(Task(path, display, chosen.codes_for(display), chosen.tensor_functions,
                          stdin if path == "-" else None))
    notes = [FileReport(path, errors=[why]) for path, why in found.errors]
    notes += [FileReport(path, notes=[why]) for path, why in found.skipped]
    return tasks, notes


def run(tasks: list[Task], jobs: int, progress: Progress) -> list[FileReport]:
    """Check every task; in `jobs` processes when each would get FILES_PER_WORKER files or more."""
    workers = min(jobs, len(tasks) // FILES_PER_WORKER)
    reports = []
    if workers > 1:
        from .pool import parallel_map  # imported only when a pool pays

        for report in parallel_map(check_file, tasks, workers, chunksize=max(1, len(tasks) // (workers * 8))):
            reports.append(report)
            progress.advance()
    else:
        for task in tasks:
            reports.append(check_file(task))
            progress.advance()
    progress.close()
    return reports


def check_file(task: Task) -> FileReport:
    """One file's findings; every failure becomes one error line, never an exception."""
    report = FileReport(task.display)
    notebook = None
    try:
        data = task.source if task.source is not None else fileio.read_regular(task.path)
        if task.display.endswith(".ipynb"):
            notebook = read_notebook(data.decode("utf-8-sig"))
            source, report.cell_errors = notebook.program, notebook.errors
        else:
            source = fileio.decode(data).text
        result = analyse(source, task.display, [BY_CODE[c] for c in task.codes],
                         tensor_functions=task.tensor_functions, cell_ends=notebook.cell_ends if notebook else ())
    except (OSError, UnicodeDecodeError, SyntaxError, LookupError, AnalysisError, NotebookError,
            fileio.FileError) as exc:
        report.errors.append(_describe(exc, notebook))
        return report
    except Exception as exc:  # a bug of ours: one line for this file, the other files still checked
        report.errors.append(f"internal error: {type(exc).__name__}: {exc}")
        return report
    lines = split_lines(source) if result.findings else []
    for f in result.findings:
        if suppressed(f, notebook.original if notebook else lines):
            continue
        report.items.append(to_item(f, task.display, notebook, lines))
    report.errors.extend(f"internal error: {e}" for e in result.errors)
    return report


def to_item(f: Finding, display: str, notebook: Optional[Notebook], lines: Sequence[str], note: str = "") -> Item:
    """A finding as reported: in its cell for a notebook (`lines`: the program's lines otherwise)."""
    cell, line = notebook.locate(f.line) if notebook else (None, f.line)
    _, end_line = notebook.locate(f.end_line) if notebook and f.end_line else (None, f.end_line or f.line)
    text = notebook.source_line(f.line) if notebook else (lines[f.line - 1] if f.line <= len(lines) else "")
    col, end_col = (notebook.column(f.line, f.col), notebook.column(f.end_line or f.line, f.end_col)) \
        if notebook else (f.col, f.end_col)
    return Item(display, line, col + 1, f.code, f.message, end_line, end_col + 1, cell, text,
                f.fix.safety.value if f.fix else None, note)


def summary(files: int, items: Sequence[Item], errors: Sequence, seconds: float) -> str:
    counts = Counter(i.code for i in items)
    per_code = f" ({', '.join(f'{c}: {n}' for c, n in sorted(counts.items()))})" if counts else ""
    errs = f", {len(errors)} error{'s' * (len(errors) != 1)}" if errors else ""
    fixes = Counter(i.fix for i in items if i.fix)
    more = f", {fixes['unsafe']} more with `fix --unsafe-fixes`" if fixes["unsafe"] else ""
    fixable = f"; [*] {fixes['safe']} fixable with `fix`{more}" if fixes else ""
    return (f"flake8-tensorcopy: {files} file{'s' * (files != 1)} checked, {len(items)} "
            f"finding{'s' * (len(items) != 1)}{per_code}{errs} in {seconds:.2f}s{fixable}")


def _describe(exc: Exception, notebook) -> str:
    if isinstance(exc, OSError):
        return f"cannot read: {exc.strerror or exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"cannot decode: {exc.reason} at byte {exc.start} ({exc.encoding})"
    if isinstance(exc, AnalysisError) and notebook is not None:
        msg = str(exc)
        m = re.search(r"at line (\d+)", msg)
        if m:
            cell, line = notebook.locate(int(m.group(1)))
            return msg.replace(m.group(0), f"at cell {cell}, line {line}")
        return msg
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
