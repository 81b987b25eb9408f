"""Run the engine over every .py file of the installed site-packages and report crashes (issue 6).

Every rule runs (opt-in ones too) and, unless --prefilter is given, every file is parsed and walked
even when no rule's trigger text occurs in it, so the whole engine meets every file. With --compare,
every file the partial parse can stub (the tree `check` and `fix` fall back to when a file does not
parse, engine.partial_tree) is also analysed from that partial tree: a file whose findings differ from
the whole tree's is a mismatch.

    python scripts/sweep.py [--jobs N] [--prefilter] [--compare] [DIR ...]

Prints files, lines, findings, files that are not valid Python for this interpreter (listed),
crashes (each with its traceback; there must be none), mismatches (none) and the time taken. Exit
status 1 on a crash or a mismatch.
"""
from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import platform
import re
import sys
import sysconfig
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpus import read_source  # noqa: E402
from flake8_tensorcopy import __version__  # noqa: E402
from flake8_tensorcopy.engine.core import AnalysisError, analyse, partial_tree  # noqa: E402
from flake8_tensorcopy.rules import RULES  # noqa: E402

FORCED = [dataclasses.replace(r, trigger=re.compile("")) for r in RULES]


def check_file(args: tuple[str, bool, bool]) -> tuple[str, int, int, str, str]:
    """(path, lines, findings, outcome, detail): outcome is ok | unparsable | crash | mismatch."""
    path, prefilter, compare = args
    try:
        source = read_source(path)
    except (OSError, UnicodeDecodeError, LookupError, SyntaxError) as exc:
        return path, 0, 0, "unparsable", f"cannot read: {exc}"
    lines = source.count("\n") + 1
    rules = RULES if prefilter else FORCED
    try:
        result = analyse(source, path, rules)
    except AnalysisError as exc:
        return path, lines, 0, "unparsable", str(exc)
    except BaseException:  # noqa: B902 - the point of the sweep is to catch anything that escapes
        return path, lines, 0, "crash", traceback.format_exc()
    if result.errors:
        return path, lines, len(result.findings), "crash", "\n".join(result.errors)
    tree = partial_tree(source, rules) if compare and result.parsed else None
    if tree is not None:
        part = analyse(source, path, rules, tree=tree)
        if as_tuples(part.findings) != as_tuples(result.findings):
            return path, lines, len(result.findings), "mismatch", f"partial {as_tuples(part.findings)}\n" \
                f"whole {as_tuples(result.findings)}"
    return path, lines, len(result.findings), "ok", ""


def as_tuples(findings) -> list[tuple]:
    return [(f.line, f.col, f.code, f.message) for f in findings]


def python_files(roots: list[str]) -> list[str]:
    return sorted(str(p) for root in roots for p in Path(root).rglob("*.py") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", default=[sysconfig.get_paths()["purelib"]])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--prefilter", action="store_true", help="skip files no trigger matches, as users run it")
    parser.add_argument("--compare", action="store_true", help="also analyse each whole tree; report differences")
    args = parser.parse_args()
    files = python_files(args.roots)
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        results = pool.map(check_file, [(f, args.prefilter, args.compare) for f in files], chunksize=16)
    elapsed = time.perf_counter() - start
    crashes = [r for r in results if r[3] == "crash"]
    unparsable = [r for r in results if r[3] == "unparsable"]
    print(f"flake8-tensorcopy {__version__}, Python {platform.python_version()}, roots: {', '.join(args.roots)}")
    print(f"files: {len(results)}  lines: {sum(r[1] for r in results)}  findings: {sum(r[2] for r in results)}")
    print(f"not valid Python {platform.python_version()} (reported to the user, not crashes): {len(unparsable)}")
    for path, _, _, _, detail in unparsable:
        print(f"  {path}: {detail}")
    print(f"crashes: {len(crashes)}")
    for path, _, _, _, detail in crashes:
        print(f"  {path}\n{detail}")
    mismatches = [r for r in results if r[3] == "mismatch"]
    if args.compare:
        print(f"partial-parse mismatches: {len(mismatches)}")
        for path, _, _, _, detail in mismatches:
            print(f"  {path}\n{detail}")
    walked = "pre-filter on" if args.prefilter else "every file walked"
    print(f"time: {elapsed:.1f} s with {args.jobs} processes ({walked})")
    return 1 if crashes or mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
