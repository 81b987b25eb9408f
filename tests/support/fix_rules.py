"""Stand-in rules for testing the fixer's mechanics (safe fixes, imports, overlaps, non-convergence)
independently of the real catalogue, which has other helpers' rules coming and going."""
from __future__ import annotations

import ast

from flake8_tensorcopy.rules.model import FixAvailability, FixForm, FixSafety, Rule


def _spec(code, check, trigger, safety):
    return Rule(code=code, name=code.lower(), message="test rule " + code, nodes=(ast.Call,), check=check,
                trigger=trigger, claim="", doc="", fix=FixAvailability.ALWAYS,
                fix_forms=(FixForm("test", safety, "test"),))


def _swap(node, ctx):
    """`x.clone().detach()` -> `x.detach().clone()`, a safe fix."""
    f = node.func
    if (isinstance(f, ast.Attribute) and f.attr == "detach" and not node.args and isinstance(f.value, ast.Call)
            and isinstance(f.value.func, ast.Attribute) and f.value.func.attr == "clone" and not f.value.args):
        recv = f.value.func.value
        yield ctx.finding(node, ctx.replace(node, ctx.text(recv) + ".detach().clone()", FixSafety.SAFE))


def _snapshot(node, ctx):
    """`snapshot(x)` -> `copy.deepcopy(x)`, an unsafe fix that needs `import copy`."""
    if isinstance(node.func, ast.Name) and node.func.id == "snapshot" and len(node.args) == 1:
        text = f"copy.deepcopy({ctx.text(node.args[0])})"
        yield ctx.finding(node, ctx.replace(node, text, FixSafety.UNSAFE, imports=("copy",)))


def _grow(node, ctx):
    """A broken rule: its fix makes more of what it reports, so the fixer must give up."""
    if isinstance(node.func, ast.Name) and node.func.id == "grow":
        yield ctx.finding(node, ctx.replace(node, f"grow({ctx.text(node)})", FixSafety.SAFE))


def _stray(node, ctx):
    """A broken rule: its edit points past the end of the line."""
    if isinstance(node.func, ast.Name) and node.func.id == "stray":
        fix = ctx.replace(node, "x", FixSafety.SAFE)
        edit = fix.edits[0]
        broken = type(edit)(edit.start, (edit.end[0], edit.end[1] + 500), "x")
        yield ctx.finding(node, type(fix)((broken,), FixSafety.SAFE))


def _rebind(node, ctx):
    """`keep(x)` as a statement -> `x = keep(x)`: breaks code where `x` is a global read in a function."""
    parent = next((n for n in ast.walk(ctx.facts.tree) if isinstance(n, ast.Expr) and n.value is node), None)
    if parent is not None and isinstance(node.func, ast.Name) and node.func.id == "keep" and node.args:
        name = ctx.text(node.args[0])
        yield ctx.finding(node, ctx.replace(node, f"{name} = {ctx.text(node)}", FixSafety.SAFE))


def _append(node, ctx):
    """`as_<method>(x)` -> `x.<method>()`: appends a method whatever `x` is, as a careless fix would."""
    if isinstance(node.func, ast.Name) and node.func.id.startswith("as_") and len(node.args) == 1:
        text = f"{ctx.text(node.args[0])}.{node.func.id[3:]}()"
        yield ctx.finding(node, ctx.replace(node, text, FixSafety.SAFE))


SWAP = _spec("TEN990", _swap, r"\.clone\(\)\.detach", FixSafety.SAFE)
SNAPSHOT = _spec("TEN991", _snapshot, r"snapshot\(", FixSafety.UNSAFE)
GROW = _spec("TEN992", _grow, r"grow\(", FixSafety.SAFE)
STRAY = _spec("TEN993", _stray, r"stray\(", FixSafety.SAFE)
REBIND = _spec("TEN994", _rebind, r"keep\(", FixSafety.SAFE)
APPEND = _spec("TEN995", _append, r"as_\w+\(", FixSafety.SAFE)
