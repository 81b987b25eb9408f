"""Summaries of the file's own functions: what a def returns (each element of a returned tuple too) and
what its callers in the file pass for a parameter. The evidence asks these when a value comes from a
call of a def of the file (`emb, labels = extract(model, loader)`, `self.get_state()`) or is a parameter
(`def quick_fit(features): torch.tensor(features)` called with tensors).

Each summary is one question (`kind` or `attached`, passed in as `ask`) put to every return statement
in the def's own frame, or to every call site's argument in its caller's frame; the answer is the one
they all agree on, else unknown. Answers are memoised per file, so summaries cost one evaluation each.
"""
from __future__ import annotations

import ast
import bisect
import itertools
import re
from typing import Callable, Optional

from . import decorators, hierarchy, item_sites, project
from .facts import Bind, children, lines_of, self_attribute, walk
from .position import at

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
UNKNOWN = object()  # a return or call site with no answer
ELSEWHERE = object()  # a call site of a method of the same name on an object of another (or unknown) class
UNSEEN = ast.Name(id="<unseen element>", ctx=ast.Load())  # a value self_assignments cannot see (unknown)
WORD = re.compile(r"\w+")
WORD_SEARCHES = 32  # names searched for one by one in a file; past that, an index of all its words pays


def callee(call: ast.Call, ctx, pos) -> Optional[ast.AST]:
    """The def or class of this file that `call` calls: a name bound once by a `def` / `class` (here or
    in an enclosing scope), or `self.name` / `cls.name` for a method of the enclosing class; or the def
    of a neighbouring module that `from ... import name` or `module.name` names (analysis/project.py)."""
    func = call.func
    if isinstance(func, ast.Name):
        b = _sole_binding(ctx, func.id, pos)
        if b is None:
            return None
        if b.kind == Bind.OTHER and isinstance(b.node, DEFS + (ast.ClassDef,)):
            return b.node
        if b.kind == Bind.IMPORT and isinstance(b.node, ast.ImportFrom):
            return project.imported_def(ctx.facts, b.node, func.id)
        return None
    if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
            and ctx.frame.cls is not None):
        return class_method(ctx.frame.cls, func.attr, ctx)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):  # utils.split(...)
        b = ctx.frame.scope.binding_before(func.value.id, pos)
        if b is not None and b.kind == Bind.IMPORT:
            return project.module_def(ctx.facts, b.node, func.value.id, func.attr)
    if isinstance(func, ast.Attribute):  # meter.update(loss), self.meter.update(loss), stats.__setitem__(k, v)
        return instance_method(func, ctx, pos)
    return None


def runs(call: ast.Call, ctx, pos) -> Optional[ast.AST]:
    """The def `call` runs: its callee, or, for a call of an instance of a package class (`model(x)` with
    `model = TwoHead()`, `self.net(x)`), that class's `__call__`, else its `forward` (nn.Module's `__call__`
    runs it)."""
    found = callee(call, ctx, pos)
    if found is not None:
        return found
    func = call.func
    if isinstance(func, ast.Name):  # `criterion(out, y)`, `criterion` made by `SplitLoss(8)` or passed one
        cls = instance_class(func, ctx, pos)
        cls = cls or (parameter_class(func.id, ctx, pos) if _calls_instances(ctx.facts) else None)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and ctx.frame.cls is not None and class_method(ctx.frame.cls, func.attr, ctx) is None:
        cls = attribute_class(func.attr, ctx, pos)
    else:
        return None
    if not isinstance(cls, ast.ClassDef):
        return None
    return class_method(cls, "__call__", ctx) or class_method(cls, "forward", ctx)


def class_method(cls: ast.ClassDef, name: str, ctx) -> Optional[ast.AST]:
    """The def `name` that an instance of `cls` (a class of the file or of a neighbouring module) runs: its
    own, or the one it inherits from a base class of the package."""
    return hierarchy.resolved(cls, name, project.home(cls) or project.analysed_home(cls) or ctx.facts)


