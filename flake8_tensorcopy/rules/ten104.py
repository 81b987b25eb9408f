"""Copy or conversion of a tensor whose result is discarded: the statement changes nothing.

## What it does
Flags an expression statement whose value is thrown away: `x.detach()`, `x.clone()`,
`x.detach().clone()`, `copy.deepcopy(t)` of a tensor (TEN201 reports deepcopy whose copy is kept),
and, on a tensor, a conversion: a method that returns the tensor itself when it already is what is
asked (`x.to(...)`, `x.cpu()`, `x.cuda()`, `x.float()` / `.half()` / `.long()` / `.bool()` / ...,
`x.type(...)`, `x.contiguous()`; the list is probed from torch), and chains of these, where `x` is a
named object (`x`, `self.h`, `batch[0]`). A loader's batches hold tensors: `x` of `for x, y in loader` and
the entries `x[name]` of a batch, when the code builds the loader with `DataLoader(...)` or the loop over a
loader-named iterable trains or runs under `torch.no_grad()` (a predict loop's
`for name in x.keys(): x[name].to(device)`); the batch object itself may be a BatchEncoding or a PyG Batch,
whose `.to()` converts in place, and is not flagged. A parameter is a tensor when every call of its
function in the file and in the other modules of its package passes one
(`math_util.calc_gaes(..., v_preds_all)`).

## Why is this bad?
Tensor methods return a new tensor (or the same one, unchanged); none of them changes `x`. The line
reads like "detach x" or "move x to the GPU" but does nothing: `x` keeps its graph, device and dtype.
Modules are different: `model.to(device)` and `model.float()` convert the module in place, which is
why the rule needs evidence that `x` is a tensor for the conversion methods.

Not flagged: module conversions, receivers of unknown type for the conversion methods, receivers the
code tests the type of (`if isinstance(out, Result): out.detach()`) or uses as a dict or an object
(`out["k"] = ...`, `out.total = ...`), fresh
temporaries (`torch.zeros(1).cuda()` is a common way to initialise CUDA), `clone` / `detach` with
arguments (not the tensor methods), `clone` / `detach` of a receiver of unknown type when a class of the
file defines a method of that name (`state.detach()` may be `State.detach`, which works in place),
a move of a value to where the code put it already (`t = torch.cat([a, b.to(device)])` then `t.to(device)`:
torch refuses inputs on two devices; analysis/devices.py), statements inside `pytest.raises` /
`assertRaises` blocks, and benchmark / warm-up functions, where
`out.cpu()` is called to wait for the GPU, and the last expression of a notebook cell (`y_preds.cpu()` as
a cell's last line is the cell's displayed output), a cell of a percent-format script (`# %%`) included.

## Example
```python
x.to(device)
h.detach()
```

## Use instead
```python
x = x.to(device)
h = h.detach()          # or h.detach_() when h is not a view and nothing saved it
```

## Fix safety
Unsafe: the fix assigns the result back (`x = x.to(device)`), which rebinds the name: later code
now sees the converted tensor, and other holders of the old object still see the old one. The fix is
offered when the receiver is a name or an attribute chain the analysis proves is a tensor (not for
`m.weight`: a module refuses a plain tensor in a parameter's place, nor for `copy.deepcopy`). A device
move (`.to(device)`, `.cuda()`, `.cpu()`) is a decision the author made once: it is fixed only when the
code that follows uses the value with a module or an operand the same function moves the same way
(`model.to(device)`, `y = y.to(device)`; for `.cpu()`, a later `x.numpy()`); otherwise it is reported
without a fix, and the message says why (a test helper that moves its input but not the module under
test would crash on a GPU machine); a torch module counts as moved by a bare `model.cuda()`, an object of
another class (whose own `cuda()` method may move only what it holds) does not. A dtype conversion
(`x.float()`, `y.data.type(torch.float32)`, `x.to(torch.half)`) is never fixed: the code as written runs
with the old dtype, and assigning it back changes what every later use sees (class labels made float
make the next `CrossEntropyLoss` raise). `x.detach_()` is never suggested automatically because it raises on
views and detaches the object for every holder.

## Known problems
Conversion methods on receivers the file gives no tensor evidence for (function parameters without
an annotation, attributes) are not flagged, so `x.cuda()` on an unannotated parameter is missed.
A bare `out.cpu()` written only to wait for the GPU is reported unless it sits in a function whose
name says benchmark / profile / warm-up / timing / synchronize. A bare `copy.deepcopy(t)` gets no
fix: which name was meant to receive the copy is unknown.

## References
- torch.Tensor.to: "Returns a Tensor with the specified device and/or dtype" (a new tensor, or self)
- torch.nn.Module.to: "This method modifies the module in-place."
"""
from __future__ import annotations

