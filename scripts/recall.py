"""Recall and precision where the bugs live: score the engine on labelled real bugs and their look-alikes.

    python scripts/recall.py                # score both tiers, write docs/recall.md
    python scripts/recall.py --check        # tier 1 only: exit 1 below the recall floor or 95 % precision,
                                            # or on a default-on finding no label covers (.ci/run does this)
    python scripts/recall.py --todo         # print each finding no label covers, with context

Labels live in ecosystem/recall.toml: facts about public code (where, which code, bug or benign, why, the
fix that confirms a bug), never the code. Tier 1 cases are in released PyPI versions, fetched with
`pip download --no-deps --only-binary :all: NAME==VERSION` into a cache outside the repository
(~/.cache/flake8-tensorcopy/releases). Tier 2 cases are in git repositories at a commit; they are scored
when a snapshot is present under --mirrors (DIR/owner+name/repo, a git directory or a clone holding
one, as the fetch tool lays them out), and listed as missing otherwise.

A finding matches a label when it has the label's code and lies in the same statement as the labelled line.
Recall = labelled bugs found / labelled bugs; precision = bugs found / (bugs found + benign cases flagged).
"""
from __future__ import annotations

import argparse
import ast
import datetime
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import corpus as corpus_mod  # noqa: E402

from flake8_tensorcopy.sources import fileio  # noqa: E402
from flake8_tensorcopy.engine.core import AnalysisError, tree_for  # noqa: E402
from flake8_tensorcopy.pipeline.lint import lines_of, lint  # noqa: E402
from flake8_tensorcopy.sources.document import read_document  # noqa: E402
from flake8_tensorcopy.sources.notebook import NotebookError  # noqa: E402
from flake8_tensorcopy.rules import RULES  # noqa: E402

LABELS = ROOT / "ecosystem" / "recall.toml"
REPORT = ROOT / "docs" / "recall.md"
RELEASES = corpus_mod.DEFAULT_CORPUS.parent / "releases"
MIRRORS = Path(os.environ.get("TENSORCOPY_MIRRORS", "/work/.mirror"))
DEFAULT_ON = [r for r in RULES if r.default_on]
MIN_PRECISION = 0.95
LABELS_KNOWN = ("bug", "benign", "unconfirmed", "repeat")


@dataclass(frozen=True)
class Case:
    source: str  # "name==version" (tier 1) or "owner/name@commit" (tier 2)
    path: str
    line: int
    code: str
    label: str  # bug | benign | unconfirmed (a hazard by reading, no fix on record) | repeat (more of a bug)
    why: str
    fix: str = ""
    cell: Optional[int] = None
    needs: str = ""  # the fact the engine must know to get this case right (a miss's or a false alarm's cause)

    @property
    def tier(self) -> int:
        return 2 if "@" in self.source else 1

    @property
    def where(self) -> str:
        cell = f"cell {self.cell}:" if self.cell else ""
        return f"{self.source} {self.path}:{cell}{self.line}"


@dataclass
class Scored:
    """What the engine did on the labelled files of one tier."""
    found: dict[Case, bool] = field(default_factory=dict)  # every case scored: reported or not
    unlabelled: list[tuple[str, str, int, str, str]] = field(default_factory=list)  # source, path, line, code, text
    missing: dict[str, str] = field(default_factory=dict)  # source/path -> why it could not be scored


def load_labels(path: Path = LABELS) -> tuple[float, list[Case]]:
    """(recall floor, cases) from the labels file; a malformed case is an error naming it."""
    data = tomllib.loads(path.read_text())
    cases = []
    for i, e in enumerate(data.get("case", []), 1):
        if "package" in e:
            source = f"{e['package']}=={e['version']}"
        else:
            source = f"{e['repo']}@{e['commit']}"
        if e["label"] not in LABELS_KNOWN or (e["label"] in ("bug", "repeat") and not e.get("fix")):
            raise ValueError(f"case {i} ({source} {e['path']}): label must be bug or repeat (with a fix), benign "
                             f"or unconfirmed")
        cases.append(Case(source, e["path"], int(e["line"]), e["code"], e["label"], e["why"], e.get("fix", ""),
                          e.get("cell"), e.get("needs", "")))
    return float(data.get("recall_floor", 0.0)), cases


# ---- reading the labelled files ---------------------------------------------------------------------
def read_release(source: str, path: str, releases: Path) -> bytes:
    folder = releases / source
    if not folder.is_dir():
        raise FileNotFoundError(f"release {source} not fetched")
    return (folder / path).read_bytes()