def _calls_instances(facts) -> bool:
    """A class of the file, or the file's imports from its package, may make callable instances."""
    return bool({"__call__", "forward"} & method_names(facts)) or project.imports_neighbours(facts)


def instance_method(func: ast.Attribute, ctx, pos) -> Optional[ast.AST]:
    """The method `func.attr` of the package class that `func.value` is an instance of: a name bound to
    `Cls(...)` (or to what a factory def returns), or `self.attr` when the enclosing class gives that
    attribute instances of one class; a class of the file or one it imports from its package (that module
    is parsed when a receiver is made by a class it imports). A parameter's class is not asked of its
    callers (that costs a search of the package for every method call on a parameter)."""
    recv = func.value
    if func.attr not in method_names(ctx.facts) and not project.imports_neighbours(ctx.facts):
        return None  # no class of the file defines it, and the file imports nothing from its package
    key = ("instance-method", id(func), pos, id(ctx.frame.scope))
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None
        cls = receiver_class(recv, ctx, pos)
        memo[key] = class_method(cls, func.attr, ctx) if isinstance(cls, ast.ClassDef) else None
    return memo[key]


def receiver_class(recv: ast.expr, ctx, pos, depth: int = 0) -> Optional[ast.ClassDef]:
    """The package class the object `recv` names is an instance of: a name bound to `Cls(...)` (or passed
    one by every caller of the file), `self.attr` by what the enclosing class assigns it, and `obj.attr`
    (`tracker.meter`, `self.tracker.meter`) by what the class of `obj` assigns to its `self.attr`."""
    if isinstance(recv, ast.Name):
        return None if recv.id in ("self", "cls") else \
            instance_class(recv, ctx, pos) or parameter_class(recv.id, ctx, pos)
    if not isinstance(recv, ast.Attribute) or depth > 2:
        return None
    if isinstance(recv.value, ast.Name) and recv.value.id == "self":
        return attribute_class(recv.attr, ctx, pos)
    outer = receiver_class(recv.value, ctx, pos, depth + 1)
    if outer is None:
        return None
    inner = in_home(outer, ctx)
    return attribute_class(recv.attr, inner, inner.pos, cls=outer)


def parameter_class(name: str, ctx, pos) -> Optional[ast.ClassDef]:
    """The class of parameter `name` of a def (`def run_epoch(model, loader, tally)`), when every call of the
    def in the file passes an instance of the same class of the package (`run_epoch(model, loader, Tally())`,
    `self.forward_and_log(x, y, log)` with `log = RunLog()`). The package's other modules are not searched:
    one question per call on a parameter, across a large package, cost more than the rest of the analysis."""
    found = ctx.frame.scope.reaching(name, pos)
    b = found[0] if len(found) == 1 and found[0].kind == Bind.ARG else None
    fn = def_of(b, ctx) if b is not None else None
    if fn is None or fn.decorator_list and not decorators.passes_arguments(fn, ctx, callee):
        return None
    key = ("parameter-class", id(b.node))
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None  # a def that passes its parameter on to itself
        made = set()
        for call, frame in call_sites(fn, ctx):
            inner = at(ctx, frame, call)
            if _is_method(fn, ctx.facts) and callee(call, inner, inner.pos) is not fn:
                continue  # `other.update(x)`: a method of the same name on another object
            value = passed(fn, name, call)
            cls = instance_class(value, inner, inner.pos, 1) if value is not None else None
            made.add(cls if isinstance(cls, ast.ClassDef) else None)
        memo[key] = made.pop() if len(made) == 1 else None
    return memo[key]


def _sole_binding(ctx, name: str, pos):
    """The one binding of `name` that reaches `pos` (here or in an enclosing scope), or None."""
    scope = ctx.frame.scope
    found = scope.reaching(name, pos) or [scope.binding_before(name, pos)]
    return found[0] if len(found) == 1 else None


