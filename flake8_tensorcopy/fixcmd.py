"""`flake8-tensorcopy fix`: rewrite files with the findings' fixes, or show (`--diff`) / test (`--check`).

Its options and exit codes are defined in cli.py, which imports this module (and LibCST) only to fix.
"""
from __future__ import annotations

import difflib
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Iterator, Optional

from . import fileio
from .check import Options, selection
from .config import ConfigError
from .discovery import matches
from .engine import AnalysisError
from .fixer import FixError, allowed, fix_source
from .formats import shown
from .model import Finding, FixSafety
from .notebook import NotebookError, read_notebook
from .pool import parallel_map
from .rules import BY_CODE


@dataclass
class Job:
    display: str  # the name users see
    path: str  # the file read and written ('-' for stdin)
    codes: tuple[str, ...]
    unsafe: bool
    data: Optional[bytes] = None  # stdin's bytes
    tensor_functions: tuple[str, ...] = ()


@dataclass
class Report:
    display: str
    path: str
    original: bytes = b""
    new: Optional[bytes] = None  # None: nothing to write
    source: str = ""
    fixed: str = ""
    applied: list[Finding] = field(default_factory=list)
    remaining: list[Finding] = field(default_factory=list)
    error: Optional[str] = None  # the file is left untouched
    skipped: Optional[str] = None  # not a file to fix (a symlink out of the tree), said so
    rule_errors: list[str] = field(default_factory=list)
    dropped: dict[tuple, str] = field(default_factory=dict)  # (line, col, code) -> why its fix was refused


def _key(f: Finding) -> tuple:
    return f.line, f.col, f.code


def cmd_fix(args) -> int:
    if "-" in args.paths and len(args.paths) > 1:
        print("fix: '-' (stdin) cannot be combined with other paths", file=sys.stderr)
        return 2
    try:  # the same configuration as `check`: [tool.flake8-tensorcopy] under the command-line options
        chosen = selection(Options(paths=args.paths, select=args.select or None, ignore=args.ignore or None,
                                   extend_select=args.extend_select, stdin_filename=args.stdin_filename))
    except ConfigError as exc:
        print(f"fix: {exc}", file=sys.stderr)
        return 2
    out = sys.stderr if args.paths == ["-"] else sys.stdout  # stdout carries the fixed text
    status, counts = 0, {"fixed": 0, "files": 0, "remaining": 0, "hidden": 0}
    try:
        for report in _reports(args, chosen):
            status = max(status, _handle(report, args, out, counts))
    except KeyboardInterrupt:
        print(f"fix: interrupted; {counts['files']} file(s) written are fully fixed, the others untouched",
              file=sys.stderr)
        return 2
    _summary(args, counts, out)
    return status