def fetch_releases(sources: set[str], releases: Path) -> None:
    """Download every missing release in one `pip download` (one resolver run, not one per release) and
    unpack each wheel's .py files into releases/NAME==VERSION."""
    missing = sorted(s for s in sources if not (releases / s).is_dir())
    if not missing:
        return
    releases.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=releases, prefix=".dl-") as work:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary", ":all:",
                               "-d", work, *missing], capture_output=True, text=True)
        if done.returncode:  # one bad pin must not hide the others: fall back to one at a time
            for source in missing:
                name, version = source.split("==")
                try:
                    corpus_mod.fetch_package(name, version, releases, folder=source, wheel_only=True)
                except (subprocess.CalledProcessError, ValueError, OSError):
                    pass  # scored as missing, with the reason read_release gives
            return
        wheels = {_release_of(w.name): w for w in Path(work).iterdir()}
        for source in missing:
            wheel = wheels.get(_normal(source))
            if wheel is not None:
                tree = Path(work) / f"tree-{source}"
                corpus_mod.extract_py(wheel, tree)
                corpus_mod.replace_tree(tree, releases / source)


def _release_of(wheel: str) -> str:
    name, version = wheel.split("-")[:2]
    return _normal(f"{name}=={version}")


def _normal(source: str) -> str:
    name, version = source.split("==")
    return f"{re.sub(r'[-_.]+', '_', name).lower()}=={version}"


def snapshot(mirrors: Path, repo: str) -> Path:
    """The git directory of `repo`'s snapshot: DIR/owner+name/repo, bare, or a clone with its .git inside."""
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir


def read_git(source: str, path: str, mirrors: Path) -> bytes:
    repo, commit = source.split("@")
    git_dir = snapshot(mirrors, repo)
    if not git_dir.is_dir():
        raise FileNotFoundError(f"no snapshot of {repo} under {mirrors}")
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True)
    if done.returncode:
        raise FileNotFoundError(f"{commit[:10]}:{path} not in the snapshot of {repo}")
    return done.stdout


def checkout(source: str, path: str, mirrors: Path, cache: Path) -> Path:
    """Where `path` lies in a checkout of every Python file of the commit, made once under cache/checkouts:
    the engine reads the modules a file imports from its neighbours, and its package's callers, as it would
    in the user's clone (a script at the root imports packages in the folders beside it)."""
    repo, commit = source.split("@")
    folder = cache / "checkouts" / f"{repo.replace('/', '+')}@{commit[:12]}"
    done_mark = folder / ".done-all"
    if not done_mark.exists():
        git_dir = snapshot(mirrors, repo)
        spec = [":(glob)**/*.py"]
        folder.mkdir(parents=True, exist_ok=True)
        tar = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", *spec],
                             capture_output=True)
        if tar.returncode == 0:
            subprocess.run(["tar", "-x", "-C", str(folder)], input=tar.stdout, check=True)
        done_mark.touch()
    return folder / path


# ---- scoring --------------------------------------------------------------------------------------------
def statement_starts(tree: ast.AST) -> dict[int, int]:
    """line -> first line of the innermost statement that holds it."""
    spans = sorted(((n.end_lineno - n.lineno, n.lineno, n.end_lineno) for n in ast.walk(tree)
                    if isinstance(n, ast.stmt)), reverse=True)
    starts = {}
    for _, first, last in spans:
        for line in range(first, last + 1):
            starts[line] = first
    return starts


def score_file(path: str, data: bytes, cases: list[Case]) -> tuple[dict[Case, bool], list[tuple[int, str, str]]]:
    """Which cases of one file the engine reports, and its default-on findings no case covers
    (line or cell:line, code, stripped text)."""
    notebook = path.endswith(".ipynb")
    doc = read_document(data.decode("utf-8-sig") if notebook else fileio.decode(data).text, path)
    source, original = doc.program, lines_of(doc)
    if doc.cells:
        where = {doc.cells.locate(n): n for n in range(1, len(original) + 1)}
        shown = lambda n: "cell {}:{}".format(*doc.cells.locate(n))  # noqa: E731
    else:
        where = {(None, n): n for n in range(1, len(original) + 1)}
        shown = str
    findings = lint(doc, DEFAULT_ON, noqa=False).findings  # what the engine finds, whatever the file suppresses
    starts = statement_starts(tree_for(source, path, DEFAULT_ON))  # as the engine parses it (newer f-strings)
    key = lambda n: starts.get(n, n)  # noqa: E731
    lost = [c.where for c in cases if (c.cell, c.line) not in where]
    if lost:
        raise ValueError(f"labelled line not in the file: {', '.join(lost)}")
    reported = {(key(f.line), f.code): f for f in findings}
    covered = {(key(where[c.cell, c.line]), c.code) for c in cases}
    found = {c: (key(where[c.cell, c.line]), c.code) in reported for c in cases}
    unlabelled = [(shown(f.line), f.code, original[f.line - 1].strip()) for k, f in reported.items()
                  if k not in covered]
    return found, unlabelled


