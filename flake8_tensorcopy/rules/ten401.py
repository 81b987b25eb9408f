"""A graph-attached loss accumulated across a training loop.

## What it does
Flags `total += loss`, `stats[k] += loss`, `stats[k] = stats.get(k, 0) + loss`, `losses.append(loss)` and
`history.append({"loss": loss})` inside a training loop (a loop that calls `loss.backward()`,
`accelerator.backward(loss)`, `torch.autograd.grad(...)` or `optimizer.step()`, or a one-batch step def
of the file that does, such as `self.train_one_batch(x, y)`) when `loss` is attached to the
autograd graph (a loss, a model output, anything computed from them), the accumulator was bound
before the loop and is not reset inside it, the code is not under
`torch.no_grad()`, and the accumulator is never backpropagated (directly, or through `sum(...)` /
`torch.stack(...)` or a name built from it).

Loss terms kept in a dict count as attached: an entry (`out["loss"]`, `out[self.metric]`, `parts[k]`, or
`v` of `for k, v in parts.items()`) of a dict one of whose entries is backpropagated
(`out["loss"].backward()`), or whose entries' sum is (`sum(parts.values()).backward()`), also when the
dict comes from a def of the file or is unpacked beside the backpropagated loss from a call whose
returns build that loss as the sum of its entries (`loss, parts = self.loss_fn(out, y)` with
`return sum(parts.values()), parts` in the loss class's `__call__`, here or in a neighbouring module).
A dict entry with a fixed key is its own loss key: `out["mean"] = torch.stack(losses).mean()` does not
make `losses` part of the backpropagated `out["loss"]`.

In a LightningModule (a class deriving from `pl.LightningModule`, or from a class of the file or of a
neighbouring module that does) the trainer is the loop: it calls `training_step` once per batch and, under
automatic optimization, backpropagates the loss it returns. `self.outputs.append(v)` there is flagged when
`self.outputs` is a list of the class (set only to lists or None) that the step neither empties
(`self.outputs = []`, `.clear()`) nor backpropagates, and `v` is attached: by the file's evidence, or
because the step returns it as the loss (`return v`, `return {"loss": v}`, `return v["loss"]`: `v` is the
loss or a dict holding it). `validation_step` and `test_step` run under `no_grad` and are not flagged.

## Why is this bad?
Every accumulated tensor keeps its step's autograd graph reachable: with no backward through it the
saved activations of every step stay alive, and after a per-step `backward()` the chain of graph nodes
still grows with every step. Memory grows with the number of steps until the accumulator is dropped
(the PyTorch FAQ's "Don't accumulate history across your training loop").

Not flagged: `loss.item()`, `float(loss)` and helpers whose returns are numbers; `loss.detach()`;
dicts of numbers (`{k: v.item() for k, v in parts.items()}`); accumulators reset inside the loop
(`totals = defaultdict(float)` in its body); accumulators that are backpropagated
(`total_loss.backward()`, `torch.stack(losses).sum().backward()`) or returned from a loop that does not
itself call `backward()` (a loss built over several pieces); code under `torch.no_grad()`. A backward
through one element (`losses.append(loss)` then `losses[-1].backward()`) leaves every other element's
graph alive: that is reported, and the element is known to be attached because it is backpropagated.
`history.append(loss.clone())` is TEN203's finding (a kept clone), not this rule's.

## Example
```python
total, history = 0.0, []
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += loss            # total keeps every step's graph
    history.append(loss)     # so does every list entry
```

## Use instead
```python
total, history = 0.0, []
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total += loss.item()            # a number
    history.append(loss.detach())   # a tensor without the graph
```

## Fix safety
Unsafe: the fix appends `.item()` to the accumulated value when the accumulator starts as a number
(`0.0`, a dict of number literals, `defaultdict(float)`) and no code of the function uses it as a tensor
(`epoch_loss.item()` later), and `.detach()` otherwise (lists, other dicts, tensor accumulators).
`.item()` raises on a tensor with more than one element, and either form stops gradients through the
accumulator, which code that does backpropagate through it in a way this rule cannot see would depend on.
No fix when the loop backpropagates an element of the list (`losses[-1].backward()`): detaching what is
appended would break that backward.
No fix when `training_step` keeps a value the file does not show to be a tensor: the loss it returns may be
a dict holding it (`self.outputs.append(log)`), whose copy with detached tensors is written by hand.

## Known problems
The training loop, attachment and reset are judged inside one function, except in a LightningModule's
`training_step`: a step method that another trainer calls (`self.outputs.append(loss)` in a hand-written
trainer's `train_step`) is not seen, nor a LightningModule whose base is known only by a name the file does
not import (`from pytorch_lightning import *`), nor a list the step appends to under manual optimization
(`self.automatic_optimization = False`) unless the file shows the value attached. Any reset
inside the loop, also a periodic one (`if i % 100 == 0: running = 0`), silences the rule, although the
graphs of up to that many steps are still kept. A loss is only known to be attached from the file's
evidence: `loss, acc = step(batch)` or `loss = obj.neglog_likelihood(x)` without a `.backward()` on
`loss` is not, a dict of loss terms returned by a loss object the class receives as a parameter is not
(its `__call__` is unknown), and a helper `compute_loss(...)` is trusted to return a number only when its
definition in the same file shows it. A dict key formatted with text of its own (`out[f"mean_{m}"]`) is
taken to differ from a key held by a name (`out[self.metric]`): a list stored under the first is not
taken for part of a loss backpropagated through the second. An entry that adds to itself is found with the
entry read first (`stats[k] = stats[k] + loss`), not last (`stats[k] = loss + stats[k]`).

## References
- PyTorch FAQ, "My model reports cuda runtime error(2): out of memory": "Don't accumulate history
  across your training loop"
- torch.Tensor.item: "Returns the value of this tensor as a standard Python number."
"""
from __future__ import annotations

