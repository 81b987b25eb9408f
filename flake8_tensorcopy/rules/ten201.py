"""`copy.deepcopy` on a tensor.

## What it does
Flags `copy.deepcopy(t)` (any import form: `copy.deepcopy`, `from copy import deepcopy as dc`) when
the file shows that `t` is a tensor that deepcopy mishandles: one computed from tensors that require
grad (a model output, arithmetic on a parameter: not a graph leaf), or a view (`t[i]`, `t[:n]`,
`t.view(...)`, `t.t()`). Deep copies of modules, dicts, configs, `state_dict()`s, parameters and plain
leaf tensors are not flagged.

## Why is this bad?
On a tensor that is not a graph leaf (anything computed from a tensor that requires grad, or a view of
one) `deepcopy` raises "Only Tensors created explicitly by the user (graph leaves) support the deepcopy
protocol at the moment". On a view it copies the whole base storage, and it costs several times more
than the tensor idiom (about 8x for a 1,000-element tensor).

## Example
```python
def features(encoder: torch.nn.Module, x):
    h = encoder(x)
    saved = copy.deepcopy(h)    # RuntimeError: h is not a graph leaf
```

## Use instead
```python
def features(encoder: torch.nn.Module, x):
    h = encoder(x)
    saved = h.detach().clone()  # a copy outside the graph
    kept = h.clone()            # a copy that keeps the graph
```
Add `.requires_grad_(h.requires_grad)` where a trainable leaf is wanted.

## Fix safety
Unsafe: `copy.deepcopy(t)` becomes `t.detach().clone()`, which drops `requires_grad` and `.grad` that
deepcopy of a leaf would have kept.

## Known problems
Deepcopy of a leaf tensor that is not a view works; it is only slower than `t.clone()` (about 8x
for 1,000 elements), and is not reported: on real code (see docs/ecosystem.md) those calls were
intended, and a default-on rule must not speak for speed alone. Tensors whose graph the file does not
show (a parameter of the function, an attribute) are not reported either.

## References
- torch.Tensor.__deepcopy__ (raises on non-leaf tensors); pytorch/pytorch#54580
"""
from __future__ import annotations

import ast

from ..analysis import api
from ..analysis.evidence import LIKELY_TENSOR, TENSOR
from ..analysis.facts import Bind
from ..model import FixSafety
from .edits import detached_clone

CODE = "TEN201"
NAME = "deepcopy-tensor"
MESSAGE = "copy.deepcopy() of tensor '{arg}' {why}; use {arg}.detach().clone()"
WHY_NON_LEAF = "raises RuntimeError: it is not a graph leaf"
WHY_VIEW = "copies the whole storage of the tensor it views (and raises if that one is in a graph)"
FIX = FixSafety.UNSAFE
TRIGGER = r"deepcopy"
NODES = (ast.Call,)
CLAIM = ("copy.deepcopy() of a non-leaf tensor raises 'Only Tensors created explicitly by the user "
         "(graph leaves) support the deepcopy protocol', and of a view copies the whole base storage; "
         "t.detach().clone() gives an independent copy of just the view.")


def check(node: ast.Call, ctx):
    if ctx.qualname(node.func) != "copy.deepcopy" or len(node.args) != 1 or node.keywords:
        return
    if id(node) in ctx.facts.discarded:
        return  # a bare `copy.deepcopy(t)` statement copies for nothing: TEN104 reports it
    arg = node.args[0]
    if isinstance(arg, ast.Starred) or ctx.kind(arg) not in (TENSOR, LIKELY_TENSOR):
        return
    if ctx.attached(arg) and not ctx.grad_disabled:
        why = WHY_NON_LEAF
    elif _is_view(arg) or _bound_to_view(arg, ctx):
        why = WHY_VIEW
    else:
        return  # a plain leaf: deepcopy works (only slower)
    fix = ctx.replace(node, detached_clone(ctx.text(arg), arg), FIX)
    yield ctx.finding(node, fix, arg=ctx.text(arg), why=why)


def _is_view(expr) -> bool:
    """`t[i]`, `t[:n]`, `t.view(...)`, `t.T`: the result shares a larger storage."""
    if isinstance(expr, ast.Subscript):
        return True
    if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
        return True
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
        return False
    op = api.method(expr.func.attr)
    return op is not None and op.alias == "view"


def _bound_to_view(expr, ctx) -> bool:
    if not isinstance(expr, ast.Name):
        return False
    bindings = ctx.frame.scope.reaching(expr.id, ctx.pos)
    return bool(bindings) and all(b.kind == Bind.ASSIGN and _is_view(b.value) for b in bindings)
