"""Alias tracking shared by the alias-write rules (TEN101 detach, TEN102 `.data`, TEN103 NumPy).

Each of those rules has the same shape: a name is bound to an alias of a source (`z = y.detach()`,
`d = y.data`, `a = t.numpy()`), an in-place write goes through the alias, and the source is still
read afterwards. The rules differ only in what counts as an alias and which sources matter.
"""
from __future__ import annotations

import ast
from typing import Callable, Iterator, Optional

from .facts import Bind, Binding, dotted, end_of, pos_of, walk
from .inplace import is_inplace_method

IsAlias = Callable[[ast.AST], bool]
FAR = (1 << 30, 0)


def alias_binding(name: str, ctx, is_alias: IsAlias) -> Optional[Binding]:
    """The `name = <alias>` statement, in the current scope, that gave `name` its object at the node
    under check (augmented assignments keep the object), or None."""
    origin = ctx.frame.scope.origin(name, ctx.pos)
    if origin is None or origin.kind not in (Bind.ASSIGN, Bind.ANNASSIGN) or not is_alias(origin.value):
        return None
    return origin


def kept_inplace(node: ast.Assign, is_alias: IsAlias) -> Iterator[tuple[str, ast.AST]]:
    """`w = <alias>.add_(1).mul_(2)`: yields (w, the alias expression) when an in-place chain runs
    directly on an alias and its result is kept in a name."""
    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
    if not names:
        return
    call = node.value
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and is_inplace_method(call.func.attr):
        inner = call.func.value
        if is_alias(inner):
            yield names[0], inner
            return
        call = inner


def named(expr: ast.AST) -> Optional[ast.AST]:
    """`y`, `self.h` or `y[0]` -> the named object (`y`, `self.h`); None for fresh temporaries like
    `f(x)` or `x.clone()`, whose storage nobody else holds."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, (ast.Name, ast.Attribute)) and dotted(expr) is not None:
        return expr
    return None


def still_used(source: ast.AST, ctx, after, caller_holds: bool = True) -> bool:
    """Whether the named `source` is read after position `after`: a name is read later in its scope
    (or in the next iteration of an enclosing loop); with `caller_holds`, a parameter counts as used
    (the caller still holds the object). An attribute outlives the statement unless it hangs off a
    local name that is not read again (`pos = torch.from_numpy(pos.values).div_(1000)`)."""
    root = source
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root is not source and root.id in ("self", "cls"):
        return True
    return used_after(root.id, ctx, after, caller_holds or root is not source) or _backward_after(ctx, after)


def _backward_after(ctx, after) -> bool:
    """A `.backward()` later in the function (or the enclosing loop's next pass) reads the tensors the
    graph saved, the source among them."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    loop = ctx.frame.loops[0] if ctx.frame.loops else None
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
               and (pos_of(n) > after or (loop is not None and pos_of(loop) <= pos_of(n) <= end_of(loop)))
               for n in walk(body))


def used_after(name: str, ctx, after, caller_holds: bool = True) -> bool:
    scope = ctx.frame.scope
    bindings = scope.bindings.get(name, ())
    if any(b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.pos <= ctx.pos and b.end >= after for b in bindings):
        return False  # the statement that writes also rebinds the name: the old object is gone
    origin = scope.origin(name, ctx.pos)
    if caller_holds and origin is not None and origin.kind == Bind.ARG:
        return True
    rebound = [b.end for b in bindings if b.pos > after and b.kind != Bind.AUG]
    until = min(rebound, default=FAR)
    if scope.loads_between(name, after, until):
        return True
    for loop in ctx.frame.loops:  # the next iteration reads it again, unless it first rebinds it
        if scope.loads_between(name, pos_of(loop), _first_rebinding(loop, bindings)):
            return True
    return False


def _first_rebinding(loop, bindings):
    """Where each iteration of `loop` first rebinds the name for sure: the loop's own target, or a plain
    assignment that is a statement of the loop body itself (not under an `if`); else the loop's end."""
    body = getattr(loop, "body", None) or []
    starts = [pos_of(body[0])] if body and any(b.kind == Bind.FOR and b.node is loop for b in bindings) else []
    starts += [b.pos for b in bindings if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and any(b.node is st for st in body)]
    return min(starts, default=end_of(loop))
