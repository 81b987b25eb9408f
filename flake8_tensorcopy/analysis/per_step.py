"""Methods that run once per step of a caller's training loop, on one object that outlives the loop.

`meter.update(loss)` in `for x, y in loader:` with `meter = Meter()` bound before the loop, or
`stats["loss"] = loss` (a call of `Stats.__setitem__`): what the method keeps on `self` survives from one
step to the next, as an accumulator bound before the loop would. The loop trains the torch way
(analysis/training.py); the object is not rebuilt inside it, and the loop calls no method of the
object that resets the attribute (`meter.reset()` assigning `self.total`, or calling `.clear()` on it).
"""
from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from . import accumulators, api, hierarchy, losses, project, summaries, training
from .facts import Bind, assigned, dotted, end_of, pos_of, self_attribute, walk
from .position import at

LOOPS = (ast.For, ast.AsyncFor, ast.While)
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)  # a sum or product of a kept value keeps its graph
ENTRIES, ITERATED = "entries", "iterated"  # what of an argument a method keeps (Kept.entries)


UP = 2  # defs followed up from a call outside any loop to the training loop that runs it once per step


class Step(NamedTuple):
    call: ast.Call  # the call in the loop: the method's (a store `obj[k] = v` for `__setitem__`), or of the
    # def that makes it, once per pass (`self.train_step(x, y)` running `self.tally.add(loss)`)
    loop: ast.AST  # the caller's training loop it sits in
    where: object  # the Position of `call`, in the loop's frame
    recv: ast.expr  # the object the method runs on, as the loop's frame names it


def method_of(ctx) -> Optional[ast.FunctionDef]:
    """The method of a class that the node under check is in (not a def nested in it), or None."""
    fn, cls = ctx.frame.func, ctx.frame.cls
    return fn if isinstance(fn, summaries.DEFS) and cls is not None and fn in cls.body else None


def per_step_calls(attr: str, ctx) -> list[Step]:
    """The calls of the enclosing method, in the file, that run once per step of a training loop on an
    object bound before that loop, with no call of a method resetting `self.attr` in the loop."""
    fn = method_of(ctx)
    if fn is None:
        return []
    key = ("per-step-calls", id(fn), attr)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = []
        steps = [s for call, inner in summaries.sites(fn, ctx, package=training.WORDS)
                 if (s := step_of(call, inner)) is not None]
        if steps:  # the method's own writes are its own: a loop that calls it resets nothing else
            resetting = _resetting_methods(ctx.frame.cls, ctx.facts).get(attr, frozenset()) - {fn.name}
            steps = [s for s in steps if not _resets_in(s, resetting, attr) and not backpropagated_through(s, attr)]
        memo[key] = steps
    return memo[key]


def _in_loop(call: ast.Call, recv, inner, up: int, runs_step: bool = False) -> Optional[Step]:
    """The training loop that runs `call` once per pass on `recv`, one object for every pass: a loop of the
    def around it, or, when no loop of its own holds it, a loop of a caller of the file that runs the def
    (up to `up` defs up) on the same object: `self.train_step(x, y)` for `self.tally.add(loss)`, or
    `log_to(board, loss)` for `board["loss"] = loss`, with grad enabled at that call; `runs_step`: `call`
    runs a def that trains once per call (a base class's loop running the step a subclass overrides)."""
    root = inner.frame.func if inner.frame.func is not None else inner.facts.tree
    loops = [n for n in inner.facts.enclosing(root, pos_of(call)) if isinstance(n, LOOPS)]
    for loop in loops:
        if not outlives(recv, loop, inner):
            continue
        if not (runs_step or training.torch_training(loop, inner) or training.calls_step(loop, inner)):
            continue
        return Step(call, loop, inner, recv)
    fn = inner.frame.func
    if loops or up == 0 or not isinstance(fn, summaries.DEFS):
        return None
    callers = summaries.sites(fn, inner) + (_base_calls(fn, inner) if recv_self(recv) else [])
    for outer, where in callers:
        lifted = _lifted(recv, fn, outer)
        if lifted is not None and not where.facts.grad_off(where.frame, where.pos):
            found = _in_loop(outer, lifted, where, up - 1, training.is_step(fn, inner))
            if found is not None:
                return found
    return None


def step_of(call: ast.Call, ctx) -> Optional[Step]:
    """The training loop that runs the method call `call` (`meter.update(loss)`) once per pass on one object:
    around it, or up to UP defs up (see `_in_loop`)."""
    recv = call.func.value if isinstance(call.func, ast.Attribute) else None
    return _in_loop(call, recv, ctx, UP) if recv is not None else None


