"""Methods the classes of the file define: a receiver of unknown kind whose method shares a name with
one of them (`state.detach()`, with `class State: def detach(self): ...` in the file) may be an object
of that class, whose method does what its code says, not what the tensor method of that name does. The
name keeps a rule quiet; it never makes one fire.
"""
from __future__ import annotations

import ast

from . import summaries


def may_be_own(call: ast.Call, ctx) -> bool:
    """`obj.m(...)` may run a method of a class of the file: one of them defines a method `m`."""
    if not isinstance(call.func, ast.Attribute):
        return False
    return call.func.attr in summaries.method_names(ctx.facts)
