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

from . import accumulators, losses, project, summaries, training
from .facts import assigned, end_of, pos_of, self_attribute, walk

LOOPS = (ast.For, ast.AsyncFor, ast.While)


class Step(NamedTuple):
    call: ast.Call  # the call of the method (a store `obj[k] = v` for `__setitem__`)
    loop: ast.AST  # the caller's training loop it sits in
    where: object  # the Position of the call, in the caller's frame


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
        steps = [s for call, inner in summaries.sites(fn, ctx) if (s := _step(call, inner)) is not None]
        if steps:  # the method's own writes are its own: a loop that calls it resets nothing else
            resetting = _resetting_methods(ctx.frame.cls, ctx.facts).get(attr, frozenset()) - {fn.name}
            steps = [s for s in steps if not _resets_in(s, resetting)]
        memo[key] = steps
    return memo[key]


def _step(call: ast.Call, inner) -> Optional[Step]:
    recv = call.func.value if isinstance(call.func, ast.Attribute) else None
    if recv is None:
        return None
    root = inner.frame.func if inner.frame.func is not None else inner.facts.tree
    for loop in inner.facts.enclosing(root, pos_of(call)):
        if not isinstance(loop, LOOPS) or not outlives(recv, loop, inner):
            continue
        if not (training.torch_training(loop, inner) or training.calls_step(loop, inner)):
            continue
        return Step(call, loop, inner)
    return None


class Kept(NamedTuple):
    argument: ast.expr  # what the call passes
    fn: ast.AST  # the method of another module that keeps it
    attr: str  # the attribute of `self` it accumulates into


def kept_by_callee(call: ast.Call, ctx) -> list[Kept]:
    """The arguments of `call`, a call of a method of a class of another module of the package
    (`meter.update(loss)` with `meter = Meter()` imported from meters.py), that the method accumulates on
    `self` (`self.total += value`, `self.rows.append(value)`): kept from one call to the next, unless the
    method itself binds the attribute anew or its module backpropagates through it (a policy's saved values)."""
    fn = summaries.callee(call, ctx, pos_of(call))
    home = project.home(fn) if isinstance(fn, summaries.DEFS) else None
    frame = home.function_frame(fn) if home is not None else None
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
        for value in made[1]:
            argument = summaries.passed(fn, value.id, call, bound=True) \
                if isinstance(value, ast.Name) and value.id in params else None
            if argument is not None:
                found.append(Kept(argument, fn, attr))
    return found


def resets_on_every_pass(call: ast.Call, loop, kept: Kept, ctx) -> bool:
    """The loop calls, on the receiver of `call`, a method of the keeper's class that binds the attribute
    anew (`meter.reset()`) on every pass."""
    cls = project.home(kept.fn).function_frame(kept.fn).cls
    resetting = _resetting_methods(cls, project.home(kept.fn)).get(kept.attr, frozenset()) - {kept.fn.name}
    return _resets_in(Step(call, loop, ctx), resetting)


def read_after_loop(step: Step, attr: str) -> bool:
    """The caller reads `obj.attr` of the object the method ran on after the loop (`stopper.best` in
    `model.load_state_dict(stopper.best)`), `obj` still bound to the same object there."""
    recv, where = step.call.func.value, step.where
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
    """The receiver is the same object in every iteration: `self`, `self.x`, or a name bound before the loop
    and not inside it."""
    if self_attribute(recv) is not None or isinstance(recv, ast.Name) and recv.id == "self":
        return True
    if not isinstance(recv, ast.Name):
        return False
    origin = inner.frame.scope.origin(recv.id, pos_of(loop))
    rebound = any(isinstance(t, ast.Name) and t.id == recv.id
                  for n in walk(loop) if isinstance(n, (ast.Assign, ast.AnnAssign)) for t, _ in assigned(n))
    return origin is not None and not rebound


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


def _resets_in(step: Step, resetting: frozenset) -> bool:
    """The loop calls a resetting method on the receiver (`meter.reset()`) on every pass: a reset that some
    pass skips (`if i % 100 == 0: meter.reset()`) leaves what the other passes kept."""
    text = ast.dump(step.call.func.value)
    resets = [pos_of(n) for n in walk(step.loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr in resetting and ast.dump(n.func.value) == text]
    return bool(resets) and accumulators.every_pass(step.where.frame.scope, pos_of(step.call), step.loop, resets)
