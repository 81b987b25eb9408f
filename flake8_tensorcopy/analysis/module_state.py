"""Module state: a class of the file whose instances keep a tensor with a graph on themselves, so that
`copy.deepcopy(instance)` raises once it has run ("Only Tensors created explicitly by the user (graph
leaves) support the deepcopy protocol").

A class keeps one when its `forward`, or a method it registers as a forward hook
(`layer.register_forward_hook(self._hook)`: torch passes the hooked module's output), stores an
attached tensor on `self` (`self.hidden = flatten(output)`, `self.cache[key] = out`) and the attribute is
not cleared again on every path: after the store, for `forward`; after each call that runs the hooked
layer (`self.net(x)` once the hook is registered), in the methods that make one. Cleared means set to a
value without a graph (`None`, `{}`, `out.detach()`), deleted, or `.clear()`ed / `.pop()`ed.
"""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from . import api, evidence, hierarchy, summaries
from .facts import DEFS, assigned, dotted, end_of, pos_of, self_attribute, walk
from .position import at

COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith) + tuple(
    t for t in (getattr(ast, "TryStar", None), getattr(ast, "Match", None)) if t is not None)
EMPTYING = frozenset({"clear", "pop", "popitem"})
EMPTY_CONTAINERS = frozenset({"dict", "list", "tuple", "set", "collections.OrderedDict", "OrderedDict"})


def kept_graph(cls: ast.ClassDef, ctx) -> Optional[tuple[str, str]]:
    """(method, attribute): the first attribute where `cls` leaves a tensor with a graph, and the method
    that stores it; None when it leaves none (memoised per class)."""
    key = ("kept-graph", id(cls))
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None  # a cycle through the summaries answers no
        memo[key] = _kept_graph(cls, ctx)
    return memo[key]


def _kept_graph(cls, ctx):
    hooks = summaries.forward_hooks(cls, ctx)
    for name in ["forward"] + sorted(hooks):
        fn = hierarchy.method(cls, name)
        frame = ctx.facts.function_frame(fn) if fn is not None else None
        if frame is None:
            continue
        for stmt, attr in _stores(fn, frame, ctx):
            if name in hooks:
                left = _left_by_runs(cls, fn, attr, hooks[name][1], ctx)
            else:
                left = frame.scope.escapes(pos_of(stmt), _clears(fn, attr, cls, ctx))
            if left:
                return name, attr
    return None


def _stores(fn, frame, ctx) -> Iterator[tuple[ast.stmt, str]]:
    """(statement, attribute) of `self.attr = value` / `self.attr[key] = value` in `fn` where grad is on and
    the value has a graph."""
    for stmt, grad_off in _statements(fn.body, frame.grad_disabled, ctx):
        if grad_off or not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        for target, value in assigned(stmt):
            attr = self_attribute(target, subscripts=True)
            if attr is not None and not frame.scope.grad_off_at(pos_of(stmt)) and evidence.attached(
                    value, at(ctx, frame, stmt)):
                yield stmt, attr


def _left_by_runs(cls, hook, attr: str, registrars: tuple, ctx) -> bool:
    """A hook's attribute is left behind when a method of the class runs the hooked layer with grad on
    and some path from there returns without clearing it; or, when no method of the class runs it
    (callers do), when no method clears it."""
    ran = False
    for fn in cls.body:
        if not isinstance(fn, DEFS) or fn is hook:
            continue
        frame = ctx.facts.function_frame(fn)
        runs = list(_runs(fn, cls, registrars, frame, ctx)) if frame is not None else []
        ran = ran or bool(runs)
        clears = _clears(fn, attr, cls, ctx) if runs else []
        if any(frame.scope.escapes(pos, clears) for pos in runs):
            return True
    return not ran and not any(_clears(fn, attr, cls, ctx) for fn in cls.body if isinstance(fn, DEFS))


def _runs(fn, cls, registrars: tuple, frame, ctx) -> Iterator[tuple[int, int]]:
    """Where `fn` calls a held callable (`self.net(x)`, not a method of the class) with grad on, once the
    hook may be registered: always when `__init__` registers it or `fn` does not; else on a path from
    where `fn` registers it (`self._register_hook()`)."""
    names = {r.name for r in registrars}
    registers = [pos_of(n) for n in walk(fn) if isinstance(n, ast.Call)
                 and (self_attribute(n.func) in names or (fn in registrars and _registers(n)))]
    always = "__init__" in names or not registers
    for stmt, grad_off in _statements(fn.body, frame.grad_disabled, ctx):
        if grad_off or frame.scope.grad_off_at(pos_of(stmt)):
            continue
        for n in _own_nodes(stmt):
            attr = self_attribute(n.func) if isinstance(n, ast.Call) else None
            if attr is not None and hierarchy.method(cls, attr) is None and (
                    always or any(frame.scope.reaches(r, pos_of(stmt)) for r in registers)):
                yield pos_of(stmt)


