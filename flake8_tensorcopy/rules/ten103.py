"""In-place write into a NumPy alias of a tensor (or a tensor alias of an array) while the other side is used.

## What it does
Flags an in-place write into a name bound to `t.numpy()`, `t.cpu().numpy()`,
`t.detach().cpu().numpy()`, `np.asarray(t)` (and views of those: `.transpose(...)`, `.T`,
`[...]`), or to `torch.from_numpy(arr)` (and its views), when the other side (`t` or `arr`) is read
after the write. Also `u = torch.from_numpy(arr).sub_(0.5)`, an in-place chain kept under a name.

## Why is this bad?
On a CPU tensor, `.numpy()`, `np.asarray(t)` and `torch.from_numpy(arr)` share memory with their
source, and `.cpu()` / `.detach()` of a CPU tensor return the same storage. A write into "the array"
(`a *= 255`, `a[a < 0] = 0`, `u.sub_(mean)`) silently changes the tensor (or the caller's array). On
CUDA, `.cpu()` copies, so the same line behaves differently on GPU and CPU: tests on a CPU machine
see data corruption that the GPU run never had, or the other way round.

Not flagged: a fresh temporary (`model(x).detach().cpu().numpy()`), rebinding (`a = a * 255`),
sources not read after the write, `np.asarray(x)` without evidence that `x` is a tensor, and writes
back into a parameter or gradient (`g = p.grad.numpy(); g[:] = allreduce(g)`), which are the point of
such code. A function parameter counts as used only when the function itself reads it after the write.

## Example
```python
image = t.detach().cpu().numpy()
image *= 255            # on CPU, t is scaled too
save(t)
x = torch.from_numpy(arr)
x.sub_(0.5)             # arr changes too
print(arr.mean())
```

## Use instead
```python
image = t.detach().cpu().numpy().copy()
image *= 255
save(t)
x = torch.from_numpy(arr).clone()
x.sub_(0.5)
print(arr.mean())
```

## Fix safety
Unsafe: the fix appends `.copy()` (NumPy) or `.clone()` (torch) at the alias site, so the write no
longer reaches the source; code that relied on the shared memory changes.

## Known problems
Conversions that copy only for some dtypes or devices (`torch.from_numpy(a).float()`,
`torch.from_numpy(a).to(device, torch.float32)`, `t.float().numpy()`, `torch.as_tensor(arr)`) are
not treated as aliases, so writes through them are missed; so are writes that reach an array or
tensor the caller passed in but the function never reads again (`w = torch.from_numpy(w).to(...)`
then `w += noise` mutates the caller's float32 array on CPU). Writes through NumPy functions are
recognised for `out=`, `np.copyto`, `np.put`, `np.place`, `np.putmask`, `np.fill_diagonal` and
`np.random.shuffle`.

## References
- torch.Tensor.numpy: "The returned ndarray and the tensor will share their storage, so changes to
  the tensor will be reflected in the ndarray and vice versa."
- torch.from_numpy: "Modifications to the tensor will be reflected in the ndarray and vice versa."
- pytorch/pytorch#97586
"""
from __future__ import annotations

import ast

from ..analysis.aliasing import alias_binding, kept_inplace, named, still_used
from ..analysis.evidence import MODULE, NDARRAY, SURE_TENSOR, TENSORISH, is_param_like
from ..analysis.facts import end_of
from ..analysis.inplace import written
from ..model import FixSafety
from .edits import as_receiver

CODE = "TEN103"
NAME = "numpy-alias-write"
MESSAGE = ("in-place write to '{alias}', which shares memory with '{source}' ({how}): '{source}' changes "
           "too{where}; copy with {copy}")
ON_CPU = " when it is a CPU tensor (a CUDA tensor needs .cpu(), which copies: CPU and GPU runs differ)"
FIX = FixSafety.UNSAFE
TRIGGER = (r"\.numpy\(", "from_numpy", "asarray")  # any of
NODES = (ast.Assign, ast.AugAssign, ast.Expr)
CLAIM = ("On a CPU tensor t, a = t.detach().cpu().numpy() and u = torch.from_numpy(arr) share memory: "
         "an in-place write into a changes t, and into u changes arr; .copy() / .clone() at the alias "
         "site leave the source unchanged.")
# Views keep the alias: methods of ndarrays / tensors that return a view of the same memory.
VIEW_METHODS = frozenset({"transpose", "swapaxes", "squeeze", "unsqueeze", "permute", "view", "reshape",
                          "expand_dims", "movedim", "view_as"})
PASS_TO_NUMPY = frozenset({"detach", "cpu", "resolve_conj", "resolve_neg"})
NUMPY_WRITERS = {"numpy.copyto": 0, "numpy.put": 0, "numpy.place": 0, "numpy.putmask": 0,
                 "numpy.fill_diagonal": 0, "numpy.random.shuffle": 0}
