"""Accumulators across the steps of a loop: `total += v`, `stats[k] = stats[k] + v`, `history.append(v)`;
the training loop whose iterations one outlives (not reset inside it), whether it starts as a number,
and whether code uses it as a tensor.
"""
from __future__ import annotations

import ast

from . import frameworks, project, summaries, training
from .facts import DEFS, dotted, end_of, entry_added, pos_of, self_attribute, walk


def accumulation(node):
    """(accumulator, [value]) of `total += v`, `stats[k] = stats[k] + v` (or `stats.get(k, 0) + v`),
    `history.append(v)` / `.insert(i, v)`; None for anything else."""
    if isinstance(node, ast.AugAssign):
        return (node.target, [node.value]) if isinstance(node.op, ast.Add) else None
    if isinstance(node, ast.Assign):
        return entry_accumulation(node)
    added = entry_added(node.value)
    return None if added is None else (added[0], [added[1]])


def entry_accumulation(node: ast.Assign):
    """`total = total + v`, `total = v + total`, `total = total + w * v + u`, `self.total = self.total + v`,
    `avg = 0.9 * avg + 0.1 * v` (the same as `total += ...`), `stats[k] = stats[k] + v` or
    `stats[k] = stats.get(k, 0) + v`: a sum that holds the target once (read first, as ENTRY_ADD finds
    it); the values are its other terms."""
    (target,) = node.targets if len(node.targets) == 1 else (None,)
    value = node.value
    if not (isinstance(target, (ast.Subscript, ast.Name, ast.Attribute)) and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)):
        return None
    terms = sum_terms(value)
    own = [t for t in terms if _reads_itself(t, target)]
    return (target, [t for t in terms if t is not own[0]]) if len(own) == 1 else None


def sum_terms(expr) -> list:
    """The terms of a sum, left to right: `a`, `w * b`, `c` of `a + w * b + c`."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return sum_terms(expr.left) + sum_terms(expr.right)
    return [expr]


def _reads_itself(term, target) -> bool:
    """`term` is the target's own value: the same name, attribute or entry, `stats.get(k, ...)` of it, or
    one of those scaled by a number (`0.9 * avg` of a running average)."""
    if isinstance(term, ast.BinOp) and isinstance(term.op, (ast.Mult, ast.Div)):
        scaled = term.left if isinstance(term.right, ast.Constant) else term.right if isinstance(
            term.left, ast.Constant) and isinstance(term.op, ast.Mult) else None
        return scaled is not None and _reads_itself(scaled, target)
    return shape(term) == shape(target) or isinstance(target, ast.Subscript) and (
        isinstance(term, ast.Call) and isinstance(term.func, ast.Attribute) and term.func.attr == "get"
        and bool(term.args) and shape(term.func.value) == shape(target.value)
        and shape(term.args[0]) == shape(target.slice))


def per_step_entry(node, ctx):
    """(entry, [value]) of `log[step] = v` (`log[step + 1]`, `log[epoch, step]`, `log[f"step{step}"]`) in a
    loop that binds `step` (`for step, (x, y) in enumerate(loader)`), into a Python container (`log = {}`
    or `[]`, or `self.log` that the class only ever binds to one): a new entry every step, as an append;
    None for anything else."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and ctx.frame.loops):
        return None
    target = node.targets[0]
    keys = loop_keys(ctx.frame.loops[-1], ctx)
    if not (isinstance(target, ast.Subscript) and per_step_key(target.slice, keys)):
        return None
    return (target, [node.value]) if _python_container(target.value, ctx) else None


def _python_container(expr, ctx) -> bool:
    """`log` bound here to a dict or list display or call, or `self.log` that every assignment in the class
    binds to one."""
    if isinstance(expr, ast.Name):
        origin = ctx.frame.scope.origin(expr.id, ctx.pos)
        made = [origin.value] if origin is not None else []
    elif self_attribute(expr) is not None and ctx.frame.cls is not None:
        made = summaries.self_assignments(ctx.frame.cls, ctx).get(self_attribute(expr), [])
    else:
        return False
    return bool(made) and all(isinstance(m, (ast.Dict, ast.List)) or (
        isinstance(m, ast.Call) and (ctx.facts.qualname(m.func) or dotted(m.func)) in CONTAINERS) for m in made)


CONTAINERS = frozenset({"dict", "list", "collections.OrderedDict", "collections.defaultdict"})


