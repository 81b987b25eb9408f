"""A tensor kept by reference, then written in place: the kept entry changes too.

## What it does
Flags a store that keeps a tensor's object, not a copy of it (`hist.append(x)`, `state["prev"] = x`,
`obj.prev = x`, `prev = x`; also of `x.detach()` or `x.data`, which share its storage), when a path then
leads to an in-place write that changes the value of that same object (`x += e`, `x.mul_(e)`,
`x.zero_()`), and the holder may still be read after the write (a name read later, a parameter, an
attribute or entry of an object). The code must prove `x` a tensor (a torch call, arithmetic on tensors,
a function of the package that returns one): for a Python number `x += e` rebinds and nothing is shared.

Not flagged: writes that fill a buffer (`x.copy_(y)`, `x.fill_(0)`, `x[i] = v`, `out=x`), a name rebound
between the store and the write (`x = x + e`), a holder nobody reads again, values not proven tensors.

## Why is this bad?
Appending, assigning or storing a tensor keeps a reference to the same object. An in-place write to it
afterwards (augmented assignment on a tensor is in place) changes what was kept: a history of losses whose
entries all end up equal, a "previous value" that is always the current one, a snapshot that moves.

## Example
```python
losses = []
loss = torch.ones(())
losses.append(loss)
loss += 1               # losses[0] is now 2 as well
print(losses)
```

## Use instead
```python
losses = []
loss = torch.ones(())
losses.append(loss.clone())  # an entry of its own
loss += 1
print(losses)
```

## Fix safety
Unsafe: the kept value becomes `x.clone()`, so the write no longer reaches the kept entry (aliasing
changes; the clone stays on the graph as the reference did). Offered only where the kept expression is
the name itself.

## Known problems
Off by default (`--extend-select TEN904`), decided by measurement: over the ecosystem corpus (10,823 files
of 18 libraries) and every file of the known-bug corpus's releases and commits (31,068 files of training
scripts, notebooks, research and RL code) it reports nothing, while its text trigger, a store and an
in-place write, occurs in 6,182 of the 10,823 library files: default on, it would cost a walk of most
files for no finding; and the held-out corpus has no case of it yet. A `.grad` kept by reference (`prev =
p.grad`) is not reported: whether backward later writes it in place depends on
`zero_grad(set_to_none=...)`, which is `True` by default in torch 2, where the kept tensor keeps its values.

## References
- torch docs, "In-place operations": `x += y` on a tensor modifies `x`.
"""
from __future__ import annotations

import ast

from ..analysis import proven
from ..analysis.kept import kept_before, stores_of, value_write
from .edits import as_receiver, tensor_replace
from .model import FixAvailability, FixForm, FixSafety, Rule, Trigger


def check(node: ast.AST, ctx):
    name = value_write(node)
    if name is None or not stores_of(ctx, name):  # most writes have no store of their name before them
        return
    target = node.target if isinstance(node, ast.AugAssign) else node.func.value
    if not proven.tensor(target, ctx):
        return
    for store in kept_before(ctx, node, name):
        value = store.value
        fix = tensor_replace(ctx, [value], value, f"{as_receiver(ctx.text(value), value)}.clone()",
                             FixSafety.UNSAFE) if isinstance(value, ast.Name) else None
        yield ctx.finding(store.node, fix, name=name, holder=f"'{ctx.text(store.holder)}'",
                          line=node.lineno, recv=ctx.text(value))


RULE = Rule(
    code="TEN904",
    name="kept-then-written",
    message=("'{name}' is kept by reference in {holder} and then written in place at line {line}: the kept "
             "value changes too; keep {recv}.clone()"),
    nodes=(ast.AugAssign, ast.Call, ast.Assign),  # the writes; stores are recorded for their frames
    check=check,
    # A store (`.append(x)`, `.insert(i, x)`, a line ending `= x`), and an in-place write (`x += e`, `x.add_(e)`).
    trigger=Trigger(r"\.append\(", r"\.insert\(", r"= *[A-Za-z_]\w*(?:\.detach\(\)|\.data)? *(?:#[^\n]*)?\n",
                    r"[-+*/]=", r"\.\w+_\(", groups=(3, 2)),
    claim=("A list entry appended from a tensor is the same object: `x += 1` afterwards changes the entry; "
           "appending x.clone() keeps the value at the time of the append."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("the kept name becomes `x.clone()` at the store",
                FixSafety.UNSAFE,
                "aliasing: the write no longer reaches the kept entry",
                withheld=("no fix of it judged on code the rules were not tuned on yet")),
    ),
    default_on=False,  # its trigger (a store and an in-place write) passes most files: opt-in until it is cheap
)
