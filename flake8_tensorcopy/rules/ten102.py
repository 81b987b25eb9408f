"""In-place write through `.data` that autograd cannot see, or that overwrites a tensor still in use.

## What it does
Flags three shapes of in-place write through `.data`:

- `d = y.data` (or a view of it, `y.data.view(-1)`) then `d.mul_(0)` / `d[i] = v` / `d += v`, where
  `y` is computed from tensors that
  require grad (a non-leaf of the graph) and `y` is used after the write;
- `y.data[...] = v` or `y.data.clamp_(...)` on such a `y`, followed by a `.backward()` in the same
  function, or after it returns: in a caller of the file that backpropagates after the call, or, for the
  `forward` of a `torch.nn` module class, anywhere in a file that backpropagates; `y` may be a parameter
  of the function when a caller passes it such a tensor (`rescale(model(x))`) and backpropagates after;
- `d = y.data` passed to a def of the package that writes that parameter in place (`scale(d)`), reported
  at the def's write;
- `noise = x.data.normal_()` (an in-place method on `x.data` whose result is kept under another
  name) while `x`, a tensor, is used after it: `x` is overwritten, not copied.

## Why is this bad?
`.data` shares storage with `y` but not its version counter. The write changes `y`, and autograd
cannot see it: a backward pass that saved `y` (or uses it later) computes its gradient from the
overwritten values and gives a silently wrong gradient, where the same write through `.detach()`
would raise. `x.data.normal_()` fills `x` itself with noise; it is not `torch.randn_like(x)`.

Not flagged: weight initialisation and model surgery, parameter / gradient / optimizer / EMA writes
(`.weight`, `.bias`, `.grad`, loop variables over `parameters()`, update and init functions),
leaves that are optimised like parameters (`torch.zeros(..., requires_grad=True)`), code under
`torch.no_grad()`, and `.data` of things that are not tensors (datasets, buffers, graphs,
`self.data`): the rule needs evidence that the receiver is a tensor. Nor a kept result that is never read
(`_ = labels.data.fill_(1)` initialises `labels`), nor one whose source is then only printed or displayed
(`d = a.data.sigmoid_()`, then `a` as a cell's output: a lesson showing the write).

## Example
```python
y = x.sigmoid()
masked = y.data
masked.mul_(0)          # y is zeroed behind autograd's back
y.sum().backward()      # no error; x.grad is all zeros
noise = h.data.normal_(0, 0.1)  # overwrites h
out = h + noise
```

## Use instead
```python
y = x.sigmoid()
masked = y.detach().clone()  # an independent copy
masked.mul_(0)
y.sum().backward()
noise = h.detach().clone().normal_(0, 0.1)  # or torch.randn_like(h) * 0.1
out = h + noise
```

## Fix safety
Unsafe: the fix replaces `y.data` by `y.detach().clone()` where the write goes into a name bound to
`.data` or its result is kept, so the write no longer reaches `y`; code that relied on it does
change. A direct write (`y.data[...] = v`) has no automatic fix: write out of place instead.

## Known problems
A direct write is only flagged when a `.backward()` follows in the same function or in a caller after
the call; writes whose backward runs elsewhere are missed. Graph attachment is judged from the package's
code (module calls, losses, `requires_grad=True`, what its callers pass), so a tensor that arrives from
code the package does not show (a parameter of a function nobody in the package calls) is not tracked:
on real library code, such direct `.data` writes were intended (init helpers such as
`uniform(size, value)`, NaN guards on a forward value).

## References
- torch-facts Q2: `.data` shares storage, not the version counter (silently wrong gradient)
- pytorch/pytorch#6990 (0.4 migration notes: `.data` writes give wrong gradients, `.detach()` raises)
"""
from __future__ import annotations

import ast

from ..analysis import backward
from ..analysis.aliasing import DATA, DIRECT, KEPT, NAME as BY_NAME, alias_writes, still_used
from ..analysis.display import only_shown
from ..analysis.evidence import Strength, is_param_like, made_leaf, passed_non_leaf
from ..analysis.facts import Bind, children, dotted, end_of, walk
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import tensor_replace

GRAD_WRONG = "gradients through it come out silently wrong"
COPY_ADVICE = "use {source}.detach().clone() for a copy"
REFILLS = frozenset({"normal_", "uniform_", "fill_", "zero_", "random_", "bernoulli_", "exponential_",
                     "geometric_", "cauchy_", "log_normal_", "copy_"})


def check(node, ctx):
    if ctx.in_param_update_function:
        return
    for write in alias_writes(node, ctx):
        if write.alias.family != DATA or write.alias.helper is not None:
            continue  # a `.data` alias a helper built: its fix would be in the helper's body
        if write.how == KEPT:
            yield from _kept_result(node, write, ctx)
        elif ctx.grad_disabled:
            continue
        elif write.how == DIRECT:  # y.data[...] = v, y.data.mul_(0)
            yield from _direct(node, write, ctx)
        elif write.how == BY_NAME:  # d = y.data; d.mul_(0)
            yield from _through_name(node, write, ctx)


