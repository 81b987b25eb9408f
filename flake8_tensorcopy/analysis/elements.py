"""Elements: what iterating a value gives, by the structure of the code alone.

A `for` loop or a comprehension binds each name of its target to part of an item of its iterable
(`p` of `for n, p in model.named_parameters()` is item part (1,)). `items()` says what those parts are, as
a list of `Item`s, every one of which the name may hold: a module's parameter, a tensor outside the graph
(a state_dict's value, a buffer), a Python number (an index, a range), the value of an expression (an
entry of a list or dict display, a comprehension's element, what code appends to a list or stores in a
dict), or the rows of an expression nothing more is known of (a tensor's rows are tensors). The value model
(evidence.py, proven.py) judges the items: the element of an iterable whose elements are tensors is a
tensor of the same strength, attached as they are. None means nothing is known.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Optional

from . import summaries
from .bindings import Bind, Pos, pos_of
from .position import at
from .facts import ADDERS, DEFS, dotted

PARAM, DETACHED, NUMBER, VALUE, ENTRIES, ROWS = "param", "detached", "number", "value", "entries", "rows"
PASS_ON = frozenset({"list", "tuple", "sorted", "reversed", "iter", "tqdm", "trange", "set", "frozenset"})
PARAMETER_ITEMS = {"parameters": (), "named_parameters": (1,)}
BUFFER_ITEMS = {"buffers": (), "named_buffers": (1,)}
NAME_ITEMS = {"named_parameters": (0,), "named_buffers": (0,), "named_modules": (0,), "named_children": (0,)}
FILLS = frozenset({*ADDERS, "add"})  # methods that add their last argument as an entry (`add` of a set)
MAX_DEPTH = 12
ANY_KEY = ("any key",)  # an entry stored under a key the code does not spell as a constant


@dataclass(frozen=True)
class Item:
    """One thing a loop variable may hold: `how` (module constants), with the expression (and where it is
    evaluated, and the part of it the name takes) for VALUE, ENTRIES (an entry of a container) and ROWS;
    `key` is the constant key a dict entry is stored under (`{"w": v}`, `d["w"] = v`), else ANY_KEY;
    `where`, for an entry of what a def returns, is the position of its return statement."""

    how: str
    expr: Optional[ast.AST] = None
    pos: Optional[Pos] = None
    path: tuple = ()
    key: object = ANY_KEY
    where: object = field(default=None, compare=False)  # the Position to judge `expr` in, when not the asker's


def comprehension_binding(name: ast.AST, facts) -> Optional[object]:
    """The generator binding a name read inside a comprehension (its own scope), else None."""
    return facts.elements.get(id(name)) if isinstance(name, ast.Name) else None


def _memoised(question):
    """Answer each (expression, part, position, scope) once per file; a cycle (`xs = xs` in a loop) is unknown."""
    def ask(expr, path, ctx, pos, depth=0):
        if depth > MAX_DEPTH or expr is None:
            return None
        key = (question.__name__, id(expr), path, pos, id(ctx.frame.scope))
        memo = ctx.facts.memo
        if key not in memo:
            memo[key] = None
            memo[key] = question(expr, path, ctx, pos, depth)
        return memo[key]

    ask.__doc__ = question.__doc__
    return ask


@_memoised
def items(iterable: ast.AST, path: tuple, ctx, pos: Pos, depth: int = 0) -> Optional[list[Item]]:
    """What part `path` of an item of `iterable` (evaluated at `pos`) may be; None when unknown."""
    if isinstance(iterable, ast.Call):
        return _call_items(iterable, path, ctx, pos, depth)
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
        if any(isinstance(e, ast.Starred) for e in iterable.elts):
            return None
        return [Item(VALUE, e, pos, path) for e in iterable.elts]
    if isinstance(iterable, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return [Item(VALUE, iterable.elt, pos_of(iterable), path)]
    if isinstance(iterable, ast.Name) and comprehension_binding(iterable, ctx.facts) is None:
        return _name_items(iterable, path, ctx, pos, depth)
    return [Item(ROWS, iterable, pos, path)]


@_memoised
def entries(container: ast.AST, path: tuple, ctx, pos: Pos, depth: int = 0) -> Optional[list[Item]]:
    """What part `path` of an entry (a dict's value, a list's item) of `container` may be."""
    if isinstance(container, ast.Dict):
        if any(k is None for k in container.keys):  # {**other}
            return None
        return [Item(VALUE, v, pos, path, _key(k)) for k, v in zip(container.keys, container.values)]
    if isinstance(container, ast.DictComp):
        return [Item(VALUE, container.value, pos_of(container), path)]
    if isinstance(container, ast.Name) and comprehension_binding(container, ctx.facts) is None:
        return _name_items(container, path, ctx, pos, depth, entries)
    if isinstance(container, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in container.elts):
        return [Item(VALUE, e, pos, path, i) for i, e in enumerate(container.elts)]  # keyed by index
    if isinstance(container, (ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return items(container, path, ctx, pos, depth + 1)
    if isinstance(container, ast.Subscript):  # the entries of an entry: `table[k]` of a dict of dicts
        outer = entry_read(container, ctx, pos, depth + 1)
        if outer is None or any(i.how != VALUE or i.path for i in outer):
            return None
        found: list[Item] = []
        for i in outer:
            inner = i.where or ctx
            got = entries(i.expr, path, inner, i.pos, depth + 1)
            if got is None:
                return None
            found += [replace(g, where=g.where or inner) for g in got]
        return found
    if isinstance(container, ast.Call):
        got = _returned_entries(container, path, ctx, pos, depth)
        if got is not None:
            return got
    return [Item(ENTRIES, container, pos, path)]


def _returned_entries(call: ast.Call, path: tuple, ctx, pos: Pos, depth: int) -> Optional[list[Item]]:
    """The entries of what `call` returns, when it runs a def of the package (a function, a module's forward)
    whose every return gives a container the code builds (`return {"loss": l, "scores": s}`)."""
    made = summaries.runs(call, ctx, pos)
    found = summaries.returns(made) if made is not None else []
    home = summaries.in_home(made, ctx) if found else None
    frame = home.facts.function_frame(made) if home is not None else None
    if frame is None:
        return None
    gathered: list[Item] = []
    for r in found:
        inner = at(home, frame, r)
        got = entries(r.value, path, inner, inner.pos, depth + 1) if r.value is not None else None
        if not got or any(g.how != VALUE for g in got):
            return None
        gathered += [replace(g, where=g.where or inner) for g in got]
    return gathered


def entry_read(read: ast.Subscript, ctx, pos: Pos, depth: int = 0) -> Optional[list[Item]]:
    """What `c[k]` may give when `c` is a container the code builds (a display, or one filled by `c[k] = v`,
    `c.append(v)`): its entries, only those stored under `k` when `k` is a constant; None for a slice, for a
    container nothing is known of, or when no entry can be read under `k`."""
    if isinstance(read.slice, ast.Slice):
        return None
    found = entries(read.value, (), ctx, pos, depth + 1)
    if not found or any(i.how != VALUE for i in found):
        return None
    key = _key(read.slice)
    if key is not ANY_KEY:
        found = [i for i in found if i.key in (key, ANY_KEY)]
    return found or None


def _key(node: Optional[ast.AST]) -> object:
    """The constant a dict key (or a subscript) spells, else ANY_KEY."""
    return node.value if isinstance(node, ast.Constant) else ANY_KEY


def _call_items(call: ast.Call, path: tuple, ctx, pos: Pos, depth: int) -> Optional[list[Item]]:
    func, args = call.func, call.args
    if any(isinstance(a, ast.Starred) for a in args):
        return None
    last = (dotted(func) or "").rsplit(".", 1)[-1]
    if isinstance(func, ast.Name) and ctx.frame.scope.binding_before(func.id, pos) is None:  # a builtin
        if last == "range":
            return [Item(NUMBER)] if path == () else None
        if last == "enumerate" and args:
            if not path:
                return None
            return [Item(NUMBER)] if path[0] == 0 else items(args[0], path[1:], ctx, pos, depth + 1) if \
                path[0] == 1 else None
        if last == "zip" and args:
            return items(args[path[0]], path[1:], ctx, pos, depth + 1) if path and path[0] < len(args) else None
    if last in PASS_ON and len(args) == 1 and not call.keywords:  # list(x), tqdm(loader), sorted(x)
        return items(args[0], path, ctx, pos, depth + 1)
    if isinstance(func, ast.Attribute) and not args:
        method = func.attr
        if PARAMETER_ITEMS.get(method) == path:
            return [Item(PARAM)]
        if BUFFER_ITEMS.get(method) == path:
            return [Item(DETACHED)]
        if NAME_ITEMS.get(method) == path:
            return [Item(NUMBER)]  # a parameter's name: a string, never a tensor
        if method == "values":
            return entries(func.value, path, ctx, pos, depth + 1)
        if method == "items" and path and path[0] == 1:
            return entries(func.value, path[1:], ctx, pos, depth + 1)
        if method in ("items", "keys"):
            return None
    return [Item(ROWS, call, pos, path)]


def _name_items(name: ast.Name, path: tuple, ctx, pos: Pos, depth: int, of=None) -> Optional[list[Item]]:
    """The items (or, with `of=entries`, the entries) of the value a name holds: every binding that may
    reach `pos` must say; a list or dict made empty is what the function then puts in it."""
    of = of or items
    scope = ctx.frame.scope
    found = scope.reaching(name.id, pos) or [b for b in [scope.binding_before(name.id, pos)] if b is not None]
    if not found:
        return None
    gathered: list[Item] = []
    for b in found:
        if b.kind not in (Bind.ASSIGN, Bind.ANNASSIGN) or b.value is None:
            return [Item(ROWS, name, pos, path)] if of is items else [Item(ENTRIES, name, pos, path)]
        if _empty(b.value):
            filled = _filled(name.id, ctx)
            if filled is None:
                return None
            gathered += [Item(VALUE, v, at, path, k) for k, v, at in filled]
            continue
        got = of(b.value, path, ctx, b.pos, depth + 1)
        if got is None:
            return None
        gathered += got
    return gathered


def _empty(value: ast.AST) -> bool:
    """`[]`, `{}`, `list()`, `dict()`: a container made empty, to be filled."""
    if isinstance(value, (ast.List, ast.Dict)):
        return not (value.elts if isinstance(value, ast.List) else value.keys)
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "dict")
            and not value.args and not value.keywords)


def _filled(name: str, ctx) -> Optional[list[tuple[object, ast.AST, Pos]]]:
    """(key, value, where) of each entry the function puts in container `name`: `name.append(v)`, `name[k] = v`,
    `name.extend([a, b])`; None when it is also changed otherwise (extended from elsewhere, `+=`, `update`)."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return ctx.facts.index(_fills, body).get(name)


def _fills(facts, body) -> dict:
    found: dict[str, Optional[list]] = {}
    todo = list(body.body) if isinstance(body, DEFS + (ast.Module,)) else [body]
    while todo:
        node = todo.pop()
        if isinstance(node, DEFS + (ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(node))
        name, values = _fill(node)
        if name is None:
            continue
        if values is None or found.get(name, []) is None:
            found[name] = None
        else:
            found.setdefault(name, []).extend((k, v, pos_of(node)) for k, v in values)
    return found


def _fill(node: ast.AST) -> tuple[Optional[str], Optional[list]]:
    """(container name, the (key, entry) pairs it adds) of one statement or call that fills a container by
    name; the entries are None for a change that says nothing of them."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        method, name = node.func.attr, node.func.value.id
        if method in FILLS and node.args and not node.keywords:
            return name, [(ANY_KEY, node.args[-1])]
        if method == "extend" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
            return name, [(ANY_KEY, e) for e in node.args[0].elts]
        if method in ("extend", "update", "setdefault", "__setitem__"):
            return name, None
    if isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                return t.value.id, None if isinstance(t.slice, ast.Slice) else [(_key(t.slice), node.value)]
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        return node.target.id, None
    return None, None


def sum_argument(call: ast.Call, ctx) -> Optional[ast.AST]:
    """The iterable `sum(iterable)` (the builtin, not shadowed) adds up, else None."""
    func = call.func
    if (isinstance(func, ast.Name) and func.id == "sum" and call.args and not isinstance(call.args[0], ast.Starred)
            and ctx.frame.scope.binding_before("sum", pos_of(call)) is None):
        return call.args[0]
    return None
