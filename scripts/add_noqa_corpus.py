"""`check --add-noqa` over a copy of the ecosystem corpus: every file that compiled still compiles, and `check`
is silent afterwards.

    python scripts/add_noqa_corpus.py [--corpus DIR] [--select TEN]    # exit 1 when either fails

The corpus (scripts/ecosystem.py --build) is copied to a temporary folder first; it is never edited.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import corpus as corpus_mod  # noqa: E402


def compiling(root: Path) -> set[str]:
    """The .py files under `root` that compile, relative to it."""
    good = set()
    for path in root.rglob("*.py"):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(path.read_bytes(), str(path), "exec")
        except (SyntaxError, ValueError, OSError):
            continue
        good.add(str(path.relative_to(root)))
    return good


def check(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "check", *args, "."], cwd=root, env=env,
                          capture_output=True, text=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=corpus_mod.DEFAULT_CORPUS)
    parser.add_argument("--select", default="TEN", help="codes to add comments for (default: every rule)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "corpus"
        shutil.copytree(args.corpus, root, symlinks=True)
        before = compiling(root)
        first = check(root, "-q", "--select", args.select)
        added = check(root, "--add-noqa", "--select", args.select)
        broken = sorted(before - compiling(root))
        after = check(root, "-q", "--select", args.select)
    found = first.stdout.count("\n")
    print(added.stderr.strip().splitlines()[0] if added.stderr.strip() else "(nothing said)")
    print(f"{len(before)} files compiled before; {len(broken)} no longer compile; {found} findings before, "
          f"{after.stdout.count(chr(10))} after (exit {after.returncode})")
    for name in broken[:20]:
        print(f"  no longer compiles: {name}")
    print(after.stdout[:2000], end="")
    return 1 if broken or after.stdout else 0


if __name__ == "__main__":
    sys.exit(main())