def held_call(call: ast.Call, ctx, pos, depth: int = 0) -> Optional[ast.AST]:
    """The `__call__` def that `self.loss_fn(...)` runs when the class sets `self.loss_fn` to an instance of
    one class (`DualLoss(cfg)`, or what a factory def returns: `create_loss(cfg)`), in this file or a
    neighbouring module."""
    func = call.func
    cls = ctx.frame.cls
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"
            and cls is not None and class_method(cls, func.attr, ctx) is None):
        return None
    made = attribute_class(func.attr, ctx, pos, depth)
    return class_method(made, "__call__", ctx) if made is not None else None


def attribute_class(attr: str, ctx, pos, depth: int = 0, cls=None) -> Optional[ast.ClassDef]:
    """The class `self.attr` holds an instance of: every value the enclosing class (or `cls`, a class of the
    file of `ctx`) gives it but None is an instance of that one class."""
    cls = cls or ctx.frame.cls
    if cls is None:
        return None
    key = ("attribute-class", id(cls), attr)
    if key not in ctx.facts.memo:
        values = [v for v in self_assignments(cls, ctx).get(attr, ())
                  if not (isinstance(v, ast.Constant) and v.value is None)]
        found = {instance_class(v, ctx, pos, depth) for v in values}
        made = found.pop() if len(found) == 1 else None
        ctx.facts.memo[key] = made if isinstance(made, ast.ClassDef) else None
    return ctx.facts.memo[key]


def self_assignments(cls: ast.ClassDef, ctx) -> dict[str, list]:
    """What each attribute of the class holds: the values of every `self.attr = value` in its body (its
    methods too) and of `self.register_buffer("attr", value)`."""
    key = ("self-assignments", id(cls))
    if key not in ctx.facts.memo:
        found: dict[str, list] = {}
        for n in walk(cls):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                for t, value in _element_pairs(n):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        found.setdefault(t.attr, []).append(value)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "register_buffer"
                  and len(n.args) >= 2 and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)):
                found.setdefault(n.args[0].value, []).append(n.args[1])
        ctx.facts.memo[key] = found
    return ctx.facts.memo[key]


def _element_pairs(stmt) -> list:
    """(target, value) of an assignment, element by element for `self.a, self.b = x, y`; a tuple target whose
    values are not seen one by one gives an unknown value (None) to each element, none is left out."""
    found = []
    for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
        value = stmt.value
        if isinstance(target, (ast.Tuple, ast.List)):
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            found += [(t, value.elts[i] if same else UNSEEN) for i, t in enumerate(target.elts)]
        else:
            found.append((target, value))
    return found


def method_names(facts) -> frozenset:
    """The names of the methods the classes of the file define: classes of the module's code (in `if` /
    `try` blocks too) and the classes nested in them; not the classes a def builds (the whole tree is not
    walked for this)."""
    key = "own-method-names"
    if key not in facts.memo:
        found, stack = set(), list(facts.tree.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.ClassDef):
                found.update(d.name for d in node.body if isinstance(d, DEFS))
                stack.extend(node.body)
            elif isinstance(node, (ast.If, ast.Try)):
                stack.extend(node.body + node.orelse + getattr(node, "finalbody", [])
                             + [s for h in getattr(node, "handlers", []) for s in h.body])
        facts.memo[key] = frozenset(found)
    return facts.memo[key]


def instance_class(value, ctx, pos, depth: int = 0) -> Optional[ast.ClassDef]:
    """The class `value` is an instance of: `Cls(...)`, a name bound to one, or a factory def's return."""
    if depth > 4:
        return None
    if isinstance(value, ast.Name):
        found = ctx.frame.scope.reaching(value.id, pos)
        b = found[0] if len(found) == 1 else None
        if b is not None and b.kind == Bind.UNPACK and isinstance(b.value, (ast.Tuple, ast.List)):
            elts = b.value.elts  # meter, stats = Meter(), Stats()
            return instance_class(elts[b.index], ctx, b.pos, depth + 1) if b.index < len(elts) else None
        return instance_class(b.value, ctx, b.pos, depth + 1) if b is not None and b.value is not None else None
    if not isinstance(value, ast.Call):
        return None
    registry = registry_classes(value, ctx, pos)
    if len(registry) == 1:
        return registry[0]
    made = callee(value, ctx, pos)
    if isinstance(made, ast.ClassDef) or made is None:
        return made
    return returned(made, ctx, None, instance_class, depth + 1)


