"""What code proves holds no autograd graph: the other side of `evidence.attached`, which defers to it.

A value is proven unattached when it is computed only from values proven unattached. The sources: constants,
Python numbers and strings (`.item()`, `float(t)`, `len(x)`, `math.*`), what drops the graph (`.detach()`,
`.numpy()`, `.argmax()`, a `state_dict()` and its entries), torch's factories without `requires_grad=True`
(`torch.zeros(3)`, `torch.randn`, `torch.from_numpy(a)`, `torch.tensor([...])`), numpy's results (an ndarray:
numpy gives a tensor back only for the inputs `api.numpy_passes_tensor` names), and what torch's own ops make
under `no_grad`. Through: names (every binding that may reach the read: a loop's rebinding `w = w + lr * g` is
assumed unattached while it is proven, so `w` is when its first value and `g` are), arithmetic, indexing,
displays, methods and functions that keep the graph of an unattached input
(`x.float().unsqueeze(1).to(device)`, `torch.matmul`), and the file's defs whose every return is proven for
what every caller passes. A name is never proven when code can give it a graph in place: `x.requires_grad =
True`, `x.requires_grad_()`, `torch.add(a, b, out=x)`, or `x += v`, `x[i] = v`, `x.add_(v)`, `x.append(v)`
with `v` not proven, in its scope or a def nested in it. Not seen: an alias made to require grad (`y = x;
y.requires_grad_()`), and a def of the file that does it to its parameter (`make_leaf(x)`).
"""
from __future__ import annotations

import ast
from typing import Optional

from . import api, builtins_api, elements, summaries
from .bindings import Bind
from .facts import DEFS, walk
from .position import Position

MAX_DEPTH = 100
# torch names that are values, never tensors: `torch.device("cuda")`, `torch.cuda.is_available()`
TORCH_VALUES = frozenset({"torch.device", "torch.Size", "torch.dtype", "torch.finfo", "torch.iinfo",
                          "torch.get_default_dtype", "torch.cuda.is_available", "torch.cuda.device_count"})
NUMBER_MODULES = frozenset({"math", "random", "operator"})  # Python's own: their results hold no graph
# Builtins whose result holds no graph when no argument does (`sum(xs)`, `max(a, b)`, `zip(xs, ys)`)
PASS_THROUGH = frozenset("sum max min abs pow divmod list tuple set frozenset sorted reversed zip enumerate".split())
VALUE_RESULTS = frozenset({"int", "float", "bool", "number", "str", "none", "ndarray"})
TENSOR_RESULTS = frozenset({"tensor", "tensors", "tensor|tensors"})
PASSING = TENSOR_RESULTS | {"mixed"}  # results that hold a graph only where an input does
SCOPES = DEFS + (ast.Lambda, ast.ClassDef)


def unattached(expr: ast.AST, ctx: Position, pos=None) -> bool:
    """`expr` is proven, at `pos`, to hold no autograd graph (module docstring)."""
    pos = pos or ctx.pos
    return _proven(expr, ctx, pos, frozenset(), 0, _grad_off(ctx, pos))


def _fresh(expr, ctx, pos=None, depth: int = 0) -> bool:
    """The question without assumptions, for summaries of defs (whose answers are kept for every asker)."""
    pos = pos or ctx.pos
    return _proven(expr, ctx, pos, frozenset(), depth, _grad_off(ctx, pos))


def _grad_off(ctx, pos) -> bool:
    return ctx.frame.grad_disabled or ctx.frame.scope.grad_off_at(pos)


def _proven(expr, ctx, pos, assumed: frozenset, depth: int, off: bool) -> bool:
    """Memoised per (expression, point, frame, assumptions, grad mode); a cycle not assumed answers False."""
    if expr is None or depth > MAX_DEPTH:
        return False
    frame = ctx.frame
    key = ("unattached", id(expr), pos, id(frame.scope), id(frame.cls), frame.guards, assumed, off)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = False
        memo[key] = _judge(expr, ctx, pos, assumed, depth, off)
    return memo[key]