def _direct(node, write, ctx):
    source, site = write.alias.source, write.alias.site
    if not _graph_tracked(source, ctx, passed=True):
        return
    if not (backward.after_in_function(ctx, end_of(node)) or backward.after_return(ctx)):
        return
    yield ctx.finding(node, None, via=f"'{ctx.text(site)}'", source=ctx.text(source),
                      effect=GRAD_WRONG, advice="write out of place instead")


def _through_name(node, write, ctx):
    source = write.alias.source
    if not _graph_tracked(source, ctx) or not still_used(source, ctx, end_of(node)):
        return
    text = ctx.text(source)
    fix = tensor_replace(ctx, [source], write.alias.step(DATA).node, f"{text}.detach().clone()", FixSafety.UNSAFE)
    yield ctx.finding(write.reported_at(node), fix, via=_via(write, text), source=text,
                      effect=GRAD_WRONG, advice=COPY_ADVICE.format(source=text))


def _via(write, text: str) -> str:
    """How a write through a name reaches the source: `'d' (bound to y.data)`, and the def that writes it."""
    via = f"'{write.name}' (bound to {text}.data)"
    if write.callee is None:
        return via
    return f"{via}, written by {write.callee.fn.name}() (called on line {write.callee.call.lineno}),"


def _kept_result(node: ast.Assign, write, ctx):
    """`noise = x.data.normal_()`: x is overwritten, and the result is used as if it were new."""
    source = write.alias.source
    # `x.data.normal_()` on a likely tensor (a forward's input) is enough: the kept result says the code
    # took it for a new tensor, whatever graph `x` has
    if is_param_like(source, ctx) or not (ctx.tensor_strength(source) >= Strength.LIKELY or ctx.attached(source)):
        return
    if not still_used(source, ctx, end_of(node)) or _only_refilled(source, ctx):
        return
    if ctx.frame.scope.read_later(write.name, end_of(node)) is False:
        return  # `_ = labels.data.fill_(1)`: the result is never read, so nothing takes it for a new tensor
    if only_shown(source, node, ctx, write.name):
        return  # a lesson showing that the write reaches the source (`d = a.data.sigmoid_()`, then `a`)
    text = ctx.text(source)
    fix = tensor_replace(ctx, [source], write.alias.step(DATA).node, f"{text}.detach().clone()", FixSafety.UNSAFE)
    yield ctx.finding(node, fix, via=f"'{ctx.text(node.value)}' (kept as '{write.name}')", source=text,
                      effect=f"'{text}' itself is overwritten, not copied", advice=COPY_ADVICE.format(source=text))


def _only_refilled(source, ctx) -> bool:
    """`self.eps` is a noise buffer: every read of it in the class refills it whole (`self.eps.data.normal_()`),
    so nothing ever needs its old contents."""
    key = dotted(source)
    if ctx.frame.cls is None or not key or not key.startswith("self."):
        return False
    reads = [n for n in walk(ctx.frame.cls) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load)
             and dotted(n) == key]
    parents = {id(child): parent for parent in walk(ctx.frame.cls) for child in children(parent)}

    def refilled(node) -> bool:
        up = parents.get(id(node))
        if isinstance(up, ast.Attribute) and up.attr == "data":
            node, up = up, parents.get(id(up))
        call = parents.get(id(up))
        return (isinstance(up, ast.Attribute) and up.attr in REFILLS and isinstance(call, ast.Call)
                and call.func is up)

    return bool(reads) and all(refilled(n) for n in reads)


def _graph_tracked(source: ast.AST, ctx, passed: bool = False) -> bool:
    """A named non-leaf of the autograd graph: computed from tensors that require grad; with `passed`, also
    a parameter that a caller passes one (`rescale(model(x))`). Parameters, gradients and leaves created
    with requires_grad=True are updated on purpose and do not count."""
    if not isinstance(source, ast.Name) or is_param_like(source, ctx):
        return False
    origin = ctx.frame.scope.origin(source.id, ctx.pos)
    if passed and origin is not None and origin.kind == Bind.ARG:
        return passed_non_leaf(origin, ctx)
    if not ctx.attached(source):
        return False
    return origin is not None and origin.kind == Bind.ASSIGN and not made_leaf(origin.value, ctx)


RULE = Rule(
    code="TEN102",
    name="data-inplace-write",
    message=("in-place write through {via} changes '{source}' behind autograd's back (.data does not "
             "bump the version counter): {effect}; {advice}"),
    nodes=(ast.Assign, ast.AugAssign, ast.Expr),
    # `.data` (or a view of it: `.data.view(-1)`) at the end of a line (an alias), or followed by an index,
    # an in-place method or `op=`.
    check=check,
    trigger=r"(?m)\.data(?:\.\w+\([^()\n]*\))*(?:[ \t]*(?:$|#)|\[|\.\w+_\(|[ \t]*[-+*/]=)",
    claim=("An in-place write through y.data, where a graph saved y, leaves y._version unchanged and "
           "backward() returns a gradient that differs from the true gradient without raising; "
           "y.detach().clone() leaves y and the gradient intact."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`y.data` bound to a name or kept becomes `y.detach().clone()`",
                FixSafety.UNSAFE,
                "aliasing: the write no longer reaches `y`",
                withheld=("0 of 1 fixes correct in fix review 7 at b9972e9, on code the rules were not tuned on: a "
                          "lesson that writes through .data to show what autograd misses")),
    ),
)
