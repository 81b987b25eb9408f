"""Tensor built from a tensor with `torch.tensor(t)`, `base.new_tensor(t)` or a legacy constructor.

## What it does
Flags `torch.tensor(t)`, `base.new_tensor(t)` and the legacy constructors `torch.Tensor(t)`,
`torch.FloatTensor(t)` (and the other `torch.*Tensor` types) when the file gives real evidence that `t`
is a tensor: it was built by a torch factory or function (through names, methods, indexing, arithmetic
and the numpy functions that return a tensor for a tensor, as `numpy.ceil(t)`), is a module-level tensor
imported from a neighbouring module, is a variable annotated `torch.Tensor`, or is a parameter that a
call in the file or in another module of its package passes such a tensor (`Potential(data_mean=
self.data_mean)` for a registered buffer: that call warns, whatever other callers pass; through a
decorator that hands the def its callers' arguments, and with a caller's `None` default replaced by a
tensor; such a finding names that call and has no fix, since other callers may pass lists), or an attribute
that `__init__` sets to such a parameter (`Jitter(torch.mean(x, 0))` for `self.scale`); for `base.new_tensor(t)`,
also when `t` is computed elementwise from `base` itself (`ids.new_tensor(ids != pad)`: calling
`new_tensor` on `ids` proves it a tensor, so the comparison is one too). Quiet inside
`isinstance(t, torch.Tensor)` / `torch.is_tensor(t)` branches and any branch that tests the type of the
argument or of a name it is made from (there the call is the intended conversion of one input type:
`torch.tensor(strip(seq))` in the else of `isinstance(seq, Tensor)`), on NumPy arrays, lists and scalars,
and when the argument is only known through a method name, a plain `torch.Tensor` parameter
annotation or a `.weight` attribute; quiet too on a legacy constructor of a fresh temporary
(`torch.Tensor(torch.zeros(n))`: nothing else holds that storage, so no one can see the alias), and on
one whose alias no code can see: bound to a local name or appended to a local list that, like the
source, the function does not write in place after the alias is made (a write before it, to a value made
anew in each pass, reaches no alias), of a source that holds no graph (`batch =
torch.FloatTensor(images[i:j])`, only read; `out.append(torch.FloatTensor(prob))` of a `prob` made in the
pass).

Also flags `torch.tensor(p)` / `base.new_tensor(p)` on a parameter `p` (not rebound before the call)
that its own function declares may be a tensor and may be something else: annotated with a union of a
tensor type and another kind (`Union[float, torch.Tensor]`, `float | Tensor`; `Optional[Tensor]` is
not one), or tested with `isinstance(p, torch.Tensor)` / `torch.is_tensor(p)` (a tuple holding a tensor
type too) where the test cannot narrow the call: after it, or in an earlier `if` none of whose branches
exits. Not when the call sits in a branch on another parameter (`if ret_np: u = torch.tensor(u)`: the
flag may say which kind arrived). Such a finding has no fix: for a float or a list,
`p.detach().clone()` fails; the message names the evidence and the form to use for a tensor.

## Why is this bad?
`torch.tensor(t)` and `new_tensor(t)` copy, but silently cut the result from the graph
(`requires_grad=False`, no `grad_fn`) and torch warns: "To copy construct from a tensor, it is
recommended to use sourceTensor.detach().clone() ...". The legacy constructors do not copy at all: they
return an alias of `t` (writes through either side show in the other). A function whose annotation or
isinstance test says tensors arrive warns on every tensor call (catalyst's `get_distributed_mean`,
allennlp's `dist_reduce`, both fixed by copying tensors with `clone()`).

## Example
```python
probs = torch.softmax(model(x), dim=-1)
target = torch.tensor(probs)         # UserWarning; no gradient flows to model
alias = torch.FloatTensor(probs)     # shares the storage of probs


def distributed_mean(value: float | torch.Tensor):
    return torch.tensor(value, dtype=torch.float)   # warns for the tensors it declares
```

## Use instead
```python
probs = torch.softmax(model(x), dim=-1)
target = probs.detach().clone()      # what torch.tensor(probs) does, without the warning
same = torch.as_tensor(probs)        # when no copy is wanted


def distributed_mean(value: float | torch.Tensor):
    if isinstance(value, torch.Tensor):
        return value.detach().to(dtype=torch.float, copy=True)
    return torch.tensor(value, dtype=torch.float)
```

## Fix safety
Safe for `torch.tensor(t)`: it becomes `t.detach().clone()`, which torch documents as equivalent;
`dtype=` / `device=` become `t.detach().to(dtype=..., copy=True)` and `requires_grad=` becomes
`.requires_grad_(...)` (any other argument: no fix). `base.new_tensor(t)` becomes
`t.detach().to(base, copy=True)` (base's dtype and device), safe when `base` is a plain name or
attribute. Unsafe for the legacy constructors: `t.detach().clone()` copies where they aliased and stops
the gradient that their alias let through. Not reported where every later read of `t` only shows it (a
lesson that writes through the alias and prints `t` shows the sharing on purpose). No fix for a parameter that
may be a tensor or something else: the conversion is right for the other kinds, so the tensor case needs its own branch.

## Known problems
Parameters annotated plain `torch.Tensor` are not reported: on real code those annotations were often
wrong (lists and config values passed to an intended conversion). A union annotation or an isinstance
test is the function's own word, not a caller seen passing a tensor: on the ecosystem corpus it found
captum's test helper (its tests pass one) and torchrl's `gamma: float | torch.Tensor` buffers (no tensor
caller in the package). Tests through a flag (`is_t = isinstance(p, Tensor)`) and tests before the call
other than an `if` are not counted. A name counts only when every binding that may reach the call gives
a tensor (a `None` aside): `out = torch.zeros(3)` before a loop that rebinds `out = [...]` is not
reported inside it. Measured on about 13,000 files of released PyTorch libraries: no finding with the
evidence of a built tensor; evidence from method names and annotations made 20 findings there, none of
them a bug (scalars from `.numel()` / `.q_scale()`, annotated parameters that receive lists, an intended
alias).

Which numpy functions give a tensor is probed from numpy 2.4 (ufuncs through `Tensor.__array_wrap__`,
which numpy 2 deprecates in its current form; `numpy.round(t)` calls `t.round()`).

## References
- torch.tensor docs: "When data is a tensor x, torch.tensor() reads out 'the data' from whatever it is
  passed, and constructs a leaf variable ... equivalent to x.detach().clone()"
- pytorch/pytorch#23495, #59800 (a silently cut graph)
"""
from __future__ import annotations