def instance_classes(value, ctx, pos) -> list[ast.ClassDef]:
    """The classes `value` may be an instance of: its one class (instance_class), or every class of the
    registry it is built from (`REGISTRY[name](**cfg)`, or a name bound once to that)."""
    if isinstance(value, ast.Name):
        found = ctx.frame.scope.reaching(value.id, pos)
        b = found[0] if len(found) == 1 and found[0].kind == Bind.ASSIGN else None
        if b is not None and isinstance(b.value, ast.Call) and registry_classes(b.value, ctx, b.pos):
            return registry_classes(b.value, ctx, b.pos)
    one = instance_class(value, ctx, pos)
    return [one] if isinstance(one, ast.ClassDef) else []


def registry_classes(call: ast.Call, ctx, pos) -> list[ast.ClassDef]:
    """`REGISTRY[key](...)` where `REGISTRY` is bound once, at the top of its module, to a dict display whose
    values all name classes (of the file, or imported from the package): those classes, else []."""
    func = call.func
    if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
        return []
    b = _sole_binding(ctx, func.value.id, pos)
    home = ctx
    if b is not None and b.kind == Bind.IMPORT and isinstance(b.node, ast.ImportFrom):
        found = project.imported_value(ctx.facts, b.node, func.value.id)
        if found is None:
            return []
        facts, b = found
        home = at(ctx, facts.module_frame, b.node, facts)
    value = b.value if b is not None and b.kind == Bind.ASSIGN else None
    if not (isinstance(value, ast.Dict) and value.values) or b not in home.facts.module_scope.bindings.get(b.name, []):
        return []
    classes = [callee(ast.Call(func=v, args=[], keywords=[]), home, home.pos) if isinstance(v, ast.Name) else None
               for v in value.values]
    return classes if all(isinstance(c, ast.ClassDef) for c in classes) else []


def forward_hooks(cls: ast.ClassDef, ctx) -> dict[str, tuple[int, tuple]]:
    """The methods `cls` registers as forward hooks (`layer.register_forward_hook(self._hook)`), each with the
    index of its parameter that torch passes the module's output in (3 counting `self`; 4 with
    `with_kwargs=True`) and the defs of `cls` that register it."""
    key = ("forward-hooks", id(cls))
    if key not in ctx.facts.memo:
        found: dict[str, tuple[int, tuple]] = {}
        for fn in cls.body:
            for n in walk(fn) if isinstance(fn, DEFS) else ():
                hook = _registered_hook(n)
                if hook is not None and hierarchy.method(cls, hook) is not None:
                    kwargs = any(k.arg == "with_kwargs" and isinstance(k.value, ast.Constant) and k.value.value is True
                                 for k in n.keywords)
                    found[hook] = (4 if kwargs else 3, found.get(hook, (0, ()))[1] + (fn,))
        ctx.facts.memo[key] = found
    return ctx.facts.memo[key]


def _registered_hook(node: ast.AST) -> Optional[str]:
    """`m` of `x.register_forward_hook(self.m)` (or `hook=self.m`)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register_forward_hook"):
        return None
    hook = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "hook"), None)
    if isinstance(hook, ast.Attribute) and isinstance(hook.value, ast.Name) and hook.value.id == "self":
        return hook.attr
    return None


def hook_output(b, ctx) -> bool:
    """Parameter `b` is the one a forward hook of the enclosing class receives the module's output in: a
    tensor with the forward's graph when grad is on."""
    fn, cls = def_of(b, ctx), ctx.frame.cls
    if fn is None or cls is None or fn not in cls.body:
        return False
    hook = forward_hooks(cls, ctx).get(fn.name)
    params = fn.args.posonlyargs + fn.args.args
    return hook is not None and hook[0] < len(params) and params[hook[0]] is b.node


