"""Ecosystem check: run the linter over pinned releases of real PyTorch code and keep its precision honest.

    python scripts/ecosystem.py --build          # fetch the pinned corpus (cached), run, write docs/ecosystem.md
    python scripts/ecosystem.py --check          # exit 1 on findings missing from the triage file (or stale ones)
    python scripts/ecosystem.py --triage-todo    # print each untriaged finding with context and its id
    python scripts/ecosystem.py --verdict ID VERDICT "reason"    # record a verdict (ids from --triage-todo)

The corpus lives outside the repository (default ~/.cache/flake8-tensorcopy/corpus; --corpus DIR).
The triage file, ecosystem/triage.toml, holds every default-on finding keyed by package, path inside the
package, code and the stripped text of the reported line (line numbers move between releases).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import sys
import time
import tomllib
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import corpus as corpus_mod  # noqa: E402
from corpus import python_files, read_source  # noqa: E402

from flake8_tensorcopy import __version__  # noqa: E402
from flake8_tensorcopy.engine.core import AnalysisError  # noqa: E402
from flake8_tensorcopy.pipeline.lint import Document, lint  # noqa: E402
from flake8_tensorcopy.rules import BY_CODE, RULES  # noqa: E402

TRIAGE = ROOT / "ecosystem" / "triage.toml"
REPORT = ROOT / "docs" / "ecosystem.md"
LAST_RUN = corpus_mod.DEFAULT_CORPUS.parent / "ecosystem-last-run.json"
VERDICTS = {
    "true-bug": "the code is wrong as the rule says",
    "defensible": "no bug today, but the warning is warranted (fragile, hazard one edit away)",
    "intended": "the author meant it and it is correct here: noise",
    "false-positive": "the rule misread the code",
    "todo": "not triaged yet",
}
PRECISE = ("true-bug", "defensible")


# ---- running the engine over the corpus ------------------------------------------------------------
@dataclass
class FileResult:
    package: str
    path: str
    lines: int = 0
    parsed: bool = False
    cpu: float = 0.0
    error: str = ""
    findings: list[dict] = field(default_factory=list)


def _analyse_file(job: tuple[str, str, str]) -> FileResult:
    package, root, path = job
    out = FileResult(package, os.path.relpath(path, root))
    start = time.process_time()
    try:
        source = read_source(path)
        out.lines = source.count("\n") + (not source.endswith("\n") and bool(source))
        linted = lint(Document(path, source), RULES)
    except (OSError, UnicodeDecodeError, LookupError, SyntaxError, AnalysisError) as exc:
        out.error = str(exc)
    else:
        out.parsed = linted.parsed
        if linted.errors:
            out.error = "; ".join(linted.errors)
        for item in linted.items:
            out.findings.append({"code": item.code, "line": item.line, "col": item.column, "message": item.message,
                                 "text": item.source_line.strip()})
    out.cpu = time.process_time() - start
    return out


def run(corpus: Path, packages: list[str], jobs: int) -> dict:
    """Analyse every .py file of the packages; returns the run as plain data (also saved to LAST_RUN)."""
    work = []
    for package in packages:
        root = corpus / package
        work += [(package, str(root), p) for p in python_files(root)]
    engine, stamp = corpus_mod.engine_digest(), corpus_mod.files_stamp([p for *_, p in work])
    start_wall, start_cpu = time.perf_counter(), _children_cpu()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(_analyse_file, work, chunksize=16))
    data = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "wall": time.perf_counter() - start_wall,
        "cpu": _children_cpu() - start_cpu,
        "jobs": jobs,
        "engine": engine,  # scripts/fix_harness.py takes its files from a run of the same engine
        "stamp": stamp,  # over the same files
        "files": [r.__dict__ for r in results],
    }
    LAST_RUN.parent.mkdir(parents=True, exist_ok=True)
    LAST_RUN.write_text(json.dumps(data))
    return data


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


# ---- triage ------------------------------------------------------------------------------------------
def key_of(package: str, path: str, code: str, text: str) -> tuple[str, str, str, str]:
    return (package, path, code, text)


def key_id(key: tuple) -> str:
    return hashlib.sha1("\0".join(key).encode()).hexdigest()[:10]


def default_on_findings(data: dict) -> Counter:
    """Counter of triage keys for every default-on finding of a run."""
    found = Counter()
    for f in data["files"]:
        for x in f["findings"]:
            rule = BY_CODE.get(x["code"])
            if rule is not None and rule.default_on:
                found[key_of(f["package"], f["path"], x["code"], x["text"])] += 1
    return found


def load_triage(path: Path | None = None) -> dict[tuple, dict]:
    path = path or TRIAGE
    if not path.exists():
        return {}
    entries = tomllib.loads(path.read_text()).get("finding", [])
    return {key_of(e["package"], e["path"], e["code"], e["text"]): e for e in entries}


def save_triage(entries: dict[tuple, dict], path: Path | None = None) -> None:
    """Write the triage file sorted by key, one TOML table per finding (JSON strings are TOML strings)."""
    path = path or TRIAGE
    out = ["# Every default-on finding of scripts/ecosystem.py on the pinned corpus, with a verdict.",
           "# verdict: " + " | ".join(VERDICTS) + "   (precision counts true-bug + defensible)",
           "# Keyed by package, path, code and the stripped reported line; count when it occurs more than once.",
           ""]
    for key in sorted(entries):
        e = entries[key]
        out.append("[[finding]]")
        for name in ("package", "path", "code", "text", "verdict", "reason"):
            out.append(f"{name} = {json.dumps(e.get(name, ''), ensure_ascii=False)}")
        if e.get("count", 1) != 1:
            out.append(f"count = {int(e['count'])}")
        out.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out))


def compare(found: Counter, triage: dict[tuple, dict]) -> tuple[list[tuple], list[tuple]]:
    """(untriaged keys, stale keys): findings whose key or count is not in the triage file, and entries
    no finding matches any more. A `todo` verdict counts as untriaged."""
    untriaged = [k for k, n in found.items()
                 if k not in triage or triage[k].get("count", 1) != n or triage[k].get("verdict") == "todo"]
    stale = [k for k in triage if k not in found]
    return sorted(untriaged), sorted(stale)


def precision(found: Counter, triage: dict[tuple, dict]) -> dict[str, Counter]:
    """Per code: Counter of verdicts over all occurrences (untriaged ones count as 'todo')."""
    per = defaultdict(Counter)
    for key, n in found.items():
        verdict = triage.get(key, {}).get("verdict", "todo")
        per[key[2]][verdict] += n
    return per


# ---- commands ----------------------------------------------------------------------------------------
def context(corpus: Path, package: str, path: str, line: int, around: int = 3) -> str:
    try:
        text = read_source(str(corpus / package / path)).splitlines()
    except OSError:
        return "    (file not in the corpus)"
    lo, hi = max(1, line - around), min(len(text), line + around)
    return "\n".join(f"{'>' if n == line else ' '}{n:6d} | {text[n - 1]}" for n in range(lo, hi + 1))


def triage_todo(data: dict, triage: dict, corpus: Path, add: bool, drop_stale: bool = False) -> int:
    found = default_on_findings(data)
    untriaged, stale = compare(found, triage)
    ran = {f["package"] for f in data["files"]}
    stale = [k for k in stale if k[0] in ran]  # a run over some packages says nothing of the others
    wanted = set(untriaged)
    for f in data["files"]:
        for x in f["findings"]:
            key = key_of(f["package"], f["path"], x["code"], x["text"])
            if key in wanted:
                print(f"--- id {key_id(key)}  {f['package']}/{f['path']}:{x['line']}:{x['col']}: "
                      f"{x['code']} {x['message']}")
                print(context(corpus, f["package"], f["path"], x["line"]))
    for key in stale:
        print(f"--- stale triage entry (no such finding now): {' | '.join(key)}")
    if drop_stale:
        for key in stale:
            del triage[key]
    if add or drop_stale:
        for key in (untriaged if add else ()):
            entry = triage.setdefault(key, dict(zip(("package", "path", "code", "text"), key)))
            entry.setdefault("verdict", "todo")
            entry.setdefault("reason", "")
            entry["count"] = found[key]
        save_triage(triage)
    print(f"{len(untriaged)} untriaged, {len(stale)} stale{' (dropped)' if drop_stale else ''}", file=sys.stderr)
    return 0


def record_verdict(ident: str, verdict: str, reason: str, data: dict, triage: dict) -> int:
    if verdict not in VERDICTS:
        print(f"verdict must be one of {', '.join(VERDICTS)}", file=sys.stderr)
        return 2
    found = default_on_findings(data)
    keys = [k for k in set(found) | set(triage) if key_id(k).startswith(ident)]
    if len(keys) != 1:
        print(f"id {ident!r} matches {len(keys)} findings of the last run", file=sys.stderr)
        return 2
    (key,) = keys
    entry = triage.setdefault(key, dict(zip(("package", "path", "code", "text"), key)))
    entry.update(verdict=verdict, reason=reason, count=found.get(key, entry.get("count", 1)))
    save_triage(triage)
    print(f"{key_id(key)}: {verdict}: {' | '.join(key)}")
    return 0


def check(data: dict, triage: dict) -> int:
    untriaged, stale = compare(default_on_findings(data), triage)
    for key in untriaged:
        print(f"untriaged: {key_id(key)}  {' | '.join(key)}")
    for key in stale:
        print(f"stale triage entry: {key_id(key)}  {' | '.join(key)}")
    errors = [f for f in data["files"] if f["error"] and not f["error"].startswith("cannot parse")]
    for f in errors:
        print(f"not analysed: {f['package']}/{f['path']}: {f['error']}")
    if untriaged or stale or errors:
        print(f"ecosystem check failed: {len(untriaged)} untriaged, {len(stale)} stale, {len(errors)} internal "
              "errors; see `scripts/ecosystem.py --triage-todo`", file=sys.stderr)
        return 1
    print(f"ecosystem check passed: {sum(len(f['findings']) for f in data['files'])} findings, all triaged")
    return 0


# ---- the report ----------------------------------------------------------------------------------------
def write_report(data: dict, triage: dict, versions: dict[str, str], corpus: Path) -> str:
    by_pkg = defaultdict(list)
    for f in data["files"]:
        by_pkg[f["package"]].append(f)
    codes = [r.code for r in RULES]
    found = default_on_findings(data)
    lines = [
        "# Ecosystem check",
        "",
        "Generated by `python scripts/ecosystem.py` (see the README's Development section); do not edit by hand.",
        "",
        f"- Date: {data['date']}; flake8-tensorcopy {__version__} ({corpus_mod.git_head()}), "
        f"Python {platform.python_version()}",
        f"- Rules: {', '.join(r.code + ('' if r.default_on else ' (opt-in)') for r in RULES)}",
        f"- Corpus: {sum(len(v) for v in by_pkg.values())} files, "
        f"{sum(f['lines'] for v in by_pkg.values() for f in v):,} lines; pins in `ecosystem/corpus.toml`",
        f"- Run: {data['jobs']} worker processes, {data['wall']:.1f} s wall, {data['cpu']:.1f} s CPU "
        "(user+sys of the workers; the machine is shared, so CPU time is the steadier figure)",
        "",
        "## Precision per rule (default-on findings, verdicts from `ecosystem/triage.toml`)",
        "",
        "Precision = (true-bug + defensible) / all findings. Target: >= 95 %.",
        "",
        "| code | findings | true-bug | defensible | intended | false-positive | untriaged | precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    per = precision(found, triage)
    for rule in RULES:
        if not rule.default_on:
            continue
        c = per.get(rule.code, Counter())
        total = sum(c.values())
        prec = f"{100 * sum(c[v] for v in PRECISE) / total:.0f} %" if total else "n/a (no findings)"
        lines.append(f"| {rule.code} | {total} | {c['true-bug']} | {c['defensible']} | {c['intended']} | "
                     f"{c['false-positive']} | {c['todo']} | {prec} |")
    lines += ["", "## Per package", "",
              "| package | version | files | lines | parsed | " + " | ".join(codes) + " | not analysed | CPU s |",
              "|---|---|---|---|---|" + "---|" * len(codes) + "---|---|"]
    totals = Counter()
    for package in sorted(by_pkg):
        files = by_pkg[package]
        per_code = Counter(x["code"] for f in files for x in f["findings"])
        bad = sum(1 for f in files if f["error"])
        row = Counter(files=len(files), lines=sum(f["lines"] for f in files), parsed=sum(f["parsed"] for f in files),
                      bad=bad, cpu=sum(f["cpu"] for f in files), **per_code)
        totals.update(row)
        lines.append(_row(package, versions.get(package, "?"), row, codes))
    lines.append(_row("**total**", "", totals, codes))
    bad = [f for f in data["files"] if f["error"]]
    lines += ["", "## Files that could not be analysed", ""]
    lines += [f"- `{f['package']}/{f['path']}`: {f['error']}" for f in bad] or ["None."]
    lines += ["", "## Findings and verdicts", ""]
    if found:
        lines += ["| code | where | line | verdict | reason |", "|---|---|---|---|---|"]
        for key in sorted(found, key=lambda k: (k[2], k[0], k[1])):
            e = triage.get(key, {})
            n = f" (x{found[key]})" if found[key] > 1 else ""
            lines.append(f"| {key[2]} | `{key[0]}/{key[1]}` | `{_cell(key[3])}`{n} | {e.get('verdict', 'todo')} | "
                         f"{_cell(e.get('reason', ''))} |")
    else:
        lines.append("No default-on findings.")
    text = "\n".join(lines) + "\n"
    REPORT.write_text(text)
    return text


def _row(name: str, version: str, row: Counter, codes: list[str]) -> str:
    cells = [name, version, f"{row['files']:,}", f"{row['lines']:,}", f"{row['parsed']:,}"]
    cells += [str(row[c]) for c in codes] + [str(row["bad"]), f"{row['cpu']:.1f}"]
    return "| " + " | ".join(cells) + " |"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=corpus_mod.DEFAULT_CORPUS, help="corpus directory")
    parser.add_argument("--build", action="store_true", help="fetch the pinned packages missing from the corpus")
    parser.add_argument("--rebuild", action="store_true", help="fetch every pinned package again")
    parser.add_argument("--packages", nargs="+", help="only these packages (not with --check)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="exit 1 on untriaged or stale findings")
    mode.add_argument("--triage-todo", action="store_true", help="print untriaged findings with context")
    mode.add_argument("--verdict", nargs=3, metavar=("ID", "VERDICT", "REASON"),
                      help="record a verdict for a finding of the last run: " + ", ".join(VERDICTS))
    parser.add_argument("--add-todo", action="store_true",
                        help="with --triage-todo: also add the untriaged findings to the triage file as 'todo'")
    parser.add_argument("--drop-stale", action="store_true",
                        help="with --triage-todo: remove triage entries that no finding matches any more")
    args = parser.parse_args(argv)

    torch_version, pins = corpus_mod.load_pins()
    versions = {"torch": torch_version, **pins}
    if args.build or args.rebuild:
        status = corpus_mod.build(args.corpus, force=args.rebuild)
        failed = {k: v for k, v in status.items() if v.startswith("FAILED")}
        if failed:
            print(f"could not fetch: {failed}", file=sys.stderr)
    triage = load_triage()
    if args.verdict:
        if not LAST_RUN.exists():
            print("no saved run; run --triage-todo first", file=sys.stderr)
            return 2
        return record_verdict(*args.verdict, json.loads(LAST_RUN.read_text()), triage)
    packages = [p for p in versions if (args.corpus / p).is_dir()]
    missing = [p for p in versions if p not in packages]
    if args.check and missing:
        print(f"corpus incomplete, missing {missing}: run with --build", file=sys.stderr)
        return 1
    if args.packages and not args.check:
        packages = [p for p in packages if p in args.packages]
    if not packages:
        print(f"no corpus at {args.corpus}: run with --build", file=sys.stderr)
        return 2
    data = run(args.corpus, packages, args.jobs)
    if args.check:
        return check(data, triage)
    if args.triage_todo:
        return triage_todo(data, triage, args.corpus, args.add_todo, args.drop_stale)
    if missing or args.packages:
        print(f"partial corpus ({', '.join(packages)}): docs/ecosystem.md not written", file=sys.stderr)
    else:
        write_report(data, triage, versions, args.corpus)
    untriaged, stale = compare(default_on_findings(data), triage)
    total = Counter(x["code"] for f in data["files"] for x in f["findings"])
    print(f"{len(data['files'])} files, {dict(total)}, {len(untriaged)} untriaged, {len(stale)} stale; "
          f"{data['cpu']:.1f} s CPU, {data['wall']:.1f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