import ast

from ..analysis import api, builtins_api, evidence, lightning, names, project, summaries
from ..analysis.facts import Bind, dotted, pos_of, self_attribute, walk
from ..analysis.losses import (GRAD_CALLS, backpropagated_elements, fixed_entry, keys_in, loss_dict, loss_keys,
                               summed_dicts)
from .model import FixSafety, Trigger
from .edits import as_receiver, tensor_fix
from .ten203 import _kept_clones

CODE = "TEN401"
NAME = "loss-accumulated-with-graph"
MESSAGE = ("'{value}' is accumulated into '{acc}' with its autograd graph: every step's graph stays "
           "alive across the {loop}; accumulate {use}")
FIX = FixSafety.UNSAFE
ENTRY_ADD = r"\[(?<=\w\[)[^\[\]\n]*\][ \t]*=[ \t]*[\w.]+(?:\[|\.get\()"  # stats[k] = stats[k] + v (or .get)
HOT = (r"\+=", r"\.append\(", r"\.insert\(", r"\.appendleft\(", ENTRY_ADD)  # where findings are
# a training step (a backward, an optimizer step, or a LightningModule's training_step) and an accumulation
TRIGGER = Trigger(r"\.backward\(", r"\.step\(", r"def training_step\(", *HOT, groups=(3, len(HOT)))
WHOLE_FILE = True  # backward() calls and helper defs anywhere in the file decide
NODES = (ast.AugAssign, ast.Assign, ast.Expr)
CLAIM = ("A graph-attached loss accumulated across a loop keeps every step's graph reachable: without "
         "a backward through it, each step's saved activations stay alive (weak references to them "
         "survive), and after a per-step backward the accumulator's chain of graph nodes grows with every "
         "step; accumulating loss.item() or loss.detach() keeps neither.")
APPENDERS = {"append": 0, "appendleft": 0, "insert": 1}


