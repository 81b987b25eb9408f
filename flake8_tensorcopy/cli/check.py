"""`flake8-tensorcopy check`: find the files, run the engine on each (in a process pool when there are
enough), and report sorted findings. Exit 1 when anything is reported, 0 when clean, 2 on errors."""
from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence, TextIO

from . import cache
from ..text import split_keeping_ends
from ..sources import fileio
from ..config.pyproject import ConfigError
from ..config.discovery import discover
from .formats import render
from ..text import shown
from ..pipeline.lint import Document, Item
from .progress import Progress
from ..config.settings import Options, PerFile

FILES_PER_WORKER = 16  # below this many files per extra process, a pool costs more than it saves


@dataclass
class FileReport:
    path: str
    items: list[Item] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said on stderr, not an error
    cell_errors: list[tuple[int, str]] = field(default_factory=list)  # (cell number, message) in a notebook
    added: int = 0  # --add-noqa: comments added or extended


@dataclass(frozen=True)
class Task:
    path: str  # what to open ("-" for stdin)
    display: str  # what to print
    codes: tuple[str, ...]
    tensor_functions: tuple[str, ...]
    source: Optional[bytes] = None  # stdin's bytes, read up front
    cache: Optional[str] = None  # the cache folder; None: --no-cache (stdin is never cached)
    add_noqa: bool = False  # write a noqa comment for each finding instead of reporting it


def run_check(opts: Options, out: Optional[TextIO] = None, err: Optional[TextIO] = None,
              statistics: bool = False, add_noqa: bool = False) -> int:
    """`statistics`: counts per code after the findings; `add_noqa`: suppress every finding in its file."""
    out, err = out or sys.stdout, err or sys.stderr  # looked up per call: callers may redirect them
    started = time.perf_counter()
    if add_noqa and "-" in opts.paths:
        print("flake8-tensorcopy: error: --add-noqa writes files; it cannot read stdin", file=err)
        return 2
    try:
        tasks, notes = plan(opts, add_noqa)
    except ConfigError as exc:
        print(f"flake8-tensorcopy: error: {exc}", file=err)
        return 2
    try:
        progress = Progress(len(tasks), err)
        cached, tasks_left = from_cache(tasks, progress)
        reports = notes + cached + run(tasks_left, opts.jobs or os.cpu_count() or 1, progress)
    except KeyboardInterrupt:
        print("flake8-tensorcopy: interrupted", file=err)
        return 2
    if tasks and tasks[0].cache:
        cache.prune(tasks[0].cache)
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
    if statistics and opts.format == "text":
        out.write(code_counts(items))
    if add_noqa:
        files = sum(r.added > 0 for r in reports)
        print(f"flake8-tensorcopy: added or extended {sum(r.added for r in reports)} noqa comment(s) in {files} "
              f"file(s)", file=err)
    if not opts.quiet:
        print(summary(len(tasks), items, errors, time.perf_counter() - started), file=err)
        if not tasks:
            where = ", ".join(map(shown, opts.paths or ["."]))
            print(f"flake8-tensorcopy: no .py, .pyi or .ipynb file under {where} (after the excludes: "
                  f"--exclude, --extend-exclude, .gitignore)", file=err)
    return 2 if errors else 1 if items else 0


def plan(opts: Options, add_noqa: bool = False) -> tuple[list[Task], list[FileReport]]:
    """The files to check and the rules for each, from the options and the configuration; and a report
    for each folder that could not be listed or symlink that was skipped."""
    for_file = PerFile(opts)
    stdin = sys.stdin.buffer.read() if "-" in opts.paths else None
    found = discover(opts.paths, for_file.base.excludes, opts.force_exclude)
    folder = cache.folder_for(for_file.base.project) if opts.cache and not add_noqa else None
    tasks = []
    for path in found.files:
        if for_file.excluded(path):
            continue
        display = (opts.stdin_filename or "stdin") if path == "-" else path
        chosen = for_file(path)
        tasks.append(Task(path, display, chosen.codes_for(display), chosen.tensor_functions,
                          stdin if path == "-" else None, folder if path != "-" else None, add_noqa))
    notes = [FileReport(path, errors=[why]) for path, why in found.errors]
    notes += [FileReport(path, notes=[why]) for path, why in found.skipped]
    return tasks, notes


