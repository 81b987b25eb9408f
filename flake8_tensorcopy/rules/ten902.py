"""`.clone().detach()` where `.detach().clone()` gives the same copy without a graph node.

## What it does
Flags `t.clone().detach()` (opt-in: enable with `--extend-select TEN902`).

## Why is this bad?
Both orders give the same values and an independent, detached leaf. Cloning first records a
`CloneBackward0` node when `t` requires grad, only to drop it again: a little extra work (about 0.2 µs
per call on small tensors) and a less clear statement of intent. torch's own warnings recommend
`sourceTensor.detach().clone()`. This is a style rule: the result does not change.

## Example
```python
snapshot = hidden.clone().detach()
```

## Use instead
```python
snapshot = hidden.detach().clone()
```

## Fix safety
Safe: the fix swaps the two calls (keeping any `clone(...)` arguments such as `memory_format=`). The
result has the same values, dtype, device, layout and `requires_grad=False` either way.

## References
- torch.tensor: "When data is a tensor x, torch.tensor() reads out 'the data' from whatever it is
  passed ... equivalent to x.detach().clone()"; its UserWarning recommends
  `sourceTensor.detach().clone()`
"""
from __future__ import annotations

import ast

from .model import Edit, Fix, FixSafety
from .edits import as_receiver, before_method

CODE = "TEN902"
NAME = "clone-then-detach"
MESSAGE = ("'{recv}.clone().detach()' records a CloneBackward0 node only to drop it; "
           "write '{recv}.detach().clone()' (same result)")
FIX = FixSafety.SAFE
TRIGGER = r"\.clone\((?:[^()]|\([^()]*\))*\)(?:\s|#[^\n]*\n)*\.\s*detach\("  # one way to match
NODES = (ast.Call,)
CLAIM = ("t.clone().detach() and t.detach().clone() give equal values and a detached leaf; the "
         "clone-first order records a CloneBackward0 node on the way, detach-first records none.")
DEFAULT_ON = False


def check(node, ctx):
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "detach" and not node.args and not node.keywords):
        return
    clone = func.value
    if not (isinstance(clone, ast.Call) and isinstance(clone.func, ast.Attribute) and clone.func.attr == "clone"):
        return
    if ctx.qualname(clone.func) == "torch.clone":  # torch.clone(x).detach() -> torch.clone(x.detach())
        if not clone.args or isinstance(clone.args[0], ast.Starred):
            return
        recv = clone.args[0]
        detach_first = ctx.edit(recv, as_receiver(ctx.text(recv), recv) + ".detach()")
    else:
        recv = clone.func.value
        detach_first = before_method(ctx, clone.func, "detach().")
    fix = Fix((detach_first, _drop_detach(node, clone, ctx)), FIX)
    yield ctx.finding(node, fix, recv=as_receiver(ctx.text(recv), recv))


def _drop_detach(node, clone, ctx) -> Edit:
    """Delete `.detach()` after the clone call; a comment between the two lines stays."""
    start = ctx.char_pos(clone.end_lineno, clone.end_col_offset)
    end = ctx.char_pos(node.end_lineno, node.end_col_offset)
    line, col = ctx.char_pos(node.func.end_lineno, node.func.end_col_offset)
    if "#" in ctx.text(node)[len(ctx.text(clone)):]:
        dot = ctx.facts.lines[line - 1].rfind(".", 0, col - len("detach"))
        start = (line, dot)
    return Edit(start, end, "")