def returned(fn: ast.AST, ctx, index: Optional[int], ask: Callable, depth: int, any_path: bool = False):
    """`ask` (kind / attached) of what `fn` returns, or of element `index` of the tuple it returns, when
    every return statement agrees; None when they do not, or for a generator or an unreturning def.
    With `any_path`, True when some return statement's answer is True (a graph kept on one path is kept)."""
    if not isinstance(fn, DEFS):
        return None
    ctx = in_home(fn, ctx)
    key = ("returned", id(fn), index, id(ask), any_path)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None  # recursion answers unknown
        memo[key] = _returned(fn, ctx, index, ask, depth, any_path)
    return memo[key]


def imported(b, ctx, ask: Callable, depth: int):
    """`ask` of the value a name imported from a neighbouring module holds (`from .maths import ROOTS`, where
    maths.py binds `ROOTS = torch.tensor(...)` once at its top), judged in that module; None otherwise."""
    if b is None or b.kind != Bind.IMPORT or not isinstance(b.node, ast.ImportFrom):
        return None
    found = project.imported_value(ctx.facts, b.node, b.name)
    if found is None:
        return None
    home, bound = found
    return ask(bound.value, _moved(ctx, home, bound.node), bound.pos, depth)


def in_home(fn: ast.AST, ctx):
    """`ctx` for reading `fn`: moved into its module's file when it is a def of another module."""
    home = project.home(fn) or project.analysed_home(fn)
    return ctx if home is None or home is ctx.facts else _moved(ctx, home, fn)


def _moved(ctx, home, node: ast.AST, frame=None):
    """`ctx` at `node` of another module's file `home` (in `frame`, by default its module's)."""
    return at(ctx, frame or home.module_frame, node, home)


def _returned(fn, ctx, index, ask, depth, any_path):
    found = returns(fn)
    frame = ctx.facts.function_frame(fn) if found else None
    if frame is None:
        return None
    return _join((_answer(r.value, at(ctx, frame, r), index, ask, depth, any_path) for r in found), any_path)


def _answer(value, inner, index, ask, depth, any_path):
    """`ask` of what `return value` gives (its element `index`, for a tuple)."""
    if value is None:
        return UNKNOWN
    if index is None:
        return ask(value, inner, inner.pos, depth)
    if isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts):
        return ask(value.elts[index], inner, inner.pos, depth) if index < len(value.elts) else UNKNOWN
    made = runs(value, inner, inner.pos) if isinstance(value, ast.Call) else None
    if made is not None:
        return returned(made, inner, index, ask, depth + 1, any_path)
    return UNKNOWN


def _join(answers, any_true: bool):
    """The answer all agree on (None when two differ or it is UNKNOWN); with `any_true`, True as soon as
    one answer is True, else None. Stops at the first answer that decides."""
    seen = set()
    for answer in answers:
        if any_true:
            if answer is True:
                return True
            continue
        seen.add(answer)
        if len(seen) > 1:
            return None
    answer = None if any_true or not seen else seen.pop()
    return None if answer is UNKNOWN else answer


def returns(fn: Optional[ast.AST]) -> list[ast.Return]:
    """The return statements of a plain def; [] for anything else (a coroutine, a generator, a class)."""
    if not isinstance(fn, ast.FunctionDef):
        return []
    found, generator = _returns(fn)
    return [] if generator else found


def _returns(fn: ast.AST) -> tuple[list[ast.Return], bool]:
    """The return statements of `fn` itself (not of defs inside it), and whether it yields."""
    found, generator = [], False
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            generator = True
        if not isinstance(node, SCOPES):
            stack.extend(children(node))
    return found, generator


def argument(b, ctx, ask: Callable, depth: int, any_site: bool = False):
    """`ask` of parameter `b` (an "arg" binding) from what every call site of its def passes: in the file,
    and for a def or class at the top of the module, in the modules of its package that import it
    (`math_util.calc_gaes(..., v_preds_all, ...)`; a class's `Potential(data_mean=...)` for `__init__`).
    None when a site passes something else or nothing, unpacks arguments, or the def escapes (is used
    other than by calling it: a callback, a decorator's target). With `any_site`, True when some call
    site's answer is True (a hazard on one path is a hazard, whatever other callers pass), else None."""
    fn = def_of(b, ctx)
    if fn is None or fn.decorator_list and not decorators.passes_arguments(fn, ctx, callee):
        return None
    key = ("argument", id(b.node), id(ask), any_site)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None
        sites = []
        memo[key] = _argument(fn, b.node.arg, ctx, ask, depth, any_site, sites)
        memo[("argument-site", id(b.node), id(ask))] = sites[-1] if sites and memo[key] is True else None
    return memo[key]