ARRAY_WRITE_METHODS = frozenset({"fill", "sort", "put", "itemset", "partition", "resize"})


def check(node, ctx):
    if isinstance(node, ast.Assign):
        yield from _kept_chain(node, ctx)
    target = _written(node, ctx)
    if not isinstance(target, ast.Name):
        return
    origin = alias_binding(target.id, ctx, lambda v: _alias_of(v, ctx) is not None)
    if origin is None:
        return
    source, how, side = _alias_of(origin.value, ctx)
    if isinstance(source, ast.Name) and source.id == target.id:
        return
    if is_param_like(source, ctx):
        return  # `g = p.grad.numpy(); g[:] = allreduce(g)`: writing the gradient back is the point
    if not still_used(source, ctx, end_of(node), caller_holds=False):
        return
    copy = "clone" if side == "tensor" else "copy"
    value = origin.value
    fix = ctx.replace(value, f"{as_receiver(ctx.text(value), value)}.{copy}()", FIX)
    yield ctx.finding(node, fix, alias=target.id, source=ctx.text(source), how=how,
                      where=ON_CPU if side == "ndarray" else "", copy=f".{copy}() at '{target.id} = ...'")


def _kept_chain(node: ast.Assign, ctx):
    """`u = torch.from_numpy(arr).sub_(0.5)`: the write reaches `arr`."""
    for alias, inner in kept_inplace(node, lambda v: _alias_of(v, ctx) is not None):
        source, how, side = _alias_of(inner, ctx)
        if not is_param_like(source, ctx) and still_used(source, ctx, end_of(node), caller_holds=False):
            copy = "clone" if side == "tensor" else "copy"
            fix = ctx.replace(inner, f"{as_receiver(ctx.text(inner), inner)}.{copy}()", FIX)
            yield ctx.finding(node, fix, alias=alias, source=ctx.text(source), how=how,
                              where=ON_CPU if side == "ndarray" else "", copy=f".{copy}() before the in-place call")


def _written(node, ctx):
    """The name or expression an Assign / AugAssign / statement-call writes in place, including
    ndarray writers (`a.fill(0)`, `np.copyto(a, b)`, `np.clip(a, 0, 1, out=a)`)."""
    if isinstance(node, ast.Expr):
        call = node.value
        if not isinstance(call, ast.Call):
            return None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ARRAY_WRITE_METHODS and isinstance(func.value, ast.Name):
            return func.value
        index = NUMPY_WRITERS.get(ctx.qualname(func) or "")
        if index is not None and len(call.args) > index:
            return named(call.args[index])
        return written(call)
    return written(node)


def _alias_of(expr, ctx):
    """(source, description, which side the alias is) when `expr` shares memory with a named
    source: ('ndarray' side for t.numpy() / np.asarray(t), 'tensor' side for torch.from_numpy)."""
    while True:
        if isinstance(expr, ast.Subscript) and not _fancy(expr.slice):
            expr = expr.value
        elif isinstance(expr, ast.Attribute) and expr.attr == "T":
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in VIEW_METHODS:
            expr = expr.func.value
        else:
            break
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    q = ctx.qualname(func) or ""
    if q == "torch.from_numpy" and len(expr.args) == 1:
        source = named(expr.args[0])
        if source is not None and ctx.kind(source) not in SURE_TENSOR:
            return source, "torch.from_numpy", "tensor"
        return None
    if q in ("numpy.asarray", "numpy.asanyarray") and len(expr.args) == 1 and not expr.keywords:
        source = named(expr.args[0])
        if source is not None and ctx.kind(source) in TENSORISH:
            return source, q.replace("numpy.", "np.") + "()", "ndarray"
        return None
    if isinstance(func, ast.Attribute) and func.attr == "numpy" and not expr.args and _imports_torch(ctx):
        return _numpy_source(func.value, ctx)
    return None


def _numpy_source(recv, ctx):
    chain = ["numpy()"]
    while isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) and not recv.args and (
            recv.func.attr in PASS_TO_NUMPY):
        chain.append(recv.func.attr + "()")
        recv = recv.func.value
    if isinstance(recv, ast.Attribute) and recv.attr == "data":
        chain.append("data")
        recv = recv.value
    source = named(recv)
    if source is None or ctx.kind(source) in (NDARRAY, MODULE):
        return None
    return source, "." + ".".join(reversed(chain)), "ndarray"


def _fancy(index) -> bool:
    """Advanced indexing (lists, arrays, masks) copies; slices, ints and None give views."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return not all(isinstance(p, (ast.Slice, ast.Constant))
                   or (isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant)) for p in parts)


def _imports_torch(ctx) -> bool:
    aliases = ctx.facts.aliases.values()
    return any(a == "torch" or a.startswith("torch.") for a in aliases) and not any(
        a.startswith(("tensorflow", "jax", "cupy", "mindspore", "paddle")) for a in aliases)