import ast

from ..analysis import api, devices, names, own_methods
from ..analysis.aliasing import named
from ..analysis.bodies import declared_outside, used_as_objects
from ..analysis.guards import type_tested
from ..analysis.evidence import MODULE, NDARRAY, OPTIMIZER, PARAM, STATE_DICT, TENSORISH, Strength
from ..analysis.facts import dotted, end_of, pos_of, walk
from .model import FixAvailability, FixForm, FixSafety, Rule, Trigger
from .edits import tensor_replace
from ..analysis.display import displayed

# A line that starts with `name(.attr)*([...])*.method(` or `deepcopy(`: bare calls only.
COPY_METHODS = frozenset({"detach", "clone"})
NOT_TENSOR = frozenset({MODULE, NDARRAY, OPTIMIZER, STATE_DICT})
DTYPE_METHODS = frozenset({"bfloat16", "bool", "byte", "cdouble", "cfloat", "char", "double", "float", "half", "int",
                           "long", "short", "type", "type_as"})  # conversions of the dtype (torch_api.CONVERSIONS)
RAISES_CONTEXTS = ("raises", "assertRaises", "assertRaisesRegex", "assert_raises", "assertWarns", "warns")


def check(node: ast.Expr, ctx):
    if any(names.TIMING_FUNC(getattr(f, "name", "")) for f in ctx.frame.funcs):
        return  # `out.cpu()` waits for the GPU in a benchmark: the call is made for its timing
    found = _discarded(node.value, ctx)
    if found is None or _in_raises_block(node, ctx) or displayed(node, ctx):
        return
    source, call_text = found
    if devices.already_there(node.value, ctx) or devices.moved_with_its_module(source, ctx):
        return  # `t.to(device)` of a `t` there already, or of a parameter its module moves
    target = ctx.text(source)
    assign = f"{target} = {ctx.text(node.value)}"
    move = _device_move(node.value, ctx)
    if not _can_assign_back(source, call_text, ctx):
        fix, advice = None, "assign the result to a name"
    elif _changes_dtype(node.value, ctx):
        fix, advice = None, f"assign it back ({assign}) if every later use of '{target}' is meant to see that " \
                            "dtype (no fix: the code as written runs with the old one)"
    elif move is not None and not _used_on_device(source, move, node, ctx):
        fix, advice = None, f"assign it back ({assign}) if '{target}' is meant for that device (no fix: nothing " \
                            "it is used with here is moved the same way)"
    else:
        fix = tensor_replace(ctx, [source], node, assign, FixSafety.UNSAFE)
        advice = f"assign it back: {assign}"
    yield ctx.finding(node, fix, call=call_text, source=target, advice=advice)


def _device_move(call: ast.Call, ctx):
    """(method, argument texts) of the device move in a chain (`x.to(device)`, `x.cuda()`), or None when the
    chain moves nothing (`x.float()`, `x.to(torch.float64)`)."""
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        attr = call.func.attr
        dtype_only = all(_dtype_argument(a, ctx) for a in call.args) and all(
            k.arg in ("dtype", "non_blocking", "copy") for k in call.keywords)
        if attr in ("cuda", "cpu") or (attr == "to" and not dtype_only):
            return attr, tuple(ctx.text(a) for a in call.args) + tuple(ctx.text(k) for k in call.keywords)
        call = call.func.value
    return None


def _changes_dtype(call: ast.Call, ctx) -> bool:
    """The chain converts the dtype (`y.float()`, `y.data.type(torch.float32)`, `x.to(torch.half)`): assigning
    it back changes what every later use sees (a loss that takes class indices refuses float labels)."""
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        attr = call.func.attr
        if attr in DTYPE_METHODS or attr == "to" and (
                any(k.arg == "dtype" for k in call.keywords) or any(_dtype_argument(a, ctx) for a in call.args)):
            return True
        call = call.func.value
    return False