def _base_calls(fn, inner) -> list:
    """(call, position) of each `self.<fn's name>(...)` in a method of a base class of `fn`'s class, in the
    file or a neighbouring module: a base class's loop that runs the step method a subclass overrides."""
    cls = inner.frame.cls
    if cls is None or fn not in cls.body:
        return []
    found = []
    for base, home in hierarchy.ancestors(cls, inner.facts):
        for m in base.body:
            frame = home.function_frame(m) if isinstance(m, summaries.DEFS) else None
            found += [(n, at(inner, frame, n, home)) for n in walk(m) if frame is not None and isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Attribute) and n.func.attr == fn.name
                      and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"]
    return found


def _lifted(recv, fn, outer: ast.Call) -> Optional[ast.expr]:
    """`recv` of def `fn` as the caller names it at `outer`: `self` / `self.x` when the caller runs the method
    on its own `self`, or what it passes for a parameter (a name or `self.x`); None for anything else."""
    if recv_self(recv):
        func = outer.func
        return recv if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "self" else None
    if not isinstance(recv, ast.Name) or recv.id not in {
            a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}:
        return None
    value = summaries.passed(fn, recv.id, outer)
    return value if isinstance(value, ast.Name) or value is not None and recv_self(value) else None


def recv_self(expr) -> bool:
    """`self` or `self.x`."""
    return self_attribute(expr) is not None or isinstance(expr, ast.Name) and expr.id == "self"


class Kept(NamedTuple):
    argument: ast.expr  # what the call passes
    fn: ast.AST  # the method that keeps it (of another module's class, or of the file's for entries)
    attr: str  # the attribute of `self` it accumulates into
    home: object = None  # the facts of the keeper's module
    entries: str = ""  # ENTRIES: it keeps the argument's entries (`self.by_key[k] += terms[k]`, `terms.values()`);
    # ITERATED: what iterating it gives (`for i, v in enumerate(values): self.sums[i] += v`: a list's entries,
    # a dict's keys)
    summed: bool = False  # it adds the value up (`self.total += value`): under no_grad the sum holds no graph,
    # where a store of the value itself (`self.rows.append(value)`) keeps the value's


def kept_by_callee(call: ast.Call, ctx) -> list[Kept]:
    """The arguments of `call`, a call of a method of a class of another module of the package
    (`meter.update(loss)` with `meter = Meter()` imported from meters.py), that the method accumulates on
    `self` (`self.total += value`, `self.rows.append(value)`), or whose entries it accumulates, the class
    in the file too (`self.sums[i] += v` for `v` of `values`, `self.by_key[k] += terms[k]`: what the
    entries are is known only at the call): kept from one call to the next, unless the method itself binds
    the attribute anew or its module backpropagates through it (a policy's saved values)."""
    fn = summaries.callee(call, ctx, pos_of(call))
    if not isinstance(fn, summaries.DEFS):
        return []
    home = project.home(fn) or ctx.facts
    frame = home.function_frame(fn)
    cls = frame.cls if frame is not None else None
    if cls is None or fn not in cls.body:
        return []
    resetting = _resetting_methods(cls, home)
    params = {a.arg for a in fn.args.args[1:] + fn.args.kwonlyargs}
    found = []
    for stmt in walk(fn):
        made = accumulators.accumulation(stmt) if isinstance(stmt, (ast.AugAssign, ast.Assign, ast.Expr)) else None
        attr = made and (self_attribute(made[0], subscripts=True) or accumulators.entry_root_attribute(made[0]))
        if not attr or fn.name in resetting.get(attr, ()) or losses.attribute_backpropagated(attr, home):
            continue
        summed = isinstance(stmt, ast.AugAssign) or isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.BinOp)
        for value in made[1]:
            for param, entries in _kept_parameters(value, stmt, fn, params, frame):
                argument = summaries.passed(fn, param, call, bound=True)
                if argument is not None and (entries or home is not ctx.facts):
                    found.append(Kept(argument, fn, attr, home, entries, summed))
    return found


