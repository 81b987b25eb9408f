"""Fix harness: apply every fix (unsafe ones too) to both corpora and check that no fix breaks a file.

    python scripts/fix_harness.py            # run, write docs/fix-harness.md
    python scripts/fix_harness.py --check    # exit 1 on any broken fix (.ci/run does this)

Corpora: the ecosystem corpus (every .py file of the pinned releases, ~/.cache/flake8-tensorcopy/corpus,
built by `scripts/ecosystem.py --build`) and the known-bug corpus of scripts/recall.py (the labelled files:
tier 1 from PyPI releases, fetched when missing; tier 2 from git snapshots under --mirrors, skipped and
counted when absent). Each file with a finding is fixed in memory with all rules and unsafe fixes on, as
`fix --unsafe-fixes --extend-select TEN9` would; each changed file must
- compile;
- get no pyflakes message it did not have (an undefined or unbound name, an unused import, ...);
- get none of its fixed findings again (same code in the statement the fix rewrote);
- stay as it is under a second fix run (fixes are idempotent);
- gain no method call on a value the analysis knows is not a tensor (flake8_tensorcopy/fix/not_tensor.py);
- add a tensor method to, or rebind, only values the analysis proves are tensors where they stand
  (flake8_tensorcopy/fix/proof.py asks it again on the text each fix was made for): a fix applied without
  that proof is a failure, and the report's "proven" column counts the fixes that had it (or needed none).
Fixes the fixer refused itself (verification, `[fix dropped: why]`) are counted with their reasons.
"""
from __future__ import annotations

import argparse
import ast
import datetime
import difflib
import json
import os
import platform
import sys
import time
import warnings
from typing import Optional
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import corpus as corpus_mod  # noqa: E402
import ecosystem  # noqa: E402
import recall  # noqa: E402
from pyflakes import checker as pyflakes_checker  # noqa: E402

from flake8_tensorcopy.sources import fileio  # noqa: E402
from flake8_tensorcopy.engine.core import AnalysisError, parse  # noqa: E402
from flake8_tensorcopy.fix.fixer import FixError, fix_source, reported  # noqa: E402
from flake8_tensorcopy.fix.not_tensor import new_receivers, suspect_calls  # noqa: E402
from flake8_tensorcopy.fix.proof import unproven  # noqa: E402
from flake8_tensorcopy.sources.document import read_document  # noqa: E402
from flake8_tensorcopy.sources.notebook import NotebookError, cell_ends  # noqa: E402
from flake8_tensorcopy.cli.pool import parallel_map  # noqa: E402
from flake8_tensorcopy.rules import RULES  # noqa: E402

REPORT = ROOT / "docs" / "fix-harness.md"


@dataclass
class Job:
    corpus: str  # "ecosystem", "known-bug tier 1", "known-bug tier 2"
    name: str  # shown in the report
    path: str = ""  # a file to read, or
    data: bytes = b""  # its bytes


@dataclass
class Result:
    corpus: str
    name: str
    found: bool = False  # the file has a finding
    changed: bool = False
    applied: list[tuple[str, str]] = field(default_factory=list)  # (code, safe | unsafe)
    proven: list[str] = field(default_factory=list)  # code of each applied fix that had the proof it needs
    dropped: list[tuple[int, str, str]] = field(default_factory=list)  # (line, code, why)
    failures: list[str] = field(default_factory=list)
    exposed: list[str] = field(default_factory=list)  # a finding another rule's fix made appear
    unreadable: str = ""
    cpu: float = 0.0


# ---- one file -------------------------------------------------------------------------------------------
def run_job(job: Job) -> Result:
    start = time.process_time()
    out = _run(job)
    out.cpu = time.process_time() - start
    return out


def _run(job: Job) -> Result:
    out = Result(job.corpus, job.name)
    try:
        data = job.data or Path(job.path).read_bytes()
        doc = read_document(fileio.decode(data).text, job.path or job.name)
        ends = (lambda program: cell_ends(program, doc.cells.boundary)) if doc.cells else None
        outcome = fix_source(doc.program, job.path or job.name, RULES, unsafe=True, cell_ends=ends)
    except (OSError, fileio.FileError, NotebookError, AnalysisError, RecursionError) as exc:
        out.unreadable = str(exc).split("\n")[0] or type(exc).__name__
        return out
    except FixError as exc:
        out.found = True
        out.failures.append(f"the fixer gave up on the file: {exc}")
        return out
    except Exception as exc:  # noqa: BLE001 - a crash of ours is a failure to list, not the end of the run
        out.found = True
        out.failures.append(f"internal error: {type(exc).__name__}: {exc}".split("\n")[0])
        return out
    out.found = bool(outcome.applied or outcome.remaining)
    out.changed = outcome.changed
    out.applied = [(f.code, f.fix.safety.value) for f in outcome.applied]
    out.dropped = [(f.line, f.code, outcome.dropped[id(f)]) for f in outcome.remaining if id(f) in outcome.dropped]
    if outcome.changed:
        try:
            name = job.path or job.name  # a real path: the fixer sees the file's package, as `fix` would
            out.failures = without_proof(outcome, name, out.proven) + broken(outcome, name, ends, out.exposed)
        except Exception as exc:  # noqa: BLE001 - as above
            out.failures.append(f"internal error while checking: {type(exc).__name__}: {exc}".split("\n")[0])
    return out