import ast

from ..analysis import aliasing, own_methods, proven, summaries
from ..analysis.evidence import reaching
from ..analysis.maybe_tensor import declared_tensor
from ..analysis.display import only_shown
from ..analysis.guards import type_tested
from ..analysis.facts import Bind, dotted
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import as_receiver, detached_clone, proven_fix

WHY_COPY = "copies and silently cuts any graph it has (torch warns)"
WHY_MAYBE = "copies a tensor and silently cuts its graph (torch warns)"
WHY_ALIAS = "does not copy: the result aliases it"
LEGACY = aliasing.LEGACY_CONSTRUCTORS
KEPT_KEYWORDS = ("dtype", "device")


def check(node: ast.Call, ctx):
    if len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        return
    arg = node.args[0]
    q = ctx.qualname(node.func)
    if q == "torch.tensor":
        call, why, make_fix = "torch.tensor()", WHY_COPY, _tensor_fix
    elif q in LEGACY and not node.keywords:
        call, why, make_fix = f"{q}()", WHY_ALIAS, _legacy_fix
    elif isinstance(node.func, ast.Attribute) and node.func.attr == "new_tensor" and _tensor_method(node, ctx):
        call, why, make_fix = "new_tensor()", WHY_COPY, _new_tensor_fix
    else:
        return
    if make_fix is _legacy_fix and (aliasing.held_nowhere_else(arg, ctx) or aliasing.unseen_alias(node, arg, ctx)):
        return  # `torch.Tensor(torch.zeros(n))`, or an alias nothing writes through: no one can see the sharing
    from_base = call == "new_tensor()" and _computed_from(arg, node.func.value)
    if from_base or _real_tensor(arg, ctx):
        suggested = make_fix(node, arg, ctx)
        fix = None if not from_base and _from_callers(arg, ctx) else suggested
        use = suggested.edits[0].text if suggested is not None and suggested.safety is FixSafety.SAFE \
            else _detached_clone(arg, ctx)
        subject = f"tensor '{ctx.text(arg)}'" + (_passed_by(arg, ctx) if fix is None else "")
        fix = proven_fix(ctx, [arg], fix)
        if make_fix is _legacy_fix and only_shown(arg, node, ctx):
            return  # a lesson showing the alias on purpose (`r.zero_(); print(t)`): a copy shows the opposite
    elif make_fix is not _legacy_fix and (reason := _declared(arg, ctx)):
        fix, suggested = None, make_fix(node, arg, ctx)  # only suggested: for a float or list it would fail
        use = (suggested.edits[0].text if suggested is not None else _detached_clone(arg, ctx)) + " for a tensor"
        subject, why = f"'{arg.id}', which may be a tensor ({reason}),", WHY_MAYBE
    else:
        return
    yield ctx.finding(node, fix, call=call, subject=subject, why=why, use=use)


