"""Values kept by reference: where code stores the object a name holds, not a copy of it.

`hist.append(x)`, `hist.insert(i, x)`, `state["prev"] = x`, `obj.prev = x` and `prev = x` keep the very
object `x` names: a later in-place write to it (`x += e`, `x.add_(e)`, `x.zero_()`) reaches the kept
entry too. `x.detach()` and `x.data` are aliases of the whole tensor (same storage), so keeping them is
keeping `x`'s data by reference as well. A store is live after a point when its holder may still be read
there: a name read later on some path, a parameter (the caller holds it), or an attribute of an object.
"""
from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from . import evidence
from .bindings import Bind, end_of, pos_of
from .facts import assigned, entry_added, walk
from .inplace import is_inplace_method, through_chain

if TYPE_CHECKING:  # pragma: no cover
    from .position import Position

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
    entry: bool = False  # kept as an entry of the holder: `holder[k] = value`


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

    def add(node, value, holder, entry=False):
        name = kept_name(value)
        if name is not None:
            found.setdefault(name, []).append(Store(node, value, holder, entry))

    for node in walk(root):
        added = entry_added(node)
        if added is not None:
            add(node, added[1], added[0])
        elif isinstance(node, ast.Assign):  # `prev = p.grad`, `a = b = x`, `prev, cur = p.grad, q` pair by pair
            for target, value in assigned(node, whole=False):
                if isinstance(target, ast.Subscript):
                    add(node, value, target.value, entry=True)
                elif isinstance(target, (ast.Attribute, ast.Name)):
                    add(node, value, target)
    for kept in found.values():
        kept.sort(key=lambda s: pos_of(s.node))
    return found


def value_write(node: ast.AST) -> Optional[str]:
    """The name an in-place write changes the value of (`x += e`, `x.add_(e)`, `x.zero_()`, the chain
    `x.copy_(y).add_(e)`); None for other statements and for writes that fill a buffer (`x.copy_(y)`,
    `x[i] = v`, `out=x`)."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            is_inplace_method(node.func.attr) and node.func.attr not in FILLS:
        receiver = through_chain(node.func.value)  # `x.copy_(y).add_(e)` changes x's value too
        return receiver.id if isinstance(receiver, ast.Name) else None
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
    if scope.is_param(root.id):
        return True
    return bool(scope.read_later(root.id, pos))


def same_object(scope, name: str, start, end) -> bool:
    """`name` holds the same object at both points: the same bindings reach both (augmented assignments
    keep the object)."""
    before, after = scope.reaching(name, start), scope.reaching(name, end)
    return bool(before) and {id(b) for b in before} == {id(b) for b in after}


def new_each_pass(scope, name: str, loop: ast.AST) -> bool:
    """`name` holds a new object in each pass of `loop`: the loop's target binds it (`for m in models`), or
    a statement of its body does with anything but a method of the object itself (`m = Net()`, `m =
    build(cfg)`; not `m = m.to(device)`, which gives a module back)."""
    start, end = pos_of(loop), end_of(loop)
    for b in scope.bindings.get(name, ()):
        if not start <= b.pos <= end or b.kind in (Bind.AUG, Bind.ARG, Bind.IMPORT):
            continue
        value = b.value
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name) and value.func.value.id == name):
            continue
        return True
    return False


def stores_of(where: "Position", name: str) -> list[Store]:
    """The stores by reference of `name` in the function (or module) around `where`: a cheap look-up."""
    root = where.frame.func if where.frame.func is not None else where.facts.tree
    return where.facts.index(stores, root).get(name, [])


MAX_STORES = 4  # the stores nearest a write that are asked about: each question walks the flow graph


def kept_before(where: "Position", write: ast.AST, name: str) -> list[Store]:
    """The stores of `name`'s object that lead to `write` with `name` still holding that object, and
    whose holder is live after it (the MAX_STORES nearest before it, and as many of a loop holding both).
    An entry store counts only into a Python container (`t[i] = x` into a tensor `t` copies the values)."""
    frame = where.frame
    scope, at = frame.scope, pos_of(write)
    found = stores_of(where, name)
    split = bisect.bisect_left([pos_of(s.node) for s in found], at)
    near = found[max(0, split - MAX_STORES):split] + found[split:split + MAX_STORES]
    return [s for s in near
            if _unbroken(where, scope, name, s.node, at) and live_after(s.holder, scope, at)
            and (not s.entry or evidence.kind(s.holder, where, pos_of(s.node)) == evidence.CONTAINER)]


def _rebindings(where: "Position", scope, name: str) -> list:
    """Where `name` gets a new object in `scope` (augmented assignments keep it), sorted; once per file."""
    key = ("kept-rebindings", id(scope), name)
    memo = where.facts.memo
    if key not in memo:
        memo[key] = sorted(b.pos for b in scope.bindings.get(name, ()) if b.kind != Bind.AUG)
    return memo[key]


def _unbroken(where, scope, name: str, store: ast.AST, at) -> bool:
    """A path leads from `store` to the point `at` on which `name` is not rebound: later in the same
    straight run (no binding of `name` between them in the source), or, in a loop holding both, on the
    next iteration of a loop that never rebinds `name` (an accumulator bound before the loop)."""
    start = pos_of(store)
    bound = _rebindings(where, scope, name)
    if start < at:
        if bisect.bisect_right(bound, start) != bisect.bisect_left(bound, at):
            return False  # rebound in between
    else:
        loops = [loop for loop in where.frame.loops if _holds(loop, store)]
        if not loops:
            return False  # a later store reaches the write only through a loop holding both
        first, last = (loops[-1].lineno, 0), ((loops[-1].end_lineno or loops[-1].lineno) + 1, 0)
        if bisect.bisect_left(bound, first) != bisect.bisect_left(bound, last):
            return False  # the loop rebinds the name
    if start < at and _block_of(where, store) == where.frame.block:
        return same_object(scope, name, start, at)  # one straight run: the write follows the store
    return scope.reaches(start, at) and same_object(scope, name, start, at)


def _block_of(where: "Position", node: ast.AST):
    """The innermost conditional body around `node`, as the walk recorded it (None: not recorded)."""
    key = "kept-frames"
    memo = where.facts.memo
    if key not in memo:
        memo[key] = {id(n): f for n, f in where.facts.nodes}
    frame = memo[key].get(id(node))
    return frame.block if frame is not None else object()


def _holds(loop: ast.AST, where) -> bool:
    line = where[0] if isinstance(where, tuple) else where.lineno
    return loop.lineno <= line <= (loop.end_lineno or loop.lineno)


def outlives_iteration(name: str, where: "Position", loop: ast.AST) -> bool:
    """The binding of `name` made at `where`, inside `loop`, is read in a later iteration (a read earlier in
    the loop's body that it reaches through the loop's back edge) or after the loop: the value is kept
    beyond the step that made it (`best = h.clone()` compared at the next step or returned), not used
    within it (`skip = x.clone(); ... x + skip`)."""
    scope = where.frame.scope
    mine = [b for b in scope.bindings.get(name, ()) if b.pos == where.pos]
    if not mine:
        return False
    start, end = pos_of(loop), (loop.end_lineno, loop.end_col_offset)
    reads = where.facts.memo.setdefault(("reads-reached", id(scope)), {})
    if name not in reads:  # each read's reaching bindings, asked once per scope and name
        index: dict = {}
        for at in scope.loads.get(name, ()):
            for b in scope.reaching(name, at):
                index.setdefault(id(b), []).append(at)
        reads[name] = index
    return any(at > end or start <= at < where.pos for at in reads[name].get(id(mine[0]), ()))
