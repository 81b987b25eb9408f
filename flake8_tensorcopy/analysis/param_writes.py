"""What a def does to its parameters in place, and what that makes of a call of it.

`written_params(fn, where)` summarises a def of the file or of a neighbouring module: for each parameter
that its own body writes in place while the name still holds the caller's object (`m -= m.mean(0)`,
`m[i] = v`, `m.clamp_(0, 1)`, `out=m`; or passes on to a def of the package that does), the first
statement that does. A call of the def then writes, in place, the argument it passes for that
parameter: `center(feats.detach())` writes into `feats` through the alias, and whether that matters is
decided in the caller (is the source read after the call), where the call is.
"""
from __future__ import annotations

import ast
from typing import Iterator, NamedTuple

from . import summaries
from .facts import Bind, pos_of
from .inplace import written
from .position import at

MAX_DEPTH = 3  # defs followed through a parameter passed on (`def a(m): b(m)`)


class ParamWrite(NamedTuple):
    """A call writes the argument it passes for `param` of `fn` in place: `stmt` (in `fn`'s module) does."""
    call: ast.Call
    fn: ast.AST
    param: str
    stmt: ast.AST
    argument: ast.expr
    here: bool  # `fn` is a def of the file asking (its statement can be reported there)


def written_params(fn: ast.AST, where, depth: int = 0) -> dict[str, ast.AST]:
    """param -> the first statement of `fn` that writes it in place while it still holds the argument
    (or the call that passes it to a def writing it); {} for anything but a plain def."""
    if not isinstance(fn, summaries.DEFS) or depth > MAX_DEPTH:
        return {}
    where = summaries.in_home(fn, where)
    key = ("written-params", id(fn))
    memo = where.facts.memo
    if key not in memo:
        memo[key] = {}  # recursion writes nothing
        memo[key] = _written(fn, where, depth)
    return memo[key]


def _written(fn, where, depth: int) -> dict[str, ast.AST]:
    frame = where.facts.function_frame(fn)
    if frame is None:
        return {}
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    found: dict[str, ast.AST] = {}
    for stmt, node in _own_nodes(fn):
        target = written(node) if isinstance(node, (ast.Assign, ast.AugAssign, ast.Call)) else None
        if isinstance(target, ast.Name) and target.id in params and target.id not in found:
            if _holds_argument(frame, target.id, pos_of(node)):
                found[target.id] = stmt
        if isinstance(node, ast.Call) and depth < MAX_DEPTH:
            inner = at(where, frame, node)
            for w in call_writes(node, inner, depth + 1):
                arg = w.argument
                if (isinstance(arg, ast.Name) and arg.id in params and arg.id not in found
                        and _holds_argument(frame, arg.id, pos_of(node))):
                    found[arg.id] = stmt
    return found


def call_writes(call: ast.Call, where, depth: int = 0) -> Iterator[ParamWrite]:
    """The arguments `call` passes to parameters that the def it calls writes in place."""
    fn = summaries.callee(call, where, pos_of(call))
    if not isinstance(fn, summaries.DEFS):
        return
    writes = written_params(fn, where, depth)
    if not writes:
        return
    home = summaries.in_home(fn, where).facts
    for param, stmt in writes.items():
        arg = summaries.passed(fn, param, call)
        if arg is not None:
            yield ParamWrite(call, fn, param, stmt, arg, home is where.facts)


def _holds_argument(frame, name: str, pos) -> bool:
    """`name` still holds the object the caller passed at `pos`: its binding there is the parameter's."""
    origin = frame.scope.origin(name, pos)
    return origin is not None and origin.kind == Bind.ARG


def _own_nodes(fn) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(statement of `fn`'s own body, node in it) for every node outside nested defs, classes and lambdas."""
    stack = [(s, s) for s in reversed(fn.body) if not isinstance(s, summaries.SCOPES)]
    while stack:
        stmt, node = stack.pop()
        yield stmt, node
        for child in reversed(list(ast.iter_child_nodes(node))):
            if isinstance(child, summaries.SCOPES):
                continue
            stack.append((child if isinstance(child, ast.stmt) else stmt, child))
