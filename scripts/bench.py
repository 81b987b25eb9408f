"""Benchmark: the plugin's marginal cost in flake8, `check` against flake8, where the time goes, scaling.

    python scripts/bench.py --corpus /work/corpus            # everything; writes docs/benchmarks.md

Each flake8 variant runs from its own virtual environment (flake8 runs every installed plugin, whatever
--select says), made once under ~/.cache/flake8-tensorcopy/venvs; this worktree is installed into the
`tensorcopy` one (not editable) at the start of every run. Times are CPU time (user+sys of the child
process, from wait4) because the machine is shared; every comparison is a ratio within one round, and
rounds interleave the variants. Reported: the median over rounds and the [min, max] spread.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import corpus as corpus_mod  # noqa: E402
from corpus import python_files, read_source  # noqa: E402

from flake8_tensorcopy import __version__  # noqa: E402
from flake8_tensorcopy.rules.context import Context  # noqa: E402
from flake8_tensorcopy.engine import core as engine  # noqa: E402
from flake8_tensorcopy.engine.core import AnalysisError, analyse, could_fire  # noqa: E402
from flake8_tensorcopy.analysis.facts import FileFacts  # noqa: E402
from flake8_tensorcopy.rules import RULES  # noqa: E402

VENVS = corpus_mod.DEFAULT_CORPUS.parent / "venvs"
FLAKE8 = "flake8==7.5.0"
VARIANTS = {  # name: what is installed next to flake8
    "flake8": [],
    "tensorcopy": ["libcst==1.9.0", str(ROOT)],
    "bugbear": ["flake8-bugbear==26.10.27"],
    "torchfix": ["torchfix==0.7.0"],
}
RUFF = ["ruff==0.17.6"]  # for reference only: installed in its own environment, like the variants
REPORT = ROOT / "docs" / "benchmarks.md"


# ---- environments and timed child processes -------------------------------------------------------------
def venv(name: str, refresh: bool) -> Path | None:
    """The variant's virtual environment (or ruff's), created on first use; None when it cannot be installed."""
    path = VENVS / name
    marker = path / ".bench-ready"
    if marker.exists() and not (refresh and name == "tensorcopy"):
        return path
    if not (path / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    pip = [str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    extra = ["--force-reinstall", "--no-deps"] if marker.exists() else []
    try:
        if not marker.exists():
            subprocess.run(pip + (RUFF if name == "ruff" else [FLAKE8] + VARIANTS[name]), check=True)
        else:  # refresh: reinstall this worktree only
            subprocess.run(pip + extra + [str(ROOT)], check=True)
    except subprocess.CalledProcessError:
        return None
    marker.touch()
    return path


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(CPU s = user+sys, wall s, peak RSS MiB) of one child process; output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{cmd[:3]} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - start, usage.ru_maxrss // 1024


def flake8_cmd(env: Path, files: list[str], jobs: str = "1") -> list[str]:
    return [str(env / "bin" / "flake8"), "--isolated", "--exit-zero", f"--jobs={jobs}", *files]


def check_cmd(envs: dict[str, Path], files: list[str], *options: str) -> list[str]:
    """`flake8-tensorcopy check` without the cache unless `options` say otherwise (every run measured cold)."""
    return [str(envs["tensorcopy"] / "bin" / "flake8-tensorcopy"), "check", *(options or ("--no-cache",)), *files]


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    return f"{fmt.format(statistics.median(values))} [{fmt.format(min(values))}, {fmt.format(max(values))}]"


# ---- samples ---------------------------------------------------------------------------------------------
def all_files(corpus: Path) -> list[str]:
    return [f for p in sorted(os.listdir(corpus)) if (corpus / p).is_dir() for f in python_files(corpus / p)]


def sample(files: list[str], fraction: float) -> list[str]:
    """Every k-th file of the sorted list: every package is represented in proportion."""
    step = max(1, round(1 / fraction))
    return files[::step]


def count_lines(files: list[str]) -> int:
    return sum(read_source(f).count("\n") for f in files)


# ---- measurements ----------------------------------------------------------------------------------------
def plugin_overhead(envs: dict[str, Path], files: list[str], rounds: int, log, jobs: str = "1") -> dict:
    """(CPU, wall, peak RSS) of flake8 per variant at `jobs` processes, per round (variants interleaved)."""
    times: dict[str, list[tuple]] = {name: [] for name in envs}
    for r in range(rounds):
        for name, env in envs.items():
            if name == "torchfix" and (r >= max(1, rounds // 2) or jobs != "1"):
                continue  # the slow one: fewer rounds keep the run short
            cpu, wall, rss = timed(flake8_cmd(env, files, jobs))
            times[name].append((cpu, wall, rss))
            log(f"round {r + 1} {name} -j{jobs}: {cpu:.1f} s CPU, {wall:.1f} s wall")
    return times


def check_vs_flake8(envs: dict[str, Path], files: list[str], rounds: int, log) -> list[dict]:
    """flake8 (default checkers, all cores) against `flake8-tensorcopy check` on the same files."""
    out = []
    for r in range(rounds):
        f_cpu, f_wall, f_rss = timed(flake8_cmd(envs["flake8"], files, jobs="auto"))
        c_cpu, c_wall, c_rss = timed(check_cmd(envs, files))
        out.append({"f_cpu": f_cpu, "f_wall": f_wall, "f_rss": f_rss, "c_cpu": c_cpu, "c_wall": c_wall,
                    "c_rss": c_rss})
        log(f"round {r + 1}: flake8 -j auto {f_cpu:.1f} s CPU / {f_wall:.1f} s wall; "
            f"check {c_cpu:.1f} s CPU / {c_wall:.1f} s wall")
    return out


def small_repo(corpus: Path, fewest: int = 5) -> list[str]:
    """The files of the corpus package with the fewest lines among those of at least `fewest` files."""
    packages = [python_files(corpus / p) for p in sorted(os.listdir(corpus)) if (corpus / p).is_dir()]
    return min((fs for fs in packages if len(fs) >= fewest), key=count_lines, default=[])


def side_by_side(envs: dict[str, Path], files: list[str], rounds: int, log, ruff: Path | None) -> dict[str, list]:
    """(CPU, wall, peak RSS) per round of each way to lint `files`, interleaved: start-up (`flake8
    --version`), bare flake8 and `check` at -j1 and -j2, `check` cold and warm (its cache in a temporary
    folder, emptied before the cold run), and `ruff check` for reference."""
    commands = {"flake8 --version": [str(envs["flake8"] / "bin" / "flake8"), "--version"]}
    for jobs in ("1", "2"):
        commands[f"flake8 -j{jobs}"] = flake8_cmd(envs["flake8"], files, jobs)
        commands[f"check -j{jobs}"] = check_cmd(envs, files, "--no-cache", f"-j{jobs}")
    commands["check cold (cache)"] = check_cmd(envs, files, "-q")
    commands["check warm (cache)"] = check_cmd(envs, files, "-q")
    if ruff is not None:
        commands["ruff check"] = [str(ruff / "bin" / "ruff"), "check", "--isolated", "--exit-zero", "--no-cache",
                                  "--quiet", *files]
    out: dict[str, list[tuple]] = {name: [] for name in commands}
    with tempfile.TemporaryDirectory() as cache_dir:
        os.environ["FLAKE8_TENSORCOPY_CACHE_DIR"] = cache_dir
        try:
            for r in range(rounds):
                for name, cmd in commands.items():
                    if name.startswith("check cold"):
                        shutil.rmtree(cache_dir, ignore_errors=True)
                    out[name].append(timed(cmd))
                log(f"round {r + 1}: " + "; ".join(f"{n} {v[-1][0]:.2f} s CPU" for n, v in out.items()))
        finally:
            del os.environ["FLAKE8_TENSORCOPY_CACHE_DIR"]
    return out


def phases(files: list[str]) -> dict[str, float]:
    """Where the engine's time goes, in-process, phase by phase (CPU seconds)."""
    t = dict.fromkeys(["read", "pre-filter", "parse", "facts walk"] + [r.code for r in RULES], 0.0)
    counts = {"files": 0, "parsed": 0}
    clock = time.process_time
    for path in files:
        a = clock()
        source = read_source(path)
        b = clock()
        active = could_fire(source, RULES)
        c = clock()
        t["read"] += b - a
        t["pre-filter"] += c - b
        counts["files"] += 1
        if not active:
            continue
        try:  # as engine.analyse does it: only the defs with trigger text are walked
            found = engine.match_lines(source, active)
            tree = engine.tree_for(source, path, active)
        except AnalysisError:
            continue
        d = clock()
        by_type = engine.rules_by_node_type(active)
        facts = FileFacts(tree, source, tuple(by_type), engine.hot_lines(found, tree))
        facts.tensor_functions = frozenset()  # as analyse() does, where the engine has that option
        e = clock()
        t["parse"] += d - c
        t["facts walk"] += e - d
        counts["parsed"] += 1
        for node, frame in facts.nodes:
            for rule in by_type.get(type(node), ()):
                s = clock()
                try:
                    list(rule.check(node, Context(facts, frame, node, rule)) or ())
                except Exception:  # noqa: BLE001  (the engine reports these; here only time matters)
                    pass
                t[rule.code] += clock() - s
    return {**t, **counts}