def check(node, ctx):
    step = lightning.training_step(ctx)
    if ctx.grad_disabled or not (ctx.frame.loops or step):
        return
    found = _accumulation(node)
    if found is None:
        return
    acc, values = found
    key = _root_key(acc)
    if key is None or not values:
        return
    if step is not None and isinstance(node, ast.Expr) and self_attribute(acc) is not None:
        yield from _kept_across_steps(node, acc, values[0], step, ctx)
        return
    if not ctx.frame.loops:
        return
    loop = _outlived_training_loop(key, acc, ctx)
    if loop is None or _flows_into_loss(key, loop, ctx):
        return
    backpropagated = key in backpropagated_elements(ctx) and isinstance(node, ast.Expr)
    attached = [v for v in _elements(values[0]) if backpropagated or _carries_graph(v, ctx)]
    if not attached:
        return
    numeric = not isinstance(node, ast.Expr) and _starts_numeric(key, acc, ctx) and not _used_as_tensor(key, ctx)
    suffix = ".item()" if numeric else ".detach()"
    shown = ctx.text(attached[0])
    use = f"{as_receiver(shown, attached[0])}{suffix}" + (" (a number)" if numeric else " (no graph)")
    fix = tensor_fix(ctx, attached, [ctx.edit(v, as_receiver(ctx.text(v), v) + suffix) for v in attached], FIX)
    if backpropagated:  # `losses[-1].backward()` needs the graph the fix would drop: call it on the loss itself
        fix, use = None, f"{use} and call backward() on the loss itself, not on {ctx.text(acc)}[-1]"
    yield ctx.finding(node, fix, value=shown, acc=ctx.text(acc), use=use, loop="loop")


def _kept_across_steps(node, acc, value, step, ctx):
    """`self.outputs.append(v)` in a LightningModule's `training_step`, with `self.outputs` a list of the
    class that the step does not empty and no method backpropagates, and `v` attached: by the file's
    evidence, or as the loss the step returns for the trainer to backpropagate (`return v`,
    `return {"loss": v}`) or a dict holding it (`return log` with `log = {"loss": loss, ...}`)."""
    key = dotted(acc)
    classes = lightning.lineage(ctx.frame.cls, ctx.facts)
    if (not classes or not lightning.list_attribute(classes, acc.attr) or _reset_inside(key, acc, step, ctx)
            or key in lightning.backpropagated(classes)):
        return
    returned = lightning.automatic(classes)
    attached = [v for v in _elements(value) if _carries_graph(v, ctx) or returned and _returned_loss(v, step, ctx)]
    if not attached:
        return
    tensors = all(ctx.kind(v) in evidence.TENSORISH or _carries_graph(v, ctx) and ctx.kind(v) != evidence.CONTAINER
                  for v in attached)
    shown = ctx.text(attached[0])
    if tensors:
        fix = tensor_fix(ctx, attached, [ctx.edit(v, as_receiver(ctx.text(v), v) + ".detach()") for v in attached], FIX)
        use = f"{as_receiver(shown, attached[0])}.detach() (no graph)"
    else:  # a dict holding the loss: which of its entries are tensors is not known here
        fix, use = None, f"a copy of '{shown}' with its tensors detached (no graph)"
    yield ctx.finding(node, fix, value=shown, acc=key, use=use, loop="trainer's steps")


def _returned_loss(value, step, ctx) -> bool:
    """`value` is a name the step returns with the binding it has here: `return value` (the loss, or a dict
    holding it), `return value["loss"]` (a dict holding it) or `return {"loss": value, ...}`."""
    if not isinstance(value, ast.Name):
        return False
    scope = ctx.frame.scope
    here = [id(b) for b in scope.reaching(value.id, ctx.pos)]
    for r in summaries.returns(step):
        got = r.value
        if isinstance(got, ast.Dict):
            got = next((v for k, v in zip(got.keys, got.values) if _is_loss_key(k)), None)
        elif isinstance(got, ast.Subscript) and _is_loss_key(got.slice):
            got = got.value
        if (isinstance(got, ast.Name) and got.id == value.id and here
                and [id(b) for b in scope.reaching(value.id, pos_of(r))] == here):
            return True
    return False


def _is_loss_key(key) -> bool:
    return isinstance(key, ast.Constant) and key.value == "loss"