def _dtype_argument(arg: ast.expr, ctx) -> bool:
    """`torch.float64` of `x.to(torch.float64)`: a torch attribute that is no device."""
    text = ctx.text(arg)
    return text.startswith("torch.") and not text.startswith("torch.device")


def _used_on_device(source, move, node, ctx) -> bool:
    """A device move is a decision the author made once: the code that follows uses `source` with a module it
    is passed to, or an operand, that the same function moves the same way (`model.to(device)`,
    `y = y.to(device)`); then `x = x.to(device)` is what the line meant."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    moved = {dotted(held) for held in _moved_alike(move, node, root, ctx)} - {None, dotted(source)}
    key = dotted(source)
    end = end_of(node)
    for n in walk(root):
        if not hasattr(n, "lineno") or pos_of(n) <= end:
            continue
        if move[0] == "cpu" and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                and n.func.attr == "numpy" and dotted(n.func.value) == key:
            return True  # `x.cpu()` then `x.numpy()`: meant for the CPU
        if isinstance(n, ast.Call) and any(dotted(a) == key for a in n.args):
            others = [n.func, getattr(n.func, "value", None), *n.args]
            if any(dotted(o) in moved for o in others if o is not None):
                return True
        if isinstance(n, (ast.BinOp, ast.Compare)):
            sides = [n.left, n.right] if isinstance(n, ast.BinOp) else [n.left, *n.comparators]
            if any(dotted(s) == key for s in sides) and any(dotted(s) in moved for s in sides):
                return True
    return False


def _moved_alike(move, node, root, ctx) -> list:
    """What else `root` moves the way `move` does: the receiver of a bare `model.to(device)` when it is a torch
    module (which moves in place), or the target of `y = ....to(device)`."""
    held = []
    for n in walk(root):
        if isinstance(n, ast.Expr) and n is not node and isinstance(n.value, ast.Call) \
                and _device_move(n.value, ctx) == move:
            receiver = _chain(n.value)[1] if _chain(n.value)[0] else n.value.func.value
            if ctx.kind(receiver) == MODULE:  # not `rollouts.cuda()` of a class of the package: its own method
                held.append(receiver)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _device_move(n.value, ctx) == move:
            held += n.targets
    return held


def _discarded(call, ctx):
    """(receiver, call text) when the statement `call` copies or converts a named tensor."""
    if not isinstance(call, ast.Call):
        return None
    if ctx.qualname(call.func) == "copy.deepcopy":
        source = call.args[0] if len(call.args) == 1 and not call.keywords else None
        if source is not None and named(source) is not None and ctx.kind(source) in TENSORISH:
            return source, "copy.deepcopy()"  # TEN201 reports deepcopy of tensors whose copy is kept
        return None
    methods, source = _chain(call)
    if not methods or named(source) is None:
        return None
    kind = ctx.kind(source)
    if kind in NOT_TENSOR:
        return None
    # a tensor (even a guessed one) on every path, or one proven on some path: there the call changes nothing
    if kind in TENSORISH or ctx.tensor_strength(source, some_path=True) == Strength.PROVEN or (
            all(m in COPY_METHODS for m in methods) and not _other_object(source, ctx)
            and not own_methods.may_be_own(_innermost(call), ctx)):
        return source, "." + "().".join(reversed(methods)) + "()"
    return None


def _innermost(call: ast.Call) -> ast.Call:
    """The call of a chain made on its receiver: `x.detach()` of `x.detach().clone()`."""
    while isinstance(call.func.value, ast.Call):
        call = call.func.value
    return call


def _can_assign_back(source, call_text: str, ctx) -> bool:
    """`x = x.to(d)` is offered for a name or a plain attribute; not for `m.weight` (a module
    refuses a plain tensor in a parameter's place), subscripts, or deepcopy (the intended target
    of the copy is unknown)."""
    if call_text == "copy.deepcopy()":
        return False
    if isinstance(source, ast.Name):
        return not _would_become_local(source.id, ctx)
    return isinstance(source, ast.Attribute) and ctx.kind(source) != PARAM


def _would_become_local(name: str, ctx) -> bool:
    """`name = ...` inside a function that only reads a global or enclosing `name` would make it local
    there: every earlier read would raise UnboundLocalError."""
    func = ctx.frame.func
    if func is None or ctx.frame.scope.bindings.get(name):
        return False
    return name not in declared_outside(ctx.facts, func)


def _chain(call: ast.Call):
    """(['float', 'to'], x) for `x.to(d).float()`: the copy / conversion methods and their receiver."""
    methods = []
    expr = call
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        attr = expr.func.attr
        if attr in COPY_METHODS and (expr.args or any(k.arg != "memory_format" for k in expr.keywords)):
            return [], None  # not the tensor method (git clone, a custom detach(...))
        if attr not in COPY_METHODS and not api.is_conversion(attr):
            return [], None
        methods.append(attr)
        expr = expr.func.value
    return methods, expr


def _other_object(source, ctx) -> bool:
    """An object whose own `detach()` / `clone()` may have side effects: one built by a non-torch
    class (`engine = PrivacyEngine(...)`) or named like an engine, hook handle, manager, ..."""
    last = source.attr if isinstance(source, ast.Attribute) else getattr(source, "id", "")
    if names.NOT_MODULE(last) or names.OTHER_OBJECT(last):
        return True
    key = dotted(source)
    if key and type_tested(key, ctx):
        return True  # `if isinstance(out, Result): out.detach()`: code for values of several kinds
    pos = ctx.pos
    while isinstance(source, ast.Name):
        if _used_as_object(source.id, ctx):
            return True
        origin = ctx.frame.scope.binding_before(source.id, pos)
        value = origin.value if origin is not None else None
        if not isinstance(value, ast.Call):
            return False
        if ctx.qualname(value.func) in ("copy.copy", "copy.deepcopy") and value.args:
            source, pos = value.args[0], origin.pos  # a copy of what?
            continue
        callee = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", "")
        return callee[:1].isupper() and not (ctx.qualname(value.func) or "").startswith("torch.")
    return False


def _used_as_object(name: str, ctx) -> bool:
    """The function indexes `name` with a string or sets a plain attribute on it (`result["extra"] = ...`,
    `result.minimize = loss`): a dict or an object, never a tensor."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return name in used_as_objects(ctx.facts, body)


