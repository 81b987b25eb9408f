"""Time the worst-case inputs of tests/test_scaling.py at two sizes and print the ratio of the times.

    python scripts/scaling.py                       # this checkout, every case
    python scripts/scaling.py --package /tmp/old    # another checkout's flake8_tensorcopy (a "before")
    python scripts/scaling.py --issue               # only the four cases issue 15 named, at its sizes

The tests count work; this script measures time, which a test must never assert on. Each run is a
child process (so a run past --timeout can be stopped); it reports the CPU time of the work alone,
without start-up. At 4x the input, linear work takes about 4x the time, quadratic 16x.
"""
from __future__ import annotations

import argparse
import ast
import io
import os
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


def cases(issue_only: bool) -> dict[str, tuple[str, str, int]]:
    """name -> (how to run it, what to generate, base size)."""
    found = dict(ISSUE)
    if issue_only:
        return found
    sys.path.insert(0, str(ROOT / "tests"))
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
    path = os.path.join(folder, "t.ipynb" if how == "fix-notebook" else "t.py")  # fix writes it
    with open(path, "w") as fh:
        fh.write(text)
    args = {"check": ["check", "--select", "TEN"], "fix": ["fix", "--unsafe-fixes"], "fix-notebook": ["fix"],
            "fix-diff": ["fix", "--unsafe-fixes", "--diff"]}[how]
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        started = time.process_time()
        cli.main([*args, "-j", "1", path])
        return time.process_time() - started


def timed(package: Path, how: str, what: str, n: int, timeout: float) -> float | None:
    """CPU seconds of the run in a child process, or None when it passed `timeout`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package), str(ROOT / "tests")])}
    try:
        done = subprocess.run([sys.executable, __file__, "--one", how, what, str(n)], env=env,
                              capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    except subprocess.CalledProcessError as exc:
        raise SystemExit(f"{how} {what} {n} failed:\n{exc.stderr}") from None
    return float(done.stdout.split()[-1])


def show(seconds: float | None, timeout: float) -> str:
    return f"> {timeout:.0f} s" if seconds is None else f"{seconds:.3f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", type=Path, default=ROOT, help="the checkout whose flake8_tensorcopy to time")
    parser.add_argument("--issue", action="store_true", help="only the four cases issue 15 named")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is stopped")
    parser.add_argument("--rounds", type=int, default=1, help="runs per size; the fastest counts")
    parser.add_argument("--one", nargs=3, metavar=("HOW", "WHAT", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(run_one(args.one[0], args.one[1], int(args.one[2])))
        return 0
    sys.path.insert(0, str(args.package))
    commit = subprocess.run(["git", "-C", str(args.package), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"flake8_tensorcopy from {args.package} (commit {commit or '?'}), Python {sys.version.split()[0]}, "
          f"CPU seconds of the work alone, fastest of {args.rounds}\n")
    print("| case | size | time | 4 x size | time | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (how, what, n) in cases(args.issue).items():
        times = []
        for size in (n, 4 * n):
            runs = [timed(args.package, how, what, size, args.timeout) for _ in range(args.rounds)]
            times.append(None if None in runs else min(runs))
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