def engine_cpu(files: list[str]) -> float:
    """CPU seconds of read + analyse over the files, in-process."""
    start = time.process_time()
    for path in files:
        try:
            analyse(read_source(path), path, RULES)
        except AnalysisError:
            pass
    return time.process_time() - start


def large_file(files: list[str], lines_wanted: int, directory: Path) -> Path:
    """One file of about `lines_wanted` lines: corpus modules that pass the pre-filter, concatenated."""
    parts, total = [], 0
    for path in files:
        source = read_source(path)
        if not could_fire(source, RULES) or "from __future__" in source:
            continue
        try:
            ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        parts.append(source if source.endswith("\n") else source + "\n")
        total += source.count("\n")
        if total >= lines_wanted:
            break
    out = directory / f"large_{lines_wanted}.py"
    out.write_text("".join(parts))
    ast.parse(out.read_text())
    return out


# ---- the run and the report -------------------------------------------------------------------------------
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=corpus_mod.DEFAULT_CORPUS)
    parser.add_argument("--fraction", type=float, default=0.05, help="share of the corpus files flake8 runs on")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scaling-rounds", type=int, default=3)
    parser.add_argument("--no-torchfix", action="store_true")
    parser.add_argument("--sample-only", action="store_true",
                        help="skip what runs over the whole corpus (phases, scaling, large files): a quick check")
    parser.add_argument("--out", type=Path, default=REPORT)
    args = parser.parse_args(argv)

    lines_out: list[str] = []

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    started = datetime.datetime.now(datetime.timezone.utc)
    files = all_files(args.corpus)
    subset = sample(files, args.fraction)
    n_sub = count_lines(subset)
    log(f"{len(files)} corpus files; flake8 sample: {len(subset)} files, {n_sub:,} lines")
    envs = {}
    for name in VARIANTS:
        if name == "torchfix" and args.no_torchfix:
            continue
        env = venv(name, refresh=True)
        if env is None:
            log(f"{name}: could not be installed; left out")
        else:
            envs[name] = env

    ruff = venv("ruff", refresh=False)
    if ruff is None:
        log("ruff: could not be installed; left out")
    overhead = {j: plugin_overhead(envs, subset, args.rounds, log, j) for j in ("1", "2")}
    versus = check_vs_flake8(envs, subset, args.rounds, log)
    small = small_repo(args.corpus)
    log(f"small repository: {len(small)} files; the sample: cold and warm")
    compared = {"small": side_by_side(envs, small, args.rounds, log, ruff),
                "sample": side_by_side(envs, subset, args.rounds, log, ruff)}

    log("phases over the whole corpus")
    where = phases(files if not args.sample_only else subset)
    log("scaling")
    scaling = {}
    for fraction in (0.1, 0.3, 1.0) if not args.sample_only else ():
        chosen = sample(files, fraction)
        argv = check_cmd(envs, chosen)
        runs = [timed(argv) for _ in range(args.scaling_rounds if fraction < 1 else 1)]
        scaling[fraction] = (len(chosen), count_lines(chosen), runs)
        log(f"{fraction:.0%}: {statistics.median(r[0] for r in runs):.1f} s CPU")
    big = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in (5_000, 15_000, 50_000) if not args.sample_only else ():
            path = large_file(files, size, Path(tmp))
            n = read_source(str(path)).count("\n")
            big[size] = (n, [engine_cpu([str(path)]) for _ in range(args.scaling_rounds)])
            log(f"large file {n} lines: {statistics.median(big[size][1]):.2f} s CPU")

    # ---- report
    torch_v, pins = corpus_mod.load_pins()
    versions = ", ".join(f"{k} {v}" for k, v in {"torch": torch_v, **pins}.items())
    tools = _versions(envs) + (f"; ruff venv: `{_ruff_version(ruff)}`" if ruff else "")
    w = lines_out.append
    w("# Benchmarks\n")
    w("Generated by `python scripts/bench.py` (see the README's Development section); do not edit by hand.\n")
    w(f"- Date: {started:%Y-%m-%d %H:%M} UTC; flake8-tensorcopy {__version__} ({corpus_mod.git_head()}); "
      f"Python {platform.python_version()}; {os.cpu_count()} cores, shared with other jobs")
    w(f"- Tools: {tools}")
    w(f"- Command: `python scripts/bench.py --corpus {args.corpus} --fraction {args.fraction} "
      f"--rounds {args.rounds} --scaling-rounds {args.scaling_rounds}{' --no-torchfix' if args.no_torchfix else ''}"
      f"{' --sample-only' if args.sample_only else ''}`")
    w(f"- Corpus: the ecosystem corpus ({len(files)} files; {versions}).")
    w(f"- flake8 sample: every {max(1, round(1 / args.fraction))}th file of the corpus in path order, "
      f"{len(subset)} files, {n_sub:,} lines.")
    w("- Times are CPU seconds (user+sys of the child, from wait4): the machine is shared, so wall time is noise. "
      "Figures are the median over rounds with [min, max]; ratios are taken within each round.\n")
    w("## The plugin's marginal cost inside flake8\n")
    w("`flake8 --isolated --jobs=N FILES`, each variant from its own virtual environment. Target: <= 10 % "
      "overhead (ratio <= 1.10). At -j2 the second process hides CPU time in wall time: the CPU ratio is the "
      "cost.\n")
    w("| variant | -j | CPU s | CPU ratio to flake8 alone | wall s | wall ratio | peak RSS MiB | rounds |")
    w("|---|---|---|---|---|---|---|---|")
    names = {"flake8": "flake8 (pyflakes, pycodestyle, mccabe)", "tensorcopy": "flake8 + flake8-tensorcopy",
             "bugbear": "flake8 + flake8-bugbear", "torchfix": "flake8 + torchfix"}
    for jobs, times in overhead.items():
        base = times["flake8"]
        for name, ts in times.items():
            if ts:
                w(f"| {names[name]} | {jobs} | {spread([t[0] for t in ts])} | "
                  f"{spread([t[0] / b[0] for t, b in zip(ts, base)], '{:.3f}')} | {spread([t[1] for t in ts])} | "
                  f"{spread([t[1] / b[1] for t, b in zip(ts, base)], '{:.3f}')} | {max(t[2] for t in ts)} | "
                  f"{len(ts)} |")
    if args.no_torchfix:
        w("\ntorchfix was left out of this run (`--no-torchfix`).")
    elif "torchfix" not in envs:
        w("\ntorchfix could not be installed in its environment; it is left out.")
    w("\n## `flake8-tensorcopy check` against flake8\n")
    w("Same files; flake8 with its default checkers and `--jobs=auto`; `check` as shipped "
      "(`-j` defaults to all cores; its pool starts only for enough files). Target: check >= 10x faster.\n")
    cpu_r = [v["f_cpu"] / v["c_cpu"] for v in versus]
    wall_r = [v["f_wall"] / v["c_wall"] for v in versus]
    w("| measure | flake8 -j auto | check | flake8 / check |")
    rss = f"| peak RSS MiB | {max(v['f_rss'] for v in versus)} | {max(v['c_rss'] for v in versus)} | |"
    w("|---|---|---|---|")
    w(f"| CPU s | {spread([v['f_cpu'] for v in versus])} | {spread([v['c_cpu'] for v in versus])} | "
      f"{spread(cpu_r, '{:.1f}')} |")
    w(f"| wall s | {spread([v['f_wall'] for v in versus])} | {spread([v['c_wall'] for v in versus])} | "
      f"{spread(wall_r, '{:.1f}')} |")
    w(rss)
    w("")
    w("## Start-up, a small repository, the cache, ruff\n")
    w(f"The small repository is the corpus package of the fewest lines among those of 5 files or more "
      f"({len(small)} files, {count_lines(small):,} lines); the sample is the flake8 sample above. `check -jN` "
      "runs without the cache; `cold` empties a cache folder first, `warm` runs again on it. Ratios are "
      "to `flake8 -j1` on the same files, within each round; `ruff check --no-cache` is for reference.\n")
    w("| files | command | CPU s | wall s | CPU ratio to flake8 -j1 | peak RSS MiB |")
    w("|---|---|---|---|---|---|")
    for label, measured in compared.items():
        base = measured["flake8 -j1"]
        for name, ts in measured.items():
            w(f"| {label} | `{name}` | {spread([t[0] for t in ts])} | {spread([t[1] for t in ts])} | "
              f"{spread([t[0] / b[0] for t, b in zip(ts, base)], '{:.3f}')} | {max(t[2] for t in ts)} |")
    w("")
    w(f"## Where the time goes ({'the sample' if args.sample_only else 'whole corpus'}, in-process, one pass)\n")
    total = sum(v for k, v in where.items() if k not in ("files", "parsed"))
    w(f"{where['files']} files, {where['parsed']} passed the pre-filter and were parsed.\n")
    w("| phase | CPU s | share |")
    w("|---|---|---|")
    for k, v in where.items():
        if k not in ("files", "parsed"):
            w(f"| {k} | {v:.2f} | {100 * v / total:.1f} % |")
    w(f"| total | {total:.2f} | 100 % |")
    w("")
    if scaling:  # not with --sample-only
        w("## Scaling\n")
        w("`flake8-tensorcopy check` over every k-th file of the corpus in path order (100 % runs "
          "once; the shares `--scaling-rounds` times): CPU time, cost per 1,000 lines and peak RSS (memory).\n")
        w("| files | lines | CPU s | ms per 1k lines | peak RSS MiB |")
        w("|---|---|---|---|---|")
        for fraction, (n_files, n_lines, runs) in scaling.items():
            cpu = [r[0] for r in runs]
            w(f"| {fraction:.0%} ({n_files}) | {n_lines:,} | {spread(cpu)} | "
              f"{1e6 * statistics.median(cpu) / n_lines:.2f} | {max(r[2] for r in runs)} |")
        w("\nOne large file (corpus modules that pass the pre-filter, concatenated), engine in-process:\n")
        w("| lines | CPU s | ms per 1k lines |")
        w("|---|---|---|")
        for size, (n, times) in big.items():
            w(f"| {n:,} | {spread(times)} | {1000 * statistics.median(times) / n * 1000:.2f} |")
    args.out.write_text("\n".join(lines_out) + "\n")
    log(f"wrote {args.out}")
    return 0


def _ruff_version(env: Path) -> str:
    return subprocess.run([str(env / "bin" / "ruff"), "--version"], capture_output=True, text=True).stdout.strip()


def _versions(envs: dict[str, Path]) -> str:
    out = []
    for name, env in envs.items():
        text = subprocess.run([str(env / "bin" / "flake8"), "--version"], capture_output=True, text=True).stdout
        out.append(f"{name} venv: `{' '.join(text.split())}`")
    return "; ".join(out)


if __name__ == "__main__":
    sys.exit(main())
