"""Decorators that hand a def's callers' arguments to it unchanged: a wrapper of the package
(`def timed(fn)` returning `def wrapper(*args, **kwargs): ... fn(*args, **kwargs) ...`), and torch's
grad-mode decorators. What the callers of such a def pass is what its parameters get."""
from __future__ import annotations

import ast

from typing import Callable

from .facts import DEFS, pos_of, walk

GRAD_MODES = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad"})
MUTATORS = frozenset({"pop", "popitem", "update", "setdefault", "clear", "__setitem__", "__delitem__"})  # of kwargs


def passes_arguments(fn, ctx, callee: Callable) -> bool:
    """Every decorator of `fn` passes the arguments of a call through to it; `callee(call, ctx, pos)` finds
    the def a call runs (summaries.callee)."""
    return all(_transparent(d, ctx, callee) for d in fn.decorator_list)


def _transparent(decorator: ast.expr, ctx, callee: Callable) -> bool:
    call = decorator if isinstance(decorator, ast.Call) else None
    if call is not None and ctx.facts.qualname(call.func) in GRAD_MODES:
        return True  # @torch.no_grad()
    if call is not None or not isinstance(decorator, (ast.Name, ast.Attribute)):
        return False
    if ctx.facts.qualname(decorator) in GRAD_MODES:
        return True
    key = ("transparent-decorator", id(decorator))
    if key not in ctx.facts.memo:
        made = callee(ast.Call(func=decorator, args=[], keywords=[]), ctx, pos_of(decorator))
        ctx.facts.memo[key] = isinstance(made, DEFS) and wrapper_of_argument(made)
    return ctx.facts.memo[key]


def wrapper_of_argument(deco) -> bool:
    """`deco(f)` returns a def of its own body that calls `f(*args, **kwargs)` with its own `*args` and
    `**kwargs`, and returns nothing else."""
    params = deco.args.posonlyargs + deco.args.args
    if len(params) != 1:
        return False
    wrapped = params[0].arg
    inner = {d.name: d for d in deco.body if isinstance(d, DEFS)}
    returned = [r.value for r in walk(deco) if isinstance(r, ast.Return) and r.value is not None
                and not any(r in walk(d) for d in inner.values())]
    if not returned or not all(isinstance(v, ast.Name) and v.id in inner for v in returned):
        return False
    return all(_forwards(inner[v.id], wrapped) for v in returned)


def _forwards(wrapper, wrapped: str) -> bool:
    """The wrapper calls `wrapped(*args, **kwargs)` with its own `*args` and `**kwargs`, which it neither
    rebinds (`args = [a.numpy() for a in args]`) nor changes (`kwargs["x"] = ...`, `kwargs.pop("x")`)."""
    star, double = wrapper.args.vararg, wrapper.args.kwarg
    if star is None or double is None or _changed(wrapper, {star.arg, double.arg}):
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == wrapped
               and [type(a) for a in n.args] == [ast.Starred] and isinstance(n.args[0].value, ast.Name)
               and n.args[0].value.id == star.arg and len(n.keywords) == 1 and n.keywords[0].arg is None
               and isinstance(n.keywords[0].value, ast.Name) and n.keywords[0].value.id == double.arg
               for n in walk(wrapper))


def _changed(wrapper, names: set) -> bool:
    for n in walk(wrapper):
        if isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in names \
                and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                and n.func.value.id in names and n.func.attr in MUTATORS:
            return True
    return False