def _accumulation(node):
    """(accumulator, [value]) of `total += v`, `stats[k] = stats[k] + v` (or `stats.get(k, 0) + v`),
    `history.append(v)` / `.insert(i, v)`; None for anything else."""
    if isinstance(node, ast.AugAssign):
        return (node.target, [node.value]) if isinstance(node.op, ast.Add) else None
    if isinstance(node, ast.Assign):
        return _entry_accumulation(node)
    call = node.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in APPENDERS and not call.keywords):
        return None
    return call.func.value, call.args[APPENDERS[call.func.attr]:][:1]


def _entry_accumulation(node: ast.Assign):
    """`stats[k] = stats[k] + v` or `stats[k] = stats.get(k, 0) + v`: an entry that adds to itself (read
    first, as ENTRY_ADD finds it)."""
    (target,) = node.targets if len(node.targets) == 1 else (None,)
    value = node.value
    if not (isinstance(target, ast.Subscript) and isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
        return None
    own = value.left
    if _shape(own) == _shape(target) or (
            isinstance(own, ast.Call) and isinstance(own.func, ast.Attribute) and own.func.attr == "get"
            and own.args and _shape(own.func.value) == _shape(target.value)
            and _shape(own.args[0]) == _shape(target.slice)):
        return target, [value.right]
    return None


def _root_key(acc):
    """'total', 'stats' for stats[k], 'self.history' for self.history[k]; None for calls."""
    while isinstance(acc, ast.Subscript):
        acc = acc.value
    return dotted(acc)


def _outlived_training_loop(key: str, acc, ctx):
    """The innermost training loop whose iterations the accumulator outlives, or None."""
    scope = ctx.frame.scope
    origin = scope.origin(key, ctx.pos) if "." not in key else None
    for loop in reversed(ctx.frame.loops):
        if _reset_inside(key, acc, loop, ctx):
            return None
        if origin is not None and origin.pos >= pos_of(loop):
            continue  # bound inside this loop: it may still outlive an inner one only
        if (id(loop) in ctx.facts.training_loops and _torch_training(loop, ctx)) or _calls_step(loop, ctx):
            return loop
    return None


def _torch_training(loop, ctx) -> bool:
    return _per_loop(ctx, loop, "torch-training", _trains)


def _calls_step(loop, ctx) -> bool:
    """The loop calls a training step of the file (`self.train_one_batch(x, y)`): a def that calls
    `backward()` once, outside any loop of its own (a def that loops over batches is an epoch, not a step)."""
    return _per_loop(ctx, loop, "calls-step", lambda loop, ctx: any(
        isinstance(n, ast.Call) and _is_step(summaries.callee(n, ctx, pos_of(n)), ctx) for n in walk(loop)))


def _is_step(fn, ctx) -> bool:
    if not isinstance(fn, summaries.DEFS) or project.home(fn) is not None:
        return False
    return _per_loop(ctx, fn, "is-step", lambda fn, ctx: _trains(fn, ctx) and not any(
        isinstance(n, (ast.For, ast.AsyncFor, ast.While)) and _trains(n, ctx) for n in walk(fn)))


def _trains(loop, ctx) -> bool:
    """The loop backpropagates or steps an optimizer the torch way: `loss.backward()`,
    `accelerator.backward(loss)`, `torch.autograd.grad(...)`, `optimizer.step()`; a hand-written
    `model.backward(out, y, lr)` or `env.step(action)` alone does not make a torch training loop."""
    if not any(q == "torch" or q.startswith("torch.") for q in ctx.facts.aliases.values()):
        return False
    for n in walk(loop):
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        if isinstance(func, ast.Attribute):
            if func.attr == "backward" and len(n.args) <= 1:
                return True
            if func.attr == "step" and names.OPTIMIZER_NAME(_receiver_name(func.value)):
                return True
        if ctx.facts.qualname(func) in GRAD_CALLS:
            return True
    return False


def _receiver_name(expr) -> str:
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(expr, ast.Attribute):
            return expr.attr
        expr = expr.value if isinstance(expr, ast.Subscript) else expr.func
    return expr.id if isinstance(expr, ast.Name) else ""


def _reset_inside(key: str, acc, loop, ctx) -> bool:
    """A plain assignment to the accumulator, or `acc.clear()`, anywhere in the loop (a periodic reset
    counts: the kept graphs are then bounded by the reset interval)."""
    keys, shapes = _per_loop(ctx, loop, "assigned", _assigned)
    return key in keys or _shape(acc) in shapes


def _assigned(loop, ctx):
    """(dotted names, shapes) of every plain assignment target in the loop, and of every `x.clear()`."""
    keys, shapes = set(), set()
    for stmt in walk(loop):
        if isinstance(stmt, ast.Call) and isinstance(stmt.func, ast.Attribute) and stmt.func.attr == "clear":
            keys.add(dotted(stmt.func.value))
            shapes.add(_shape(stmt.func.value))
        if isinstance(stmt, ast.Assign) and _entry_accumulation(stmt) is not None:
            continue  # `stats[k] = stats[k] + v` adds, it does not reset
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, ast.AnnAssign) else []
        for t in targets:
            for elt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                keys.add(dotted(elt))
                shapes.add(_shape(elt))
    return keys, shapes