def _quiet(key, ctx) -> bool:
    """An isinstance branch (converting a tensor input is what it is for), or any branch that tests the
    argument's type (`if isinstance(x, (list, tuple)): x = torch.tensor(x)`: a conversion on purpose)."""
    return bool(key) and (key in ctx.frame.guards or type_tested(key, ctx))


def _declared(arg: ast.expr, ctx):
    """Why the function declares parameter `arg` may be a tensor (and may be something else), or None."""
    if not isinstance(arg, ast.Name):
        return None
    reason = declared_tensor(arg.id, ctx)
    if reason is None and proven.on_some_path(arg, ctx):
        reason = "a tensor on some path to this call"  # a hazard on one path of several is a hazard
    return None if reason is None or _quiet(arg.id, ctx) else reason


def _real_tensor(arg: ast.expr, ctx) -> bool:
    """Built as a tensor, outside a branch that tests its type or the type of a name it is made from
    (`torch.tensor(strip(seq))` in the else of `isinstance(seq, Tensor)`); the evidence first: the type
    tests index the whole function, and most arguments are no tensor."""
    return proven.tensor(arg, ctx) and not any(_quiet(dotted(n), ctx) for n in ast.walk(arg)
                                               if isinstance(n, (ast.Name, ast.Attribute)))


def _computed_from(arg: ast.expr, base: ast.expr) -> bool:
    """`x.new_tensor(x != pad)`, `x.new_tensor(x[mask] * 2)`: the argument is computed elementwise from the
    receiver, which calling `new_tensor` on proves a tensor; so the argument is one too."""
    if dotted(base) is not None and dotted(arg) == dotted(base):
        return True
    if isinstance(arg, ast.Compare) and len(arg.comparators) == 1:
        parts = [arg.left, arg.comparators[0]]
    elif isinstance(arg, ast.BinOp):
        parts = [arg.left, arg.right]
    elif isinstance(arg, (ast.UnaryOp, ast.Subscript)):
        parts = [arg.operand if isinstance(arg, ast.UnaryOp) else arg.value]
    else:
        return False
    return any(_computed_from(p, base) for p in parts)


def _from_callers(arg: ast.expr, ctx) -> bool:
    """Only the file's call sites say `arg` is a tensor: a caller elsewhere may pass a list."""
    return not proven.tensor_here(arg, ctx)


