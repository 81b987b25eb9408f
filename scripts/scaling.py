"""Time the worst-case inputs of tests/integration/test_scaling.py at two sizes and print the ratio of the times.

    python scripts/scaling.py                       # this checkout, every case
    python scripts/scaling.py --package /tmp/old    # another checkout's flake8_tensorcopy (a "before")
    python scripts/scaling.py --issue               # only the four cases issue 15 named, at its sizes
    python scripts/scaling.py --growth              # one scope, one big file, one package: at n, 4n, 16n

The tests count work; this script measures time, which a test must never assert on. Each run is a
child process (so a run past --timeout can be stopped); it reports the CPU time of the work alone,
without start-up, and the child's peak memory (resident set). At 4x the input, linear work takes about
4x the time, quadratic 16x.
"""
from __future__ import annotations

import argparse
import ast
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The cases issue 15 named: (front end, generator, size, 4 x size), sizes near the issue's own.
ISSUE = {
    "TEN101 many branches (check)": ("check", "many_branches", 25),
    "TEN901 long line (check)": ("check", "long_line", 5_000),
    "TEN401 big file (fix)": ("fix", "big_file", 400),
    "notebook of repeated lines (fix)": ("fix-notebook", "notebook", 1_700),
    "TEN401 big file (fix --diff)": ("fix-diff", "big_file", 400),
}


# Issues 26 and 27: (front end, generator, sizes); `check` of a package checks every module of it.
GROWTH = {
    "assignments in one scope (check)": ("check", "one_scope", (4_000, 16_000, 64_000)),
    "functions in one file (check)": ("check", "many_functions", (1_600, 4_000, 16_000)),
    "modules in one package (check every module)": ("check-package", "package", (100, 400, 1_600, 6_400)),
    "functions of 40 callers beside a 5-line module (check it)": ("check-convert", "neighbours", (250, 1_000, 4_000)),
}


def cases(issue_only: bool) -> dict[str, tuple[str, str, int]]:
    """name -> (how to run it, what to generate, base size)."""
    found = dict(ISSUE)
    if issue_only:
        return found
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from scaling_cases import SHAPES

    from flake8_tensorcopy.rules import RULES

    for rule in RULES:
        for shape in SHAPES:
            found[f"{rule.code} {shape}"] = (f"rule:{rule.code}", f"shape:{shape}", 100)
        found[f"{rule.code} nesting"] = (f"rule:{rule.code}", "nesting", 20)
        found[f"{rule.code} regexes"] = (f"regex:{rule.code}", "hostile_text", 5_000)
    for shape in SHAPES:
        found[f"plugin, every rule, {shape}"] = ("plugin", f"every:{shape}", 40)
    found["check, every rule"] = ("check", "every:statements", 40)
    found["fix, every rule"] = ("fix", "every:statements", 40)
    return found


# ---- one run, in a child process ------------------------------------------------------------------
def run_one(how: str, what: str, n: int) -> float:
    """CPU seconds for one run of `how` on `what` at size n."""
    import scaling_cases as sc

    from flake8_tensorcopy.rules import BY_CODE, RULES

    if what.startswith("shape:"):
        text = sc.SHAPES[what[6:]](sc.unit(BY_CODE[how.split(":")[1]]), n)
    elif what == "nesting":
        text = sc.nesting(sc.unit(BY_CODE[how.split(":")[1]]), n)
    elif what.startswith("every:"):
        text = sc.every_rule(sc.SHAPES[what[6:]], n, RULES)
    else:
        text = getattr(sc, what)(n)
    if how.startswith("rule:"):
        from flake8_tensorcopy.engine import core as engine

        started = time.process_time()
        engine.analyse(text, "t.py", [BY_CODE[how[5:]]])
        return time.process_time() - started
    if how.startswith("regex:"):
        rule = BY_CODE[how[6:]]
        started = time.process_time()
        for trigger in (rule.trigger, rule.hot):
            list(trigger.finditer(text))
        return time.process_time() - started
    if how == "plugin":
        from flake8_tensorcopy.adapters.flake8_plugin import Plugin

        tree, lines = ast.parse(text), text.splitlines(keepends=True)
        started = time.process_time()
        list(Plugin(tree, lines, "t.py").run())
        return time.process_time() - started
    from flake8_tensorcopy.cli import main as cli

    folder = tempfile.mkdtemp()
    if isinstance(text, dict):  # a package: check all of it, or only its 5-line module
        sc.write_files(folder, text)
        path = os.path.join(folder, "pkg", "convert.py") if how == "check-convert" else folder
        how = "check"
    else:
        path = os.path.join(folder, "t.ipynb" if how == "fix-notebook" else "t.py")  # fix writes it
        with open(path, "w") as fh:
            fh.write(text)
    args = {"check": ["check", "--select", "TEN"], "fix": ["fix", "--unsafe-fixes"], "fix-notebook": ["fix"],
            "fix-diff": ["fix", "--unsafe-fixes", "--diff"]}[how]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        started = time.process_time()
        cli.main([*args, "-j", "1", path])
        return time.process_time() - started