def from_cache(tasks: list[Task], progress: Progress) -> tuple[list[FileReport], list[Task]]:
    """(the reports the cache holds, the tasks left to analyse), looked up here before any pool starts:
    a warm run of an unchanged tree reads entries and hashes neighbours, and imports no rule."""
    cache.forget()
    found, left = [], []
    for task in tasks:
        report = cached_report(task)[0] if task.cache is not None else None
        if report is None:
            left.append(task)
        else:
            found.append(report)
            progress.advance()
    return found, left


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
    """One file's findings, from the cache when it holds them; every failure becomes one error line, never
    an exception."""
    try:
        data = task.source if task.source is not None else fileio.read_regular(task.path)
    except (OSError, fileio.FileError) as exc:
        return FileReport(task.display, errors=[_describe(exc, None)])
    if task.cache is None:
        return analyse_file(task, data)
    found, entry = cached_report(task, data)
    if found is not None:
        return found
    with cache.recording() as deps:
        report = analyse_file(task, data)
    if not report.errors:  # errors are said again on every run; only complete reports are kept
        cache.store(task.cache, entry, {"items": [asdict(i) for i in report.items], "cell_errors": report.cell_errors},
                    deps)
    return report


def cached_report(task: Task, data: Optional[bytes] = None) -> tuple[Optional[FileReport], Optional[str]]:
    """(the file's report from the cache or None, the key of its entry); a file that cannot be read is a miss."""
    if data is None:
        try:
            data = task.source if task.source is not None else fileio.read_regular(task.path)
        except (OSError, fileio.FileError):
            return None, None
    entry = cache.key(task.path, data, (task.display, *task.codes, "tensor-functions", *task.tensor_functions))
    found = cache.load(task.cache, entry)
    if found is not None:
        try:
            return FileReport(task.display, [Item(**i) for i in found["items"]],
                              cell_errors=[(c, m) for c, m in found["cell_errors"]]), entry
        except (KeyError, TypeError, ValueError):  # an entry of another shape: a miss
            pass
    return None, entry


def analyse_file(task: Task, data: bytes) -> FileReport:
    """One file's findings from its bytes (the engine, the rules and the readers are imported here: a run
    that every entry of the cache answers needs none of them)."""
    from ..engine.core import AnalysisError
    from ..pipeline.lint import lint
    from ..rules import BY_CODE
    from ..sources.document import read_document
    from ..sources.notebook import NotebookError

    report = FileReport(task.display)
    doc = None
    try:
        notebook = task.display.endswith(".ipynb")
        doc = read_document(data.decode("utf-8-sig") if notebook else fileio.decode(data).text, task.display)
        report.cell_errors = doc.cells.errors if doc.cells else []
        linted = lint(doc, [BY_CODE[c] for c in task.codes], task.tensor_functions)
        if task.add_noqa and linted.findings:
            # an unused noqa (TEN905, a rule with no nodes) is not silenced by another noqa: `fix` removes it
            written = [BY_CODE[f.code].nodes != () for f in linted.findings]
            report.added = write_noqa(task.path, data, doc, [(f.line, f.code) for f, w in
                                                             zip(linted.findings, written) if w])
            linted.items = [i for i, w in zip(linted.items, written) if not w]
    except (OSError, UnicodeDecodeError, SyntaxError, LookupError, AnalysisError, NotebookError,
            fileio.FileError) as exc:
        report.errors.append(_describe(exc, doc.cells if doc else None))
        return report
    except Exception as exc:  # a bug of ours: one line for this file, the other files still checked
        report.errors.append(f"internal error: {type(exc).__name__}: {exc}")
        return report
    report.items = linted.items
    report.errors.extend(f"internal error: {e}" for e in linted.errors)
    return report


def write_noqa(path: str, data: bytes, doc: Document, findings: list[tuple[int, str]]) -> int:
    """Add a noqa comment for each finding to the file (atomically, its encoding kept); how many changed."""
    from ..pipeline.noqa import add_comments

    program, changed = add_comments(doc.program, findings)
    src = fileio.decode(data)
    if changed and doc.derived:
        program = _onto_file(src.text, doc.program, program)
    if changed:
        text = doc.cells.with_program(program) if doc.cells else program
        with fileio.interrupts_deferred():
            fileio.replace(path, data, src.encode(text))
    return changed


def _onto_file(text: str, program: str, commented: str) -> str:
    """The file's own text with the comments `commented` added to its program: a line of the file that the
    program keeps as it is (neutralising changes only IPython lines, one for one) takes the commented line."""
    lines, before, after = (split_keeping_ends(t) for t in (text, program, commented))
    if not len(lines) == len(before) == len(after):
        return text
    return "".join(new if old == line else line for line, old, new in zip(lines, before, after))


def code_counts(items: Sequence[Item]) -> str:
    """flake8's --statistics: a count, the code and the first message of that code, per code."""
    first = {}
    for item in items:
        first.setdefault(item.code, item.message)
    counts = Counter(i.code for i in items)
    return "".join(f"{counts[code]:<5} {code} {first[code]}\n" for code in sorted(counts))


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
    if notebook is not None and type(exc).__name__ == "AnalysisError":  # engine.core's, imported only to analyse
        msg = str(exc)
        m = re.search(r"at line (\d+)", msg)
        if m:
            cell, line = notebook.locate(int(m.group(1)))
            return msg.replace(m.group(0), f"at cell {cell}, line {line}")
        return msg
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
