"""`copy.copy` on a tensor.

## What it does
Flags `copy.copy(t)` (any import form: `copy.copy`, `from copy import copy`, aliases) when the file
shows that `t` is a tensor: a torch factory or function result, arithmetic on tensors, a `torch.Tensor`
annotation, a `.detach()` / `.clone()` result. Shallow copies of dicts, lists, modules, configs and
`state_dict()`s are not flagged (TEN301 covers state_dict snapshots). Nor is a copy no code can tell from
an alias: of a fresh temporary, or of a tensor with no graph when neither the copy (kept in a local name or
list) nor the source is written in place afterwards in the function; a parameter's (`copy.copy(p.data)`) is
always reported: the optimizer writes it in place wherever it steps.

## Why is this bad?
A tensor has no `__copy__`: `copy.copy` rebuilds it through `__reduce_ex__`, giving a new tensor object
that **shares the storage** of the source but **not its version counter**, and that is a new **leaf**.
So it looks like a copy and is not one: writes through either side show up in the other, autograd cannot
see them (gradients come out silently wrong where `.detach()` would raise), and the graph is cut:
gradients computed through the result never reach the source.

## Example
```python
def features(encoder: torch.nn.Module, x):
    h = encoder(x)
    saved = copy.copy(h)    # same storage as h; backward through `saved` never reaches encoder
```

## Use instead
```python
def features(encoder: torch.nn.Module, x):
    h = encoder(x)
    saved = h.detach().clone()  # an independent copy outside the graph
    alias = h.detach()          # an explicit alias (shares storage and the version counter)
    kept = h.clone()            # a copy that keeps the graph
```

## Fix safety
Unsafe: `copy.copy(t)` becomes `t.detach().clone()`, which gives new storage (writes no longer reach
the source) and drops `requires_grad`, which the shallow copy of a leaf kept.

## Known problems
Only a direct `copy.copy(t)` is reported: a shallow copy of a list or dict of tensors keeps the same
tensor objects (no new aliasing object is made) and is left alone. On 11,000 files of released
PyTorch libraries the rule made no finding: the pattern is rare in library code.

## References
- torch.Tensor has no `__copy__`; `copy.copy` goes through `Tensor.__reduce_ex__`
- pytorch/pytorch#35990 (aliases that change the source); torch docs, "Tensor.detach"
"""
from __future__ import annotations

import ast

from ..analysis import aliasing
from ..analysis.evidence import PARAM, TENSORISH
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import as_receiver, detached_clone, tensor_replace


def check(node: ast.Call, ctx):
    if ctx.qualname(node.func) != "copy.copy" or len(node.args) != 1 or node.keywords:
        return
    arg = node.args[0]
    if isinstance(arg, ast.Starred) or ctx.kind(arg) not in TENSORISH:
        return
    unseen = aliasing.held_nowhere_else(arg, ctx) or aliasing.unseen_alias(node, arg, ctx)
    if unseen and not _of_a_parameter(arg, ctx):
        return  # a tensor with no graph, neither side written after: no one can tell the alias from a copy
    text = as_receiver(ctx.text(arg), arg)
    fix = tensor_replace(ctx, [arg], node, detached_clone(ctx.text(arg), arg), FixSafety.UNSAFE)
    yield ctx.finding(node, fix, arg=ctx.text(arg), recv=text)


def _of_a_parameter(arg, ctx) -> bool:
    """`copy.copy(p.data)` of a parameter: the optimizer writes it in place, wherever it steps."""
    while True:
        if ctx.kind(arg) == PARAM:
            return True
        if not isinstance(arg, (ast.Attribute, ast.Subscript)):
            return False
        arg = arg.value


RULE = Rule(
    code="TEN202",
    name="copy-copy-tensor",
    message=("copy.copy() of tensor '{arg}' shares its storage (not its version counter) and cuts the graph; "
             "use {recv}.detach().clone() for a copy"),
    nodes=(ast.Call,),
    # any of (`from copy import copy`)
    check=check,
    trigger=(r"copy\.copy\(", r"copy\s+import[^\n]*\bcopy\b"),
    claim=("copy.copy(t) returns a new leaf sharing t's storage: writes through it change t and "
           "gradients through it do not reach t's graph; t.detach().clone() owns its storage."),
    doc=__doc__,
    fix=FixAvailability.ALWAYS,
    fix_forms=(
        FixForm("`copy.copy(t)` becomes `t.detach().clone()`",
                FixSafety.UNSAFE,
                "aliasing and gradient flow: new storage, no `requires_grad`"),
    ),
)
