"""Parameters that their own function declares may be tensors (and may be something else).

Two declarations count, for a parameter that reaches a call unchanged: a union annotation with a tensor
and a non-tensor member (`value: Union[float, torch.Tensor]`, `float | Tensor`; `Optional[Tensor]` is
not one: None is not a value to convert), and an `isinstance(p, torch.Tensor)` / `torch.is_tensor(p)`
test that cannot narrow the call (after it, or in an earlier `if` with no exit from its branches).
Neither counts for a call in a branch on another parameter: a mode flag may pick the kind."""
from __future__ import annotations

import ast
from typing import Optional

from .facts import TENSOR_TYPES, Bind, end_of, pos_of, walk, within

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def declared_tensor(name: str, ctx) -> Optional[str]:
    """Why the enclosing function says parameter `name` may be a tensor at the node being checked (its
    annotation, or the line of its isinstance test), else None."""
    func = ctx.frame.func
    b = ctx.frame.scope.binding_before(name, ctx.pos)
    if func is None or b is None or b.kind != Bind.ARG or b not in ctx.frame.scope.bindings.get(name, ()):
        return None  # not this function's parameter, or rebound before the call
    if _in_mode_branch(ctx, func):
        return None
    if b.annotation is not None and _mixed_union(b.annotation, ctx):
        return f"annotated {ctx.facts.segment(b.annotation)}"
    for stmt, test in _tensor_tests(ctx, func, name):
        if not _may_narrow(stmt, ctx, func):
            return f"the function tests {ctx.facts.segment(test)} on line {test.lineno}"
    return None


def _in_mode_branch(ctx, func) -> bool:
    """The call sits in a branch on another parameter (`if ret_np: utility = torch.tensor(utility)`):
    such a flag may be what says which kind of value arrived."""
    params = {a.arg for a in ast.walk(func.args) if isinstance(a, ast.arg)}
    for n in ctx.facts.enclosing(func, ctx.pos):
        if isinstance(n, (ast.If, ast.IfExp, ast.While)) and not (pos_of(n.test) <= ctx.pos <= end_of(n.test)):
            if any(isinstance(t, ast.Name) and t.id in params for t in walk(n.test)):
                return True
    return False


def _mixed_union(ann: ast.expr, ctx) -> bool:
    members = _members(ann, ctx)
    tensors = [m for m in members if _is_tensor_type(m, ctx)]
    others = [m for m in members if not _is_tensor_type(m, ctx) and not _is_none(m)]
    return bool(tensors) and bool(others)


def _members(ann: ast.expr, ctx) -> list[ast.expr]:
    """The members of a union annotation, nested unions and Optional flattened; [ann] for any other."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value.strip(), mode="eval").body
        except SyntaxError:
            return []
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _members(ann.left, ctx) + _members(ann.right, ctx)
    if isinstance(ann, ast.Subscript) and _typing_name(ann.value, ctx) in ("Union", "Optional"):
        parts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        return [m for p in parts for m in _members(p, ctx)]
    return [ann]


def _typing_name(expr: ast.expr, ctx) -> Optional[str]:
    q = ctx.facts.qualname(expr) or (expr.id if isinstance(expr, ast.Name) else None)
    if q is None:
        return None
    module, _, last = q.rpartition(".")
    return last if module in ("", "typing", "typing_extensions") else None


def _is_tensor_type(expr: ast.expr, ctx) -> bool:
    return ctx.facts.qualname(expr) in TENSOR_TYPES


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _tensor_tests(ctx, func, name: str):
    """(statement, test) for each `isinstance(name, <tensor type or a tuple with one>)` /
    `torch.is_tensor(name)` in the function's own code (not in nested defs, lambdas or classes)."""
    todo = list(func.body) if isinstance(func.body, list) else []
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, SCOPES):
            continue
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                todo.append(child)
            elif isinstance(child, (ast.excepthandler, ast.match_case)):
                todo.extend(child.body)
            else:
                yield from ((stmt, n) for n in _walk_expr(child) if _tests_tensor(n, name, ctx))


def _walk_expr(node: ast.AST):
    for n in walk(node):
        if not isinstance(n, ast.Lambda):
            yield n


def _tests_tensor(node: ast.AST, name: str, ctx) -> bool:
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name)
            and node.args[0].id == name):
        return False
    if ctx.facts.qualname(node.func) == "torch.is_tensor":
        return len(node.args) == 1
    if not (isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2):
        return False
    types = node.args[1]
    return any(_is_tensor_type(t, ctx) for t in (types.elts if isinstance(types, ast.Tuple) else [types]))


def _may_narrow(stmt: ast.stmt, ctx, func) -> bool:
    """Whether the test in `stmt` may decide if (or with what type) the call runs: `stmt` holds the call
    (an enclosing branch, the same statement), is an assert, is in the other branch of an `if` that holds
    the call, or comes before the call other than as an `if` whose branches never exit."""
    start, end = pos_of(stmt), end_of(stmt)
    if start <= ctx.pos <= end or isinstance(stmt, ast.Assert):
        return True
    for n in ctx.facts.enclosing(func, ctx.pos):
        if isinstance(n, ast.If) and n.orelse and _split(n, ctx.pos, start):
            return True
    if end < ctx.pos:
        return not isinstance(stmt, ast.If) or any(isinstance(n, EXITS) for n in _own_nodes(stmt))
    return False


def _split(node: ast.If, a, b) -> bool:
    """`a` and `b` sit in different branches of `node`."""
    def branch(pos):
        return 0 if within(node.body, pos) else 1 if within(node.orelse, pos) else None
    return None not in (branch(a), branch(b)) and branch(a) != branch(b)


def _own_nodes(stmt: ast.stmt):
    """The nodes under `stmt`, not those of nested defs, lambdas or classes."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, SCOPES))
