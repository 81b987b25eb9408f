"""In-place write into a `.detach()` alias while the source is still used.

## What it does
Flags an in-place write (`z[i] = v`, `z += v`, `z.add_(...)` or any `*_` method, `out=z`) into a
name bound to `y.detach()`, or `w = y.detach().add_(...)`, when `y` is used after the write.

## Why is this bad?
`detach()` returns an alias, not a copy: the result shares `y`'s storage *and* its version counter.
The write changes `y` too, and if autograd saved `y` for the backward pass, `backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation".
Code that meant "take a copy and change the copy" silently changes the original.

Not flagged: a detach of a fresh temporary (`f(x).detach()`, `x.clone().detach()`), rebinding
(`z = z + 1`), intended parameter / gradient / optimizer / EMA writes (`p.detach().mul_(...)` in an
update or init function, `.weight`, `.bias`, `.grad`), and sources never used after the write.

## Example
```python
y = x.sigmoid()
z = y.detach()
z[z < 0.5] = 0.0        # also zeroes y; y.sum().backward() raises
loss = y.sum()
```

## Use instead
```python
y = x.sigmoid()
z = y.detach().clone()  # an independent copy
z[z < 0.5] = 0.0
loss = y.sum()
```

## Fix safety
Unsafe: the fix turns the detach site into `.detach().clone()`. It removes the aliasing, so code that
relied on the write reaching `y` behaves differently.

## References
- torch.Tensor.detach: "Returned Tensor shares the same storage with the original one. In-place
  modifications on either of them will be seen, and may trigger errors in correctness checks."
- pytorch/pytorch#7860, #35990
"""
from __future__ import annotations

import ast

from ..evidence import is_param_like
from ..facts import dotted, end_of, pos_of
from ..inplace import is_inplace_method, written
from ..model import FixSafety

CODE = "TEN101"
NAME = "detach-alias-write"
MESSAGE = ("in-place write to '{alias}', a detach() alias of '{source}': '{source}' changes too "
           "(shared storage and version counter); copy with {source}.detach().clone()")
FIX = FixSafety.UNSAFE
TRIGGER = r"\.detach\(\)"
NODES = (ast.Assign, ast.AugAssign, ast.Call)
CLAIM = ("An in-place write through y.detach() changes y and bumps its version counter, so a "
         "backward pass that saved y raises 'one of the variables needed for gradient computation "
         "has been modified by an inplace operation'; y.detach().clone() leaves y intact.")


def check(node, ctx):
    if isinstance(node, ast.Assign):
        yield from _kept_inplace_on_detach(node, ctx)
    target = written(node)
    if not isinstance(target, ast.Name):
        return
    scope = ctx.frame.scope
    origin = scope.origin(target.id, ctx.pos)
    if origin is None or origin.kind != "assign" or not _is_detach_call(origin.value):
        return
    if origin not in scope.bindings.get(target.id, ()):
        return
    source = origin.value.func.value
    if isinstance(source, ast.Name) and source.id == target.id:
        return  # y = y.detach(): the original object has no name left to be read through
    if not _reportable_source(source, ctx, end_of(node)):
        return
    fix = ctx.replace(origin.value, ctx.text(origin.value) + ".clone()", FIX)
    yield ctx.finding(node, fix, alias=target.id, source=ctx.text(source))


def _kept_inplace_on_detach(node: ast.Assign, ctx):
    """`w = y.detach().add_(1)`: the in-place result is kept in a name while y lives on."""
    if not any(isinstance(t, ast.Name) for t in node.targets):
        return
    call = node.value
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and is_inplace_method(call.func.attr):
        inner = call.func.value
        if _is_detach_call(inner):
            source = inner.func.value
            if _reportable_source(source, ctx, end_of(node)):
                fix = ctx.replace(inner, ctx.text(inner) + ".clone()", FIX)
                alias = next(t.id for t in node.targets if isinstance(t, ast.Name))
                yield ctx.finding(node, fix, alias=alias, source=ctx.text(source))
            return
        call = inner


def _is_detach_call(expr) -> bool:
    return (isinstance(expr, ast.Call) and not expr.args and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "detach")


def _reportable_source(source: ast.AST, ctx, after) -> bool:
    """A named tensor (not a fresh temporary), not a parameter being updated, still used after `after`."""
    while isinstance(source, ast.Subscript):
        source = source.value
    if not isinstance(source, (ast.Name, ast.Attribute)) or dotted(source) is None:
        return False  # f(x).detach(), x.clone().detach(): nobody else holds the storage
    if is_param_like(source, ctx) or ctx.in_param_update_function:
        return False
    if isinstance(source, ast.Attribute):
        return True  # an attribute outlives the statement
    return _used_after(source.id, ctx, after)


def _used_after(name: str, ctx, after) -> bool:
    scope = ctx.frame.scope
    origin = scope.origin(name, ctx.pos)
    if origin is not None and origin.kind == "arg":
        return True  # the caller still holds it
    rebound = [b.end for b in scope.bindings.get(name, ()) if b.pos > after and b.kind != "aug"]
    until = min(rebound, default=(1 << 30, 0))
    if scope.loads_between(name, after, until):
        return True
    for loop in ctx.frame.loops:  # the next iteration reads it again
        if scope.loads_between(name, pos_of(loop), end_of(loop)):
            return True
    return False