def deciding_site(b, ctx, ask: Callable) -> Optional[tuple[Optional[str], int]]:
    """(path of the caller's file, line) of the call site whose argument made `argument(b, ctx, ask, ...,
    any_site=True)` True, once it has been asked; the path is None for a call in the file itself."""
    return ctx.facts.memo.get(("argument-site", id(b.node), id(ask)))


def def_of(b, ctx) -> Optional[ast.AST]:
    """The def whose parameter `b` is."""
    scope = ctx.frame.scope
    while scope is not None:
        if b in scope.bindings.get(b.name, ()):
            return scope.node if isinstance(scope.node, DEFS) else None
        scope = scope.parent
    return None


def _argument(fn, param: str, ctx, ask, depth, any_site, seen: list):
    """The joined answer of the call sites; `seen` gets (path or None, line) of each site asked."""
    target = _called(fn, ctx)
    sites = ((call, at(ctx, frame, call)) for call, frame in call_sites(target, ctx, escaped=any_site))
    answers = (a for a in (_site_answer(target, fn, param, call, inner, ask, depth, any_site, seen)
                           for call, inner in sites) if a is not ELSEWHERE)
    if target in ctx.facts.tree.body:  # callers in the package's other modules
        answers = itertools.chain(answers, (_foreign_answer(value, call, inner, ask, depth, seen)
                                            for value, call, inner in _foreign_sites(target, fn, param, ctx)))
    return _join(answers, any_site)


def sites(fn: ast.AST, ctx, package: tuple = ()) -> list:
    """(call, position at it) for each call in the file that runs `fn` (call_sites, escaped ones too, whose
    callee is `fn`); with `package` (words), for a method of a class at the top of the module, the calls in
    the package's other modules that name the class and one of those words too (`self.m()` in a subclass,
    `obj.m()` on an instance). Only questions about one method ask the package: for every def, that cost
    more than the rest of the analysis on library code."""
    key = ("sites", id(fn), package)
    memo = ctx.facts.memo
    if key not in memo:
        here = [(call, at(ctx, frame, call)) for call, frame in call_sites(fn, ctx, escaped=True)]
        here += _method_sites_elsewhere(fn, ctx, package) if package else []
        memo[key] = [(c, p) for c, p in here if callee(c, p, p.pos) is fn]
    return memo[key]


def _method_sites_elsewhere(fn: ast.AST, ctx, words: tuple) -> list:
    """(call, position) of the calls of method `fn`'s name in the package's other modules that mention its
    class (a class at the top of the file) and one of `words`: the candidates `sites` keeps when they run
    `fn`."""
    frame = ctx.facts.function_frame(fn) if isinstance(fn, DEFS) else None
    cls = frame.cls if frame is not None else None
    if cls is None or fn not in cls.body or cls not in ctx.facts.tree.body:
        return []
    found = []
    for other in project.mentioning(ctx.facts, cls.name, also=words):
        for call, owner in _uses(other, fn.name, modules=True)[0]:
            where = other.module_frame if owner is None else other.function_frame(owner)
            if where is not None:
                found.append((call, _moved(ctx, other, call, where)))
    return found


def _foreign_answer(value, call, inner, ask, depth, seen: list):
    seen.append((inner.facts.path, call.lineno))
    return UNKNOWN if value is None else ask(value, inner, inner.pos, depth)


def _called(fn, ctx) -> ast.AST:
    """What callers call to run `fn`: the class, for its `__init__`."""
    frame = ctx.facts.function_frame(fn) if fn.name == "__init__" else None
    cls = frame.cls if frame is not None else None
    return cls if cls is not None and fn in cls.body else fn


