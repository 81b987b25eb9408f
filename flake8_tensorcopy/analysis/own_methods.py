"""Methods the package's own classes define: a receiver of unknown kind whose method shares a name with
one of them (`state.detach()`, with `class State: def detach(self): ...` in the file) may be an object
of that class, whose method does what its code says, not what the tensor method of that name does. The
name keeps a rule quiet; it never makes one fire.
"""
from __future__ import annotations

import ast

from . import summaries
from .facts import walk


def defined(facts) -> frozenset:
    """The names of the methods the classes of the file define (nested classes too)."""
    key = "own-method-names"
    if key not in facts.memo:
        facts.memo[key] = frozenset(d.name for c in walk(facts.tree) if isinstance(c, ast.ClassDef)
                                    for d in c.body if isinstance(d, summaries.DEFS))
    return facts.memo[key]


def may_be_own(call: ast.Call, ctx) -> bool:
    """`obj.m(...)` may run a method of a class of the package: it resolves to one, or a class of the file
    defines a method `m` (and `obj` is not proven to be of another class)."""
    if not isinstance(call.func, ast.Attribute):
        return False
    return call.func.attr in defined(ctx.facts) or summaries.callee(call, ctx, ctx.pos) is not None
