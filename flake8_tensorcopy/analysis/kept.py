"""Values kept by reference: where code stores the object a name holds, not a copy of it.

`hist.append(x)`, `hist.insert(i, x)`, `state["prev"] = x`, `obj.prev = x` and `prev = x` keep the very
object `x` names: a later in-place write to it (`x += e`, `x.add_(e)`, `x.zero_()`) reaches the kept
entry too. `x.detach()` and `x.data` are aliases of the whole tensor (same storage), so keeping them is
keeping `x`'s data by reference as well. A store is live after a point when its holder may still be read
there: a name read later on some path, a parameter (the caller holds it), or an attribute of an object.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from . import evidence
from .bindings import Bind, pos_of
from .facts import walk
from .inplace import is_inplace_method

if TYPE_CHECKING:  # pragma: no cover
    from .position import Position

APPENDS = {"append": 0, "insert": 1}  # method: the argument that is kept
ALIASES = ("detach",)  # methods whose result shares the whole storage
# In-place writes that change a value already held, as opposed to filling a buffer (`copy_`, `fill_`, `out=`).
FILLS = frozenset({"copy_", "fill_", "set_", "resize_", "normal_", "uniform_", "random_", "bernoulli_",
                   "exponential_", "geometric_", "cauchy_", "log_normal_", "index_put_", "scatter_",
                   "masked_scatter_", "put_"})


@dataclass(frozen=True)
class Store:
    node: ast.AST  # the statement or call that keeps the value
    value: ast.expr  # the kept expression: `x`, `x.detach()`, `x.data`
    holder: ast.expr  # what keeps it: the list, the dict, the object, or the other name


def kept_name(value: ast.AST) -> Optional[str]:
    """The name whose object `value` is by reference: `x`, `x.detach()`, `x.data`; else None."""
    if isinstance(value, ast.Call) and not value.args and not value.keywords and \
            isinstance(value.func, ast.Attribute) and value.func.attr in ALIASES:
        value = value.func.value
    elif isinstance(value, ast.Attribute) and value.attr == "data":
        value = value.value
    return value.id if isinstance(value, ast.Name) else None


def stores(facts, root: ast.AST) -> dict[str, list[Store]]:
    """Every store by reference under `root` (not inside nested defs' own scopes), by the kept name."""
    found: dict[str, list[Store]] = {}

    def add(node, value, holder):
        name = kept_name(value)
        if name is not None:
            found.setdefault(name, []).append(Store(node, value, holder))

    for node in walk(root):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in APPENDS:
            index = APPENDS[node.func.attr]
            if len(node.args) == index + 1 and not node.keywords:
                add(node, node.args[index], node.func.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, (ast.Subscript, ast.Attribute, ast.Name)):
                add(node, node.value, target.value if isinstance(target, ast.Subscript) else target)
    return found


def value_write(node: ast.AST) -> Optional[str]:
    """The name an in-place write changes the value of (`x += e`, `x.add_(e)`, `x.zero_()`); None for
    other statements and for writes that fill a buffer (`x.copy_(y)`, `x[i] = v`, `out=x`)."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            is_inplace_method(node.func.attr) and node.func.attr not in FILLS and \
            isinstance(node.func.value, ast.Name):
        return node.func.value.id
    return None


def live_after(holder: ast.expr, scope, pos) -> bool:
    """The holder of a store may be read after `pos`: an object's attribute or entry, a parameter, or a
    name some path from `pos` reads before rebinding it."""
    root = holder
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root is not holder:  # an attribute or entry of an object: whoever holds the object sees it
        return True
    if any(b.kind == Bind.ARG for b in scope.bindings.get(root.id, ())):
        return True
    return bool(scope.read_later(root.id, pos))


def same_object(scope, name: str, start, end) -> bool:
    """`name` holds the same object at both points: the same bindings reach both (augmented assignments
    keep the object)."""
    before, after = scope.reaching(name, start), scope.reaching(name, end)
    return bool(before) and {id(b) for b in before} == {id(b) for b in after}


def stores_of(where: "Position", name: str) -> list[Store]:
    """The stores by reference of `name` in the function (or module) around `where`: a cheap look-up."""
    root = where.frame.func if where.frame.func is not None else where.facts.tree
    return where.facts.index(stores, root).get(name, [])


def kept_before(where: "Position", write: ast.AST, name: str) -> list[Store]:
    """The stores of `name`'s object that lead to `write` with `name` still holding that object, and
    whose holder is live after it. An entry store counts only into a Python container (`t[i] = x` into a
    tensor `t` copies the values)."""
    frame = where.frame
    scope, at = frame.scope, pos_of(write)
    return [s for s in stores_of(where, name)
            if _unbroken(frame, scope, name, s.node, at) and live_after(s.holder, scope, at)
            and (not isinstance(_target(s.node), ast.Subscript)
                 or evidence.kind(s.holder, where, pos_of(s.node)) == evidence.CONTAINER)]


def _target(node: ast.AST):
    return node.targets[0] if isinstance(node, ast.Assign) else None


def _unbroken(frame, scope, name: str, store: ast.AST, at) -> bool:
    """A path leads from `store` to the point `at` on which `name` is not rebound: later in the same
    straight run (no binding of `name` between them in the source), or, in a loop holding both, on the
    next iteration of a loop that never rebinds `name` (an accumulator bound before the loop)."""
    start = pos_of(store)
    if not scope.reaches(start, at) or not same_object(scope, name, start, at):
        return False
    bound = [b.pos for b in scope.bindings.get(name, ()) if b.kind != Bind.AUG]
    if start < at:
        return not any(start < p < at for p in bound)
    loops = [loop for loop in frame.loops if _holds(loop, store)]
    return bool(loops) and not any(_holds(loops[-1], p) for p in bound)


def _holds(loop: ast.AST, where) -> bool:
    line = where[0] if isinstance(where, tuple) else where.lineno
    return loop.lineno <= line <= (loop.end_lineno or loop.lineno)