def timed(package: Path, how: str, what: str, n: int, timeout: float) -> tuple[float, int] | None:
    """(CPU seconds, peak resident MB) of the run in a child process, or None when it passed `timeout`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package), str(ROOT / "tests" / "support")])}
    try:
        done = subprocess.run([sys.executable, __file__, "--one", how, what, str(n)], env=env,
                              capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"{how} {what} {n} failed:\n{exc.stderr}") from None
    seconds, memory = done.stdout.split()[-2:]
    return float(seconds), int(memory)


def show(seconds: float | None, timeout: float) -> str:
    return f"> {timeout:.0f} s" if seconds is None else f"{seconds:.3f} s"


def growth(args) -> None:
    """The cases of issues 26 and 27, one row per size, each compared with the size before it."""
    print("| case | size | time | peak memory | time ratio | memory ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (how, what, sizes) in GROWTH.items():
        before = None
        for n in sizes:
            got = timed(args.package, how, what, n, args.timeout)
            ratios = ["-", "-"]
            if got is not None and before is not None and before[0] > 0:
                ratios = [f"{got[0] / before[0]:.1f}", f"{got[1] / before[1]:.1f}"]
            memory = "-" if got is None else f"{got[1]:,} MB"
            print(f"| {name} | {n:,} | {show(got and got[0], args.timeout)} | {memory} | {' | '.join(ratios)} |",
                  flush=True)
            before = got
            if got is None:
                break


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", type=Path, default=ROOT, help="the checkout whose flake8_tensorcopy to time")
    parser.add_argument("--issue", action="store_true", help="only the four cases issue 15 named")
    parser.add_argument("--growth", action="store_true", help="one scope, one file, one package at n, 4n, 16n")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is stopped")
    parser.add_argument("--rounds", type=int, default=1, help="runs per size; the fastest counts")
    parser.add_argument("--one", nargs=3, metavar=("HOW", "WHAT", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        seconds = run_one(args.one[0], args.one[1], int(args.one[2]))
        print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        return 0
    sys.path.insert(0, str(args.package))
    commit = subprocess.run(["git", "-C", str(args.package), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"flake8_tensorcopy from {args.package} (commit {commit or '?'}), Python {sys.version.split()[0]}, "
          f"CPU seconds of the work alone, fastest of {args.rounds}\n")
    if args.growth:
        growth(args)
        return 0
    print("| case | size | time | 4 x size | time | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (how, what, n) in cases(args.issue).items():
        times = []
        for size in (n, 4 * n):
            runs = [timed(args.package, how, what, size, args.timeout) for _ in range(args.rounds)]
            times.append(None if None in runs else min(r[0] for r in runs))
        small, large = times
        if small is None or small <= 0:
            ratio = "-"
        else:
            ratio = f"> {args.timeout / small:.0f}" if large is None else f"{large / small:.1f}"
        print(f"| {name} | {n:,} | {show(small, args.timeout)} | {4 * n:,} | {show(large, args.timeout)} | {ratio} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
