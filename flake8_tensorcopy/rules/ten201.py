"""`copy.deepcopy` on a tensor, or on a module that keeps one with its graph.

## What it does
Flags `copy.deepcopy(t)` (any import form: `copy.deepcopy`, `from copy import deepcopy as dc`) when
the file shows that `t` is a tensor that deepcopy mishandles: one computed from tensors that require
grad (a model output, arithmetic on a parameter: not a graph leaf), or a view of part of a tensor
(`t[i]`, `t[:n]`, `t.narrow(...)`; `t.detach()`, `t.data` and views that rearrange every element,
`t.view(...)`, `t.t()`, `t.unsqueeze(0)`, are all of `t`, a view of part of a tensor only when `t` is one).
Deep copies of modules, dicts, configs, `state_dict()`s, parameters and leaf tensors
(`torch.randn(3, requires_grad=True)` is one: deepcopy keeps its requires_grad) are not flagged, with one
exception: an instance of a class of the file (bound from `Cls(...)`, or `self.attr` that is only ever set to
`Cls(...)`) whose `forward`, or a method it registers as a forward hook
(`layer.register_forward_hook(self._hook)`, whose `output` carries the graph), stores a graph tensor on
`self` (`self.hidden = flatten(output)`, `self.cache[key] = out`) and does not clear it on every path
before returning (for a hook: after each call in the class that runs the hooked layer).

## Why is this bad?
On a tensor that is not a graph leaf (anything computed from a tensor that requires grad, or a view of
one) `deepcopy` raises "Only Tensors created explicitly by the user (graph leaves) support the deepcopy
protocol at the moment". On a view it copies the whole base storage, and it costs several times more
than the tensor idiom (about 8x for a 1,000-element tensor). A module that kept such a tensor on itself
raises the same error as soon as it has run once (pytorch/pytorch#54580; byol-pytorch's target encoder,
lucidrains/byol-pytorch#20), whatever the grad mode of the copy.

## Example
```python
def features(encoder: torch.nn.Module, x):
    h = encoder(x)
    saved = copy.deepcopy(h)    # RuntimeError: h is not a graph leaf
```
A module that keeps an activation on itself:
```python
class NetWrapper(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        net[-1].register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self.hidden = output.flatten(1)  # kept, with its graph, after the forward

    def forward(self, x):
        self.net(x)
        return self.hidden


def target_encoder(net, x):
    online = NetWrapper(net)
    online(x)
    return copy.deepcopy(online)  # RuntimeError: online.hidden is not a graph leaf
```

## Use instead
```python
def features(encoder: torch.nn.Module, x):
    h = encoder(x)
    saved = h.detach().clone()  # a copy outside the graph
    kept = h.clone()            # a copy that keeps the graph
```
Add `.requires_grad_(h.requires_grad)` where a trainable leaf is wanted. For a module, clear the
stored activation once it is used, on every path, or store it detached (`output.detach()`) when no
gradient has to flow through it:
```python
class NetWrapper(torch.nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net
        net[-1].register_forward_hook(self._hook)

    def _hook(self, module, inputs, output):
        self.hidden = output.flatten(1)

    def forward(self, x):
        try:
            self.net(x)
            return self.hidden
        finally:
            self.hidden = None  # nothing with a graph stays on the module


def target_encoder(net, x):
    online = NetWrapper(net)
    online(x)
    return copy.deepcopy(online)
```

## Fix safety
Unsafe: `copy.deepcopy(t)` becomes `t.detach().clone()`, which drops `requires_grad` and `.grad` that
deepcopy of a leaf would have kept. The module finding has no fix: the class that keeps the tensor has
to change, and only its author knows whether the gradient through the stored value is needed.

## Known problems
Deepcopy of a leaf tensor that is not a view works; it is only slower than `t.clone()` (about 8x
for 1,000 elements), and is not reported: on real code (see docs/ecosystem.md) those calls were
intended, and a default-on rule must not speak for speed alone. Tensors whose graph the file does not
show (a parameter of the function, an attribute) are not reported either. For modules, only classes of
the file are followed, only through `forward` and forward hooks registered as `self.method`; a copy made
right after the instance is built, before anything that may run it (`self.teacher = deepcopy(self.student)`
in `__init__`), is not reported, nor is a copy of a parameter or of a model of unknown class (an EMA of
any `model`). A class whose caller clears the attribute before copying is still reported.

## References
- torch.Tensor.__deepcopy__ (raises on non-leaf tensors); pytorch/pytorch#54580
- lucidrains/byol-pytorch#20 (a forward hook kept the hidden layer's output; the target encoder's deepcopy raised)
"""
from __future__ import annotations

import ast

from ..analysis import api, module_state, summaries
from ..analysis.evidence import CONTAINER, LIKELY_TENSOR, STATE_DICT, TENSOR
from ..analysis.facts import Bind, self_attribute
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import detached_clone, tensor_replace

WHY_NON_LEAF = "raises RuntimeError: it is not a graph leaf"
WHY_VIEW = "copies the whole storage of the tensor it views (and raises if that one is in a graph)"
WHY_STATE = ("raises RuntimeError once it has run: {cls}.{method}() leaves a tensor with a graph (not a leaf) "
             "in self.{attr}")