def without_proof(outcome, name: str, proven: list[str]) -> list[str]:
    """One line per applied fix that adds a tensor method to, or rebinds, a value not proven a tensor; the codes
    of the others go to `proven`."""
    problems = []
    for text, applied in outcome.passes:
        for f in applied:
            why = unproven(text, name, f)
            if why:
                problems.append(f"applied without proof: {why}")
            else:
                proven.append(f.code)
    return problems


def broken(outcome, name: str, ends=None, exposed: Optional[list] = None) -> list[str]:
    """What is wrong with a fixed text, one line per problem."""
    before, after = outcome.source, outcome.fixed
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning of the file's own code
            compile(after, name, "exec")
        tree_before, tree_after = parse(before, name), parse(after, name)
    except (SyntaxError, ValueError, AnalysisError) as exc:
        return [f"the fixed text does not compile: {exc}"]
    problems = [f"pyflakes: line {line}: {message}" for line, message in new_pyflakes(tree_before, tree_after, name)]
    again, shown = reported_again(outcome, tree_after, name)
    problems += again
    if exposed is not None:
        exposed += shown
    for recv, method, what in new_receivers(suspect_calls(tree_before, before), suspect_calls(tree_after, after)):
        problems.append(f"new call .{method}() on '{recv}', {what}")
    try:
        again = fix_source(after, name, RULES, unsafe=True, cell_ends=ends)
    except (AnalysisError, FixError) as exc:
        problems.append(f"a second fix run fails: {exc}")
    else:
        if again.changed:
            added = [d[1:].strip() for d in difflib.unified_diff(after.splitlines(), again.fixed.splitlines(), n=0)
                     if d.startswith("+") and not d.startswith("+++")]
            problems.append(f"a second fix run changes it again ({', '.join(f.code for f in again.applied)}): "
                            f"{added[0] if added else 'lines removed'}")
    return problems


def new_pyflakes(tree_before: ast.Module, tree_after: ast.Module, name: str) -> list[tuple[int, str]]:
    """pyflakes messages of the fixed text that the original did not have (compared without positions)."""
    def messages(tree):
        return pyflakes_checker.Checker(tree, name).messages

    seen = Counter(_flake_key(m) for m in messages(tree_before))
    new = []
    for m in sorted(messages(tree_after), key=lambda m: m.lineno):
        key = _flake_key(m)
        if seen[key]:
            seen[key] -= 1
        else:
            new.append((m.lineno, m.message % m.message_args))
    return new


def _flake_key(message) -> tuple:
    """A message without positions: its arguments' line numbers (`redefinition of unused 'f' from line
    218`) move when a fix adds an import line."""
    return type(message).__name__, tuple("<line>" if isinstance(a, int) else str(a) for a in message.message_args)


def reported_again(outcome, tree_after: ast.Module, name: str) -> tuple[list[str], list[str]]:
    """(fixed findings whose code the engine still reports in the statement the fix rewrote: more findings of
    that code there than the statement had before, less the ones fixed; more findings of a code no fix was
    applied for: what another rule's fix exposed, not a fix that failed)."""
    starts = recall.statement_starts(tree_after)

    def statements(findings, text) -> Counter:
        where = line_map(text, outcome.fixed)
        return Counter((s, f.code) for f in findings
                       for s in {starts.get(n, n) for n in where.get(f.line, ())})

    expected = statements(reported(outcome.source, name, RULES)[0], outcome.source)
    for text, applied in outcome.passes:
        expected.subtract(statements(applied, text))
    remaining = Counter((starts.get(f.line, f.line), f.code) for f in outcome.remaining)
    fixed = set()
    for text, applied in outcome.passes:
        fixed |= set(statements(applied, text))
    more = [(line, code) for (line, code), n in sorted(remaining.items()) if n > expected[(line, code)]]
    return ([f"{code} reported again at line {line} after its fix" for line, code in more if (line, code) in fixed],
            [f"{code} at line {line}, new after another rule's fix" for line, code in more
             if (line, code) not in fixed])