def _in_raises_block(node, ctx) -> bool:
    """Inside `with pytest.raises(...)` / `self.assertRaises(...)`: the call is made to see it fail."""
    for w in ctx.facts.enclosing(ctx.frame.scope.node, (node.lineno, node.col_offset)):
        if isinstance(w, (ast.With, ast.AsyncWith)) and any(
                isinstance(i.context_expr, ast.Call) and isinstance(i.context_expr.func, (ast.Attribute, ast.Name))
                and getattr(i.context_expr.func, "attr", getattr(i.context_expr.func, "id", "")) in RAISES_CONTEXTS
                for i in w.items) and node in w.body:
            return True
    return False


RULE = Rule(
    code="TEN104",
    name="copy-result-discarded",
    message="result of {call} is discarded: the call returns its result and leaves '{source}' unchanged; {advice}",
    nodes=(ast.Expr,),
    check=check,
    trigger=(Trigger(r"\.(?:" + "|".join(sorted(COPY_METHODS | api.CONVERSIONS)) + r")\(",
             r"deepcopy\(", line_start=r"[ \t]*[\w.]*(?:\[[^\]\n]*\])*")),
    claim=("x.detach(), x.clone(), x.to(torch.float64), x.double(), x.float() and copy.deepcopy(x) as "
           "statements leave x unchanged (same object, dtype, requires_grad and grad_fn); x = x.to(...) "
           "rebinds x to the converted tensor."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("the discarded result is assigned back (`x = x.to(device)`); a device move only where a module "
                "or operand the value is used with is moved the same way; never a dtype conversion",
                FixSafety.UNSAFE,
                "the name now holds the converted tensor; other holders keep the old one",
                withheld=("3 of 5 fixes correct in fix review 8 at 26fa81d, on code the rules were not tuned on: "
                          "names assigned back and never read again")),
    ),
)
