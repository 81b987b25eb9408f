"""`check --add-noqa` over a copy of the ecosystem corpus: every file that compiled still compiles, `check`
is silent afterwards (TEN905, unused noqa, included: every comment added is used), and once a finding's
cause is gone its comment is reported by TEN905. Figures per package.

    python scripts/add_noqa_corpus.py [--corpus DIR] [--select TEN] [--packages a,b]   # exit 1 when any fails

The corpus (scripts/ecosystem.py --build) is copied to a temporary folder first; it is never edited. The
cause check takes, in each package, the first changed line that is a whole simple statement, makes it
`pass` (keeping its comment) and asks `check --extend-select TEN905` about that file.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import corpus as corpus_mod  # noqa: E402

SOURCES = (".py", ".pyi", ".ipynb")


def digests(root: Path) -> dict[str, str]:
    """{relative path: sha256} of every source file under `root`."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.suffix in SOURCES and p.is_file() and not p.is_symlink()}


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


def check(root: Path, *args: str, paths=(".",)) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "check", "--no-cache", *args, *paths],
                          cwd=root, env=env, capture_output=True, text=True)


def package(name: str) -> str:
    return name.split(os.sep, 1)[0]


def cause_removed(root: Path, changed: list[str], before: Path) -> tuple[int, int, list[str]]:
    """For the first suitable changed line of each package: (tried, reported by TEN905, misses)."""
    tried, hits, misses, seen = 0, 0, [], set()
    for name in sorted(changed):
        if package(name) in seen or not name.endswith(".py"):
            continue
        old = (before / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        new = (root / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        if len(old) != len(new):
            continue
        for n, (a, b) in enumerate(zip(old, new), 1):
            comment = b[len(a.rstrip("\r\n")):].rstrip("\r\n") if b.startswith(a.rstrip("\r\n")) else ""
            code = a.rstrip("\r\n")
            if a == b or not comment.lstrip().startswith("# noqa") or not _simple_statement(code):
                continue
            indent = code[:len(code) - len(code.lstrip())]
            trial = new[:n - 1] + [f"{indent}pass{comment}\n"] + new[n:]
            try:
                compile("".join(trial), name, "exec")
            except (SyntaxError, ValueError):
                continue
            (root / name).write_text("".join(trial), encoding="utf-8")
            said = check(root, "-q", "--select", "TEN", "--extend-select", "TEN905", paths=[name]).stdout
            tried += 1
            seen.add(package(name))
            if re.search(rf":{n}:\d+: TEN905 ", said):
                hits += 1
            else:
                misses.append(f"{name}:{n}")
            break
    return tried, hits, misses


def _simple_statement(code: str) -> bool:
    try:
        body = ast.parse(code.strip()).body
    except SyntaxError:
        return False
    return len(body) == 1 and isinstance(body[0], (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=corpus_mod.DEFAULT_CORPUS)
    parser.add_argument("--select", default="TEN", help="codes to add comments for (default: every rule)")
    parser.add_argument("--packages", default="", help="comma-separated package folders (default: all)")
    args = parser.parse_args(argv)
    names = [n for n in args.packages.split(",") if n] or sorted(p.name for p in args.corpus.iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory() as tmp:
        root, before = Path(tmp) / "corpus", Path(tmp) / "before"
        for name in names:
            shutil.copytree(args.corpus / name, root / name, symlinks=True)
        shutil.copytree(root, before, symlinks=True)
        compiled, old = compiling(root), digests(root)
        added = check(root, "--add-noqa", "--select", args.select)
        new = digests(root)
        changed = [n for n in new if old.get(n) != new[n]]
        broken = sorted(compiled - compiling(root))
        after = check(root, "-q", "--select", args.select, "--extend-select", "TEN905")
        tried, hits, misses = cause_removed(root, changed, before)
    print(added.stderr.strip().splitlines()[0] if added.stderr.strip() else "(nothing said)")
    per_changed, per_files = Counter(map(package, changed)), Counter(map(package, old))
    per_compiled, per_broken = Counter(map(package, compiled)), Counter(map(package, broken))
    print(f"{'package':<20} {'files':>6} {'changed':>8} {'compiled':>9} {'broken':>7}")
    for name in names:
        print(f"{name:<20} {per_files[name]:>6} {per_changed[name]:>8} {per_compiled[name]:>9} {per_broken[name]:>7}")
    remaining = [line for line in after.stdout.splitlines() if re.search(r": TEN\d{3} ", line)]
    print(f"{len(names)} packages, {len(old)} files, {len(changed)} changed; {len(compiled)} compiled before, "
          f"{len(broken)} no longer compile; after: {len(remaining)} findings "
          f"({sum(': TEN905 ' in line for line in remaining)} TEN905), exit {after.returncode}")
    print(f"cause removed on {tried} lines (one per package): TEN905 reported {hits}; misses: {misses or 'none'}")
    for name in broken[:20]:
        print(f"  no longer compiles: {name}")
    print("\n".join(remaining[:40]))
    errors = [line for line in after.stderr.splitlines() if ": error: " in line]
    print(f"{len(errors)} file errors after (files that could not be read or parsed, as before)")
    return 1 if broken or remaining or misses else 0


if __name__ == "__main__":
    sys.exit(main())
