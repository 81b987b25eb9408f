"""Which `clone()` calls an expression keeps: the clones whose result is what the expression evaluates to
(through device and dtype moves, views and literals), not those of an already detached tensor."""
from __future__ import annotations

import ast
from typing import Iterator

# methods whose result is (a view or a moved copy of) their receiver, keeping its graph
PASS_THROUGH = frozenset({"to", "cpu", "cuda", "float", "double", "half", "contiguous", "squeeze", "unsqueeze",
                          "view", "reshape", "flatten", "requires_grad_"})


def kept_clones(expr) -> Iterator[ast.Call]:
    """clone() calls whose result is what `expr` evaluates to (through `.cpu()`, `.to()`, literals), or an
    element of it (a comprehension keeps the clone of each element)."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in PASS_THROUGH:
        expr = expr.func.value
    if isinstance(expr, (ast.Tuple, ast.List)):
        for e in expr.elts:
            yield from kept_clones(e)
    elif isinstance(expr, ast.Dict):
        for v in expr.values:
            yield from kept_clones(v)
    elif isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):  # each element is kept
        yield from kept_clones(expr.elt)
    elif isinstance(expr, ast.DictComp):
        yield from kept_clones(expr.value)
    elif is_clone(expr):
        yield expr


def is_clone(expr) -> bool:
    """`t.clone()` (through pass-through methods) of a tensor not detached first (`t.detach().clone()`,
    `t.data.clone()` are not)."""
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "clone"):
        return False
    recv = expr.func.value
    while isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) and recv.func.attr in PASS_THROUGH:
        recv = recv.func.value
    detached = (isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) and recv.func.attr == "detach") or (
        isinstance(recv, ast.Attribute) and recv.attr == "data")
    return not detached