def _kept_parameters(value, stmt, fn, params: set, frame) -> list[tuple[str, str]]:
    """(parameter, "" / ENTRIES / ITERATED) for what the accumulated `value` of `stmt` is: the parameter itself
    (through graph-keeping ops: `value.cpu()`, or a term of a sum or product of it: `value * n`), an entry
    `param[k]`, or the variable of a loop of `fn` around `stmt` over the parameter (`for v in values`,
    `enumerate(values)`) or its entries (`terms.items()`, `terms.values()`). A parameter counts only where no
    other binding of the method may give it its value (`value = value.item()` on some path)."""
    carried = carried_parameter(value)  # `v`, or `v` through graph-keeping ops: `v.cpu()`, `2 * v`
    if carried in params:
        return [(carried, "")] if _only_the_parameter(frame, carried, stmt) else []
    if isinstance(value, ast.BinOp) and isinstance(value.op, ARITHMETIC):
        return [p for side in (value.left, value.right) for p in _kept_parameters(side, stmt, fn, params, frame)
                if not p[1]]
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id in params:
        return [(value.value.id, ENTRIES)] if _only_the_parameter(frame, value.value.id, stmt) else []
    if not isinstance(value, ast.Name):
        return []
    for loop in walk(fn):
        if isinstance(loop, ast.For) and any(n is stmt for s in loop.body for n in walk(s)):
            param, how = _iterated_parameter(loop, value.id)
            if param in params:
                return [(param, how)]
    return []


def passed_at(value, stmt, step: Step, ctx) -> Optional[ast.expr]:
    """What the step's call passes for the parameter of the enclosing method that the kept `value` of `stmt`
    carries the graph of: `v` itself, or `v` through ops that keep a graph (`v.float()`, `2 * v`, `-v`);
    None when `value` is made otherwise, or the parameter is rebound on some path to `stmt`. A keeper
    shared by several objects is judged at each call (`avg.push(loss)` beside `hits.push(correct)`)."""
    fn = method_of(ctx)
    name = carried_parameter(value)
    params = {a.arg for a in fn.args.args[1:] + fn.args.kwonlyargs} if fn is not None else set()
    if name not in params or not _only_the_parameter(ctx.frame, name, stmt):
        return None
    if summaries.callee(step.call, step.where, pos_of(step.call)) is not fn:
        return None  # the loop calls the def that runs the method (`self.train_step(x, y)`): not its arguments
    return summaries.passed(fn, name, step.call, bound=True)


def carried_parameter(value) -> Optional[str]:
    """The name whose graph `value` carries through graph-keeping ops alone, if it is made from one name."""
    while True:
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            value = value.operand
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ARITHMETIC):
            if isinstance(value.left, ast.Constant):
                value = value.right
            elif isinstance(value.right, ast.Constant):
                value = value.left
            else:
                return None
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.args \
                and not value.keywords and (op := api.method(value.func.attr)) is not None and op.keeps_grad:
            value = value.func.value
        else:
            return None


def _only_the_parameter(frame, name: str, stmt) -> bool:
    return all(b.kind == Bind.ARG for b in frame.scope.reaching(name, pos_of(stmt)))


def _iterated_parameter(loop: ast.For, name: str) -> tuple[Optional[str], str]:
    """The name whose entries `loop` binds `name` to: `for name in xs`, `for i, name in enumerate(xs)`,
    `for k, name in xs.items()`, `for name in xs.values()`."""
    it, target = loop.iter, loop.target
    pair = isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name) \
        and target.elts[1].id == name
    if isinstance(it, ast.Call) and not it.keywords and isinstance(it.func, (ast.Name, ast.Attribute)):
        called = it.func.id if isinstance(it.func, ast.Name) else it.func.attr
        if called == "enumerate" and pair and len(it.args) == 1:
            it, how = it.args[0], ITERATED
        elif isinstance(it.func, ast.Attribute) and not it.args and (
                called == "items" and pair or called == "values" and _is_name(target, name)):
            it, how = it.func.value, ENTRIES
        else:
            return None, ""
    elif _is_name(target, name):
        how = ITERATED
    else:
        return None, ""
    return (it.id, how) if isinstance(it, ast.Name) else (None, "")


def _is_name(expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def resets_on_every_pass(step: Step, kept: Kept) -> bool:
    """The loop binds the attribute anew on every pass, on the object the keeper runs on: by a method of the
    keeper's class (`meter.reset()`), by assigning it (`meter.total = 0.0`) or emptying it."""
    cls = kept.home.function_frame(kept.fn).cls
    resetting = _resetting_methods(cls, kept.home).get(kept.attr, frozenset()) - {kept.fn.name}
    return _resets_in(step, resetting, kept.attr)


def backpropagated_through(step: Step, attr: str) -> bool:
    """The function of the step's loop backpropagates through what the object's attribute holds
    (`torch.stack(win.values[-2:]).mean().backward()` for `win.update(loss)` keeping `self.values`): the kept
    values are loss terms, their graphs needed."""
    root = step.where.frame.func if step.where.frame.func is not None else step.where.facts.tree
    return f"{dotted(step.recv)}.{attr}" in losses.backpropagated_in(step.where.facts, root)


def grad_off_at(step: Step) -> bool:
    """Grad mode is off at the step's call (`with torch.no_grad(): meter.update(loss)`)."""
    return step.where.facts.grad_off(step.where.frame, pos_of(step.call))


def read_after_loop(step: Step, attr: str) -> bool:
    """The caller reads `obj.attr` of the object the method ran on after the loop (`stopper.best` in
    `model.load_state_dict(stopper.best)`), `obj` still bound to the same object there."""
    recv, where = step.recv, step.where
    root = where.frame.func if where.frame.func is not None else where.facts.tree
    after = end_of(step.loop)
    for n in walk(root):
        if (isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.ctx, ast.Load) and pos_of(n) > after
                and ast.dump(n.value) == ast.dump(recv)):
            if not isinstance(recv, ast.Name) or _same_object(recv.id, step, pos_of(n)):
                return True
    return False


