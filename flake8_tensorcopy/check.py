"""`flake8-tensorcopy check`: find the files, run the engine on each (in a process pool when there are
enough), and report sorted findings. Exit 1 when anything is reported, 0 when clean, 2 on errors."""
from __future__ import annotations

import errno
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Sequence, TextIO

from . import fileio
from .config import Config, ConfigError, load_config, validate_codes
from .discovery import compile_patterns, default_excludes, discover, matches
from .engine import AnalysisError, analyse, select_rules, suppressed
from .formats import render, shown
from .notebook import NotebookError, read_notebook, split_lines
from .progress import Progress
from .rules import BY_CODE

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

    @property
    def sort_key(self):
        return self.path, self.cell or 0, self.line, self.column, self.code


@dataclass
class FileReport:
    path: str
    items: list[Item] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Task:
    path: str  # what to open ("-" for stdin)
    display: str  # what to print
    codes: tuple[str, ...]
    tensor_functions: tuple[str, ...]
    source: Optional[bytes] = None  # stdin's bytes, read up front


@dataclass
class Options:
    paths: Sequence[str]
    select: Optional[Sequence[str]] = None  # None: from the configuration
    ignore: Optional[Sequence[str]] = None
    extend_select: Sequence[str] = ()
    exclude: Optional[Sequence[str]] = None
    extend_exclude: Sequence[str] = ()
    tensor_functions: Sequence[str] = ()
    stdin_filename: Optional[str] = None
    config: Optional[Config] = None  # None: found from the paths
    jobs: int = 0  # 0: all cores
    format: str = "text"
    show_source: bool = False
    quiet: bool = False


def run_check(opts: Options, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr  # looked up per call: callers may redirect them
    started = time.perf_counter()
    try:
        tasks = plan(opts)
    except ConfigError as exc:
        print(f"flake8-tensorcopy: error: {exc}", file=err)
        return 2
    try:
        reports = run(tasks, opts.jobs or os.cpu_count() or 1, Progress(len(tasks), err))
    except KeyboardInterrupt:
        print("flake8-tensorcopy: interrupted", file=err)
        return 2
    items = sorted((i for r in reports for i in r.items), key=lambda i: i.sort_key)
    errors = [(r.path, e) for r in sorted(reports, key=lambda r: r.path) for e in r.errors]
    for path, message in errors:
        print(f"{shown(path)}: error: {message}", file=err)
    out.write(render(opts.format, items, errors, len(tasks), show_source=opts.show_source))
    if not opts.quiet:
        print(summary(len(tasks), items, errors, time.perf_counter() - started), file=err)
        if not tasks:
            where = ", ".join(map(shown, opts.paths or ["."]))
            print(f"flake8-tensorcopy: no .py, .pyi or .ipynb file under {where} (after the excludes: "
                  f"--exclude, --extend-exclude, .gitignore)", file=err)
    return 2 if errors else 1 if items else 0


@dataclass(frozen=True)
class Selection:
    """What the options and the configuration choose, shared by `check` and `fix`."""

    select: Sequence[str]
    ignore: Sequence[str]
    extend: Sequence[str]
    excludes: list
    per_file: list
    tensor_functions: tuple[str, ...]

    def codes_for(self, display: str) -> tuple[str, ...]:
        """The rule codes that apply to one file (per-file-ignores included)."""
        extra = [c for patterns, codes in self.per_file if matches(display, patterns) for c in codes]
        return tuple(r.code for r in select_rules(self.select, tuple(self.ignore) + tuple(extra), self.extend))


def selection(opts: Options) -> Selection:
    """Command-line options over the nearest `[tool.flake8-tensorcopy]` configuration."""
    config = opts.config or load_config(_config_start(opts))
    select = validate_codes(opts.select, "--select") if opts.select is not None else config.select
    ignore = validate_codes(opts.ignore, "--ignore") if opts.ignore is not None else config.ignore
    extend = config.extend_select + validate_codes(opts.extend_select, "--extend-select")
    if opts.exclude is not None:
        excludes = compile_patterns(opts.exclude, os.getcwd())
    elif config.exclude is not None:
        excludes = compile_patterns(config.exclude, config.root)
    else:
        excludes = default_excludes()
    excludes += compile_patterns(config.extend_exclude, config.root)
    excludes += compile_patterns(opts.extend_exclude, os.getcwd())
    per_file = [(compile_patterns([pattern], config.root), codes) for pattern, codes in config.per_file_ignores]
    tensor_functions = tuple(config.tensor_functions) + tuple(opts.tensor_functions)
    return Selection(select, ignore, extend, excludes, per_file, tensor_functions)


def plan(opts: Options) -> list[Task]:
    """The files to check and the rules for each, from the options and the configuration."""
    chosen = selection(opts)
    stdin = sys.stdin.buffer.read() if "-" in opts.paths else None
    tasks = []
    for path in discover(opts.paths, chosen.excludes):
        display = (opts.stdin_filename or "stdin") if path == "-" else path
        tasks.append(Task(path, display, chosen.codes_for(display), chosen.tensor_functions,
                          stdin if path == "-" else None))
    return tasks


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
        data = task.source if task.source is not None else _read_bytes(task.path)
        if task.display.endswith(".ipynb"):
            notebook = read_notebook(data.decode("utf-8-sig"))
            source = notebook.program
        else:
            source = fileio.decode(data).text
        result = analyse(source, task.display, [BY_CODE[c] for c in task.codes],
                         tensor_functions=task.tensor_functions)
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
        cell, line = notebook.locate(f.line) if notebook else (None, f.line)
        _, end_line = notebook.locate(f.end_line) if notebook and f.end_line else (None, f.end_line or f.line)
        text = notebook.source_line(f.line) if notebook else (lines[f.line - 1] if f.line <= len(lines) else "")
        report.items.append(Item(task.display, line, f.col + 1, f.code, f.message, end_line, f.end_col + 1, cell,
                                 text, f.fix.safety.value if f.fix else None))
    report.errors.extend(f"internal error: {e}" for e in result.errors)
    return report


def summary(files: int, items: Sequence[Item], errors: Sequence, seconds: float) -> str:
    counts = Counter(i.code for i in items)
    per_code = f" ({', '.join(f'{c}: {n}' for c, n in sorted(counts.items()))})" if counts else ""
    errs = f", {len(errors)} error{'s' * (len(errors) != 1)}" if errors else ""
    fixes = Counter(i.fix for i in items if i.fix)
    fixable = (f"; [*] {fixes['safe']} fixable with `fix`" + (f", {fixes['unsafe']} more with `fix --unsafe-fixes`"
                                                             if fixes["unsafe"] else "")) if fixes else ""
    return (f"flake8-tensorcopy: {files} file{'s' * (files != 1)} checked, {len(items)} "
            f"finding{'s' * (len(items) != 1)}{per_code}{errs} in {seconds:.2f}s{fixable}")


def _read_bytes(path: str) -> bytes:
    if os.path.isdir(path):  # a folder the walk could not list: say why
        with os.scandir(path):
            raise OSError(errno.EISDIR, "a folder whose files cannot be listed")
    return fileio.read_regular(path)


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


def _config_start(opts: Options) -> str:
    """Where the configuration search starts: the folder holding all the given paths."""
    paths = [(opts.stdin_filename or ".") if p == "-" else p for p in opts.paths] or ["."]
    folders = [os.path.abspath(p if os.path.isdir(p) else os.path.dirname(p) or ".") for p in paths]
    try:
        return os.path.commonpath(folders)
    except ValueError:
        return os.getcwd()
