"""`flake8-tensorcopy fix`: rewrite files with the findings' fixes, or show (`--diff`) / test (`--check`).

Its options and exit codes are defined in cli.py, which imports this module (and LibCST) only to fix.
`fix --diff` keeps each file's outcome in the cache of `check` (cache.py), under a key of its own.
"""
from __future__ import annotations

import difflib
import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Iterator, Optional

from . import cache
from ..sources import fileio
from ..config.pyproject import ConfigError
from ..config.discovery import discover
from ..engine.core import AnalysisError
from ..fix.fixer import FixError, allowed, fix_source
from .formats import render, text_line
from ..text import shown, split_keeping_ends
from ..rules.model import Finding
from ..pipeline.lint import Document, Item, lines_of, to_item
from ..sources.document import read_document
from ..sources.notebook import NotebookError, cell_ends
from .pool import parallel_map
from ..rules import BY_CODE
from ..config.settings import Options, PerFile


@dataclass
class Job:
    display: str  # the name users see
    path: str  # the file read and written ('-' for stdin)
    codes: tuple[str, ...]
    unsafe: bool
    preview: bool  # --diff or --check: nothing is written
    data: Optional[bytes] = None  # stdin's bytes
    tensor_functions: tuple[str, ...] = ()
    cache: Optional[str] = None  # --diff: the cache folder (None: --no-cache, or a mode that is not cached)


@dataclass
class Report:
    display: str
    path: str
    original: bytes = b""
    new: Optional[bytes] = None  # None: nothing to write
    source: str = ""
    fixed: str = ""
    applied: list[Item] = field(default_factory=list)  # each with its note: "fixed, safe", ...
    remaining: list[Item] = field(default_factory=list)
    error: Optional[str] = None  # the file is left untouched
    skipped: Optional[str] = None  # not a file to fix (a symlink out of the tree), said so
    rule_errors: list[str] = field(default_factory=list)
    cell_errors: list[tuple[int, str]] = field(default_factory=list)  # notebook cells that do not parse: untouched


def cmd_fix(args) -> int:
    if "-" in args.paths and len(args.paths) > 1:
        print("fix: '-' (stdin) cannot be combined with other paths", file=sys.stderr)
        return 2
    if args.diff and args.format != "text":
        print(f"fix: --diff prints a diff; --format {args.format} is for the findings (use one)", file=sys.stderr)
        return 2
    opts = Options.from_args(args)
    try:  # the same configuration as `check`: [tool.flake8-tensorcopy] under the command-line options
        for_file = PerFile(opts)
    except ConfigError as exc:
        print(f"fix: {exc}", file=sys.stderr)
        return 2
    out = sys.stderr if args.paths == ["-"] else sys.stdout  # stdout carries the fixed text
    status, counts = 0, {"fixed": 0, "files": 0, "remaining": 0, "hidden": 0, "seen": 0}
    left: list[Item] = []  # with --format other than text: the findings left, printed at the end
    errors: list[tuple[str, str]] = []
    try:
        for report in _reports(args, opts, for_file):
            status = max(status, _handle(report, args, out, counts))
            left += report.remaining
            errors += [(report.display, e) for e in [report.error, *report.rule_errors] if e]
            errors += [(report.display, f"cell {c}: {m}") for c, m in report.cell_errors]
    except ConfigError as exc:  # a nested pyproject.toml's table, met on the way
        print(f"fix: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fix: interrupted; {counts['files']} file(s) written are fully fixed, the others untouched",
              file=sys.stderr)
        return 2
    if args.format != "text" and not args.check:
        out.write(render(args.format, sorted(left, key=lambda i: i.sort_key), errors, counts["seen"]))
    _summary(args, counts, out)
    return status


