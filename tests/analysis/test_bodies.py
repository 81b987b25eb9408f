"""analysis/bodies.py and analysis/guards.py: facts about a function body, walked once per file."""
import ast
from pathlib import Path

import pytest

from flake8_tensorcopy.analysis import bodies
from flake8_tensorcopy.analysis.guards import type_tested
from tests.support.analysis_tools import context_at

PACKAGE = Path(__file__).resolve().parents[2] / "flake8_tensorcopy"

SOURCE = '''\
def f(x, stats):  # <-
    global seen
    y = x.clone()
    for i in range(3):
        y.add_(x)
        while i:
            i -= 1
    z = y * x
    print(z)
    stats["loss"] = z
    if not is_t:
        return
    return self.w + self.w.sum()
is_t = isinstance(x, Tensor)
'''


def _facts_and_func():
    func, ctx = context_at(SOURCE, ast.FunctionDef)
    return ctx.facts, func


def test_last_positions_of_a_body():
    facts, func = _facts_and_func()
    assert bodies.last_writes(facts, func)["y"] == (5, 8)
    assert bodies.last_computed_with(facts, func)["x"] == (8, 8)
    assert "z" not in bodies.last_computed_with(facts, func)  # print() is no computation
    assert bodies.last_reads(facts, func)["self.w"] == (13, 20)


def test_a_computation_under_no_grad_is_not_computed_with():
    """Review 17: `w.copy_(keep[k])` in `with torch.no_grad():` records no graph of `keep`."""
    func, ctx = context_at("""
import torch
def f(net, keep, w0, scale):  # <-
    with torch.no_grad():
        for k, w in net.named_parameters():
            w.copy_(keep[k])
    return (net.weight - w0).pow(2).sum() * scale
""", ast.FunctionDef)
    found = bodies.last_computed_with(ctx.facts, func)
    assert "keep" not in found and "w0" in found and "scale" in found


def test_what_a_module_loads_is_not_computed_with():
    """torch's load_state_dict copies under no_grad: `net.load_state_dict(best[0])` builds no graph of `best`."""
    func, ctx = context_at("""
def f(net, best, other):  # <-
    net.load_state_dict(best[0])
    return net(other)
""", ast.FunctionDef)
    found = bodies.last_computed_with(ctx.facts, func)
    assert "best" not in found and "other" in found


def test_shapes_of_a_body():
    facts, func = _facts_and_func()
    assert [type(n).__name__ for n in bodies.loops(facts, func)] == ["For", "While"]
    assert [n.lineno for n in bodies.early_exits(facts, func)] == [11]
    assert bodies.declared_outside(facts, func) == {"seen"}
    assert bodies.used_as_objects(facts, func) == {"stats"}
    assert set(bodies.name_assignments(facts, facts.tree)) >= {"y", "z", "is_t"}


def test_answers_are_walked_once_per_body():
    facts, func = _facts_and_func()
    assert bodies.loops(facts, func) is bodies.loops(facts, func)


def test_type_tested_through_an_exit_and_a_flag():
    tested = "def f(out):\n    ok = isinstance(out, Result)\n    if ok:\n        return out\n    out.detach()  # <-\n"
    assert type_tested("out", context_at(tested)[1])
    assert not type_tested("out", context_at(tested.replace("if ok", "if out"))[1])
    assert not type_tested("other", context_at(tested)[1])
    inside = "def f(out):\n    if isinstance(out, Result):\n        out.detach()  # <-\n"
    assert type_tested("out", context_at(inside)[1])


def test_only_the_analysis_fills_its_caches():
    """Rules ask named questions; none hands a function of its own to the analysis's per-file index."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "analysis":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "index" \
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "facts":
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert offenders == []


@pytest.mark.parametrize("loop, expected", [
    ("for x in xs: pass", {"x": "xs"}),
    ("for i, x in enumerate(self.xs): pass", {"x": "self.xs"}),
    ("for a, b in zip(xs, ys): pass", {"a": "xs", "b": "ys"}),
    ("for v in sd.values(): pass", {"v": "sd"}),
    ("for k, v in sd.items(): pass", {"v": "sd"}),
    ("for v, n in zip(sd.values(), new): pass", {"v": "sd", "n": "new"}),
    ("for x in f(xs): pass", {}),   # what a call gives is not its argument's items
])
def test_loop_variables_take_the_items_of(loop, expected):
    node = ast.parse(loop).body[0]
    assert bodies.item_sources(node.target, node.iter) == expected
