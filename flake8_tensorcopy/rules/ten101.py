"""In-place write into a `.detach()` alias while the source is still used.

## What it does
Flags an in-place write (`z[i] = v`, `z += v`, `z.add_(...)` or any `*_` method, `out=z`) into a
name bound to `y.detach()` (or to a view or a CPU move of it: `y.detach().view(-1)`,
`y.detach().cpu()`), or `w = y.detach().add_(...)`, when `y` is used after the write; also the alias
passed to a def of the package that writes that parameter in place (`center(y.detach())` with
`def center(m): m -= m.mean()`), reported at the def's write (at the call, for a def of another module),
when the caller uses `y` after the call.

## Why is this bad?
`detach()` returns an alias, not a copy: the result shares `y`'s storage *and* its version counter.
The write changes `y` too, and if autograd saved `y` for the backward pass, `backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation".
Code that meant "take a copy and change the copy" silently changes the original.

Not flagged: a detach of a fresh temporary (`f(x).detach()`, `x.clone().detach()`), copies on the way
(a cast such as `.double()`, a mask index, `.cuda()` of a CPU tensor), rebinding (`z = z + 1`),
intended parameter / gradient / optimizer / EMA writes (`p.detach().mul_(...)` in an update or init
function, `.weight`, `.bias`, `.grad`), and sources never used after the write (a later backward counts
as a use unless all it backpropagates is computed, visibly, from other tensors, or nothing read after the
write holds the source or a value computed from it).

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
Unsafe: the fix appends `.clone()` at the alias site (`y.detach().clone()`, `y.detach().cpu().clone()`).
It removes the aliasing, so code that relied on the write reaching `y` behaves differently.
No fix where the write updates `y` from its gradient (`tmp -= lr * y.grad`, a hand-written step). Not
reported where every later read of `y` is printed or a notebook cell's displayed output (or, after a first
one shown, a copy made for a contrast: `y.clone()`), or the first one shows the alias beside it
(`print(y, z)`) or `y` itself (`print(y)`, whatever the code does with it next): a lesson showing the
sharing, which every fix review judged a false alarm.

## References
- torch.Tensor.detach: "Returned Tensor shares the same storage with the original one. In-place
  modifications on either of them will be seen, and may trigger errors in correctness checks."
- pytorch/pytorch#7860, #35990
"""
from __future__ import annotations

import ast

from ..analysis.aliasing import DETACH, DIRECT, alias_writes, named, still_used
from ..analysis.evidence import is_param_like
from ..analysis.facts import dotted, end_of, walk
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import as_receiver, tensor_replace
from ..analysis.display import only_shown

ON_CPU = " when it is a CPU tensor (.cpu() / .to(device) return it; from CUDA they copy: CPU and GPU runs differ)"


def check(node, ctx):
    for write in alias_writes(node, ctx):
        alias = write.alias
        if write.how == DIRECT or alias.family != DETACH or not _reportable_source(alias.source, ctx, end_of(node)):
            continue
        if only_shown(alias.source, node, ctx, write.name):
            continue  # a lesson showing the sharing on purpose: only displays read the source after the write
        site = alias.site  # None for an element of a tuple a helper returned: nothing to copy there
        fix = tensor_replace(ctx, [site], site, as_receiver(ctx.text(site), site) + ".clone()", FixSafety.UNSAFE) \
            if site is not None and not _updates_source(write.reported_at(node), alias.source) else None
        where = ON_CPU if alias.moved else ""
        if write.callee is not None:
            where += f" ({write.callee.fn.name}() writes it in place; the call is on line {write.callee.call.lineno})"
        yield ctx.finding(write.reported_at(node), fix, alias=write.name, source=ctx.text(alias.source),
                          where=where)


def _updates_source(write: ast.AST, source: ast.AST) -> bool:
    """The write reads the source's gradient (`tmp = w.detach(); tmp -= lr * w.grad`): a hand-written update
    of the source through its alias, on purpose; a copy would silently stop it (no fix)."""
    grad = f"{dotted(source)}.grad" if dotted(source) else None
    return grad is not None and any(isinstance(n, ast.Attribute) and dotted(n) == grad for n in walk(write))


def _reportable_source(source: ast.AST, ctx, after) -> bool:
    """A named tensor (not a fresh temporary), not a parameter being updated, still used after `after`."""
    source = named(source)
    if source is None or is_param_like(source, ctx) or ctx.in_param_update_function:
        return False
    return still_used(source, ctx, after)


RULE = Rule(
    code="TEN101",
    name="detach-alias-write",
    message=("in-place write to '{alias}', a detach() alias of '{source}': '{source}' changes too (shared "
             "storage and version counter){where}; copy with {source}.detach().clone()"),
    nodes=(ast.Assign, ast.AugAssign, ast.Call),
    check=check,
    trigger=r"\.detach\(\)",
    claim=("An in-place write through y.detach() changes y and bumps its version counter, so a "
           "backward pass that saved y raises 'one of the variables needed for gradient computation "
           "has been modified by an inplace operation'; y.detach().clone() leaves y intact."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`.clone()` at the alias site: `y.detach()` becomes `y.detach().clone()` (`y.detach().cpu().clone()`)",
                FixSafety.UNSAFE,
                "aliasing: writes through the alias no longer reach the source"),
    ),
)