def _judge(expr, ctx, pos, assumed, depth, off) -> bool:
    def ask(e) -> bool:
        return _proven(e, ctx, pos, assumed, depth + 1, off)

    if isinstance(expr, (ast.Constant, ast.JoinedStr)):
        return True
    if isinstance(expr, ast.Name):
        own = elements.comprehension_binding(expr, ctx.facts)  # a comprehension's variable: its own scope
        if own is not None:
            return id(own) in assumed or _binding(own, ctx, assumed | {id(own)}, depth)
        return _name(expr.id, ctx, pos, assumed, depth)
    if isinstance(expr, ast.Attribute):
        if (ctx.facts.qualname(expr) or "").split(".")[0] in ("torch", "numpy", "math"):
            return True  # a module's constant: torch.float32, numpy.pi
        return expr.attr != "grad" and ask(expr.value)  # (a gradient made with create_graph=True has a graph)
    if isinstance(expr, (ast.Subscript, ast.Starred, ast.NamedExpr)):
        return ask(expr.value)
    if isinstance(expr, ast.BinOp):
        return ask(expr.left) and ask(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return ask(expr.operand)
    if isinstance(expr, ast.IfExp):
        return ask(expr.body) and ask(expr.orelse)
    parts = _parts(expr)
    if parts is not None:
        return all(ask(p) for p in parts)
    if isinstance(expr, ast.Call):
        return _call(expr, ctx, pos, ask, depth, off)
    return False


def _parts(expr) -> Optional[list]:
    """The operands of a display, comparison or boolean operation, all of which it may hold or give."""
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return list(expr.elts)
    if isinstance(expr, ast.Dict):
        return [k for k in expr.keys if k is not None] + list(expr.values)
    if isinstance(expr, ast.BoolOp):
        return list(expr.values)
    if isinstance(expr, ast.Compare):
        return [expr.left, *expr.comparators]
    return None


def _call(call: ast.Call, ctx, pos, ask, depth, off) -> bool:
    flag = next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
    if flag is not None and not (isinstance(flag, ast.Constant) and flag.value is False):
        return False
    args = list(call.args) + [k.value for k in call.keywords if k.arg != "requires_grad"]
    callee = summaries.callee(call, ctx, pos)
    if isinstance(callee, DEFS):
        return summaries.returned(callee, ctx, None, _fresh, depth + 1) is True
    if callee is not None:
        return False  # a class of the file: an object
    q = ctx.facts.qualname(call.func)
    if q:
        return _library_call(q, call, args, ask, off)
    func = call.func
    if isinstance(func, ast.Name):
        if func.id in ctx.frame.scope.bindings or ctx.frame.scope.binding_before(func.id, pos) is not None:
            return False  # a name the code binds: not the builtin
        return builtins_api.gives_value(func.id) or func.id == "range" or (
            func.id in PASS_THROUGH and all(ask(a) for a in args))
    if not isinstance(func, ast.Attribute) or func.attr == "requires_grad_":
        return False
    if func.attr == "state_dict" and not call.args and not call.keywords:
        return True  # a module's (or an optimizer's) state_dict() holds detached tensors (keep_vars=False)
    op = api.method(func.attr)
    if op is None:
        return False
    if _no_graph(op, off):
        return True  # x.item(), x.detach(), x.argmax(); under no_grad, a new tensor
    if op.returns not in PASSING or not ask(func.value):
        return False
    return api.is_conversion(func.attr) or all(ask(a) for a in args)  # x.to(device, dtype): the receiver's graph


def _library_call(q: str, call: ast.Call, args: list, ask, off: bool) -> bool:
    head = q.split(".")[0]
    if head in NUMBER_MODULES:
        return True
    if head == "numpy":
        passes = api.numpy_passes_tensor(q)
        if passes is None:
            return True  # an ndarray or a number (or it raises on a tensor that requires grad)
        inputs = call.args if passes == "any" else call.args[:1]
        return not any(isinstance(a, ast.Starred) for a in call.args) and all(ask(a) for a in inputs)
    if head == "copy":
        return all(ask(a) for a in args)
    if head != "torch" or q.endswith("Parameter"):
        return False
    if q in TORCH_VALUES:
        return True
    op = api.function(q)
    if op is None:
        return False
    if _no_graph(op, off):
        return True  # torch.zeros(3), torch.from_numpy(a), torch.tensor(x): no graph
    return op.returns in PASSING and all(ask(a) for a in args)  # (not an object: `torch.load(path)`)


def _no_graph(op: api.Op, off: bool) -> bool:
    """The op's result never holds a graph: a Python value or an ndarray, a tensor torch's model says drops it,
    or, under no_grad, a new tensor. Not an object (`torch.load` may give back leaves that require grad)."""
    if op.returns in VALUE_RESULTS:
        return True
    return op.returns in TENSOR_RESULTS and (op.grad == "drops" or off and op.alias in ("fresh", "view"))


def _name(name: str, ctx, pos, assumed, depth) -> bool:
    """Every binding of `name` that may reach `pos` is proven, and nothing in its scope gives it a graph in
    place. A binding being proven (a loop's `w = w + ...`) is assumed; so are the in-place writes being checked."""
    scope, where = ctx.frame.scope, ctx
    if name in scope.bindings:
        found = scope.reaching(name, pos)
    else:  # a name of an enclosing def or of the module: any of its bindings may be the one read
        scope = scope.parent
        while scope is not None and (isinstance(scope.node, ast.ClassDef) or name not in scope.bindings):
            scope = scope.parent
        frame = None if scope is None else (
            ctx.facts.module_frame if scope is ctx.facts.module_frame.scope else ctx.facts.function_frame(scope.node))
        if frame is None or frame.scope is not scope:
            return False
        where = Position(ctx.facts, frame, pos)
        found = [b for b in scope.bindings[name] if b.kind != Bind.AUG]
    if not found:
        return False
    for b in found:
        if id(b) not in assumed and not _binding(b, where, assumed | {id(b)}, depth):
            return False
    mark = ("writes", id(scope), name)
    if mark in assumed:
        return True
    return all(value is not None and _proven(value, Position(where.facts, where.frame, at), at, assumed | {mark},
                                             depth + 1, where.frame.scope.grad_off_at(at))
               for at, value in _writes(where.facts, scope.node).get(name, ()))


def _binding(b, ctx, assumed, depth) -> bool:
    off = b.grad_off or ctx.frame.scope.grad_off_at(b.pos)
    if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN):
        return _proven(b.value, ctx, b.pos, assumed, depth + 1, off)
    if b.kind == Bind.UNPACK:
        callee = summaries.callee(b.value, ctx, b.pos) if isinstance(b.value, ast.Call) else None
        if isinstance(callee, DEFS):
            return summaries.returned(callee, ctx, b.index, _fresh, depth + 1) is True
        return _proven(b.value, ctx, b.pos, assumed, depth + 1, off)  # the elements of an unattached value
    if b.kind == Bind.FOR and isinstance(b.node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return _proven(b.node.iter, ctx, b.pos, assumed, depth + 1, off)
    if b.kind == Bind.ARG:
        return summaries.argument(b, ctx, _fresh, depth + 1) is True
    if b.kind == Bind.IMPORT:
        return summaries.imported(b, ctx, _fresh, depth + 1) is True
    return False


def _writes(facts, root) -> dict:
    """name -> [(position, value)] for each in-place write of `root`'s scope that may give the name a graph:
    `x += v`, `x[i] = v`, `x.attr = v`, `x.add_(v)`, `x.append(v)` (each argument); a value None where it
    surely does (`x.requires_grad = True`, `x.requires_grad_()`, `out=x`), or where the write sits in a nested
    def that does not bind the name (its own frame is not read here), or a nested def declares it global."""
    return facts.index(_collect_writes, root)


def _collect_writes(facts, root) -> dict:
    found: dict = {}

    def note(name, stmt, value):  # at the statement's start, where the flow of the scope answers
        found.setdefault(name, []).append(((stmt.lineno, stmt.col_offset), value))

    def visit(node, stmt, nested: bool, shadowed: frozenset):
        for child in ast.iter_child_nodes(node):
            at = child if isinstance(child, ast.stmt) else stmt
            if isinstance(child, SCOPES):
                for name in _declared(child):
                    note(name, child, None)
                visit(child, at, True, shadowed | _local_names(child))
                continue
            for name, value in _written(child):
                if name not in shadowed:
                    note(name, at, None if nested else value)
            visit(child, at, nested, shadowed)

    visit(root, root, False, frozenset())
    return found


def _written(node) -> list:
    """(name, value) for what `node` itself writes in place; value None when the write surely gives a graph."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        out = []
        for t in _flat(targets):
            name = _root_name(t) if isinstance(t, (ast.Attribute, ast.Subscript)) else (
                t.id if isinstance(t, ast.Name) and isinstance(node, ast.AugAssign) else None)
            if name is None:
                continue
            sets_flag = isinstance(t, ast.Attribute) and t.attr == "requires_grad"
            whole = t in targets  # (an element of `a[0], b = pair` takes a part of the value)
            out.append((name, None if sets_flag and not _false(node.value) or not whole else node.value))
        return out
    if not isinstance(node, ast.Call):
        return []
    out = [(k.value.id, None) for k in node.keywords if k.arg == "out" and isinstance(k.value, ast.Name)]
    func = node.func
    name = _root_name(func.value) if isinstance(func, ast.Attribute) else None
    if name is None:
        return out
    op = api.method(func.attr)
    if func.attr == "requires_grad_":
        return out + [(name, None if not node.args or not _false(node.args[0]) else node.args[0])]
    if op is not None and not op.mutates:
        return out  # x.add(v): a new value, the receiver unchanged
    return out + [(name, a) for a in list(node.args) + [k.value for k in node.keywords]]


def _flat(targets) -> list:
    out = []
    for t in targets:
        out += _flat(t.elts) if isinstance(t, (ast.Tuple, ast.List)) else [t.value] if isinstance(
            t, ast.Starred) else [t]
    return out


def _root_name(expr) -> Optional[str]:
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def _false(expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is False


def _local_names(scope_node) -> frozenset:
    """Names a def, lambda or class binds for itself (its parameters, assignments, defs and imports, not those
    of scopes inside it), so that the enclosing scope's name of the same spelling is another variable there."""
    found = set()
    if not isinstance(scope_node, ast.ClassDef):
        args = scope_node.args
        found.update(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a)
    for n in _own_nodes(scope_node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.add(n.id)
        elif isinstance(n, SCOPES) and not isinstance(n, ast.Lambda):
            found.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            found.update((a.asname or a.name).split(".")[0] for a in n.names)
    return frozenset(found - set(_declared(scope_node)))


def _own_nodes(scope_node):
    """The nodes of a scope's body, without descending into the scopes inside it (whose own nodes they are)."""
    body = scope_node.body if isinstance(scope_node.body, list) else [scope_node.body]
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _declared(scope_node) -> list:
    return [name for n in walk(scope_node) if isinstance(n, (ast.Global, ast.Nonlocal)) for name in n.names]