def _per_loop(ctx, loop, question: str, answer):
    """A fact about a loop (or function), computed once per file (every accumulation in it asks)."""
    key = ("ten401", question, id(loop))
    if key not in ctx.facts.memo:
        ctx.facts.memo[key] = answer(loop, ctx)
    return ctx.facts.memo[key]


def _shape(expr) -> str:
    """The expression's structure without positions or load/store context: `stats[k]` either side."""
    return ast.dump(expr, annotate_fields=False).replace("Store()", "Load()")


def _elements(expr):
    """The values an appended expression stores: dict / list / tuple entries, else itself;
    kept clones are TEN203's finding."""
    if isinstance(expr, ast.Dict):
        items = list(expr.values)
    elif isinstance(expr, (ast.List, ast.Tuple)):
        items = list(expr.elts)
    else:
        items = [expr]
    return [e for e in items if not list(_kept_clones(e))]


def _carries_graph(expr, ctx) -> bool:
    if _graph_free(expr, ctx, 0):
        return False
    return ctx.attached(expr) or _loss_entry(expr, ctx)


def _loss_entry(expr, ctx) -> bool:
    """An entry of a dict whose entries' sum (`sum(losses.values()).backward()`) or one of whose entries
    (`out["loss"].backward()`) is backpropagated: `losses["ce"]`, `losses[k]`, `v` of
    `for k, v in losses.items()` (or `for v in losses.values()`), and sums and products of them."""
    if isinstance(expr, ast.BinOp):
        return _loss_entry(expr.left, ctx) or _loss_entry(expr.right, ctx)
    held = None
    if isinstance(expr, ast.Subscript) and (isinstance(expr.slice, ast.Name) or fixed_entry(expr) is not None):
        held = expr.value
    elif isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        if b is not None and b.kind == Bind.FOR:
            held = _entries_iterated(b.node, expr.id)
    if held is None or _number_dict(held, ctx):
        return False
    key = dotted(held)  # (an attribute path `self.parts`; loss_dict answers for names and calls)
    return key in summed_dicts(ctx) or key in ctx.frame.scope.backward_names or loss_dict(held, ctx, ctx.pos) is True


def _entries_iterated(loop, name: str):
    """The dict whose values `name` takes in `for k, name in d.items()` or `for name in d.values()`."""
    it, target = loop.iter, loop.target
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args):
        return None
    if it.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        value = target.elts[1]
    elif it.func.attr == "values":
        value = target
    else:
        return None
    return it.func.value if isinstance(value, ast.Name) and value.id == name else None


def _number_dict(held, ctx) -> bool:
    """The dict is, where it is read, a display or comprehension of numbers (`{k: v.item() for ...}`)."""
    if not isinstance(held, ast.Name):
        return False
    b = ctx.frame.scope.binding_before(held.id, ctx.pos)
    value = b.value if b is not None and b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) else None
    if isinstance(value, ast.DictComp):
        return _graph_free(value.value, ctx, 0) or _plain_number(value.value)
    return isinstance(value, ast.Dict) and bool(value.values) and all(
        _graph_free(v, ctx, 0) or _plain_number(v) for v in value.values)


