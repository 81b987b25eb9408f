"""Score the engine on the capability programs: one small program per class of missing knowledge.

    python scripts/capabilities.py                 # per file: expected, found, false alarms; then totals
    python scripts/capabilities.py --verbose       # also each missed and each false (line, code)
    python scripts/capabilities.py --cases DIR     # another folder (default: ../shared/cases/capabilities)

DIR holds the programs and expected.json: per file, the (line, code) pairs a complete engine reports with
the default-on rules ("NEW" stands for a rule that does not exist yet: any code on that line counts, but
a code that no pair of the file names on the line is still a false alarm). A finding counts when it has
the pair's code on the pair's line.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flake8_tensorcopy.pipeline.lint import lint  # noqa: E402
from flake8_tensorcopy.rules import RULES  # noqa: E402
from flake8_tensorcopy.sources.document import read_document  # noqa: E402

CASES = ROOT.parent / "shared" / "cases" / "capabilities"
DEFAULT_ON = [r for r in RULES if r.default_on]


def score_file(path: Path, expected: list) -> tuple[set, set, set]:
    """(expected pairs, found pairs, false pairs) of one program, with the default-on rules."""
    doc = read_document(path.read_text(encoding="utf-8"), str(path))
    reported = {(f.line, f.code) for f in lint(doc, DEFAULT_ON, noqa=False).findings}
    want = {(line, code) for line, code in expected}
    new_lines = {line for line, code in want if code == "NEW"}
    found = {(line, code) for line, code in want
             if (line, code) in reported or code == "NEW" and any(r[0] == line for r in reported)}
    false = {r for r in reported if r not in want and r[0] not in new_lines}
    return want, found, false


def score(folder: Path) -> dict[str, tuple[set, set, set]]:
    expected = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
    return {name: score_file(folder / name, pairs) for name, pairs in sorted(expected.items())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if not (args.cases / "expected.json").is_file():
        print(f"capabilities: no expected.json in {args.cases}", file=sys.stderr)
        return 2
    results = score(args.cases)
    total = [0, 0, 0]
    print(f"{'file':24} expected found false")
    for name, (want, found, false) in results.items():
        print(f"{name:24} {len(want):8} {len(found):5} {len(false):5}")
        if args.verbose:
            for line, code in sorted(want - found):
                print(f"    missed {line}:{code}")
            for line, code in sorted(false):
                print(f"    false  {line}:{code}")
        total = [total[0] + len(want), total[1] + len(found), total[2] + len(false)]
    print(f"{'total':24} {total[0]:8} {total[1]:5} {total[2]:5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