def _reports(args, opts: Options, for_file: PerFile) -> Iterator[Report]:
    """One report per file, in path order (as `check` finds them), each under its own configuration."""
    preview = args.diff or args.check
    if args.paths == ["-"]:
        name, chosen = args.stdin_filename or "-", for_file.base
        yield _work(Job(name, "-", chosen.codes_for(name), args.unsafe_fixes, preview, sys.stdin.buffer.read(),
                        chosen.tensor_functions))
        return
    found = discover(opts.paths, for_file.base.excludes, opts.force_exclude)
    files = [(path, for_file(path)) for path in found.files if not for_file.excluded(path)]
    yield from (Report(path, path, skipped=why) for path, why in found.skipped)
    yield from (Report(path, path, error=why) for path, why in found.errors)
    folder = cache.folder_for(for_file.base.project) if opts.cache and args.diff else None
    jobs = [Job(path, path, chosen.codes_for(path), args.unsafe_fixes, preview, None, chosen.tensor_functions, folder)
            for path, chosen in files]
    workers = min(args.jobs or os.cpu_count() or 1, len(jobs))
    if workers <= 1:
        yield from map(_work, jobs)
        return
    yield from parallel_map(_work, jobs, workers, chunksize=max(1, min(16, len(jobs) // (workers * 8))))


def _work(job: Job) -> Report:
    """One file's report, from the cache when it holds it (`fix --diff`)."""
    if job.cache is None:
        return _fixed(job)
    try:
        src = fileio.read(job.path)
    except fileio.FileError as exc:
        return Report(job.display, job.path, error=str(exc))
    entry = cache.key(job.path, src.data, ("fix --diff", job.display, *job.codes, str(job.unsafe),
                                           "tensor-functions", *job.tensor_functions))
    found = cache.load(job.cache, entry)
    if found is not None:
        try:
            return Report(job.display, job.path, src.data, src.encode(found["fixed"]) if found["changed"] else None,
                          src.text, found["fixed"] if found["changed"] else src.text,
                          [Item(**i) for i in found["applied"]], [Item(**i) for i in found["remaining"]],
                          cell_errors=[(c, m) for c, m in found["cell_errors"]])
        except (KeyError, TypeError, ValueError, fileio.FileError):  # an entry of another shape: a miss
            pass
    with cache.recording() as deps:
        report = _fixed(job, src)
    if not (report.error or report.rule_errors):
        cache.store(job.cache, entry, {"changed": report.new is not None, "fixed": report.fixed if report.new else "",
                                       "applied": [asdict(i) for i in report.applied],
                                       "remaining": [asdict(i) for i in report.remaining],
                                       "cell_errors": report.cell_errors}, deps)
    return report


def _fixed(job: Job, src: Optional[fileio.SourceFile] = None) -> Report:
    """Read (unless `src` is given), fix and encode one file; writes nothing (the main process does, in order)."""
    report = Report(job.display, job.path)
    report.original = job.data or b""  # stdin that cannot be decoded is still echoed back to the editor
    try:
        src = src or (fileio.decode(job.data) if job.data is not None else fileio.read(job.path))
        report.original, report.source = src.data, src.text
        rules = [BY_CODE[c] for c in job.codes]
        doc = read_document(src.text, job.display)  # a notebook's code cells as one program
        notebook = doc.cells
        report.cell_errors = notebook.errors if notebook else []
        outcome = fix_source(doc.program, job.display, rules, unsafe=job.unsafe, fixable=not doc.derived,
                             tensor_functions=job.tensor_functions,
                             cell_ends=(lambda program: cell_ends(program, notebook.boundary)) if notebook else None)
        report.fixed = notebook.with_program(outcome.fixed) if notebook and outcome.changed else (
            src.text if notebook else outcome.fixed)
        if notebook and outcome.changed and report.fixed == src.text:  # never "fixed" with nothing written
            raise NotebookError("the fixes cannot be written back into the notebook's cells")
        verb = "would fix" if job.preview else "fixed"  # positions: in the text of the pass that fixed them
        lines = lines_of(doc)  # once: not once per finding
        report.applied = [to_item(f, doc, lines, f"{verb}, {f.fix.safety.value}") for f in outcome.applied]
        after = read_document(report.fixed, job.display) if notebook and outcome.changed else (
            doc if notebook else Document(job.display, outcome.fixed))  # positions: after the fixes
        lines = lines_of(after)
        report.remaining = [to_item(f, after, lines, _tag(f, job.unsafe, outcome.dropped.get(id(f))))
                            for f in outcome.remaining]
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
        if not args.quiet:
            print(f"{shown(report.display)}: {report.skipped}", file=sys.stderr)
        return 0
    counts["seen"] += 1
    if report.error:
        print(f"{shown(report.display)}: {report.error}; file left untouched", file=sys.stderr)
        if report.path == "-" and not (args.diff or args.check):
            sys.stdout.buffer.write(report.original)  # an editor must get its text back
        return 2
    for error in report.rule_errors:
        print(f"{shown(report.display)}: internal error: {error}", file=sys.stderr)
    for cell, message in report.cell_errors:
        print(f"{shown(report.display)}:cell {cell}: error: {message}; cell left untouched", file=sys.stderr)
    status = 2 if report.rule_errors or report.cell_errors else 0
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
    if not args.check and args.format == "text":
        out.write("".join(text_line(item, args.show_source) for item in report.applied + report.remaining))
    if args.diff and report.new is not None:
        sys.stdout.write(unified_diff(report.source, report.fixed, shown(report.display)))
    counts["fixed"] += len(report.applied)
    counts["remaining"] += len(report.remaining)
    counts["hidden"] += sum(item.fix == "unsafe" for item in report.remaining)
    if args.check and (report.new is not None or report.remaining):
        print(f"{shown(report.display)}: {len(report.applied)} fix(es) would be applied, "
              f"{len(report.remaining)} finding(s) would remain", file=sys.stderr)
    if report.remaining or (preview and report.new is not None):
        status = max(status, 1)
    return status


def _tag(f: Finding, unsafe: bool, dropped: Optional[str] = None) -> str:
    """What became of a remaining finding's fix."""
    if dropped:
        return f"fix dropped: {dropped}"
    if f.withheld:
        return f"fix withheld: `flake8-tensorcopy explain {f.code}` says why"
    if f.fix is None or not f.fix.edits:
        return "no fix"
    if not allowed(f, unsafe):
        return "unsafe fix: --unsafe-fixes"
    return "not fixed"


def _summary(args, counts, out) -> None:
    if args.check or args.quiet:
        return
    verb = "would be fixed" if args.diff else "fixed"
    line = f"{counts['fixed']} finding(s) {verb}, {counts['remaining']} remaining"
    if counts["hidden"]:
        line += f" ({counts['hidden']} with an unsafe fix: --unsafe-fixes)"
    print(line, file=sys.stderr)  # stdout carries only findings, diffs or the fixed text


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff that marks a missing newline at the end of either side, as `diff` does."""
    lines = []
    for line in difflib.unified_diff(split_keeping_ends(before), split_keeping_ends(after), name, name):
        lines.append(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
    return "".join(lines)
