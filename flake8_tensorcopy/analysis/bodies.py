"""Facts about one function body (or a module's code), each walked once per file however many nodes ask:
where names are last read, written or computed with, its loops, early exits, assignments and declarations."""
from __future__ import annotations

import ast

from . import api, names
from .facts import FileFacts, Pos, dotted, end_of, pos_of, walk
from .inplace import written


def last_reads(facts: FileFacts, body: ast.AST) -> dict[str, Pos]:
    """Where each attribute chain (`self.w`) is read last in `body`."""
    return facts.index(_last_reads, body)


def last_writes(facts: FileFacts, body: ast.AST) -> dict[str, Pos]:
    """Where each name is last assigned or written in place in `body`."""
    return facts.index(_last_writes, body)


def last_computed_with(facts: FileFacts, body: ast.AST) -> dict[str, Pos]:
    """Where each name or attribute chain (`self.w0`), or an entry of one (`w0[n]`), is last an operand of
    arithmetic, an argument of a computation (not of an assertion, comparison or log call) or the receiver
    of a method call in `body`: a method whose result may hold the receiver's graph, or that writes it, or
    one torch does not declare (`w0.size()`, `w0.dim()`, `w0.detach()` read no graph)."""
    return facts.index(_last_computed_with, body)


def loops(facts: FileFacts, root: ast.AST) -> list[ast.AST]:
    """Every loop of `root`'s body, nested ones included, in source order."""
    return facts.index(_loops, root)


def early_exits(facts: FileFacts, root: ast.AST) -> list[ast.If]:
    """`if ...: return` (or raise / continue) under `root`: after one, the code runs only for what its test
    let through (`if is_tensor(x): return ...` leaves the other kinds)."""
    return facts.index(_early_exits, root)


def name_assignments(facts: FileFacts, root: ast.AST) -> dict[str, list[ast.expr]]:
    """The values of `name = value` statements under `root`, by name."""
    return facts.index(_name_assignments, root)


def declared_outside(facts: FileFacts, func: ast.AST) -> set[str]:
    """The names `func` declares `global` or `nonlocal`."""
    return facts.index(_declared_outside, func)


def used_as_objects(facts: FileFacts, body: ast.AST) -> set[str]:
    """Names `body` indexes with a string or sets a plain attribute on (`result["extra"] = ...`,
    `result.minimize = loss`): dicts or objects, never tensors."""
    return facts.index(_used_as_objects, body)


def method_names(facts: FileFacts, cls: ast.ClassDef) -> frozenset[str]:
    """The names of the methods `cls` defines in its body."""
    return facts.index(_method_names, cls)


def _last_reads(facts, body) -> dict:
    found = {}
    for n in walk(body):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            key = dotted(n)
            if key is not None:
                found[key] = max(found.get(key, (0, 0)), (n.lineno, n.col_offset))
    return found


def _last_writes(facts, body) -> dict:
    found: dict = {}
    for node in walk(body):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Call)):
            target = written(node)
            if isinstance(target, ast.Name):
                found[target.id] = max(found.get(target.id, (0, 0)), pos_of(node))
    return found


PASS_ELEMENTS = frozenset({"zip", "enumerate", "iter", "reversed", "list", "tuple"})  # give their arguments' items


LOADS = frozenset({"load_state_dict"})  # torch copies what it loads under no_grad: no graph of the argument


