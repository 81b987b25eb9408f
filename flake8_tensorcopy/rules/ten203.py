"""`.clone()` of a graph-attached tensor kept as if it were a detached copy.

## What it does
Flags `t.clone()` without `.detach()` when `t` is attached to the autograd graph (a loss, a model
output, a parameter, anything computed from them), the code is not under `torch.no_grad()`, and the
clone is kept beyond the step: appended to or stored in a container or attribute that outlives the
loop iteration (`history.append(loss.clone())`, `self.prev = h.clone()`), bound to a name in a loop
and read at a later step or after the loop without being computed with (`best_out = out.clone()`
returned after training), or converted with `.numpy()`; and a parameter's clone that is later computed
with (`(w - w0).pow(2)`: the "frozen" copy is in the graph, so the penalty's gradient cancels). A name
never decides: `skip = x.clone()` added back within the step is quiet whatever it is called.

## Why is this bad?
`clone()` records a `CloneBackward0` node and keeps `requires_grad`: gradients flow back into the
source, every kept clone holds its step's whole graph (and saved activations) alive, and `.numpy()`
on it raises "Can't call numpy() on Tensor that requires grad".

Not flagged: clones of inputs, masks, indices or tokens (no graph evidence), clones under `no_grad`,
`.detach().clone()` / `.clone().detach()`, clones used within the step, and working copies written in
place afterwards (`target = h.clone(); target[mask] = 0`), whatever their name; a parameter's clone kept on
`self` (`self.weight_before = self.layer.weight.clone()`) that its class only compares or logs, a
parameter's clone read only through what holds no graph (`w0.size()`, `w0.data`, `w0.dim()`, each item
detached where used: `p0.detach()` for `p0` of `zip(params, start)`), or in a function that neither
backpropagates nor returns anything (a unit test comparing weights with it), and clones
appended to a list that code which does not train then computes with (a scan's states stacked into the
layer's output: the caller's backward needs their gradient).

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    history.append(loss.clone())   # keeps every step's graph alive
    loss.backward()
```

## Use instead
```python
for x, y in loader:
    loss = criterion(model(x), y)
    history.append(loss.detach().clone())  # or loss.item() for a number
    loss.backward()
```

## Fix safety
Unsafe: the fix inserts `.detach()` before `.clone()`, which stops gradients from flowing through the
copy; code that backpropagates through the kept clone would change.

## References
- PyTorch FAQ: "Don't accumulate history across your training loop"
- torch.clone: "This function is differentiable, so gradients will flow back from the result of this
  operation to input. To create a tensor without an autograd relationship to input see detach()."
"""
from __future__ import annotations

import ast

from ..analysis import backward, kept, losses, summaries, training
from ..analysis.bodies import last_computed_with, last_writes
from ..analysis.clones import kept_clones
from ..analysis.evidence import PARAM
from ..analysis.facts import base_name, dotted, pos_of, self_attribute
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import before_method, tensor_fix

KEEPING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "put", "push"})


def check(node, ctx):
    if ctx.grad_disabled or ctx.in_param_update_function:
        return  # no graph is recorded / model surgery copies weights on purpose
    if isinstance(node, ast.Call):
        yield from _numpy_of_clone(node, ctx)
        return
    if isinstance(node, ast.Expr):
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in KEEPING_METHODS and _outlives_step(call.func.value, ctx)):
            return
        if _forward_output(call.func.value, ctx):
            return
        for arg in call.args:
            yield from _report(arg, ctx, "kept in '%s'" % ctx.text(call.func.value))
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    value = node.value
    if value is None:
        return
    for target in targets:
        if isinstance(target, ast.Name) and kept_clones(value) and not _working_copy(target.id, ctx):
            beyond = _kept_beyond_step(target.id, ctx) or losses.used_as_target(target.id, ctx)
            yield from _report(value, ctx, "kept as '%s'" % target.id, snapshot=target.id, params_only=not beyond)
        elif isinstance(target, (ast.Attribute, ast.Subscript)) and _outlives_step(target, ctx):
            held = dotted(target) if self_attribute(target) is not None and ctx.frame.cls is not None else None
            yield from _report(value, ctx, "kept in '%s'" % ctx.text(target), snapshot=held)