def _same_object(name: str, step: Step, pos) -> bool:
    scope = step.where.frame.scope
    return scope.origin(name, pos) is scope.origin(name, pos_of(step.call))


def outlives(recv, loop, inner) -> bool:
    """The receiver is the same object in every iteration: `self`, `self.x`, a name bound before the loop
    and not inside it, or an attribute of one (`tracker.meter`) that the loop neither assigns nor calls a
    method of its owner that could (`tracker.reset()`)."""
    if recv_self(recv):
        return True
    if isinstance(recv, ast.Attribute):
        owner = dotted(recv.value)
        return owner is not None and outlives(recv.value, loop, inner) and not any(
            isinstance(n, ast.Attribute) and dotted(n) == dotted(recv) and isinstance(n.ctx, ast.Store)
            or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and dotted(n.func.value) == owner
            and _may_rebind(n, recv.attr, inner) for n in walk(loop))
    if not isinstance(recv, ast.Name):
        return False
    origin = inner.frame.scope.origin(recv.id, pos_of(loop))
    rebound = any(isinstance(t, ast.Name) and t.id == recv.id
                  for n in walk(loop) if isinstance(n, (ast.Assign, ast.AnnAssign)) for t, _ in assigned(n))
    return origin is not None and not rebound


def _may_rebind(call: ast.Call, attr: str, inner) -> bool:
    """`tracker.tick()` may bind `tracker.attr` anew: the method it runs assigns `self.attr`, or which method
    it runs is unknown."""
    cls = summaries.receiver_class(call.func.value, inner, pos_of(call))
    method = summaries.class_method(cls, call.func.attr, inner) if cls is not None else None
    if method is None:
        return True
    return any(isinstance(t, ast.Attribute) and self_attribute(t) == attr
               for n in walk(method) if isinstance(n, (ast.Assign, ast.AnnAssign)) for t, _ in assigned(n))


def _resetting_methods(cls: ast.ClassDef, facts) -> dict[str, frozenset]:
    """attr -> the methods of `cls` that assign `self.attr` or call `self.attr.clear()` (`__init__` too),
    found in one walk of the class."""
    key = ("resetting-methods", id(cls))
    if key not in facts.memo:
        found: dict[str, set] = {}
        for fn in cls.body:
            for n in walk(fn) if isinstance(fn, summaries.DEFS) else ():
                if isinstance(n, (ast.Assign, ast.AnnAssign)):
                    for t, _ in assigned(n):
                        if self_attribute(t) is not None:
                            found.setdefault(self_attribute(t), set()).add(fn.name)
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "clear"
                      and self_attribute(n.func.value) is not None):
                    found.setdefault(self_attribute(n.func.value), set()).add(fn.name)
        facts.memo[key] = {k: frozenset(v) for k, v in found.items()}
    return facts.memo[key]


def _resets_in(step: Step, resetting: frozenset, attr: str) -> bool:
    """The loop resets the receiver's attribute on every pass: calls a resetting method on the receiver
    (`meter.reset()`), assigns the attribute (`meter.total = 0.0`) or empties it (`meter.rows.clear()`). A
    reset that some pass skips (`if i % 100 == 0: meter.reset()`) leaves what the other passes kept."""
    text = ast.dump(step.recv)
    resets = [pos_of(n) for n in walk(step.loop) if _resets(n, text, resetting, attr)]
    return bool(resets) and accumulators.every_pass(step.where.frame.scope, pos_of(step.call), step.loop, resets)


def _resets(node, recv: str, resetting: frozenset, attr: str) -> bool:
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return node.attr == attr and ast.dump(node.value) == recv
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    func = node.func
    if func.attr in resetting and ast.dump(func.value) == recv:
        return True
    return func.attr == "clear" and isinstance(func.value, ast.Attribute) and func.value.attr == attr \
        and ast.dump(func.value.value) == recv
