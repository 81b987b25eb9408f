"""Recognising in-place writes: `z[i] = v`, `z += v`, `z.add_(v)`, `torch.add(a, b, out=z)`."""
from __future__ import annotations

import ast
from typing import Optional

# Trailing-underscore methods that do not write the tensor's data.
NOT_DATA_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "detach_", "set_", "record_stream_"})


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_DATA_WRITES


def _root(expr: ast.AST) -> ast.AST:
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def written(node: ast.AST) -> Optional[ast.AST]:
    """The expression whose storage `node` writes in place (a Name, an Attribute or a Call), or None.

    `z[i] = v` and `z[i][j] = v` write z; `z += v` writes z; `z.add_(v)` and `z[0].add_(v)` write z;
    `f(..., out=z)` writes z."""
    if isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Subscript):
                return _root(t)
        return None
    if isinstance(node, ast.AugAssign):
        return _root(node.target)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and is_inplace_method(func.attr):
            return _root(func.value)
        for k in node.keywords:
            if k.arg == "out":
                return _root(k.value)
    return None