def _graph_free(expr, ctx, depth) -> bool:
    """Already a Python number or detached: .item(), float(...), a local helper returning numbers."""
    if depth > 6:
        return False
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        return b is not None and b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.value is not None and _graph_free(
            b.value, ctx, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _graph_free(expr.left, ctx, depth + 1) and _graph_free(expr.right, ctx, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Name) and builtins_api.gives_value(func.id) and func.id not in ctx.frame.scope.bindings:
            return True
        if isinstance(func, ast.Attribute) and api.drops_graph(func.attr):
            return True
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return bool(name) and _helper_returns_numbers(name, ctx)
    return False


def _helper_returns_numbers(name: str, ctx) -> bool:
    defs = _defs_by_name(ctx.facts).get(name, ())
    returns = [r.value for d in defs for r in walk(d) if isinstance(r, ast.Return) and r.value is not None]
    return bool(returns) and all(_plain_number(r) for r in returns)


def _defs_by_name(facts) -> dict:
    """Every function of the file by name, found once per file (not once per inspected call)."""
    if "defs-by-name" not in facts.memo:
        found: dict = {}
        for n in walk(facts.tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(n.name, []).append(n)
        facts.memo["defs-by-name"] = found
    return facts.memo["defs-by-name"]


def _plain_number(expr) -> bool:
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_plain_number(e) for e in expr.elts)
    if isinstance(expr, ast.Dict):
        return all(_plain_number(v) for v in expr.values)
    if isinstance(expr, ast.Call):
        func = expr.func
        return (isinstance(func, ast.Name) and builtins_api.gives_value(func.id)) or (
            isinstance(func, ast.Attribute) and api.drops_graph(func.attr))
    return False


def _starts_numeric(key: str, acc, ctx) -> bool:
    """`total = 0.0` for `total += ...`; `stats = {"loss": 0.0}` or `defaultdict(float)` for `stats[k] += ...`."""
    if "." in key:
        return False
    origin = ctx.frame.scope.origin(key, ctx.pos)
    value = origin.value if origin is not None else None
    if isinstance(acc, ast.Name):
        return _number_literal(value)
    if not (isinstance(acc, ast.Subscript) and isinstance(acc.value, ast.Name)):
        return False
    if isinstance(value, ast.Call) and ctx.facts.qualname(value.func) == "collections.defaultdict":
        return len(value.args) == 1 and isinstance(value.args[0], ast.Name) and value.args[0].id in ("float", "int")
    return isinstance(value, ast.Dict) and bool(value.values) and all(_number_literal(v) for v in value.values)


def _used_as_tensor(key: str, ctx) -> bool:
    """Some code of the function calls a tensor method on the accumulator (`epoch_loss.item()`): a float
    would break it, so the fix keeps a tensor (`.detach()`)."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return key in ctx.facts.index(_tensor_method_receivers, body)


def _tensor_method_receivers(facts, body) -> set:
    return {dotted(n.value) for n in walk(body) if isinstance(n, ast.Attribute) and api.method(n.attr) is not None}


def _number_literal(value) -> bool:
    return isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not isinstance(
        value.value, bool)


def _flows_into_loss(key: str, loop, ctx) -> bool:
    """The accumulator is backpropagated (through any names built from it), or it is returned
    from a loop that neither calls backward() nor steps an optimizer itself (a loss assembled over
    several pieces; a loop that steps has had its backward, in a helper such as `training_step`)."""
    if key in loss_keys(ctx):
        return True
    if _calls_backward(loop, ctx) or _steps_optimizer(loop, ctx) or _calls_step(loop, ctx):
        return False
    func = ctx.frame.func
    body = func if func is not None else ctx.facts.tree
    for n in walk(body):
        if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None and key in keys_in(n.value):
            return True
    return False


def _steps_optimizer(loop, ctx) -> bool:
    return _per_loop(ctx, loop, "steps", lambda loop, _: any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "step"
        and names.OPTIMIZER_NAME(_receiver_name(n.func.value)) for n in walk(loop)))


def _calls_backward(loop, ctx) -> bool:
    return _per_loop(ctx, loop, "backward", lambda loop, _: any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
        for n in walk(loop)))
