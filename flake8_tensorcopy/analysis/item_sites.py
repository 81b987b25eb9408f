"""Entry stores as the method calls they are: `stats["loss"] = loss` runs `stats.__setitem__("loss", loss)`.
The summaries read them as call sites of a package class's `__setitem__` (what its `value` parameter
receives); each store becomes one call node, made once per file, so the answers about it are memoised
like any other call's.
"""
from __future__ import annotations

import ast

from .facts import children

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def setitem_calls(facts) -> list:
    """(`obj.__setitem__(key, value)` call, the def the store sits in or None) for each `obj[key] = value`
    of the file whose key is a single index (not a slice)."""
    key = "setitem-calls"
    if key not in facts.memo:
        found = []
        stack = [(n, None) for n in facts.tree.body]
        while stack:
            node, owner = stack.pop()
            if isinstance(node, ast.Assign):
                found += [(as_call(t, node.value), owner) for t in node.targets
                          if isinstance(t, ast.Subscript) and not isinstance(t.slice, ast.Slice)]
            inner = node if isinstance(node, DEFS) else owner
            stack.extend((c, inner) for c in children(node) if not isinstance(c, ast.expr))
        facts.memo[key] = found
    return facts.memo[key]


def as_call(target: ast.Subscript, value: ast.expr) -> ast.Call:
    """`target.value.__setitem__(target.slice, value)`, placed where the target is."""
    func = ast.copy_location(ast.Attribute(value=target.value, attr="__setitem__", ctx=ast.Load()), target)
    func.end_lineno, func.end_col_offset = target.end_lineno, target.end_col_offset
    call = ast.copy_location(ast.Call(func=func, args=[target.slice, value], keywords=[]), target)
    call.end_lineno, call.end_col_offset = value.end_lineno, value.end_col_offset
    return call


def store_call(facts, stmt: ast.stmt):
    """The `__setitem__` call that `obj[key] = value` (or `obj[key] = name = value`) runs, as setitem_calls
    made it; None for any other statement."""
    if not (isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Subscript) for t in stmt.targets)):
        return None
    key = "store-calls"
    if key not in facts.memo:
        facts.memo[key] = {id(call.func.value): call for call, _ in setitem_calls(facts)}
    return next((facts.memo[key][id(t.value)] for t in stmt.targets
                 if isinstance(t, ast.Subscript) and id(t.value) in facts.memo[key]), None)
