"""`copy.deepcopy` on a tensor.

## What it does
Flags `copy.deepcopy(t)` (any import form: `copy.deepcopy`, `from copy import deepcopy as dc`) when
the file shows that `t` is a tensor: a torch factory or function result, arithmetic on tensors, a
`torch.Tensor` annotation, a `.detach()` / `.clone()` result. Deep copies of modules, dicts, configs,
`state_dict()`s and parameters are not flagged.

## Why is this bad?
On a tensor that is not a graph leaf (anything computed from a tensor that requires grad, or a view of
one) `deepcopy` raises "Only Tensors created explicitly by the user (graph leaves) support the deepcopy
protocol at the moment". On a view it copies the whole base storage, and it costs several times more
than the tensor idiom (about 8x for a 1,000-element tensor).

## Example
```python
h = encoder(x)
saved = copy.deepcopy(h)    # RuntimeError: h is not a graph leaf
```

## Use instead
```python
saved = h.detach().clone()  # a copy outside the graph
kept = h.clone()            # a copy that keeps the graph
```
Add `.requires_grad_(h.requires_grad)` where a trainable leaf is wanted.

## Fix safety
Unsafe: `copy.deepcopy(t)` becomes `t.detach().clone()`, which drops `requires_grad` and `.grad` that
deepcopy of a leaf would have kept.

## References
- torch.Tensor.__deepcopy__ (raises on non-leaf tensors); pytorch/pytorch#54580
"""
from __future__ import annotations

import ast

from ..evidence import LIKELY_TENSOR, TENSOR
from ..model import FixSafety
from .edits import as_receiver

CODE = "TEN201"
NAME = "deepcopy-tensor"
MESSAGE = "copy.deepcopy() of tensor '{arg}' {why}; use {arg}.detach().clone()"
WHY_NON_LEAF = "raises RuntimeError: it is not a graph leaf"
WHY_TENSOR = "raises on non-leaf tensors, copies a view's whole storage and is slower"
FIX = FixSafety.UNSAFE
TRIGGER = r"deepcopy"
NODES = (ast.Call,)
CLAIM = ("copy.deepcopy() of a non-leaf tensor raises 'Only Tensors created explicitly by the user "
         "(graph leaves) support the deepcopy protocol'; t.detach().clone() gives an independent copy.")


def check(node: ast.Call, ctx):
    if ctx.qualname(node.func) != "copy.deepcopy" or len(node.args) != 1 or node.keywords:
        return
    if id(node) in ctx.facts.discarded:
        return  # a bare `copy.deepcopy(t)` statement copies for nothing: TEN104 reports it
    arg = node.args[0]
    if isinstance(arg, ast.Starred) or ctx.kind(arg) not in (TENSOR, LIKELY_TENSOR):
        return
    why = WHY_NON_LEAF if ctx.attached(arg) and not ctx.frame.grad_disabled else WHY_TENSOR
    text = as_receiver(ctx.text(arg), arg)
    fix = ctx.replace(node, f"{text}.detach().clone()", FIX)
    yield ctx.finding(node, fix, arg=ctx.text(arg), why=why)
