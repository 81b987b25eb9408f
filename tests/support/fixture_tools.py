"""Reading fixtures: their `# expect: CODE:COL` annotations and their runnable `case_*` functions."""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
EXPECT = re.compile(r"#\s*expect:\s*(?P<items>TEN\d{3}:\d+(?:\s*,\s*TEN\d{3}:\d+)*)")


def fixture_path(code: str, variant: str) -> Path:
    return FIXTURES / code / f"{variant}.py"


def expectations(path: Path) -> set[tuple[int, int, str]]:
    """{(line, 1-based col, code)} from the file's annotations."""
    found = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = EXPECT.search(line)
        if match:
            for item in match.group("items").split(","):
                code, col = item.strip().split(":")
                found.add((lineno, int(col), code))
    return found


def load(code: str, variant: str):
    """Import a fixture module afresh (runs its top level, not its cases)."""
    path = fixture_path(code, variant)
    spec = importlib.util.spec_from_file_location(f"fixture_{code}_{variant}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(module) -> dict:
    return {name: fn for name, fn in vars(module).items() if name.startswith("case_") and callable(fn)}


def by_hand(code: str) -> set[str]:
    """The top-level defs and classes of bad.py that hold a finding of `code` with no fix (TEN204 on a value
    that may be a tensor or a float): the fixer leaves them as they are; fixed.py shows them rewritten by hand."""
    from flake8_tensorcopy.engine.core import analyse
    from flake8_tensorcopy.rules import BY_CODE

    path = fixture_path(code, "bad")
    source = path.read_text(encoding="utf-8")
    lines = {f.line for f in analyse(source, str(path), [BY_CODE[code]]).findings if f.fix is None}
    return {name for name, (first, last) in _top_defs(source).items() if any(first <= n <= last for n in lines)}


def swap_defs(source: str, names: set[str], donor: str) -> str:
    """`source` with its top-level defs `names` replaced by the donor source's defs of those names."""
    lines, donor_lines = source.splitlines(keepends=True), donor.splitlines(keepends=True)
    ours, theirs = _top_defs(source), _top_defs(donor)
    for name in sorted(names, key=lambda n: ours[n][0], reverse=True):
        (first, last), (d_first, d_last) = ours[name], theirs[name]
        lines[first - 1:last] = donor_lines[d_first - 1:d_last]
    return "".join(lines)


def _top_defs(source: str) -> dict[str, tuple[int, int]]:
    """Each top-level def's and class's name and its first and last line (decorators included)."""
    return {n.name: (min([n.lineno] + [d.lineno for d in n.decorator_list]), n.end_lineno)
            for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