def line_map(a: str, b: str) -> dict[int, list[int]]:
    """1-based line of `a` -> the lines of `b` it became (a changed block maps to the whole new block)."""
    out = {}
    matcher = difflib.SequenceMatcher(None, a.splitlines(), b.splitlines())
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for i in range(i1, i2):
            out[i + 1] = [j1 + i - i1 + 1] if tag == "equal" else list(range(j1 + 1, max(j2, j1 + 1) + 1))
    return out


# ---- the corpora ----------------------------------------------------------------------------------------
def ecosystem_jobs(corpus: Path) -> tuple[list[Job], list[str]]:
    torch_version, pins = corpus_mod.load_pins()
    jobs, missing = [], []
    for package in ["torch", *pins]:
        root = corpus / package
        if not root.is_dir():
            missing.append(package)
            continue
        jobs += [Job("ecosystem", f"{package}/{os.path.relpath(p, root)}", path=p)
                 for p in corpus_mod.python_files(root)]
    return jobs, missing


def with_findings(jobs: list[Job], last_run: Path) -> tuple[list[Job], list[Job]]:
    """(jobs to run, jobs skipped): a file that scripts/ecosystem.py's saved run of this same engine over these
    same files found nothing in (every rule on, no error) cannot be changed by a fix. Without such a run,
    every job runs."""
    try:
        data = json.loads(last_run.read_text())
    except (OSError, ValueError):
        return jobs, []
    if data.get("engine") != corpus_mod.engine_digest() or \
            data.get("stamp") != corpus_mod.files_stamp([j.path for j in jobs]):
        return jobs, []
    clean = {f"{f['package']}/{f['path']}" for f in data["files"] if not f["findings"] and not f["error"]}
    return [j for j in jobs if j.name not in clean], [j for j in jobs if j.name in clean]


def known_bug_jobs(releases: Path, mirrors: Path) -> tuple[list[Job], dict[str, str]]:
    """Tier 1 and tier 2 labelled files; (jobs, {file: why it is missing})."""
    _, cases = recall.load_labels()
    files = sorted({(c.source, c.path) for c in cases})
    recall.fetch_releases({s for s, _ in files if "@" not in s}, releases)
    jobs, missing = [], {}
    for source, path in files:
        tier = 2 if "@" in source else 1
        try:
            data = recall.read_git(source, path, mirrors) if tier == 2 else recall.read_release(source, path, releases)
        except (OSError, FileNotFoundError) as exc:
            missing[f"{source} {path}"] = str(exc)
            continue
        jobs.append(Job(f"known-bug tier {tier}", f"{source} {path}", data=data))
    return jobs, missing


