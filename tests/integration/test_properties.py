"""Property-based robustness (issue 6): generated programs never crash the engine or the plugin, and
programs built from the fixtures' vocabulary get the same findings every time, from every adapter.

The number of examples comes from the hypothesis profile (tests/conftest.py): HYPOTHESIS_PROFILE=long
runs them for longer.
"""
from __future__ import annotations

import ast
import dataclasses
import re

import hypothesmith
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.fixture_tools import FIXTURES
from flake8_tensorcopy.engine.core import AnalysisError, analyse, could_fire, partial_tree
from flake8_tensorcopy.adapters.flake8_plugin import Plugin
from flake8_tensorcopy.rules import RULES

# Every rule (opt-in ones too), past the pre-filter, so a generated program is always walked.
ALWAYS = [dataclasses.replace(r, trigger=re.compile("")) for r in RULES]
SLOW = settings(settings.default, max_examples=max(1, settings.default.max_examples // 3))


def run_plugin(tree, lines, filename) -> list:
    """The plugin with every rule (flake8 option parsing elsewhere may have narrowed Plugin.rules)."""
    plugin = Plugin(tree, lines, filename)
    plugin.rules = RULES
    return list(plugin.run())


def survives(source: str) -> None:
    """The engine either analyses the source or refuses it in one line; the plugin never raises."""
    try:
        result = analyse(source, "generated.py", ALWAYS)
    except AnalysisError as exc:
        assert "\n" not in str(exc)
        return
    assert result.errors == []
    tree = ast.parse(source)
    out = run_plugin(tree, source.splitlines(keepends=True), "generated.py")
    assert not [o for o in out if o[2].startswith("TEN000")], out


@SLOW
@given(hypothesmith.from_grammar())
def test_grammar_generated_programs_never_crash(source):
    survives(source)


@SLOW
@given(hypothesmith.from_node())
def test_libcst_generated_programs_never_crash(source):
    survives(source)


# ---- programs composed from the fixtures' vocabulary ------------------------------------------
def _vocabulary() -> list[ast.stmt]:
    """Every statement of the fixtures' case functions (bad and good), at any depth."""
    found = []
    for path in sorted(FIXTURES.glob("TEN*/*.py")):
        if path.stem not in ("bad", "good"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                found.extend(s for s in node.body if not isinstance(s, ast.FunctionDef)
                             and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)))
    return found


VOCABULARY = _vocabulary()
HEADER = "import copy\nfrom copy import deepcopy as dc\n\nimport torch\nimport torch as th\n\n"
KEEP = {"torch", "th", "copy", "dc", "range", "len", "isinstance", "print", "list", "dict", "zip", "float"}
NAMES = st.sampled_from(["x", "y", "z", "w", "loss", "model", "p", "best", "hidden", "state", "out", "grads"])
IDENTIFIERS = NAMES | st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: s not in KEEP and not __import__("keyword").iskeyword(s))


class Rename(ast.NodeTransformer):
    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id not in KEEP:
            node.id = self.mapping.get(node.id, node.id)
        return node


@st.composite
def statements(draw) -> list[str]:
    picked = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8))
    out = []
    for stmt in picked:
        names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id not in KEEP}
        mapping = {name: draw(IDENTIFIERS) for name in sorted(names)}
        out.append(ast.unparse(Rename(mapping).visit(ast.parse(ast.unparse(stmt)).body[0])))
    return out


WRAPPERS = ["for _ in range(3):", "with torch.no_grad():", "with th.inference_mode():", "if x:",
            "while loss > 0:", "try:", "def inner(x, y):"]


@st.composite
def blocks(draw, depth: int = 0) -> list[str]:
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        if depth < 3 and draw(st.booleans()):
            header = draw(st.sampled_from(WRAPPERS))
            inner = draw(blocks(depth + 1))
            lines.append(header)
            lines.extend("    " + line for line in inner)
            if header == "try:":
                lines.append("except RuntimeError:")
                lines.append("    pass")
        else:
            for stmt in draw(statements()):
                lines.extend(stmt.splitlines())
    return lines


@st.composite
def programs(draw) -> str:
    # without the aliased import, the partial parse stubs the defs without trigger text
    parts = [draw(st.sampled_from([HEADER, HEADER.replace("from copy import deepcopy as dc\n", "")]))]
    defs: list[str] = []  # top-level defs so far: later ones call them, so summaries have work to do
    for i in range(draw(st.integers(1, 3))):
        methods = draw(st.booleans())  # the defs as methods of a module class, or at top level
        indent = "    " if methods else ""
        if methods:
            parts.append(f"class Model{i}(torch.nn.Module):\n")
        for j in range(draw(st.integers(1, 2)) if methods else 1):
            params = draw(st.lists(NAMES, max_size=3, unique=True))
            args = ", ".join((["self"] if methods else []) + params)
            body = draw(blocks())
            if defs and draw(st.booleans()):  # `x = helper(y)` first, a return of one of its names last
                call = f"{draw(st.sampled_from(defs))}({', '.join(draw(st.lists(NAMES, max_size=2)))})"
                body = [f"{draw(NAMES)} = {call}", *body, f"return {draw(NAMES)}"]
            top = draw(st.sampled_from(["", f"{indent}@torch.no_grad()\n"]))
            name = f"{draw(IDENTIFIERS)}_{i}_{j}"
            parts.append(f"{top}{indent}def {name}({args}):\n" + "".join(f"{indent}    {b}\n" for b in body) + "\n")
            if not methods and not top:
                defs.append(name)
        parts.append("\n")
    if draw(st.booleans()):  # module-level code too
        parts.extend(s + "\n" for s in draw(statements()))
    return "".join(parts)


def as_tuples(findings) -> list[tuple]:
    return [(f.line, f.col, f.code, f.message, f.fix) for f in findings]


@given(programs())
def test_composed_programs_are_analysed_deterministically(source):
    ast.parse(source)  # the composition is valid Python
    first = analyse(source, "composed.py", RULES)
    assert first.errors == [] and first.parsed == bool(could_fire(source, RULES))
    again = analyse(source, "composed.py", RULES)
    assert as_tuples(first.findings) == as_tuples(again.findings)
    lines = source.splitlines(keepends=True)
    for f in first.findings:
        assert 0 < f.line <= f.end_line <= len(lines)
        for edit in f.fix.edits if f.fix else ():
            assert (0, 0) < edit.start <= edit.end and edit.end[0] <= len(lines)
    plugin = [(line, col, text.split()[0]) for line, col, text, _ in
              run_plugin(ast.parse(source), lines, "composed.py")]
    assert plugin == [(f.line, f.col, f.code) for f in first.findings]
    partial = partial_tree(source, RULES)  # the tree a file that does not parse falls back to
    if partial is not None:
        assert as_tuples(analyse(source, "composed.py", RULES, tree=partial).findings) == as_tuples(first.findings)
