"""Score the engine on the held-out known-bug corpus, and print per-rule figures only.

    python scripts/heldout.py              # per-rule and total figures for each tier
    python scripts/heldout.py --markdown   # the same as a markdown table
    python scripts/heldout.py --write      # in-sample and held-out side by side, into docs/recall.md

The labels are in ecosystem/heldout.toml, in the format of ecosystem/recall.toml, and are scored with
recall.py's own functions (load_labels, score, figures): tier 1 releases are fetched into --releases,
tier 2 snapshots are read from --mirrors. Unlike recall.py this script never prints a path, a line or
a case's text: the corpus is held out, so that the engine is not tuned on it case by case. What it
prints per rule and tier: bugs found / bugs (recall), look-alikes flagged / look-alikes, precision
(bugs, repeats and unconfirmed hazards reported count as right, look-alikes reported as wrong), and
how many cases could not be scored because their release or snapshot is absent.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import recall  # noqa: E402

LABELS = ROOT / "ecosystem" / "heldout.toml"
BEGIN, END = "<!-- held-out:begin (scripts/heldout.py --write) -->", "<!-- held-out:end -->"


def _mirror_view(cases: list, mirrors: Path, cache: Path) -> Path:
    """recall.read_git reads DIR/owner+name/repo as a git directory. Some snapshots are a work tree with
    .git inside: give score() a folder of links to the git directories, made under the cache."""
    view = cache / "heldout-mirrors"
    for repo in sorted({c.source.split("@")[0] for c in cases if c.tier == 2}):
        name = repo.replace("/", "+")
        real = mirrors / name / "repo"
        if (real / ".git").is_dir():
            real = real / ".git"
        if not real.is_dir():
            continue
        link = view / name / "repo"
        if link.is_symlink() and link.resolve() != real.resolve():
            link.unlink()
        if not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(real, target_is_directory=True)
    return view


def rows(cases: list, tier: int, scored: "recall.Scored") -> list[tuple]:
    """(code, figures, cases not scored) for each code of the tier, then ("all", ...)."""
    mine = [c for c in cases if c.tier == tier]
    missing = Counter(c.code for c in mine if c not in scored.found)
    out = [(code, recall.figures(scored, code), missing[code]) for code in sorted({c.code for c in mine})]
    return out + [("all", recall.figures(scored), sum(missing.values()))]


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b}"


def _pct(x) -> str:
    return "–" if x is None else f"{100 * x:.0f} %"


def side_by_side(held: dict, inside: dict, cases: list, in_cases: list) -> list[str]:
    """docs/recall.md's held-out section: per tier and rule, in-sample and held-out figures in one table."""
    out = [BEGIN, "## In sample and held out", "",
           "The held-out corpus ([ecosystem/heldout.toml](../ecosystem/heldout.toml)) was mined apart from the",
           "in-sample one, in repositories the in-sample corpus does not use, in two batches by two other",
           "methods (fix commits found by generic searches of issue threads; fix commits found by pairing the",
           "removed and added lines of every diff in training-code repositories listed by name); engine changes",
           "are not tuned on it case by case, and its cases are never printed. `python scripts/heldout.py",
           "--write` regenerates this section.", ""]
    for tier in (1, 2):
        codes = sorted({c.code for c in cases + in_cases if c.tier == tier and c.label == "bug"})
        out += [f"### Tier {tier}", "",
                "| code | in sample: found | recall | precision | held out: found | recall | precision |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for code in codes + [None]:
            a, b = recall.figures(inside[tier], code), recall.figures(held[tier], code)
            scored = bool(inside[tier].found)
            cells = [f"{a['found']}/{a['bugs']}" if scored else "not scored", _pct(a["recall"]),
                     _pct(a["precision"]), f"{b['found']}/{b['bugs']}", _pct(b["recall"]), _pct(b["precision"])]
            out.append(f"| {code or '**all**'} | " + " | ".join(cells) + " |")
        out.append("")
    return out + [END]


def write_section(lines: list[str], report: Path = recall.REPORT) -> None:
    """Put the section into the report, replacing the one there (recall.py keeps it when it rewrites)."""
    text = report.read_text() if report.exists() else ""
    block = "\n".join(lines)
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    report.write_text(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--releases", type=Path, default=recall.RELEASES, help="cache of tier-1 releases")
    parser.add_argument("--mirrors", type=Path, default=recall.MIRRORS, help="fetched git snapshots (tier 2)")
    parser.add_argument("--labels", type=Path, default=LABELS, help=argparse.SUPPRESS)
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--write", action="store_true", help="write in-sample and held-out figures to docs/recall.md")
    args = parser.parse_args(argv)
    _, cases = recall.load_labels(args.labels)
    mirrors = _mirror_view(cases, args.mirrors, args.releases.parent)
    tiers = {t: recall.score(cases, (t,), args.releases, mirrors, fetch=True) for t in (1, 2)}
    if args.write:
        _, in_cases = recall.load_labels(recall.LABELS)
        inside = {t: recall.score(in_cases, (t,), args.releases, args.mirrors, fetch=True) for t in (1, 2)}
        write_section(side_by_side(tiers, inside, cases, in_cases))
        print(f"heldout.py: wrote the held-out section of {recall.REPORT.relative_to(ROOT)}")
    unlabelled = {t: len(s.unlabelled) for t, s in tiers.items()}
    labels = Counter((c.tier, c.label) for c in cases)
    if args.markdown:
        print("| tier | code | bugs found | recall | look-alikes flagged | precision | hazards flagged | not scored |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
    for tier, scored in tiers.items():
        if not args.markdown:
            print(f"tier {tier} ({'PyPI releases' if tier == 1 else 'git snapshots'}): "
                  f"{labels[tier, 'bug']} bugs, {labels[tier, 'benign']} look-alikes, "
                  f"{labels[tier, 'unconfirmed'] + labels[tier, 'repeat']} unconfirmed/repeat; "
                  f"{unlabelled[tier]} findings without a label")
            print(f"  {'code':<7} {'bugs found':>10} {'recall':>7} {'look-alikes flagged':>20} {'precision':>9} "
                  f"{'hazards flagged':>15} {'not scored':>10}")
        for code, f, missing in rows(cases, tier, scored):
            cells = (_ratio(f["found"], f["bugs"]), _pct(f["recall"]), _ratio(f["flagged"], f["benign"]),
                     _pct(f["precision"]), str(f["unconfirmed"]), str(missing))
            if args.markdown:
                name = "**all**" if code == "all" else code
                print(f"| {tier} | {name} | " + " | ".join(cells) + " |")
            else:
                print(f"  {code:<7} {cells[0]:>10} {cells[1]:>7} {cells[2]:>20} {cells[3]:>9} {cells[4]:>15} "
                      f"{cells[5]:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
