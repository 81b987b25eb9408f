"""Methods the classes of the package define: a receiver of unknown kind whose method shares a name with
one of them may be an object of that class, whose method does what its code says, not what the tensor
method of that name does: a class of the file defines it (`state.detach()`, with `class State: def
detach(self): ...` in the file), or the receiver is a parameter that some caller, in the file or in the
package, passes an instance of a package class that has it (`freeze(Table())`). The name keeps a rule
quiet; it never makes one fire.
"""
from __future__ import annotations

import ast
from typing import Callable

from . import summaries
from .facts import Bind

_asks: dict[str, Callable] = {}  # method name -> the question asked of every caller's argument (memo keys)


def may_be_own(call: ast.Call, ctx) -> bool:
    """`obj.m(...)` may run a method of a class of the package rather than a tensor's."""
    if not isinstance(call.func, ast.Attribute):
        return False
    name = call.func.attr
    return name in summaries.method_names(ctx.facts) or _passed_an_object_with(call.func.value, name, ctx)


def _passed_an_object_with(recv, name: str, ctx) -> bool:
    if not isinstance(recv, ast.Name):
        return False
    found = ctx.frame.scope.reaching(recv.id, ctx.pos)
    if len(found) != 1 or found[0].kind != Bind.ARG:
        return False
    return summaries.argument(found[0], ctx, _has_method(name), 0, any_site=True) is True


def _has_method(name: str) -> Callable:
    """The question for a caller's argument: an instance of a package class whose objects run a def `name`."""
    if name not in _asks:
        def ask(value, inner, pos, depth):
            cls = summaries.instance_class(value, inner, pos)
            return cls is not None and summaries.class_method(cls, name, inner) is not None
        _asks[name] = ask
    return _asks[name]