def _registers(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "register_forward_hook"


def _clears(fn, attr: str, cls, ctx) -> list[tuple[int, int]]:
    """The statements of `fn` that clear `self.attr`, or call a method of the class that does."""
    key = ("clears", id(fn), attr)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = [pos_of(s) for s, _ in _statements(fn.body, False, ctx) if _clears_here(s, attr, cls, ctx)]
    return memo[key]


def _clears_here(stmt, attr: str, cls, ctx, follow: bool = True) -> bool:
    """`stmt` clears `self.attr`: `del self.attr`, `self.attr = None` (a value with no graph), `self.attr.clear()`,
    or (with `follow`) `self.reset()` whose body does one of those at its top level."""
    if isinstance(stmt, ast.Delete):
        return any(self_attribute(t, subscripts=True) == attr for t in stmt.targets)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(self_attribute(t) == attr for t in targets) and _no_graph(stmt.value, ctx)
    call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
    if call is None or not isinstance(call.func, ast.Attribute):
        return False
    if call.func.attr in EMPTYING and self_attribute(call.func.value) == attr:
        return True  # self.hidden.clear()
    other = hierarchy.method(cls, call.func.attr) if follow and self_attribute(call.func) else None
    return other is not None and any(_clears_here(s, attr, cls, ctx, follow=False) for s in other.body)


def _no_graph(value, ctx) -> bool:
    """A constant, an empty container (`{}`, `dict()`), or a tensor method's result that never holds the
    graph (`out.detach()`, `out.item()`)."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return not (value.keys if isinstance(value, ast.Dict) else value.elts)
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and api.drops_graph(value.func.attr):
        return True
    empty = not value.args and not value.keywords
    return empty and (ctx.facts.qualname(value.func) or dotted(value.func)) in EMPTY_CONTAINERS


def _statements(body: list, grad_off: bool, ctx) -> Iterator[tuple[ast.stmt, bool]]:
    """Each statement of `body` and of the blocks inside it (not nested defs or classes), with whether a
    `with torch.no_grad()` / `inference_mode()` around it turns grad off."""
    for stmt in body:
        yield stmt, grad_off
        inner = grad_off
        for item in getattr(stmt, "items", ()) if isinstance(stmt, (ast.With, ast.AsyncWith)) else ():
            inner = ctx.facts.grad_after(item.context_expr, inner)
        for block in _blocks(stmt):
            yield from _statements(block, inner, ctx)


def _blocks(stmt: ast.stmt) -> list[list]:
    """The statement lists inside a compound statement (its handlers' and cases' bodies too)."""
    if not isinstance(stmt, COMPOUND):
        return []
    blocks = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if getattr(stmt, f, None)]
    return blocks + [part.body for part in getattr(stmt, "handlers", []) + getattr(stmt, "cases", [])]


def _own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of `stmt` itself: for a compound statement its header (test, iterator, items)."""
    if isinstance(stmt, COMPOUND):
        parts = [getattr(stmt, f, None) for f in ("test", "iter", "subject")]
        parts += [i.context_expr for i in getattr(stmt, "items", ())]
        for part in parts:
            if part is not None:
                yield from walk(part)
        return
    if not isinstance(stmt, DEFS + (ast.ClassDef,)):
        yield from walk(stmt)


def fresh(expr, ctx) -> bool:
    """`expr` (a name or `self.attr`) was bound to a new instance earlier in this function and nothing
    that may run it was called since (`self.enc = Enc(); self.ema = deepcopy(self.enc)` in `__init__`):
    it holds no activation yet."""
    fn = ctx.frame.func
    if fn is None:
        return False
    text = dotted(expr)
    bound = [n for n in walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign)) and end_of(n) <= ctx.pos
             and any(dotted(t) == text for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    last = max(bound, key=pos_of, default=None)
    if text is None or last is None or not isinstance(last.value, ast.Call):
        return False
    start = end_of(last)
    loops = [loop for loop in ctx.frame.loops if pos_of(loop) > start]  # a later pass copies after the body ran
    end = max([end_of(loop) for loop in loops], default=ctx.pos)
    return not any(isinstance(n, ast.Call) and start < pos_of(n) < end and not pos_of(n) <= ctx.pos < end_of(n)
                   and _may_run(n, text, ctx) for n in walk(fn))  # (not the copy, nor a call around it)


def _may_run(call: ast.Call, text: str, ctx) -> bool:
    """`call` may run the instance `text` (or the layer a hook of it is registered on): anything but the
    module API on it or on `self` (`net.to(device)`, `self.eval()`) and functions of imported modules
    that are not handed it (`torch.randn(2, 4)`, `nn.Linear(4, 4)`)."""
    func = call.func
    if any(dotted(n) == text for a in call.args + [k.value for k in call.keywords] for n in walk(a)):
        return True
    if isinstance(func, ast.Attribute) and dotted(func.value) in (text, "self"):
        cls = ctx.frame.cls if dotted(func.value) == "self" else None
        # self.run(x), not self.to(device)
        own = cls is not None and hierarchy.resolved(cls, func.attr, ctx.facts) is not None
        return own or not api.module_returns_self(func.attr)
    return dotted(func) == text or ctx.facts.qualname(func) is None
