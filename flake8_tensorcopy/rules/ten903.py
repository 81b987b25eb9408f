"""`.data` on a tensor: use `.detach()`, or `torch.no_grad()` for an intended update.

## What it does
Flags every use of `.data` on an expression the file shows to be a tensor or parameter (opt-in: enable
with `--extend-select TEN903`): reads such as `out.data.max(1)`, writes through it such as
`p.data.mul_(0.5)`, and assignments such as `p.data = new`. `.data` of datasets, buffers, graphs and
other objects without tensor evidence is left alone (an `isinstance(x, torch.Tensor)` check alone
does not count: wrappers are unwrapped with `.data` in the branch where `x` is not a tensor).

## Why is this bad?
`.data` shares storage with the tensor but not its version counter, so autograd cannot see a write
made through it: a tensor that was saved for the backward pass is changed behind its back and the
gradient comes out silently wrong, where the same write through `.detach()` raises "one of the
variables needed for gradient computation has been modified by an inplace operation". `.data` is a
pre-0.4 idiom; `.detach()` is its checked replacement, and `with torch.no_grad():` is the way to write
parameters on purpose.

## Example
```python
p = torch.nn.Parameter(torch.tensor([2.0, 4.0]))
loss = (p * p).sum()
p.data.mul_(0.5)        # no error; the gradient is computed from the halved p
loss.backward()
```

## Use instead
```python
p = torch.nn.Parameter(torch.tensor([2.0, 4.0]))
loss = (p * p).sum()
p.detach().mul_(0.5)    # autograd sees the write: backward() raises instead of a wrong gradient
loss.backward()
```
For an intended update, write before the forward under `torch.no_grad()`: `p.mul_(0.5)`.

## Fix safety
Unsafe: reads become `.detach()`. Results are the same except where a write through the alias
overlaps a pending backward, which then raises instead of silently using the changed values; code
relying on that silence changes behaviour. Assignments (`p.data = new`) get no fix: the replacement
(`with torch.no_grad(): p.copy_(new)`, or rebinding the parameter) depends on whether the shape changes.

## Known problems
Tensor evidence is the file's: an argument annotated `torch.Tensor` is taken as a tensor even inside an
`isinstance(x, SomeWrapper)` branch where it is not. Writes through `.data` that TEN102 reports as a
bug are reported here too (as modernisation); the two codes can both appear on one line.

## References
- PyTorch 0.4 migration guide, "What about .data?": "any changes on x.detach() are tracked by
  autograd ... x.data ... changes will not be tracked"
- pytorch/pytorch#6990
"""
from __future__ import annotations

import ast
import dataclasses

from .context import Context
from ..analysis.evidence import SURE_TENSOR
from .model import Edit, FixAvailability, FixForm, FixSafety, Rule
from .edits import as_receiver, tensor_fix


def check(node, ctx):
    if node.attr != "data" or not _is_tensor(node.value, ctx):
        return
    recv = node.value
    shown = as_receiver(ast.unparse(recv), recv)  # not the source text: slicing it is O(file) per call
    if isinstance(node.ctx, ast.Load):
        line, end = ctx.char_pos(node.end_lineno, node.end_col_offset)
        data = Edit((line, end - len("data")), (line, end), "detach()")  # `.data` -> `.detach()`
        fix = tensor_fix(ctx, [recv], (data,), FixSafety.UNSAFE)
        use = f"use {shown}.detach() (or torch.no_grad() for an update)"
        yield ctx.finding(node, fix, recv=shown, use=use)
    else:
        yield ctx.finding(node, None, recv=shown,
                          use=f"update under torch.no_grad() instead (e.g. {shown}.copy_(...))")


def _is_tensor(expr, ctx) -> bool:
    if isinstance(expr, ast.Attribute) and expr.attr in ("weight", "bias", "grad"):
        return True
    # isinstance guards are not trusted here: `x.data` is how non-tensor wrappers (`Vector3 | Tensor`,
    # TensorDict-likes) are unwrapped in the branch where x is *not* a tensor.
    unguarded = Context(ctx.facts, dataclasses.replace(ctx.frame, guards=frozenset()), ctx.node, ctx.spec)
    # `.clone()` alone is not enough: Boxes-like wrappers have it; `p` of `m.named_parameters()` is a parameter
    return unguarded.kind(expr) in SURE_TENSOR


RULE = Rule(
    code="TEN903",
    name="data-attribute",
    message="'.data' on '{recv}' hides writes from autograd (silently wrong gradients); {use}",
    nodes=(ast.Attribute,),
    check=check,
    trigger=r"\.data\b",
    claim=("A write through p.data between forward and backward changes a saved tensor without a version "
           "bump: backward() returns a wrong gradient with no error; the same write through p.detach() "
           "raises 'one of the variables needed for gradient computation has been modified by an inplace "
           "operation'."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("reads of `.data` become `.detach()`",
                FixSafety.UNSAFE,
                "a write through the alias that overlaps a pending backward raises instead of passing silently"),
    ),
    default_on=False,
)
