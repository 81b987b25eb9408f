"""In-place write into a NumPy alias of a tensor (or a tensor alias of an array) while the other side is used.

## What it does
Flags an in-place write into a name bound to `t.numpy()`, `t.cpu().numpy()`,
`t.detach().cpu().numpy()`, `np.asarray(t)` (and views of those: `.transpose(...)`, `.T`,
`[...]`), or to `torch.from_numpy(arr)` (and its views, `.detach()`, and the device moves that keep a
CPU tensor where it is: `.cpu()`, `.to(device)`), or `torch.as_tensor(arr)` of an array, when the other
side (`t` or `arr`) is read after the write. Also `u = torch.from_numpy(arr).sub_(0.5)`, an in-place
chain kept under a name, and aliases built in a helper function of the file or of a module it imports
from its package (or from beside it): `a = to_numpy(t)` where `to_numpy` returns
`np.asarray(t.cpu())`, `x, y = cast_inputs(x_arr, y_arr)` where it returns `torch.from_numpy(x_arr)`.
A helper counts when every path of it returns the same parameter's memory (the parameter itself on
another path does) and one path makes the alias; a helper that copies on some path
(`torch.from_numpy(x) if isinstance(x, np.ndarray) else torch.tensor(x)`, `.cuda()`) or always
(`.clone()`, `np.array(x)`, `.numpy().copy()`) does not.

## Why is this bad?
On a CPU tensor, `.numpy()`, `np.asarray(t)` and `torch.from_numpy(arr)` share memory with their
source, and `.cpu()` / `.to(device)` / `.detach()` of a CPU tensor return the same storage (from_numpy's
result is one: `torch.from_numpy(arr).to(device)` is `arr`'s memory on a CPU run). A write into "the array"
(`a *= 255`, `a[a < 0] = 0`, `u.sub_(mean)`) silently changes the tensor (or the caller's array). On
CUDA, `.cpu()` copies, so the same line behaves differently on GPU and CPU: tests on a CPU machine
see data corruption that the GPU run never had, or the other way round.

Not flagged: a fresh temporary (`model(x).detach().cpu().numpy()`), copies on the way (a cast such as
`torch.from_numpy(img).float()`, `.to(device, torch.float32)`, `.to("cuda")`, `copy=True`, a mask or
list index), rebinding (`a = a * 255`),
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
Not reported where every later read of the other side is printed or a notebook cell's displayed output
(or, after a first one shown, a copy made for a contrast: `torch.tensor(arr)`), or the first one shows the
alias beside it (`print(arr, t)`) or the other side itself (`print(arr)`, a cell's output `arr`, whatever
the code does with it next): a lesson showing the sharing. Nor where every path put the tensor on a
GPU (`.cuda()`, `.to("cuda")`): its `.cpu()` is a copy, so there is no alias.

## Known problems
Casts share memory only when the dtype already matches (`torch.from_numpy(a).float()` of a float32
array, `.to(device, torch.float32)`, `t.float().numpy()`); the file rarely shows the dtype, so they are
taken as copies and writes through them are missed. So are writes that reach an array or tensor the
caller passed in but the function never reads again (`w = torch.from_numpy(w).to(device)` then
`w += noise` mutates the caller's float32 array on CPU; `signal = to_numpy(signal)` then
`signal /= peak` rescales the caller's tensor), and arrays that reach the function through a call that
returns its argument unchanged. Through a helper's alias, only `-=`, `*=`, `/=`, `.sub_()`, `.mul_()`,
`.div_()`, `.clamp_()` / `.clip_()` are looked for in a def that names no alias function, and only in a
file that does (`.numpy(`, `to_numpy(`, `from_numpy`, `asarray`, `as_tensor`); no fix is offered where
a copy at one site would leave another path aliased (`x = cast(a)`, then `if flip: x = x.permute(...)`)
or for an element of a returned tuple. Writes through NumPy functions are
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

from ..analysis.aliasing import CROSSINGS, DIRECT, KEPT, alias_writes, still_used
from ..analysis.evidence import is_param_like
from ..analysis.facts import end_of
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import as_receiver, tensor_replace
from ..analysis.display import only_shown

ON_CPU = " when it is a CPU tensor (a CUDA tensor needs .cpu(), which copies: CPU and GPU runs differ)"
STAYS_ON_CPU = " while the tensor stays on the CPU (.cpu() / .to(device) of a CPU tensor return it)"
# Any of: `.numpy(` and helpers named for it (`to_numpy(`), the NumPy <-> torch functions.
TRIGGER = (r"numpy\(", "from_numpy", "asarray", "as_tensor")


def check(node, ctx):
    for write in alias_writes(node, ctx):
        alias = write.alias
        if write.how == DIRECT or alias.family not in CROSSINGS:
            continue
        source = alias.source
        if is_param_like(source, ctx):
            continue  # `g = p.grad.numpy(); g[:] = allreduce(g)`: writing the gradient back is the point
        if not still_used(source, ctx, end_of(node), caller_holds=False) or only_shown(source, node, ctx, write.name):
            continue  # not read again, or only shown: a lesson showing the sharing on purpose
        copy = "copy" if alias.side == "ndarray" else "clone"
        site = alias.site
        proof = source if alias.side == "ndarray" else site  # `.copy()` of the tensor's ndarray, `.clone()` of a tensor
        fix = tensor_replace(ctx, [proof], site, f"{as_receiver(ctx.text(site), site)}.{copy}()", FixSafety.UNSAFE) \
            if _one_site(write, ctx) else None
        where = ON_CPU if alias.side == "ndarray" else STAYS_ON_CPU if alias.moved else ""
        at = "before the in-place call" if write.how == KEPT else f"at '{write.name} = ...'"
        if write.callee is not None:
            where += f" ({write.callee.fn.name}() writes it in place; the call is on line {write.callee.call.lineno})"
            at = "in the call" if write.alias.site is write.callee.argument else at
        yield ctx.finding(write.reported_at(node), fix, alias=write.name, source=ctx.text(source), how=alias.how(),
                          where=where,
                          copy=f".{copy}() {at}")


def _one_site(write, ctx) -> bool:
    """A copy at the alias site covers every way the write gets its alias: the site is an expression
    (not an element of a tuple a helper returned), and only that binding of the name reaches the write
    (`x = cast(a)` then `if flip: x = x.permute(...)`: a copy in the branch leaves the other path)."""
    if write.alias.site is None:
        return False
    if write.callee is not None and write.alias.site is write.callee.argument:
        return True  # `normalize(t.numpy())`: the alias is made in the argument itself
    return write.how == KEPT or len(ctx.frame.scope.reaching(write.name, ctx.pos)) == 1


RULE = Rule(
    code="TEN103",
    name="numpy-alias-write",
    message=("in-place write to '{alias}', which shares memory with '{source}' ({how}): '{source}' changes "
             "too{where}; copy with {copy}"),
    nodes=(ast.Assign, ast.AugAssign, ast.Expr),
    check=check,
    trigger=TRIGGER,
    # Where findings are: the alias texts, and the normalising writes through an alias a helper function
    # built (`x_t = cast_inputs(x)` then `x_t /= 255`, in a def that names no alias function). `+=` and
    # `.add_(` are left out: counters and optimiser updates are everywhere, and each def they make hot is
    # walked for every rule.
    hot=TRIGGER + (r"[-*/]=", r"\.(?:sub|mul|div|clamp|clip)_\("),
    claim=("On a CPU tensor t, a = t.detach().cpu().numpy() and u = torch.from_numpy(arr).to(device) share "
           "memory: an in-place write into a changes t, and into u changes arr; .copy() / .clone() at the "
           "alias site leave the source unchanged."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`.copy()` (NumPy) or `.clone()` (torch) at the alias site",
                FixSafety.UNSAFE,
                "aliasing: writes no longer reach the other side",
                withheld=("2 of 10 fixes correct in fix review 11 at 4415d4b and fix review 8 at 26fa81d, on code "
                          "the rules were not tuned on: copies of values made on a GPU, or of a source rebound "
                          "before any read")),
    ),
)