def score(cases: list[Case], tiers: tuple[int, ...], releases: Path, mirrors: Path, fetch: bool) -> Scored:
    out = Scored()
    by_file = defaultdict(list)
    for c in cases:
        if c.tier in tiers:
            by_file[(c.source, c.path)].append(c)
    if fetch:
        fetch_releases({source for source, _ in by_file if "@" not in source}, releases)
    for (source, path), group in sorted(by_file.items()):
        try:
            if "@" in source:
                data, disk = read_git(source, path, mirrors), checkout(source, path, mirrors, releases.parent)
            else:
                data, disk = read_release(source, path, releases), releases / source / path
            found, unlabelled = score_file(str(disk), data, group)
        except (OSError, subprocess.CalledProcessError, ValueError, fileio.FileError) as exc:
            out.missing[f"{source} {path}"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            continue
        except (SyntaxError, AnalysisError, NotebookError) as exc:  # scored: the engine finds nothing there
            found, unlabelled = {c: False for c in group}, []
            out.missing[f"{source} {path}"] = f"not analysable: {exc}"
        out.found.update(found)
        out.unlabelled += [(source, path, *u) for u in unlabelled]
    return out


def figures(scored: Scored, code: Optional[str] = None) -> dict:
    """bugs, found, benign, flagged, recall and precision over the scored cases (of one code, or all).
    Recall counts confirmed bugs (at most three sites per fix: more are `repeat`); precision counts every
    reported bug, repeat and unconfirmed hazard as right and every reported look-alike as wrong."""
    cases = [c for c in scored.found if code in (None, c.code)]
    reported = Counter(c.label for c in cases if scored.found[c])
    bugs = sum(c.label == "bug" for c in cases)
    right, wrong = reported["bug"] + reported["repeat"] + reported["unconfirmed"], reported["benign"]
    return {"bugs": bugs, "found": reported["bug"], "benign": sum(c.label == "benign" for c in cases),
            "flagged": wrong, "unconfirmed": reported["unconfirmed"] + reported["repeat"],
            "recall": reported["bug"] / bugs if bugs else None,
            "precision": right / (right + wrong) if right + wrong else None}


# ---- commands -------------------------------------------------------------------------------------------
def check(floor: float, scored: Scored) -> int:
    """The CI gate on tier 1: every labelled file read, no finding without a label, recall at the floor
    (a ratchet: a commit that raises recall raises the floor too), precision at least 95 %."""
    fig = figures(scored)
    problems = [f"cannot score {k}: {v}" for k, v in scored.missing.items()]
    problems += [f"no label for {s} {p}:{line}: {code} {text}" for s, p, line, code, text in scored.unlabelled]
    recall = fig["recall"] or 0.0
    if recall < floor - 5e-4:
        problems.append(f"default-on recall {recall:.3f} is below the floor {floor:.3f}")
    elif recall > floor + 5e-4:
        problems.append(f"default-on recall rose to {recall:.3f}: raise recall_floor in {LABELS.name} to "
                        f"{recall:.3f} in this commit")
    if fig["precision"] is not None and fig["precision"] < MIN_PRECISION:
        problems.append(f"precision {fig['precision']:.3f} is below {MIN_PRECISION}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"recall.py: tier 1: {fig['found']}/{fig['bugs']} bugs found (recall {recall:.3f}, floor {floor:.3f}), "
          f"{fig['flagged']}/{fig['benign']} look-alikes flagged, precision {_pct(fig['precision'])}"
          f"{'' if problems else ': ok'}", file=sys.stderr)
    return 1 if problems else 0


def _pct(x: Optional[float]) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def write_report(cases: list[Case], tiers: dict[int, Scored], floor: float) -> str:
    codes = sorted({c.code for c in cases})
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = [
        "# Recall and precision where the bugs live",
        "",
        f"Generated by `python scripts/recall.py` on {when} at `{corpus_mod.git_head()}`; the labels are in",
        "[ecosystem/recall.toml](../ecosystem/recall.toml): each case names public code (a PyPI release or a git",
        "commit), the line, the code it should get, bug or benign look-alike, why, and for a bug the fix commit,",
        "pull request or maintainer statement that confirms it. Only default-on rules are scored. A finding",
        "matches a case when it has the case's code and lies in the same statement.",
        "",
        "- Tier 1: released PyPI versions. `.ci/run` runs `scripts/recall.py --check`: it fails when default-on",
        f"  recall leaves the recorded floor ({floor:.3f}; the commit that raises recall raises the floor) or",
        f"  precision falls below {MIN_PRECISION:.0%}, or when a default-on finding in a labelled file has no label.",
        "- Tier 2: git repositories at a commit (training scripts, notebooks, research and RL code), scored when",
        "  their snapshots are present (`--mirrors`, default /work/.mirror); missing ones are listed below.",
        "",
    ]
    for tier, scored in tiers.items():
        total = figures(scored)
        out += [f"## Tier {tier}: {'PyPI releases' if tier == 1 else 'git repositories'}", "",
                f"{total['found']} of {total['bugs']} bugs found (recall {_pct(total['recall'])}), "
                f"{total['flagged']} of {total['benign']} look-alikes flagged (precision {_pct(total['precision'])}), "
                f"{len(scored.unlabelled)} findings without a label.", "",
                "| code | bugs | found | recall | look-alikes | flagged | precision |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for code in codes:
            f = figures(scored, code)
            out.append(f"| {code} | {f['bugs']} | {f['found']} | {_pct(f['recall'])} | {f['benign']} | {f['flagged']} "
                       f"| {_pct(f['precision'])} |")
        out.append("")
        misses = sorted((c for c, hit in scored.found.items() if c.label == "bug" and not hit),
                        key=lambda c: (c.code, c.needs, c.where))
        alarms = sorted((c for c, hit in scored.found.items() if c.label == "benign" and hit),
                        key=lambda c: (c.code, c.where))
        out += _cases_by_cause("Misses", misses) + _cases_by_cause("False alarms", alarms)
        if scored.unlabelled:
            out += ["### Findings without a label", ""]
            out += [f"- `{s} {p}:{line}` {code} `{text}`" for s, p, line, code, text in scored.unlabelled] + [""]
        if scored.missing:
            out += ["### Not scored", ""] + [f"- `{k}`: {v}" for k, v in sorted(scored.missing.items())] + [""]
    REPORT.write_text("\n".join(out + _held_out_section()))
    return str(REPORT)


def _held_out_section() -> list[str]:
    """The in-sample / held-out section scripts/heldout.py wrote into the report, kept as it is."""
    old = REPORT.read_text() if REPORT.exists() else ""
    begin, end = old.find("<!-- held-out:begin"), old.find("<!-- held-out:end -->")
    return [old[begin:end] + "<!-- held-out:end -->", ""] if 0 <= begin < end else []


def _cases_by_cause(title: str, cases: list[Case]) -> list[str]:
    if not cases:
        return []
    causes = Counter((c.needs or "not classified").split(":")[0] for c in cases)
    out = [f"### {title} ({len(cases)}), by cause", "",
           ", ".join(f"{cause}: {n}" for cause, n in causes.most_common()), ""]
    for c in cases:
        out.append(f"- {c.code} `{c.where}` — {c.why} *(needs: {c.needs or 'not classified'})*")
    return out + [""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", type=Path, default=RELEASES, help="cache of tier-1 releases")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS, help="fetched git snapshots (tier 2)")
    parser.add_argument("--labels", type=Path, default=LABELS)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="tier 1 gate for CI")
    mode.add_argument("--todo", action="store_true", help="print findings no label covers")
    args = parser.parse_args(argv)
    floor, cases = load_labels(args.labels)
    if args.check:
        return check(floor, score(cases, (1,), args.releases, args.mirrors, fetch=True))
    tiers = {t: score(cases, (t,), args.releases, args.mirrors, fetch=True) for t in (1, 2)}
    if args.todo:
        for scored in tiers.values():
            for source, path, line, code, text in scored.unlabelled:
                print(f"{source} {path}:{line}: {code}  {text}")
        return 0
    print(f"wrote {write_report(cases, tiers, floor)}", file=sys.stderr)
    for tier, scored in tiers.items():
        f = figures(scored)
        print(f"tier {tier}: recall {_pct(f['recall'])} ({f['found']}/{f['bugs']}), precision {_pct(f['precision'])}, "
              f"{len(scored.unlabelled)} unlabelled, {len(scored.missing)} not scored", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