def _passed_by(arg: ast.expr, ctx) -> str:
    """` (the call at train.py:12 passes one)`: where the parameter `arg` gets the tensor the finding is
    about, when a caller's argument is the evidence."""
    found = reaching(arg.id, ctx, ctx.pos) if isinstance(arg, ast.Name) else []
    arg_binding = len(found) == 1 and found[0].kind == Bind.ARG
    site = summaries.deciding_site(found[0], ctx, proven.passed_tensor) if arg_binding else None
    if site is None:
        return ""
    return f" (the call at {ctx.place(*site)} passes one)"


def _detached_clone(arg, ctx) -> str:
    return detached_clone(ctx.text(arg), arg)


def _legacy_fix(node: ast.Call, arg, ctx):
    return ctx.replace(node, _detached_clone(arg, ctx), FixSafety.UNSAFE)


def _tensor_fix(node: ast.Call, arg, ctx):
    kept = [k for k in node.keywords if k.arg in KEPT_KEYWORDS]
    grad = [k for k in node.keywords if k.arg == "requires_grad"]
    if len(kept) + len(grad) != len(node.keywords):
        return None  # pin_memory=, **kwargs: no fix
    if kept:
        args = ", ".join(f"{k.arg}={ctx.text(k.value)}" for k in kept)
        text = f"{as_receiver(ctx.text(arg), arg)}.detach().to({args}, copy=True)"
    else:
        text = _detached_clone(arg, ctx)
    if grad:
        text += f".requires_grad_({ctx.text(grad[0].value)})"
    return ctx.replace(node, text, FixSafety.SAFE)


def _tensor_method(node: ast.Call, ctx) -> bool:
    """`base.new_tensor(...)` may be the Tensor method: `base` is no instance of a package class, and when a
    class of the file defines a `new_tensor` of its own, `base` is proven a tensor."""
    base = node.func.value
    if summaries.receiver_class(base, ctx, ctx.pos) is not None:
        return False
    return not own_methods.may_be_own(node, ctx) or proven.tensor(base, ctx)


def _new_tensor_fix(node: ast.Call, arg, ctx):
    base = node.func.value
    if node.keywords or dotted(base) is None or not proven.tensor(base, ctx):
        return None  # `t.to(base, copy=True)` needs a tensor `base`
    text = f"{as_receiver(ctx.text(arg), arg)}.detach().to({ctx.text(base)}, copy=True)"
    return ctx.replace(node, text, FixSafety.SAFE)


RULE = Rule(
    code="TEN204",
    name="tensor-from-tensor",
    message="{call} on {subject} {why}; use {use}",
    nodes=(ast.Call,),
    # tensor(x (not to_tensor(x / as_tensor(x: the lookbehind checks the character before it), new_tensor(x,
    # Tensor(x and FloatTensor(x: a named argument
    check=check,
    trigger=(r"tensor\((?<=\Wtensor\()\s*[A-Za-z_]", r"new_tensor\(\s*[A-Za-z_]", r"Tensor\(\s*[A-Za-z_]"),
    claim=("torch.tensor(t) emits 'To copy construct from a tensor ...' and returns a tensor without grad_fn; "
           "torch.Tensor(t) / torch.FloatTensor(t) share t's storage; t.detach().clone() is an independent copy."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`torch.tensor(t)` becomes `t.detach().clone()` (`.to(..., copy=True)` with dtype= / device=)",
                FixSafety.SAFE),
        FixForm("`base.new_tensor(t)` becomes `t.detach().to(base, copy=True)`", FixSafety.SAFE),
        FixForm("legacy `torch.Tensor(t)` / `torch.FloatTensor(t)` becomes `t.detach().clone()`",
                FixSafety.UNSAFE,
                "aliasing and gradient flow: a copy where they aliased",
                withheld=("0 of 4 fixes correct in fix review 11 at 4415d4b, on code the rules were not tuned on: "
                          "copies of a fresh temporary handed straight to nn.Parameter, which nothing else can see")),
    ),
)
