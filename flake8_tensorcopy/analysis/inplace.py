"""Recognising in-place writes: `z[i] = v`, `z += v`, `z.add_(v)`, `torch.add(a, b, out=z)`."""
from __future__ import annotations

import ast
from typing import Optional

from .torch_api import INPLACE_VIEWS

# Trailing-underscore methods that do not write the tensor's data (torch's in-place views change only its
# shape or strides: `t.transpose_(1, 3)` of a `from_numpy` tensor leaves the array's elements as they were).
NOT_DATA_WRITES = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "detach_",
                             "record_stream_"}) | INPLACE_VIEWS  # set_ is one of torch's in-place views


def is_inplace_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in NOT_DATA_WRITES


def _root(expr: ast.AST) -> ast.AST:
    """`z` of `z[i][j]`, and through earlier in-place calls of a chain, which return their receiver:
    `z` of `z.sub_(m)` (so `z.sub_(m).div_(s)` writes z)."""
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and is_inplace_method(expr.func.attr):
            expr = expr.func.value
        else:
            return expr


def through_chain(expr: ast.AST) -> ast.AST:
    """The first receiver of a chain of in-place calls, which each return their receiver: `x` of
    `x.add_(a).mul_(b)`; `expr` itself when it is no in-place call."""
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and is_inplace_method(expr.func.attr):
        expr = expr.func.value
    return expr


def chain_written(expr: ast.AST) -> Optional[ast.AST]:
    """What an in-place call in the receiver chain of `expr` writes, however the chain goes on after it (a
    conversion, a view or another call of the result sees the write): `x.data` of
    `x.data.normal_(0, 1).to(device)`, `u` of `u.sub_(m).div_(s).float()`; None without one."""
    found = None
    while True:
        if isinstance(expr, ast.Subscript):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            if is_inplace_method(expr.func.attr):
                found = _root(expr.func.value)
            expr = expr.func.value
        else:
            return found


def written(node: ast.AST) -> Optional[ast.AST]:
    """The expression whose storage `node` writes in place (a Name, an Attribute or a Call), or None.

    `z[i] = v` and `z[i][j] = v` write z; `z += v` writes z; `z.add_(v)`, `z[0].add_(v)` and
    `z.sub_(m).div_(s)` write z; `f(..., out=z)` writes z."""
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