# ---- the report -----------------------------------------------------------------------------------------
def write_report(results: list[Result], missing: dict[str, str], wall: float, cpu: float, jobs: int) -> None:
    corpora = ["ecosystem", "known-bug tier 1", "known-bug tier 2"]
    applied = Counter(a for r in results for a in r.applied)
    proven = Counter(c for r in results for c in r.proven)
    drops = [(r, d) for r in results for d in r.dropped]
    failures = [(r, f) for r in results for f in r.failures]
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = ["# Fix harness", "",
           f"Generated by `python scripts/fix_harness.py` on {when} at `{corpus_mod.git_head()}` (Python "
           f"{platform.python_version()}); do not edit by hand. Every file of both corpora with a finding is fixed",
           "in memory with every rule and unsafe fixes on; each changed file must compile, get no new pyflakes",
           "message, get none of its fixed findings again, stay unchanged under a second fix run, and gain no",
           "method call on a value the analysis knows is not a tensor, and add a tensor method to (or rebind) only",
           "values the analysis proves are tensors where they stand (\"proven\": fixes that had that proof, or",
           "needed none; a fix applied without it is a failure). `.ci/run` runs `--check`: any failure fails CI.",
           "",
           f"Run: {jobs} worker processes, {wall:.0f} s wall, {cpu:.0f} s CPU.", "",
           "| corpus | files | with a finding | changed | fixes applied | fixes dropped | failures |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for name in corpora:
        rs = [r for r in results if r.corpus == name]
        out.append(f"| {name} | {len(rs)} | {sum(r.found for r in rs)} | {sum(r.changed for r in rs)} | "
                   f"{sum(len(r.applied) for r in rs)} | {sum(len(r.dropped) for r in rs)} | "
                   f"{sum(len(r.failures) for r in rs)} |")
    out += ["", "## Fixes applied, per rule", "", "| code | safe | unsafe | proven |", "|---|---:|---:|---:|"]
    for code in sorted({c for c, _ in applied}):
        out.append(f"| {code} | {applied[(code, 'safe')]} | {applied[(code, 'unsafe')]} | {proven[code]} |")
    out += ["", f"## Failures ({len(failures)})", ""]
    out += [f"- `{r.name}`: {why}" for r, why in failures] or ["None."]
    exposed = [(r, why) for r in results for why in r.exposed]
    out += ["", f"## Findings a fix exposed ({len(exposed)}): not failures",
            "", "A finding of a rule that had no fix applied there, new after another rule's fix (its own fix "
            "withheld or not applicable): what a user sees after `fix`.", ""]
    out += [f"- `{r.name}`: {why}" for r, why in exposed] or ["None."]
    out += ["", f"## Fixes dropped by verification ({len(drops)})", ""]
    reasons = Counter((code, _reason_kind(why)) for _, (_, code, why) in drops)
    if drops:
        out += ["| code | reason | count |", "|---|---|---:|"]
        out += [f"| {code} | {kind} | {n} |" for (code, kind), n in sorted(reasons.items())]
        out += [""] + [f"- `{r.name}:{line}` {code}: {why}" for r, (line, code, why) in drops]
    else:
        out.append("None.")
    unread = [r for r in results if r.unreadable]
    out += ["", f"## Not fixed: unreadable or unparsable ({len(unread)} files)", ""]
    out += [f"- `{r.name}`: {r.unreadable}" for r in unread] or ["None."]
    out += ["", f"## Known-bug files not present ({len(missing)})", ""]
    out += [f"- `{k}`: {v}" for k, v in sorted(missing.items())] or ["None."]
    REPORT.write_text("\n".join(out) + "\n")


def _reason_kind(why: str) -> str:
    if "undefined or unbound" in why:
        return "would leave a name undefined or unbound"
    if why.startswith("the fix would call"):
        return "would call a method on a value known not to be a tensor"
    return why


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=corpus_mod.DEFAULT_CORPUS, help="ecosystem corpus")
    parser.add_argument("--releases", type=Path, default=recall.RELEASES, help="cache of tier-1 releases")
    parser.add_argument("--mirrors", type=Path, default=recall.MIRRORS, help="git snapshots (tier 2)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--slowest", type=int, default=0, help="print the N files that took longest")
    parser.add_argument("--check", action="store_true", help="exit 1 on any failure; the report is not written")
    parser.add_argument("--every-file", action="store_true",
                        help="fix every ecosystem file, not only those the saved ecosystem run found something in")
    args = parser.parse_args(argv)
    jobs, packages_missing = ecosystem_jobs(args.corpus)
    if packages_missing:
        print(f"fix_harness.py: ecosystem corpus incomplete, missing {packages_missing}: "
              "run scripts/ecosystem.py --build", file=sys.stderr)
        return 2
    known, missing = known_bug_jobs(args.releases, args.mirrors)
    if missing:
        print(f"fix_harness.py: {len(missing)} known-bug file(s) not present (tier 2 needs git snapshots under "
              f"{args.mirrors}), skipped", file=sys.stderr)
    skipped = []
    if not args.every_file:
        jobs, skipped = with_findings(jobs, ecosystem.LAST_RUN)
        print(f"fix_harness.py: {len(skipped)} ecosystem files skipped: the saved run of scripts/ecosystem.py by "
              "this engine found nothing in them (--every-file runs them too)", file=sys.stderr)
    start, cpu0 = time.perf_counter(), _cpu()
    results = list(parallel_map(run_job, jobs + known, max(1, args.jobs), chunksize=8))
    results += [Result(j.corpus, j.name) for j in skipped]
    wall, cpu = time.perf_counter() - start, _cpu() - cpu0
    failures = [(r, f) for r in results for f in r.failures]
    for r, why in failures:
        print(f"{r.name}: {why}", file=sys.stderr)
    applied = sum(len(r.applied) for r in results)
    print(f"fix_harness.py: {len(results)} files, {sum(r.found for r in results)} with a finding, "
          f"{sum(r.changed for r in results)} changed, {applied} fixes applied, "
          f"{sum(len(r.dropped) for r in results)} dropped, {len(failures)} failures; {wall:.0f} s wall, "
          f"{cpu:.0f} s CPU", file=sys.stderr)
    for r in sorted(results, key=lambda r: -r.cpu)[:args.slowest]:
        print(f"  {r.cpu:6.1f} s CPU  {r.name}", file=sys.stderr)
    if args.check:
        return 1 if failures else 0
    write_report(results, missing, wall, cpu, args.jobs)
    print(f"wrote {REPORT.relative_to(ROOT)}", file=sys.stderr)
    return 0


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


if __name__ == "__main__":
    sys.exit(main())
