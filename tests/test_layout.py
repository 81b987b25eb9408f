"""Each folder of the package is a layer, and imports point down only: every kind of import counts (at
module level, inside a function, under `if TYPE_CHECKING:`), and no chain of imports closes a cycle."""
import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "flake8_tensorcopy"

# Top to bottom. A module may import modules of its own layer (without a cycle) or of a lower one.
LAYERS = ("cli", "adapters", "config", "sources", "fix", "pipeline", "engine", "rules", "analysis", "base")
TOP_LEVEL = {"__main__": "cli", "__init__": "base", "text": "base"}  # single modules outside the folders


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


def layer_of(module: str) -> str:
    head = module.split(".")[0]
    return TOP_LEVEL.get(head, head)


def imports(tree: ast.Module, module: str, is_package: bool, known: set) -> set:
    """The package's modules that `tree` imports, anywhere in it."""
    here = module.split(".") if is_package else module.split(".")[:-1]
    if module in TOP_LEVEL:
        here = []
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "flake8_tensorcopy":
                target = node.module.partition(".")[2]
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}" if target else alias.name
                found.add(sub if sub in known else (target or "__init__"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "flake8_tensorcopy":
                    found.add(alias.name.partition(".")[2] or "__init__")
    return {m for m in found if m != module}


def graph(package: Path = PACKAGE) -> dict:
    paths = {module_name(p): p for p in sorted(package.rglob("*.py"))}
    known = set(paths)
    return {m: imports(ast.parse(p.read_text()), m, p.name == "__init__.py", known) for m, p in paths.items()}


def upward(edges: dict) -> list:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    return sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets
                  if rank[layer_of(b)] < rank[layer_of(a)])


def cycles(edges: dict) -> list:
    """One cycle (as a list of modules) per strongly connected group of more than one module."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_belongs_to_a_layer():
    assert sorted(m for m in graph() if layer_of(m) not in LAYERS) == []


def test_no_import_points_up_a_layer():
    assert upward(graph()) == []


def test_no_imports_close_a_cycle():
    assert cycles(graph()) == []


def test_the_analysis_knows_no_rule():
    """The analysis answers questions about code; it imports nothing but itself and the base modules."""
    edges = graph()
    assert sorted(f"{a} -> {b}" for a, t in edges.items() if layer_of(a) == "analysis" for b in t
                  if layer_of(b) not in ("analysis", "base")) == []


@pytest.mark.parametrize("source, module, expected", [
    ("def f():\n    from ..cli.check import run\n", "rules.ten101", {"cli.check"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..rules.context import Context\n",
     "analysis.evidence", {"rules.context"}),
    ("from .. import __version__\nfrom ..sources import fileio\n", "cli.main", {"__init__", "sources.fileio"}),
    ("import flake8_tensorcopy.rules\nfrom flake8_tensorcopy.engine.core import analyse\n", "text",
     {"rules", "engine.core"}),
])
def test_the_check_sees_every_kind_of_import(source, module, expected):
    known = {"cli.check", "rules.context", "sources.fileio", "rules", "engine.core"}
    assert imports(ast.parse(source), module, False, known) == expected


def test_the_checks_fail_on_an_upward_import_and_a_cycle():
    edges = {"analysis.facts": {"analysis.flow", "rules.context"}, "analysis.flow": {"analysis.facts"},
             "rules.context": set()}
    assert upward(edges) == ["analysis.facts -> rules.context"]
    assert cycles(edges) == [["analysis.facts", "analysis.flow"]]


def test_the_analysis_asks_only_a_position():
    """Questions to the analysis carry a position (facts, frame, point), never the rule's Context: no module of
    analysis/ asks a question's `ctx` for anything else (its kind, text, finding, spec)."""
    other = re.compile(r"\bctx\.(?!(?:facts|frame|pos)\b)\w+")
    found = [f"{p.name}:{n}" for p in sorted((PACKAGE / "analysis").glob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if other.search(line)]
    assert found == []
