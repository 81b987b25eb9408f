"""Values that hold no autograd graph: Python numbers (constants, `float(...)`, `.item()`, detached results,
a helper of the file that returns numbers) and dicts of them.
"""
from __future__ import annotations

import ast

from . import api, builtins_api
from .facts import Bind, walk


def graph_free(expr, ctx, depth) -> bool:
    """Already a Python number or detached: .item(), float(...), a local helper returning numbers."""
    if depth > 6:
        return False
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        return b is not None and b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.value is not None and graph_free(
            b.value, ctx, depth + 1)
    if isinstance(expr, ast.BinOp):
        return graph_free(expr.left, ctx, depth + 1) and graph_free(expr.right, ctx, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name) and builtins_api.gives_value(func.id) and func.id not in ctx.frame.scope.bindings:
            return True
        if isinstance(func, ast.Attribute) and api.drops_graph(func.attr):
            return True
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return bool(name) and _helper_returns_numbers(name, ctx)
    return False


def plain_number(expr) -> bool:
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(plain_number(e) for e in expr.elts)
    if isinstance(expr, ast.Dict):
        return all(plain_number(v) for v in expr.values)
    if isinstance(expr, ast.Call):
        func = expr.func
        return (isinstance(func, ast.Name) and builtins_api.gives_value(func.id)) or (
            isinstance(func, ast.Attribute) and api.drops_graph(func.attr))
    return False


def _helper_returns_numbers(name: str, ctx) -> bool:
    defs = _defs_by_name(ctx.facts).get(name, ())
    returns = [r.value for d in defs for r in walk(d) if isinstance(r, ast.Return) and r.value is not None]
    return bool(returns) and all(plain_number(r) for r in returns)


def _defs_by_name(facts) -> dict:
    """Every function of the file by name, found once per file (not once per inspected call)."""
    if "defs-by-name" not in facts.memo:
        found: dict = {}
        for n in walk(facts.tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(n.name, []).append(n)
        facts.memo["defs-by-name"] = found
    return facts.memo["defs-by-name"]


def number_dict(held, ctx) -> bool:
    """The dict is, where it is read, a display or comprehension of numbers (`{k: v.item() for ...}`)."""
    if not isinstance(held, ast.Name):
        return False
    b = ctx.frame.scope.binding_before(held.id, ctx.pos)
    value = b.value if b is not None and b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) else None
    if isinstance(value, ast.DictComp):
        return graph_free(value.value, ctx, 0) or plain_number(value.value)
    return isinstance(value, ast.Dict) and bool(value.values) and all(
        graph_free(v, ctx, 0) or plain_number(v) for v in value.values)