def _report(expr, ctx, why, snapshot=None, params_only=False):
    """With `params_only` (a clone bound to a name, used within its step): only a parameter's clone that
    is computed with later (`(w - w0).pow(2)`: the copy is in the graph, so the penalty's gradient cancels)."""
    for clone in kept_clones(expr):
        source = clone.func.value
        param = snapshot and ctx.kind(source) == PARAM
        if param and not (_fed_back(snapshot, ctx) and _backpropagated_later(snapshot, ctx)):
            continue  # a parameter's clone only compared or logged, or never backpropagated, holds no activations
        if params_only and not param:
            continue  # `skip = x.clone()` added back in the same step: the gradient through it is wanted
        if ctx.attached(source):
            fix = tensor_fix(ctx, [clone.func.value], (before_method(ctx, clone.func, "detach()."),), FixSafety.UNSAFE)
            yield ctx.finding(clone, fix, source=ctx.text(source), why=why)


def _backpropagated_later(name: str, ctx) -> bool:
    """A backward may run through what is computed with the clone: later in the function, in a loop around
    it that trains, in a caller of a function that returns a value; for `self.w0`, anywhere (another
    method's loss). Not in a function that returns nothing and backpropagates nothing (a unit test)."""
    return (name.startswith("self.") or backward.after_in_function(ctx, ctx.pos)
            or any(r.value is not None for r in summaries.returns(ctx.frame.func))
            or any(training.torch_training(loop, ctx) for loop in ctx.frame.loops))


def _kept_beyond_step(name: str, ctx) -> bool:
    """A snapshot: bound in a loop, read in a later iteration or after the loop, and not computed with
    (a state carried into the next step's computation)."""
    return (bool(ctx.frame.loops) and kept.outlives_iteration(name, ctx, ctx.frame.loops[-1])
            and not _fed_back(name, ctx))


def _working_copy(name: str, ctx) -> bool:
    """`name` is later written in place (`target[mask] = 0`, `target.mul_(2)`): a copy made to be edited
    inside the step, whatever its name says."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return last_writes(ctx.facts, body).get(name, (0, 0)) > ctx.pos


def _fed_back(name: str, ctx) -> bool:
    """`name` is later an operand of arithmetic or an argument of a computation (not of an
    assertion, comparison or log call): `(w - w0).pow(2)`, `F.mse_loss(w, w0)`. For `self.w0`, anywhere
    in its class (another method reads it)."""
    if name.startswith("self.") and ctx.frame.cls is not None:
        return name in last_computed_with(ctx.facts, ctx.frame.cls)
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return last_computed_with(ctx.facts, body).get(name, (0, 0)) > ctx.pos


def _forward_output(holder, ctx) -> bool:
    """The list the clones go into is computed with later (`torch.stack(outputs)`) in code that neither
    backpropagates nor steps an optimizer: the clones are a forward computation's values (a scan's states
    returned as the layer's output), whose gradient the caller's backward needs."""
    name = dotted(holder)
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return name is not None and _fed_back(name, ctx) and not training.torch_training(body, ctx)


def _outlives_step(target, ctx) -> bool:
    """An attribute, or a container bound outside the innermost loop: it survives the iteration."""
    root = target
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        if isinstance(root, ast.Attribute):
            return True
        root = root.value
    if not isinstance(root, ast.Name) or not ctx.frame.loops:
        return False
    loop = ctx.frame.loops[-1]
    origin = ctx.frame.scope.origin(root.id, ctx.pos)
    return origin is None or origin.pos < pos_of(loop)


def _numpy_of_clone(call: ast.Call, ctx):
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "numpy"):
        return
    for clone in kept_clones(call.func.value):
        source = clone.func.value
        if ctx.attached(source) and base_name(source):
            fix = tensor_fix(ctx, [clone.func.value], (before_method(ctx, clone.func, "detach()."),), FixSafety.UNSAFE)
            yield ctx.finding(clone, fix, source=ctx.text(source), why=".numpy() on it raises")


RULE = Rule(
    code="TEN203",
    name="clone-kept-with-graph",
    message=("clone() of '{source}' keeps it attached to the graph ({why}); "
             "use {source}.detach().clone() for a snapshot"),
    nodes=(ast.Assign, ast.AnnAssign, ast.Expr, ast.Call),
    check=check,
    trigger=r"\.clone\(",
    claim=("t.clone() keeps requires_grad and a CloneBackward0 node: a kept clone holds the graph of "
           "its step alive and .numpy() on it raises; t.detach().clone() holds no graph."),
    doc=__doc__,
    fix=FixAvailability.ALWAYS,
    fix_forms=(
        FixForm("`.detach()` before the kept `.clone()`",
                FixSafety.UNSAFE,
                "gradient flow: nothing backpropagates through the copy",
                withheld=("3 of 4 fixes correct in fix review 8 at 26fa81d, on code the rules were not tuned on: "
                          "clones a scan stacks into the output of its layer")),
    ),
)