def _site_answer(target, fn, param: str, call, inner, ask, depth, any_site, seen: list):
    if callee(call, inner, inner.pos) is not target:
        if isinstance(call.func, ast.Attribute) and not (isinstance(call.func.value, ast.Name)
                                                         and call.func.value.id in ("self", "cls")):
            return ELSEWHERE  # `d.update(x)`: a method of an object not known to be of the class
        return None if any_site else UNKNOWN  # the name means something else there
    seen.append((None, call.lineno))
    value = passed(fn, param, call, bound=True if target is not fn else None)
    return UNKNOWN if value is None else ask(value, inner, inner.pos, depth)


def passed(fn, param: str, call: ast.Call, bound: Optional[bool] = None) -> Optional[ast.expr]:
    """The expression `call` passes for `param` of `fn`, if it says plainly. `bound`: the call fills the
    first parameter itself (`self.m(x)`, or a class call running `__init__`); by default, when the call
    is an attribute's (`self.m(x)`), not for `module.f(x)` (pass False)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    for k in call.keywords:
        if k.arg == param:
            return k.value
    positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if bound or bound is None and isinstance(call.func, ast.Attribute):  # self.m(x): x is the second one
        positional = positional[1:]
    if param in positional and positional.index(param) < len(call.args):
        return call.args[positional.index(param)]
    return None


def _foreign_sites(target, fn, param: str, ctx):
    """(value passed for `param`, the call, context at it) for each call of `target` in the package's other
    modules, through the name an import binds (`calc_gaes(...)`, `math_util.calc_gaes(...)`)."""
    for other in project.mentioning(ctx.facts, target.name):  # none for a file with no place on disk
        for call, owner in _uses(other, target.name, modules=True)[0]:
            frame = other.module_frame if owner is None else other.function_frame(owner)
            if frame is None:
                continue
            inner = _moved(ctx, other, call, frame)
            if _imports_target(call, inner, target, ctx.facts):
                yield passed(fn, param, call, bound=target is not fn), call, inner


def _imports_target(call: ast.Call, inner, target, facts) -> bool:
    """`call` in another module calls `target` of the file of `facts`, through an import (which reads the
    text under analysis, not the saved file: project.analysing)."""
    func = call.func
    if isinstance(func, ast.Name):
        name, attr = func.id, None
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        name, attr = func.value.id, func.attr
    else:
        return False
    b = _sole_binding(inner, name, inner.pos)
    if b is None or b.kind != Bind.IMPORT:
        return False
    got = project.imported_binding(inner.facts, b.node, name, attr)
    return got is not None and got[0] is facts and got[1].node is target


def call_sites(fn: ast.AST, ctx, escaped: bool = False) -> list:
    """(call, frame of the caller) for each call of `fn`'s name in the file (`name(...)`, `self.name(...)`)
    but its own; [] when the name is used other than by calling it (unless `escaped`: then the calls the
    file shows), or a caller's frame is unknown."""
    facts = ctx.facts
    key = ("call-sites", id(fn), escaped)
    if key not in facts.memo:
        method = _is_method(fn, facts)
        only_its_def = _word_lines(facts, fn.name) == [fn.lineno]
        calls, used = ([], False) if only_its_def else _uses(facts, fn.name, modules=method)
        if method and fn.name == "__setitem__":
            calls = calls + item_sites.setitem_calls(facts)
        sites = []
        for call, owner in calls if escaped or not used else ():
            frame = facts.module_frame if owner is None else facts.function_frame(owner)
            if frame is None:
                sites = []  # a caller in a class the walk skipped: its arguments are unknown
                break
            if owner is not fn:
                sites.append((call, frame))
        facts.memo[key] = sites
    return facts.memo[key]


def _is_method(fn: ast.AST, facts) -> bool:
    """`fn` is a def of a class body: its callers may call it on any instance (`meter.update(loss)`)."""
    frame = facts.function_frame(fn) if isinstance(fn, DEFS) else None
    return frame is not None and frame.cls is not None and fn in frame.cls.body