USE_STATE = "clear self.{attr} after use (or store it detached) in {cls}"


def check(node: ast.Call, ctx):
    if ctx.qualname(node.func) != "copy.deepcopy" or len(node.args) != 1 or node.keywords:
        return
    if id(node) in ctx.facts.discarded:
        return  # a bare `copy.deepcopy(t)` statement copies for nothing: TEN104 reports it
    arg = node.args[0]
    if isinstance(arg, ast.Starred):
        return
    if ctx.kind(arg) not in (TENSOR, LIKELY_TENSOR):
        yield from _module_state(node, arg, ctx)
        return
    if ctx.non_leaf(arg) and not ctx.grad_disabled:
        why = WHY_NON_LEAF
    elif _is_view(arg, ctx) or _bound_to_view(_whole(arg), ctx):
        why = WHY_VIEW
    else:
        return  # a plain leaf: deepcopy works (only slower)
    text = ctx.text(arg)
    fix = tensor_replace(ctx, [arg], node, detached_clone(text, arg), FixSafety.UNSAFE)
    yield ctx.finding(node, fix, what="tensor", arg=text, why=why, use=f"use {detached_clone(text, arg)}")


def _module_state(node: ast.Call, arg, ctx):
    """`copy.deepcopy(encoder)` where `encoder` is an instance of a class of the file that keeps a tensor
    with a graph on itself once it has run (analysis/module_state.py); under no_grad too: the tensor kept
    is what raises, not the copy's grad mode. No fix: the class must change."""
    made = _instance_of(arg, ctx)
    kept = module_state.kept_graph(made, ctx) if made is not None else None
    if kept is None or module_state.fresh(arg, ctx):
        return
    method, attr = kept
    why = WHY_STATE.format(cls=made.name, method=method, attr=attr)
    use = USE_STATE.format(attr=attr, cls=made.name)
    yield ctx.finding(node, None, what=made.name, arg=ctx.text(arg), why=why, use=use)


def _instance_of(arg, ctx):
    """The class of the file `arg` is an instance of: a name bound to `Cls(...)`, or `self.attr` that the
    enclosing class sets only to `Cls(...)` (and None)."""
    if isinstance(arg, ast.Name):
        return summaries.instance_class(arg, ctx, ctx.pos)
    attr = self_attribute(arg)
    return summaries.attribute_class(attr, ctx, ctx.pos) if attr is not None else None


# Views that rearrange every element of their base (no element left out): of a whole tensor, they span
# its whole storage, so a deepcopy copies nothing more than the view (fix review 5: `small.unsqueeze(0)`).
WHOLE_VIEWS = frozenset({"view", "view_as", "reshape", "reshape_as", "unsqueeze", "squeeze", "t", "transpose",
                         "swapaxes", "swapdims", "permute", "movedim", "moveaxis", "flatten", "unflatten", "ravel"})


def _is_view(expr, ctx) -> bool:
    """`t[i]`, `t[:n]`, `t.narrow(...)`: the result shares a larger storage; `t.detach()` and `t.data`, and
    a rearranging view (`t.view(...)`, `t.T`, `t.unsqueeze(0)`), only when `t` does."""
    if isinstance(expr, ast.Subscript):
        return ctx.kind(expr.value) not in (STATE_DICT, CONTAINER)  # `sd["w"]` is a dict's entry, not a view
    if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
        return _is_view(expr.value, ctx)
    if isinstance(expr, ast.Attribute) and api.whole_alias(expr.attr):
        return _is_view(expr.value, ctx)
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)):
        return False
    if api.whole_alias(expr.func.attr) or expr.func.attr in WHOLE_VIEWS:
        return _is_view(expr.func.value, ctx)
    op = api.method(expr.func.attr)
    return op is not None and op.alias == "view"


def _whole(expr):
    """`t` of `t.detach()`, `t.data.detach()`: the tensor whose elements these are, all of them."""
    while True:
        if isinstance(expr, ast.Attribute) and api.whole_alias(expr.attr):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and api.whole_alias(expr.func.attr):
            expr = expr.func.value
        else:
            return expr


def _bound_to_view(expr, ctx) -> bool:
    if not isinstance(expr, ast.Name):
        return False
    bindings = ctx.frame.scope.reaching(expr.id, ctx.pos)
    return bool(bindings) and all(b.kind == Bind.ASSIGN and _is_view(b.value, ctx) for b in bindings)


RULE = Rule(
    code="TEN201",
    name="deepcopy-tensor",
    message="copy.deepcopy() of {what} '{arg}' {why}; {use}",
    nodes=(ast.Call,),
    check=check,
    trigger=r"deepcopy",
    claim=("copy.deepcopy() of a non-leaf tensor raises 'Only Tensors created explicitly by the user "
           "(graph leaves) support the deepcopy protocol', and of a view copies the whole base storage; "
           "t.detach().clone() gives an independent copy of just the view. A module that keeps a non-leaf "
           "tensor on itself (an activation its forward or forward hook stored) raises the same error, "
           "under no_grad too."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`copy.deepcopy(t)` becomes `t.detach().clone()` (a module that keeps a graph tensor: no fix, its "
                "class must clear it)",
                FixSafety.UNSAFE,
                "gradient flow: `requires_grad` and `.grad` of a leaf are not copied"),
    ),
)