def _last_computed_with(facts, body) -> dict:
    found: dict = {}
    items: dict = {}  # a loop or comprehension variable -> the name or chain whose items it takes
    off = _grad_off_blocks(facts, body)
    for node in walk(body):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            items.update(item_sources(node.target, node.iter))
        if off and isinstance(node, (ast.BinOp, ast.Call)) and any(a <= pos_of(node) <= b for a, b in off):
            continue  # under `with torch.no_grad():` a computation records no graph (`w.copy_(w0)`)
        if isinstance(node, ast.BinOp):
            operands = [_held_in(o) for o in (node.left, node.right)]
        elif isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            passed = isinstance(node.func, ast.Name) and callee in PASS_ELEMENTS  # its items are judged as used
            operands = [] if names.NOT_A_COMPUTATION(callee) or passed or callee in LOADS else \
                [_held_in(a) for a in node.args]
            op = api.method(callee) if isinstance(node.func, ast.Attribute) else None
            if isinstance(node.func, ast.Attribute) and (op is None or op.holds_graph or op.mutates):
                operands.append(_held_in(node.func.value))
        else:
            continue
        for operand in filter(None, operands):
            found[operand] = max(found.get(operand, (0, 0)), pos_of(node))
    for item, source in items.items():  # `(p - p0)` for `p0` of `zip(params, start)`: `start` is computed with
        if item in found and source != item:
            found[source] = max(found.get(source, (0, 0)), found[item])
    return found


def _grad_off_blocks(facts, body) -> list:
    """(start, end) of each `with` block of `body` that turns grad off (`with torch.no_grad():`)."""
    return [(pos_of(n), end_of(n)) for n in walk(body) if isinstance(n, (ast.With, ast.AsyncWith))
            and any(facts.grad_after(item.context_expr, False) for item in n.items)]


def item_sources(target: ast.AST, iterable: ast.AST) -> dict:
    """Loop variables and the name or chain whose items they take: `for x in xs` (x: xs), `for i, x in
    enumerate(xs)` (x: xs), `for a, b in zip(xs, ys)` (a: xs, b: ys), `for k, v in sd.items()` and `for v in
    sd.values()` (v: sd)."""
    func = iterable.func.id if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) else None
    method = iterable.func.attr if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) \
        and not iterable.args else None
    if func == "enumerate" and iterable.args and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        return item_sources(target.elts[1], iterable.args[0])
    if func == "zip" and isinstance(target, ast.Tuple) and len(target.elts) == len(iterable.args):
        found = {}
        for elt, arg in zip(target.elts, iterable.args):
            found.update(item_sources(elt, arg))
        return found
    if method == "values":  # `for v in sd.values()`: entries of `sd`
        return item_sources(target, iterable.func.value)
    if method == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        return item_sources(target.elts[1], iterable.func.value)
    source = _held_in(iterable)
    return {target.id: source} if isinstance(target, ast.Name) and source is not None else {}


def _held_in(operand: ast.AST):
    """The name or attribute chain an operand is, or holds it as an entry: `anchor` for `anchor[n]`."""
    while isinstance(operand, ast.Subscript):
        operand = operand.value
    return dotted(operand)


def _loops(facts, root) -> list:
    body = root.body if isinstance(root.body, list) else [root.body]
    return [n for stmt in body for n in walk(stmt) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]


def _early_exits(facts, root) -> list:
    exits = (ast.Return, ast.Raise, ast.Continue)
    return [n for n in walk(root) if isinstance(n, ast.If) and isinstance(n.body[-1], exits)]


def _name_assignments(facts, root) -> dict:
    found: dict = {}
    for n in walk(root):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            found.setdefault(n.targets[0].id, []).append(n.value)
    return found


def _declared_outside(facts, func) -> set:
    return {n for d in walk(func) if isinstance(d, (ast.Global, ast.Nonlocal)) for n in d.names}


def _used_as_objects(facts, body) -> set:
    found = set()
    for n in walk(body):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) \
                and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str):
            found.add(n.value.id)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) \
                and not _tensor_settable(n.attr):
            found.add(n.value.id)
    return found


def _tensor_settable(attr: str) -> bool:
    """`x.requires_grad = False`, `x.data = ...`: an attribute a tensor lets code set."""
    held = api.attribute(attr)
    return held is not None and held.settable


def _method_names(facts, cls) -> frozenset:
    return frozenset(s.name for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