def _uses(facts, name: str, modules: bool = False) -> tuple[list, bool]:
    """The calls of `name` (`name(...)`, `self.name(...)`, `cls.name(...)`) with the def each sits in, and
    whether the name is used other than by calling it (passed on, stored, decorated: callers the file
    does not show). With `modules`, `module.name(...)` calls count too. Only the statements whose lines
    mention the name are walked."""
    key = ("name-uses", name, modules)
    if key not in facts.memo:
        calls, used = [], False
        stack = statements_mentioning(facts, name)
        while stack:
            node, owner = stack.pop()
            called = _called_name(node.func, modules) if isinstance(node, ast.Call) else None
            if called is not None:
                if called == name:
                    calls.append((node, owner))
                stack.extend((c, owner) for c in node.args + [k.value for k in node.keywords])
                if isinstance(node.func, ast.Attribute):
                    stack.append((node.func.value, owner))
                continue
            if _called_name(node) == name and not isinstance(getattr(node, "ctx", None), ast.Store):
                used = True
            inner = node if isinstance(node, DEFS) else owner
            stack.extend((c, inner) for c in children(node))
        facts.memo[key] = (calls, used)
    return facts.memo[key]


def statements_mentioning(facts, name: str) -> list:
    """(statement, enclosing def or None) for the module's and classes' statements whose lines hold the
    word `name`, found by bisection; a class's own statements are looked into, a def is taken whole."""
    lines = _word_lines(facts, name)
    found: dict[int, tuple] = {}
    for line in lines:
        body = facts.tree.body
        while body:
            node = _statement_at(facts, body, line)
            if node is None:
                break
            if not isinstance(node, ast.ClassDef) or not node.body or line < node.body[0].lineno:
                found[id(node)] = (node, None)  # a class's header lines: its decorators, bases, keywords
                break
            body = node.body
    return list(found.values())


def _statement_at(facts, body: list, line: int):
    """The statement of `body` (sorted, disjoint) whose lines hold `line`, by bisection."""
    key = ("starts", id(body))
    if key not in facts.memo:
        facts.memo[key] = [min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", ())]) for n in body]
    starts = facts.memo[key]
    k = bisect.bisect_right(starts, line) - 1
    return body[k] if k >= 0 and body[k].end_lineno >= line else None


def _word_lines(facts, name: str) -> list[int]:
    """The sorted lines the word `name` is on (a whole \\w+ word). The first WORD_SEARCHES names asked in a
    file are searched one by one: the pattern starts with the name, so the regex engine jumps from one
    occurrence to the next (a lookbehind placed after the name checks the character before it). A file
    that asks about more names (thousands of defs) gets an index of all its words, built in one pass."""
    memo = facts.memo
    index = memo.get("word-index")
    if index is not None:
        return index.get(name, [])
    key = ("word-lines", name)
    if key not in memo:
        memo["word-searches"] = searches = memo.get("word-searches", 0) + 1
        if searches > WORD_SEARCHES:
            memo["word-index"] = index = _word_index(facts.source)
            return index.get(name, [])
        word = re.escape(name)
        found = lines_of(re.compile(rf"{word}(?<!\w{word})(?!\w)"), facts.source) if WORD.fullmatch(name) else []
        memo[key] = list(dict.fromkeys(line for line, _ in found))
    return memo[key]


def _word_index(source: str) -> dict[str, list[int]]:
    """The sorted lines each word of the source is on."""
    found: dict[str, list[int]] = {}
    for line, word in lines_of(WORD, source):
        seen = found.setdefault(word, [])
        if not seen or seen[-1] != line:
            seen.append(line)
    return found


def _called_name(node: ast.AST, modules: bool = False) -> Optional[str]:
    """`name`, or the attribute of `self.name` / `cls.name` (with `modules`, of any `name.attr` and of
    `self.x.attr`)."""
    if isinstance(node, ast.Name):
        return node.id
    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and (modules or node.value.id in ("self", "cls"))):
        return node.attr
    if modules and isinstance(node, ast.Attribute) and self_attribute(node.value) is not None:
        return node.attr  # self.meter.update(loss)
    return None
