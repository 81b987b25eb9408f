"""Small text helpers shared by the rules' fixes, and the one question every fix asks the analysis."""
from __future__ import annotations

import ast
import dataclasses
from typing import Iterable, Optional, Sequence

from ..analysis import api, proven
from ..analysis.evidence import MAX_DEPTH, SURE_TENSOR
from .model import Edit, Fix, FixSafety

ORDER = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)  # elementwise on a tensor (not `in`, `is`)
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Tuple, ast.Dict)


def as_receiver(text: str, node: ast.AST) -> str:
    """`text` ready to take a method call: `a + b` becomes `(a + b)`."""
    return text if isinstance(node, ATOMS) else f"({text})"


def before_method(ctx, attribute: ast.Attribute, text: str) -> Edit:
    """Insert `text` just before the method name of `recv.method`: with text 'detach().',
    `(a + b).clone()` becomes `(a + b).detach().clone()`, whatever the receiver's parentheses."""
    line, col = ctx.char_pos(attribute.end_lineno, attribute.end_col_offset)
    at = (line, col - len(attribute.attr))
    return Edit(at, at, text)


def detached_clone(text: str, node: ast.AST) -> str:
    """`text.detach().clone()` to replace a copy of `node`; `t.detach()` needs only `.clone()`."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach"
            and not node.args and not node.keywords):
        return f"{text}.clone()"
    return f"{as_receiver(text, node)}.detach().clone()"


def proven_tensor(expr: ast.AST, ctx, depth: int = 0) -> bool:
    """The analysis proves `expr` a tensor where it stands (a TENSOR / PARAM kind, or proven.tensor): what a
    fix needs before it adds a tensor method to the value or rebinds a name to a tensor method's result.
    "Not known to be something else" is not enough: a loop over a dict of losses and floats is not proof."""
    if depth > MAX_DEPTH:
        return False
    pos = (expr.lineno, expr.col_offset)
    if isinstance(expr, ast.Name) and proven.backward_root(expr.id, ctx, pos):
        return True
    op = api.method(expr.func.attr) if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) else None
    if op is not None and api.tensor_result(op, expr, method=True) and not expr.args \
            and proven_tensor(expr.func.value, ctx, depth + 1):
        return True  # `v.detach()` of a proven `v`
    sides = [expr.left, expr.right] if isinstance(expr, ast.BinOp) else \
        [expr.left, *expr.comparators] if isinstance(expr, ast.Compare) and len(expr.comparators) == 1 \
        and isinstance(expr.ops[0], ORDER) else []
    if not any(isinstance(e, proven.SEQUENCES) for e in sides) and any(proven_tensor(e, ctx, depth + 1) for e in sides):
        return True  # `loss * 2`, `x != pad`: arithmetic and comparison on a tensor give one
    return ctx.kind(expr, pos) in SURE_TENSOR or proven.tensor(expr, ctx, pos)


def span(expr: ast.AST) -> tuple[int, int, int, int]:
    return expr.lineno, expr.col_offset, expr.end_lineno, expr.end_col_offset


def tensor_fix(ctx, values: Sequence[ast.AST], edits: Iterable[Edit], safety: FixSafety,
               imports=(), description="") -> Optional[Fix]:
    """The fix made of `edits`, which add a tensor method to (or rebind) each of `values`; None unless the
    analysis proves every one of them a tensor (proven_tensor). The spans go with the fix, for the harness."""
    return proven_fix(ctx, values, Fix(tuple(edits), safety, tuple(imports), description))


def proven_fix(ctx, values: Sequence[ast.AST], fix: Optional[Fix]) -> Optional[Fix]:
    """`fix` with the spans of `values`, when the analysis proves each a tensor; else None."""
    if fix is None or not values or not all(proven_tensor(v, ctx) for v in values):
        return None
    return dataclasses.replace(fix, tensors=tuple(span(v) for v in values))


def tensor_replace(ctx, values: Sequence[ast.AST], node: ast.AST, text: str, safety: FixSafety,
                   imports=()) -> Optional[Fix]:
    """tensor_fix of one edit that replaces `node` with `text`."""
    return tensor_fix(ctx, values, (ctx.edit(node, text),), safety, imports)
