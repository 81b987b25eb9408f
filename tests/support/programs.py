"""Programs composed from the fixtures' vocabulary (a hypothesis strategy), shared by the property, fuzz and
front-end tests, and the plugin run with every rule."""
from __future__ import annotations

import ast

from hypothesis import strategies as st

from tests.support.fixture_tools import FIXTURES
from flake8_tensorcopy.adapters.flake8_plugin import Plugin
from flake8_tensorcopy.rules import RULES


def run_plugin(tree, lines, filename) -> list:
    """The plugin with every rule (flake8 option parsing elsewhere may have narrowed Plugin.rules)."""
    plugin = Plugin(tree, lines, filename)
    plugin.rules = RULES
    return list(plugin.run())


def compiles(source: str) -> bool:
    try:
        compile(source, "composed.py", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


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