def _reports(args, chosen) -> Iterator[Report]:
    """One report per file, in the order the files were named (and found)."""
    functions = chosen.tensor_functions
    if args.paths == ["-"]:
        name = args.stdin_filename or "-"
        yield _work(Job(name, "-", chosen.codes_for(name), args.unsafe_fixes, sys.stdin.buffer.read(), functions))
        return
    jobs, notes = [], []
    for path, problem in collect(args.paths):
        if problem and problem.startswith("skipped"):
            notes.append(Report(path, path, skipped=problem))
        elif problem:
            notes.append(Report(path, path, error=problem))
        elif path in args.paths or not matches(path, chosen.excludes):  # walked files honour the excludes
            jobs.append(Job(path, path, chosen.codes_for(path), args.unsafe_fixes, None, functions))
    yield from notes
    workers = min(args.jobs or os.cpu_count() or 1, len(jobs))
    if workers <= 1:
        yield from map(_work, jobs)
        return
    yield from parallel_map(_work, jobs, workers, chunksize=max(1, min(16, len(jobs) // (workers * 8))))


def collect(paths) -> Iterator[tuple[str, Optional[str]]]:
    """(path, problem) for each Python file under `paths`, each real file once.
    A symlink found while walking a folder is followed only if it stays inside that folder."""
    seen = set()
    for root in paths:
        if not os.path.isdir(root):
            found = [(root, None)] if os.path.lexists(root) else [(root, "no such file or folder")]
        else:
            found = list(_walk(root))
        for path, problem in found:
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            yield path, problem


def _walk(root: str) -> Iterator[tuple[str, Optional[str]]]:
    inside = os.path.realpath(root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in dirs:
            path = os.path.join(folder, name)
            if os.path.islink(path) and not _within(os.path.realpath(path), inside):
                yield path, f"skipped: a symlink to {shown(os.path.realpath(path))}, outside {shown(root)}"
        for name in sorted(files):
            if name.endswith((".py", ".pyi", ".ipynb")):
                path = os.path.join(folder, name)
                if not os.path.isfile(path):
                    continue  # a FIFO or a device named like a source file: never opened
                if os.path.islink(path) and not _within(os.path.realpath(path), inside):
                    yield path, f"skipped: a symlink to {shown(os.path.realpath(path))}, outside {shown(root)}"
                else:
                    yield path, None


def _within(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder


def _work(job: Job) -> Report:
    """Read, fix and encode one file; writes nothing (the main process does, in order)."""
    report = Report(job.display, job.path)
    report.original = job.data or b""  # stdin that cannot be decoded is still echoed back to the editor
    try:
        src = fileio.decode(job.data) if job.data is not None else fileio.read(job.path)
        report.original, report.source = src.data, src.text
        rules = [BY_CODE[c] for c in job.codes]
        notebook = read_notebook(src.text) if job.display.endswith(".ipynb") else None
        program = notebook.program if notebook else src.text  # a notebook's code cells as one program
        outcome = fix_source(program, job.display, rules, unsafe=job.unsafe, tensor_functions=job.tensor_functions)
        report.applied, report.remaining = outcome.applied, outcome.remaining
        report.dropped = {_key(f): outcome.dropped[id(f)] for f in outcome.remaining if id(f) in outcome.dropped}
        report.fixed = notebook.with_program(outcome.fixed) if notebook and outcome.changed else (
            src.text if notebook else outcome.fixed)
        report.rule_errors = outcome.errors
        if outcome.changed:
            report.new = src.encode(report.fixed)
        elif job.path != "-":  # nothing to write or diff: do not ship the text back to the main process
            report.original, report.source, report.fixed = b"", "", ""
    except (fileio.FileError, AnalysisError, FixError, NotebookError) as exc:
        report.error = str(exc)
    except RecursionError:
        report.error = "too deeply nested to fix"
    except Exception as exc:  # a bug of ours costs this file, never the others
        report.error = f"internal error: {type(exc).__name__}: {exc}"
    return report


def _handle(report: Report, args, out, counts) -> int:
    """Print (and write) one file's outcome; its exit status."""
    if report.skipped:
        print(f"{shown(report.display)}: {report.skipped}", file=sys.stderr)
        return 0
    if report.error:
        print(f"{shown(report.display)}: {report.error}; file left untouched", file=sys.stderr)
        if report.path == "-" and not (args.diff or args.check):
            sys.stdout.buffer.write(report.original)  # an editor must get its text back
        return 2
    for error in report.rule_errors:
        print(f"{shown(report.display)}: internal error: {error}", file=sys.stderr)
    status = 2 if report.rule_errors else 0
    preview = args.diff or args.check
    if report.path == "-" and not preview:
        sys.stdout.buffer.write(report.new if report.new is not None else report.original)
    elif report.new is not None and not preview:
        with fileio.interrupts_deferred():  # a Ctrl-C comes after the write is counted
            try:
                fileio.replace(report.path, report.original, report.new)
            except fileio.FileError as exc:
                print(f"{shown(report.display)}: {exc}", file=sys.stderr)
                return 2
            counts["files"] += 1
    if not args.check:
        _print_findings(report.display, report.applied, out, "would fix" if preview else "fixed", args)
        _print_findings(report.display, report.remaining, out, None, args, report.dropped)
    if args.diff and report.new is not None:
        sys.stdout.write(unified_diff(report.source, report.fixed, shown(report.display)))
    counts["fixed"] += len(report.applied)
    counts["remaining"] += len(report.remaining)
    counts["hidden"] += sum(f.fix is not None and f.fix.safety is FixSafety.UNSAFE for f in report.remaining)
    if args.check and (report.new is not None or report.remaining):
        print(f"{shown(report.display)}: {len(report.applied)} fix(es) would be applied, "
              f"{len(report.remaining)} finding(s) would remain", file=sys.stderr)
    if report.remaining or (preview and report.new is not None):
        status = max(status, 1)
    return status


def _print_findings(name: str, findings, out, verb: Optional[str], args, dropped=None) -> None:
    for f in findings:
        tag = _tag(f, verb, args, dropped or {})
        print(f"{shown(name)}:{f.line}:{f.col + 1}: {f.code} {f.message} {tag}", file=out)


def _tag(f: Finding, verb: Optional[str], args, dropped: dict) -> str:
    if verb:
        return f"[{verb}, {f.fix.safety.value}]"
    if _key(f) in dropped:
        return f"[fix dropped: {dropped[_key(f)]}]"
    if f.fix is None or not f.fix.edits:
        return "[no fix]"
    if not allowed(f, args.unsafe_fixes):
        return "[unsafe fix: --unsafe-fixes]"
    return "[not fixed]"


def _summary(args, counts, out) -> None:
    if args.check:
        return
    verb = "would be fixed" if args.diff else "fixed"
    line = f"{counts['fixed']} finding(s) {verb}, {counts['remaining']} remaining"
    if counts["hidden"]:
        line += f" ({counts['hidden']} with an unsafe fix: --unsafe-fixes)"
    print(line, file=sys.stderr if args.diff else out)


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff that marks a missing newline at the end of either side, as `diff` does."""
    lines = []
    for line in difflib.unified_diff(_lines(before), _lines(after), name, name):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)


def _lines(text: str) -> list[str]:
    """Lines with their ends, split only where Python's tokenizer splits."""
    return [line for line in re.split(r"(?<=\n)|(?<=\r)(?!\n)", text) if line]
