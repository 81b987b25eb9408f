"""A module keeps a graph-attached tensor on `self` in `forward` or a hook.

## What it does
Flags `self.attn = attn` (also tuples, `self.cache[k] = v`) inside a module's `forward` (or a
`forward_*` / `*_forward` helper) or inside a hook function, when the stored value is attached to the
graph: the output of a submodule call (`self.proj(x)`), of a parameter, of a loss, a hook's `output`
argument, or anything computed from them (opt-in: enable with `--extend-select TEN901`).

## Why is this bad?
The attribute holds the step's graph, and its saved activations, until the next forward replaces it.
It also makes the module impossible to copy: after one forward, `copy.deepcopy(module)` (EMA models,
teacher copies, `deepcopy` in checkpoint and tuning code) raises "Only Tensors created explicitly by
the user (graph leaves) support the deepcopy protocol at the moment."

Not flagged: attributes read again later in the same function (a value passed along within the
forward, whose graph is needed), values stored under `torch.no_grad()`, `.detach()`ed or converted (`.item()`,
`.cpu().numpy()`), hook handles, inputs that were never computed from the module's parameters,
results of helper functions the file does not show to return tensors, and stores outside
`forward` / hooks (`__init__`, training code).

## Example
```python
class Attention(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = torch.nn.Linear(dim, dim)

    def forward(self, x):
        attn = torch.softmax(self.score(x), dim=-1)
        self.attn = attn          # keeps the graph; deepcopy(model) now raises
        return attn @ x
```

## Use instead
```python
class Attention(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = torch.nn.Linear(dim, dim)

    def forward(self, x):
        attn = torch.softmax(self.score(x), dim=-1)
        self.attn = attn.detach()  # kept for inspection, without the graph
        return attn @ x
```

## Fix safety
Unsafe: the fix appends `.detach()` to the stored value. Code that backpropagates through the stored
attribute (an auxiliary loss computed from it later) would lose that gradient.

## Known problems
A hook is recognised by its function name (containing `hook`), not by following
`register_forward_hook(...)`. Designs that keep activations on purpose (class-activation maps,
deep-supervision heads) are reported too: the deepcopy hazard is real there, the fix may not be wanted.

## References
- pytorch/pytorch#54580 (a module stored an activation in forward; deepcopy failed)
- torch.Tensor.detach
"""
from __future__ import annotations

import ast

from ..analysis import api, names
from ..analysis.bodies import last_reads, method_names
from ..analysis.evidence import is_module_class
from ..analysis.facts import Bind, dotted, self_attribute
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import as_receiver, tensor_fix

# Subscripts and annotations are bounded (200 characters): unbounded, each `self.x:` or `self.x[` on a
# long line is scanned to the line's end (quadratic in the line's length). A longer one is not looked at.
STORE = r"self\.\w+(?:\[[^\]\n]{0,200}\])?\s*(?::[^=\n]{0,200})?=[^=]"
HOOK_OUTPUT_ARGS = frozenset({"out", "output", "outputs", "inp", "input", "inputs", "result"})
MAX_DEPTH = 8


def check(node, ctx):
    func = ctx.frame.func
    if ctx.grad_disabled or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    hook = "hook" in func.name.lower()
    if not hook and not (names.FORWARD_FUNC(func.name) and ctx.frame.cls is not None
                         and is_module_class(ctx.frame.cls, ctx)):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    methods = method_names(ctx.facts, ctx.frame.cls) if ctx.frame.cls is not None else frozenset()
    stored = [(t, v) for t in targets for t, v in _pairs(t, node.value)
              if self_attribute(t, subscripts=True) is not None and not _read_later(t, func, node, ctx)]
    attached = [(t, v) for t, v in stored if _from_graph(v, ctx, hook, methods, 0)]
    if not attached:
        return
    values = [v for _, v in attached]
    fix = tensor_fix(ctx, values, [ctx.edit(v, as_receiver(ctx.text(v), v) + ".detach()") for v in values],
                     FixSafety.UNSAFE)
    target, value = attached[0]
    shown = as_receiver(" ".join(ctx.text(value).split()), value)
    yield ctx.finding(node, fix, target=ctx.text(target), value=shown, func=func.name)