def per_step_key(index, keys: frozenset) -> bool:
    """An index that differs at every step of a loop binding `keys`: a key itself, or a key plus or minus a
    constant, in a tuple, an f-string or `str()` (not `step % n`, which comes round again)."""
    if isinstance(index, ast.Name):
        return index.id in keys
    if isinstance(index, ast.BinOp) and isinstance(index.op, (ast.Add, ast.Sub)):
        sides = (index.left, index.right)
        return any(isinstance(s, ast.Constant) for s in sides) and any(per_step_key(s, keys) for s in sides)
    if isinstance(index, ast.Tuple):
        return any(per_step_key(e, keys) for e in index.elts)
    if isinstance(index, ast.JoinedStr):
        return any(isinstance(v, ast.FormattedValue) and per_step_key(v.value, keys) for v in index.values)
    return (isinstance(index, ast.Call) and isinstance(index.func, ast.Name) and index.func.id == "str"
            and len(index.args) == 1 and per_step_key(index.args[0], keys))


def loop_keys(loop, ctx) -> frozenset:
    """The names that take a new value at every pass of the loop: those a `for` loop's target binds (its own,
    not an inner loop's), and counters its body steps on every pass (`step += 1` among the body's own
    statements, those of a `with` block in it and those of a `try` body, not under an `if`; in a `while`
    loop too). Made once per loop."""
    return training.per_loop(ctx, loop, "loop-keys", _loop_keys)


def _loop_keys(loop, ctx) -> frozenset:
    bound = frozenset(n.id for n in walk(loop.target) if isinstance(n, ast.Name)) \
        if isinstance(loop, (ast.For, ast.AsyncFor)) else frozenset()
    body = loop.body if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) else []
    counters = {s.target.id for s in _every_pass(body) if isinstance(s, ast.AugAssign) and isinstance(s.op, ast.Add)
                and isinstance(s.target, ast.Name) and isinstance(s.value, ast.Constant)
                and type(s.value.value) is int and s.value.value != 0}
    return bound | counters


