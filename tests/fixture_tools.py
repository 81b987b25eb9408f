"""Reading fixtures: their `# expect: CODE:COL` annotations and their runnable `case_*` functions."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