def _pairs(target, value):
    """(target, value) pairs of `a, b = x, y`; a tuple stored whole gives one pair per element."""
    if value is None:
        return []
    if isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            return [p for t, v in zip(target.elts, value.elts) for p in _pairs(t, v)]
        return []
    if isinstance(value, (ast.Tuple, ast.List)):
        return [(target, v) for v in value.elts]
    return [(target, value)]


def _read_later(target, func, node, ctx) -> bool:
    """`self.w_int = quant(self.weight)` then `F.linear(x, self.w_int)`: the attribute carries the value
    within this forward, where its graph is needed; only a value left behind for later is a finding."""
    while isinstance(target, ast.Subscript):
        target = target.value
    last = last_reads(ctx.facts, func).get(dotted(target))
    return last is not None and last >= (node.end_lineno, node.end_col_offset)


def _from_graph(expr, ctx, hook, methods, depth) -> bool:
    """Computed from the module's parameters (or a hook's output) by the function's own code."""
    if depth > MAX_DEPTH or expr is None:
        return False
    if isinstance(expr, ast.Call):
        func = expr.func
        q = ctx.facts.qualname(func) or ""
        if q.startswith("torch."):  # torch.softmax(...), F.relu(...): attached through their inputs
            op = api.function(q)
            if op is not None and not op.keeps_grad:
                return False  # torch.ones_like(out), torch.argmax(out): no graph
            parts = list(expr.args) + [k.value for k in expr.keywords]
            return any(_from_graph(p, ctx, hook, methods, depth + 1) for p in parts)
        if not isinstance(func, ast.Attribute) or api.drops_graph(func.attr) or func.attr.startswith("register_"):
            return False  # helpers of unknown return (parse_shape(out)), handles, numbers, argmax, detach
        if isinstance(func.value, ast.Name) and func.value.id == "self":
            # a submodule call; a method of a plain (hook-owning) class may return anything
            return (func.attr not in methods and ctx.frame.cls is not None
                    and is_module_class(ctx.frame.cls, ctx))
        return _from_graph(func.value, ctx, hook, methods, depth + 1)  # a tensor method: out.view(...)
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        if b is None or b.grad_off or ctx.frame.scope.grad_off_at(b.pos):
            return False
        if b.kind == Bind.ARG:
            return hook and expr.id in HOOK_OUTPUT_ARGS
        if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.value is not None:
            return _from_graph(b.value, ctx, hook, methods, depth + 1)
        return False
    if isinstance(expr, ast.Attribute):
        attr = api.attribute(expr.attr)
        if attr is not None and not attr.holds_graph:
            return False  # x.shape, x.grad, x.data
        if isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return expr.attr in ("weight", "bias")
        return expr.attr in ("weight", "bias") or _from_graph(expr.value, ctx, hook, methods, depth + 1)
    if isinstance(expr, ast.Subscript):
        return _from_graph(expr.value, ctx, hook, methods, depth + 1)
    if isinstance(expr, ast.BinOp):
        return any(_from_graph(e, ctx, hook, methods, depth + 1) for e in (expr.left, expr.right))
    if isinstance(expr, ast.UnaryOp):
        return _from_graph(expr.operand, ctx, hook, methods, depth + 1)
    return False


RULE = Rule(
    code="TEN901",
    name="graph-stored-on-module",
    message=("'{target}' keeps '{value}' with its autograd graph on the object after {func}(): the graph "
             "stays alive and copy.deepcopy raises; store {value}.detach()"),
    nodes=(ast.Assign, ast.AnnAssign),
    check=check,
    trigger=r"(?s)\A(?=.*(?:forward|hook))(?=.*" + STORE + ")",
    # where findings are
    hot=STORE,
    claim=("A tensor computed from a module's parameters and stored on the module in forward keeps its "
           "graph: copy.deepcopy(module) then raises 'Only Tensors created explicitly by the user (graph "
           "leaves) support the deepcopy protocol'; storing .detach() lets it copy."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`.detach()` on the value kept on `self`",
                FixSafety.UNSAFE,
                "gradient flow: nothing backpropagates through the kept attribute",
                withheld=("no fix of it judged on code the rules were not tuned on yet")),
    ),
    default_on=False,
)