def _every_pass(body: list):
    """The statements of `body` that run whenever it completes: its own, and those of the `with` blocks and
    `try` bodies (and `finally` blocks) in it."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from _every_pass(stmt.body)
        elif isinstance(stmt, ast.Try):
            yield from _every_pass(stmt.body + stmt.finalbody)


def root_key(acc):
    """'total', 'stats' for stats[k], 'self.history' for self.history[k] and for
    `self.history.setdefault(k, [])` (the entry it returns stays in the dict); None for other calls."""
    while isinstance(acc, ast.Subscript) or _setdefault(acc):
        acc = acc.value if isinstance(acc, ast.Subscript) else acc.func.value
    return dotted(acc)


def entry_root_attribute(acc):
    """`attr` of `self.attr.setdefault(k, [])` (an entry of an attribute), else None."""
    while _setdefault(acc) or isinstance(acc, ast.Subscript):
        acc = acc.value if isinstance(acc, ast.Subscript) else acc.func.value
    return self_attribute(acc)


def _setdefault(expr) -> bool:
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "setdefault"
            and len(expr.args) == 2 and not expr.keywords)


def outlived_training_loop(key: str, acc, ctx):
    """The innermost training loop whose iterations the accumulator outlives, or None. A loop that
    backpropagates but steps no optimizer, inside a loop that does, accumulates gradients over the
    micro-batches of one step: an accumulator bound anew (or reset) in each pass of the stepping loop keeps
    the graphs of one optimizer step only, however many steps run."""
    scope = ctx.frame.scope
    origin = scope.origin(key, ctx.pos) if "." not in key else None
    loops = ctx.frame.loops
    for i in range(len(loops) - 1, -1, -1):
        loop = loops[i]
        if reset_inside(key, acc, loop, ctx):
            return None
        if origin is not None and origin.pos >= pos_of(loop):
            continue  # bound inside this loop: it may still outlive an inner one only
        if training.over_models(loop, ctx):
            continue  # one pass per model: the steps are the passes of a loop around it
        if ((id(loop) in ctx.facts.training_loops and training.torch_training(loop, ctx))
                or training.calls_step(loop, ctx)):
            return None if _one_optimizer_step(key, acc, loop, loops[:i], ctx) else loop
    return None


def _one_optimizer_step(key: str, acc, loop, outer: list, ctx) -> bool:
    """`loop` steps no optimizer and the innermost loop around it that does binds the accumulator anew, or
    resets it, on every pass (gradient accumulation: `for step in ...: total = 0; for micro in ...: ...`)."""
    if training.steps_optimizer(loop, ctx) or training.calls_step(loop, ctx):
        return False
    stepping = next((o for o in reversed(outer) if training.steps_optimizer(o, ctx)), None)
    if stepping is None:
        return False
    return reset_inside(key, acc, stepping, ctx)


def reset_inside(key: str, acc, loop, ctx) -> bool:
    """A plain assignment to the accumulator, `acc.clear()` or `del acc[:]` in the loop, or a call of a def of
    the file that empties the same object (`self.finish_episode()` emptying `self.saved`, `update()` emptying
    the global `policy.saved` it does not bind itself), run on every pass: a reset that some path around the
    loop skips (`if step % 100 == 0: losses.clear()`) leaves the graphs of the other passes kept."""
    keys, shapes = training.per_loop(ctx, loop, "assigned", _assigned)
    by_callee = training.per_loop(ctx, loop, "reset-by-callee", _reset_by_callees) if "." in key else {}
    resets = keys.get(key, []) + shapes.get(shape(acc), []) + by_callee.get(key, [])
    if not resets:
        return False
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
        return True  # a method called once per step: its resets run on its own calls
    return every_pass(ctx.frame.scope, ctx.pos, loop, resets) or any(_at_each_step(loop, p, ctx) for p in resets)


def _at_each_step(loop, pos, ctx) -> bool:
    """The reset at `pos` runs whenever the optimizer steps: in the branch of an `if` that steps it
    (`if n % k == 0: opt.step(); running = 0`), or that runs on the passes where it steps (`if
    accelerator.sync_gradients:`). Gradient accumulation in one loop: the graphs of one step at most."""
    for node in ctx.facts.enclosing(loop, pos):
        if node is loop or isinstance(node, (ast.For, ast.AsyncFor, ast.While) + DEFS):
            break
        if not isinstance(node, ast.If):
            continue
        in_body = bool(node.body) and pos_of(node.body[0]) <= pos <= end_of(node.body[-1])
        if in_body and frameworks.tests_step_flag(node.test) or training.steps(node.body if in_body else node.orelse):
            return True
    return False


def every_pass(scope, pos, loop, resets: list) -> bool:
    """Some reset at `resets` runs between the statement at `pos` and its next run in a later pass of `loop`,
    on every path (a reset in no statement of the scope's graph counts)."""
    again = scope.passes_again(pos, loop, resets) if resets else True
    return not resets or again is None or not again


def _reset_by_callees(loop, ctx) -> dict:
    """Dotted accumulators emptied by the defs of this file that the loop calls (one call deep): key -> the
    positions of those calls."""
    found: dict = {}
    for call in walk(loop):
        if not isinstance(call, ast.Call):
            continue
        fn = summaries.callee(call, ctx, pos_of(call))
        if not isinstance(fn, summaries.DEFS) or project.home(fn) is not None:
            continue
        through_self = isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.value.id == "self"
        local = _bound_names(fn)
        for key in _assigned(fn, ctx)[0]:
            root = (key or "").split(".")[0]
            if "." in (key or "") and (root == "self" if through_self else root != "self" and root not in local):
                found.setdefault(key, []).append(pos_of(call))
    return found


def _bound_names(fn) -> set:
    """Names a def binds itself (its parameters and assignment targets): not the caller's objects."""
    bound = {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    return bound | {n.id for n in walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}


def _assigned(loop, ctx):
    """(dotted name -> positions, shape -> positions) of every plain assignment target in the loop, and of
    every `x.clear()` and `del x[:]`."""
    keys: dict = {}
    shapes: dict = {}

    def add(expr, at) -> None:
        keys.setdefault(dotted(expr), []).append(at)
        shapes.setdefault(shape(expr), []).append(at)

    for stmt in walk(loop):
        if isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) and stmt.func.attr == "clear":
            add(stmt.func.value, pos_of(stmt))
        if isinstance(stmt, ast.Delete):
            for t in stmt.targets:
                if isinstance(t, ast.Subscript) and _whole(t.slice):
                    add(t.value, pos_of(stmt))
        if isinstance(stmt, ast.Assign) and entry_accumulation(stmt) is not None:
            continue  # `stats[k] = stats[k] + v` adds, it does not reset
        if isinstance(stmt, ast.Assign) and _keyed_by_loop(stmt, loop, ctx):
            continue  # `log[step] = v` adds an entry per step
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, ast.AnnAssign) else []
        for t in targets:
            for elt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                add(elt, pos_of(stmt))
    return keys, shapes


def _whole(index) -> bool:
    """`[:]`: a slice with no bounds and no step."""
    return isinstance(index, ast.Slice) and index.lower is None and index.upper is None and index.step is None


def _keyed_by_loop(stmt: ast.Assign, loop, ctx) -> bool:
    keys = loop_keys(loop, ctx)
    return all(isinstance(t, ast.Subscript) and per_step_key(t.slice, keys) for t in stmt.targets)


def shape(expr) -> str:
    """The expression's structure without positions or load/store context: `stats[k]` either side."""
    return ast.dump(expr, annotate_fields=False).replace("Store()", "Load()")
