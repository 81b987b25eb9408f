"""A graph-attached loss accumulated across a training loop.

## What it does
Flags `total += loss`, `stats[k] += loss`, `stats[k] = stats.get(k, 0) + loss`, `losses.append(loss)` and
`history.append({"loss": loss})` inside a training loop (a loop that calls `loss.backward()`,
`accelerator.backward(loss)`, `torch.autograd.grad(...)` or `optimizer.step()`, or a one-batch step
def of the file that does, itself or through a helper def it calls, such as `self.train_one_batch(x, y)`)
when `loss` is attached to the autograd graph (a loss, a model output, anything computed from them), the
accumulator was bound before the loop and is not reset inside it, the code is not under
`torch.no_grad()`, and the accumulator is never backpropagated (directly, or through `sum(...)` /
`torch.stack(...)` or a name built from it).

The same spelled as a sum that holds the accumulator once (`total = total + loss`, `total = loss + total`,
`total = total + w * loss`, `self.total = self.total + loss`), or `log[step] = loss` with `step` bound by
the loop or by a counter the loop steps on every pass (`log[step + 1]`, `log[epoch, step]`,
`log[f"step{step}"]`, `log[counter]` with `counter += 1`: a new entry of a dict or list each step, a local
one or `self.log` that the class binds only to one). A method of a class of the file that keeps its argument on
`self` (`self.total += value`, `self.sum += value * n`, `self.rows.setdefault(k, []).append(value)`) is flagged
when a training loop calls it once per step (a loop of the file, or of another module of the package that names
the class: a subclass's loop calling the inherited method as `self.forward_and_record(x, y)`) on one object
bound before the loop (`meter.update(loss)`, `stats["loss"] = loss` for `__setitem__`), every call passes an
attached value (or, for a value made from a parameter, `self.total += v.float()`, one such call does: a keeper
shared by a loss and an accuracy is judged at each call), and neither the method nor a method the loop calls on
the object (`meter.reset()`) resets the attribute; when the class is in another module of the package, the
finding is at the argument of the loop's call (`meter.update(loss)`, the value of `board["mse"] = loss`, or a
keeper reached through another object's attribute: `tracker.meter.update(loss)` with `Tracker.__init__` setting
`self.meter = Meter()`), where the fix goes. So is a method that keeps the entries of a container it is given
(`sums.add([a, b])` with `for i, v in enumerate(values): self.sums[i] += v`, `terms[k]`, `terms.items()`),
whatever module its class is in: what the entries are is known at the call. The loop may be up to two defs up
(`self.train_step(x, y)` running
`self.meter.update(loss)`, a base class's loop in another module included), on the same object. A
value counts as attached also when it is an attribute of an object that the loop backpropagates
(`running += out.loss` with `out.loss.backward()`), or a term returned beside the sum that is
backpropagated (`loss, box, size = f(...)` with `return box + size, box, size`).

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
(`totals = defaultdict(float)`, `.clear()`, `del saved[:]` in its body, or in a def of the file the loop
calls that reaches the same object: `self.finish_episode()` emptying `self.saved_values`, an `update()`
emptying the global `critic.saved_values` it backpropagates); an accumulator bound anew at every optimizer
step around a loop that backpropagates micro-batches and steps nothing, or reset in the branch that steps the
optimizer (`if n % k == 0: opt.step(); running = 0`, `if accelerator.sync_gradients: running = 0`):
gradient accumulation, the graphs of one step at most, however many steps run; accumulators that are backpropagated
(`total_loss.backward()`, `torch.stack(losses).sum().backward()`), returned to a caller of the file that
backpropagates it (`self.meta_forward(w, tasks).backward()`), or returned from a loop that does not
itself call `backward()` (a loss built over several pieces; `torch.autograd.grad(..., create_graph=True)`
is no step, its gradients are part of the graph); values computed under `torch.no_grad()`, and
sums made there (a tensor made with grad on and stored there keeps its graph), also by a keeper's method
called there (`with torch.no_grad(): meter.update(loss)` for `self.total += value`); a keeper whose
attribute the loop binds anew or empties on every pass (`meter.total = 0.0`, `meter.rows.clear()`), whose
kept values the loop backpropagates (`torch.stack(win.values[-2:]).mean().backward()`), or whose method
may convert what it is given (`value = value.item()` on some path). A backward
through one element (`losses.append(loss)` then `losses[-1].backward()`) leaves every other element's
graph alive: that is reported, and the element is known to be attached because it is backpropagated.
`history.append(loss.clone())` is TEN203's finding (a kept clone), not this rule's.
Nor a value proven to hold no graph, whatever the loop backpropagates: a hand-written update
`w = w + lr * delta * phi` built only from factories without `requires_grad=True`, numbers, `.detach()` /
`.item()` results, arrays and tensors from numpy or lists (analysis/unattached.py), beside a backward on
another graph.

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
Unsafe: the fix appends `.detach()` to the accumulated value, which stops gradients through the
accumulator (code that backpropagates through it in a way this rule cannot see would depend on them) and
changes nothing else: what was a tensor stays one, so every later use of the total runs as before (`.item()`,
which the PyTorch FAQ writes for a number, made the total a float and broke later tensor uses that fix reviews
found: `total.data`, `avg = total / n; avg.cpu()`, a caller's `train_epoch(...).item()`). Write `.item()` by
hand where a number is what the code wants.
No fix when the loop backpropagates an element of the list (`losses[-1].backward()`): detaching what is
appended would break that backward.
No fix when `training_step` keeps a value the file does not show to be a tensor: the loss it returns may be
a dict holding it (`self.outputs.append(log)`), whose copy with detached tensors is written by hand.

## Known problems
The training loop, attachment and reset are judged inside one function, except in a LightningModule's
`training_step`: a step method that another trainer calls (`self.outputs.append(loss)` in a hand-written
trainer's `train_step`) is not seen, nor a LightningModule whose base is known only by a name the file does
not import (`from pytorch_lightning import *`), nor a list the step appends to under manual optimization
(`self.automatic_optimization = False`) unless the file shows the value attached. A periodic reset
that does not come with the optimizer's step (`if i % 100 == 0: running = 0`) does not silence the rule,
by design: the graphs of up to that many steps
are kept between resets, though after a per-step backward they hold no saved activations, so the memory
they keep is bounded (`.item()`, or the `.detach()` the fix writes, is what the PyTorch FAQ and tutorials
write there). A
loss is only known to be attached from the file's
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
import os

from ..analysis import (accumulators, backward, evidence, item_sites, lightning, losses, numbers, per_step,
                        training)
from ..analysis.clones import kept_clones
from ..analysis.facts import dotted, self_attribute
from ..analysis.losses import backpropagated_elements, loss_keys, returned_keys
from .model import FixAvailability, FixForm, FixSafety, Rule, Trigger
from .edits import as_receiver, tensor_fix

ENTRY_ADD = r"\[(?<=\w\[)[^\[\]\n]*\][ \t]*=[ \t]*[\w.]+(?:\[|\.get\()"  # stats[k] = stats[k] + v (or .get)
NAME_ADD = r"=(?<![=!<>]=)[ \t]*[\w.]+(?:[ \t]*[*/@][ \t]*[\w.]+)*[ \t]*\+(?![=+])"  # total = w * v + total
# log[step] = v, log[step + 1], log[epoch, step], log[f"s{step}"]
LOOP_ENTRY = r"\[(?<=\w\[)(?:\w+(?:[ \t]*[-+,][ \t]*\w+)*|f[\"'][^\[\]\n]*|str\(\w+\))\][ \t]*=(?!=)"
# meter.update(loss), sums.add([a, b]), log.add("mse", loss): a method may keep what it is given
KEPT_BY_CALL = r"(?m)^[ \t]+\w+(?:\.\w+)*\.\w+\([\w[{(\"']"
# board["mse"] = loss: a package class's __setitem__ may keep what it is given
KEPT_BY_STORE = r"\[(?<=\w\[)[\"'][^\[\]\n]*\][ \t]*=(?!=)"
HOT = (r"\+=", r"\.append\(", r"\.insert\(", r"\.appendleft\(", ENTRY_ADD, NAME_ADD, LOOP_ENTRY, KEPT_BY_CALL,
       KEPT_BY_STORE)


def check(node, ctx):
    step = lightning.training_step(ctx)
    if not (ctx.frame.loops or step or per_step.method_of(ctx)):
        if ctx.frame.func is not None and _call_of(node, ctx) is not None:
            yield from _kept_by_callee(_call_of(node, ctx), ctx)  # a helper that a loop further up runs once per step
        return
    found = accumulators.accumulation(node) or accumulators.per_step_entry(node, ctx)
    if ctx.grad_disabled and (isinstance(node, ast.AugAssign) or isinstance(node, ast.Assign)
                              and accumulators.entry_accumulation(node)):
        return  # a sum made under no_grad holds no graph; a value stored there keeps the one it was made with
    kept = list(_kept_by_callee(_call_of(node, ctx), ctx)) if _call_of(node, ctx) is not None else []
    if found is None or kept:  # `sums.add(terms)` of a package class is its method, not a set's add
        yield from kept
        return
    acc, values = found
    key = accumulators.root_key(acc)
    if key is None or not values:
        return
    if step is not None and isinstance(node, ast.Expr) and self_attribute(acc) is not None:
        yield from _kept_across_steps(node, acc, values, step, ctx)
        return
    if not ctx.frame.loops:
        yield from _kept_across_calls(node, acc, key, values, ctx)
        return
    loop = accumulators.outlived_training_loop(key, acc, ctx)
    if loop is None or _flows_into_loss(key, loop, ctx):
        return
    backpropagated = key in backpropagated_elements(ctx) and isinstance(node, ast.Expr)
    attached = [v for v in _elements(values) if backpropagated or _carries_graph(v, ctx)]
    if not attached:
        return
    shown = ctx.text(attached[0])
    use = f"{as_receiver(shown, attached[0])}.detach() (no graph; .item() for a number)"
    fix = tensor_fix(ctx, attached, [ctx.edit(v, as_receiver(ctx.text(v), v) + ".detach()") for v in attached],
                     FixSafety.UNSAFE)
    if backpropagated:  # `losses[-1].backward()` needs the graph the fix would drop: call it on the loss itself
        fix, use = None, f"{use} and call backward() on the loss itself, not on {ctx.text(acc)}[-1]"
    yield ctx.finding(node, fix, value=shown, acc=ctx.text(acc), use=use, loop="loop")


def _call_of(node, ctx):
    """The method call a statement is: `meter.update(loss)`, or the `__setitem__` call of `board["mse"] = loss`."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        return node.value
    return item_sites.store_call(ctx.facts, node)


def _kept_across_steps(node, acc, values, step, ctx):
    """`self.outputs.append(v)` in a LightningModule's `training_step`, with `self.outputs` a list of the
    class that the step does not empty and no method backpropagates, and `v` attached: by the file's
    evidence, or as the loss the step returns for the trainer to backpropagate (`return v`,
    `return {"loss": v}`) or a dict holding it (`return log` with `log = {"loss": loss, ...}`)."""
    key = dotted(acc)
    classes = lightning.lineage(ctx.frame.cls, ctx.facts)
    if (not classes or not lightning.list_attribute(classes, acc.attr) or accumulators.reset_inside(key, acc, step, ctx)
            or key in lightning.backpropagated(classes)):
        return
    returned = lightning.automatic(classes)
    attached = [v for v in _elements(values)
                if _carries_graph(v, ctx) or returned and lightning.returned_loss(v, step, ctx)]
    if not attached:
        return
    tensors = all(ctx.kind(v) in evidence.TENSORISH or _carries_graph(v, ctx) and ctx.kind(v) != evidence.CONTAINER
                  for v in attached)
    shown = ctx.text(attached[0])
    if tensors:
        fix = tensor_fix(ctx, attached, [ctx.edit(v, as_receiver(ctx.text(v), v) + ".detach()") for v in attached],
                         FixSafety.UNSAFE)
        use = f"{as_receiver(shown, attached[0])}.detach() (no graph)"
    else:  # a dict holding the loss: which of its entries are tensors is not known here
        fix, use = None, f"a copy of '{shown}' with its tensors detached (no graph)"
    yield ctx.finding(node, fix, value=shown, acc=key, use=use, loop="trainer's steps")


def _kept_across_calls(node, acc, key: str, values, ctx):
    """`self.total += value` in a method that a training loop of the file calls once per step on one object
    (`meter.update(loss)`, `stats["loss"] = loss`), with `value` attached at every call; `self.total` is
    not reset by the method nor by a method the loop calls on the object, and no code of the file
    backpropagates through the attribute (a policy's saved values, the critic's loss at an episode's end)."""
    attr = self_attribute(acc, subscripts=True) or accumulators.entry_root_attribute(acc)
    if attr is None or accumulators.reset_inside(key, acc, ctx.frame.func, ctx) or key in loss_keys(ctx) or \
            losses.attribute_backpropagated(attr, ctx.facts):
        return
    candidates = [v for v in _elements(values) if not isinstance(v, ast.Constant)]
    attached = [v for v in candidates if _carries_graph(v, ctx)]
    by_site = [v for v in candidates if v not in attached and per_step.carried_parameter(v) is not None]
    # asks the package: the costlier question, only for a value attached here or made from a parameter
    steps = per_step.per_step_calls(attr, ctx) if attached or by_site else []
    if isinstance(node, ast.AugAssign) or isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
        steps = [s for s in steps if not per_step.grad_off_at(s)]  # a sum made under no_grad holds no graph
    attached += [v for v in by_site if any(_carries_graph(a, s.where) for s in steps
                                           if (a := per_step.passed_at(v, node, s, ctx)) is not None)]
    if not steps or not attached:
        return
    shown = ctx.text(attached[0])
    fix = tensor_fix(ctx, attached, [ctx.edit(v, as_receiver(ctx.text(v), v) + ".detach()") for v in attached],
                     FixSafety.UNSAFE)
    yield ctx.finding(node, fix, value=shown, acc=key, use=f"{as_receiver(shown, attached[0])}.detach() "
                      "(no graph)", loop="training loop that calls it once per step "
                      f"({ctx.place(steps[0].where.facts.path, steps[0].loop.lineno)})")


def _kept_by_callee(call, ctx):
    """`meter.update(loss)` run once per step by a training loop (around it, or further up: per_step.step_of),
    `update` a method of another module's class that accumulates its argument, or the argument's entries
    (`sums.add([a, b])`), on `self`, on an object that outlives the loop and is not reset on every pass:
    reported at the argument, where the fix goes (this file sees the loop, that module does not)."""
    kept = per_step.kept_by_callee(call, ctx)
    where = per_step.step_of(call, ctx) if kept else None
    for k in kept if where is not None else ():
        if k.summed and (ctx.grad_disabled or per_step.grad_off_at(where)) or \
                per_step.backpropagated_through(where, k.attr):
            continue  # a sum made under no_grad holds no graph; the loop's loss is built from what it keeps
        attached = _attached_entries(k.argument, k.entries, ctx) if k.entries else \
            [v for v in _elements([k.argument]) if _carries_graph(v, ctx)]  # `[mse, loss]` kept whole: its entries
        if not attached or per_step.resets_on_every_pass(where, k):
            continue
        shown, arg = ctx.text(k.argument), k.argument
        if k.entries and attached == [arg]:  # a list or dict of loss terms: which entries are tensors is unknown here
            fix, use = None, f"a copy of '{shown}' with its tensors detached"
        else:
            fix = tensor_fix(ctx, attached, [ctx.edit(v, as_receiver(ctx.text(v), v) + ".detach()") for v in attached],
                             FixSafety.UNSAFE)
            use = ", ".join(f"{as_receiver(ctx.text(v), v)}.detach()" for v in attached)
        keeper = f"{os.path.basename(k.home.path)}'s {k.fn.name}() keeps it"
        yield ctx.finding(arg, fix, value=shown, acc=f"{ctx.text(call.func.value)}.{k.attr}", loop=f"loop ({keeper})",
                          use=f"{use} (no graph; .item() for a number)")


def _attached_entries(arg, how: str, ctx) -> list:
    """The entries of a container argument that carry a graph: those of a display, or the container itself
    when the code backpropagates one of its entries or their sum (a list or dict of loss terms); a name
    that is only iterated must be a list for its entries to be what the method keeps."""
    if isinstance(arg, (ast.List, ast.Tuple)) or isinstance(arg, ast.Dict) and how == per_step.ENTRIES:
        return [v for v in (arg.values if isinstance(arg, ast.Dict) else arg.elts) if _carries_graph(v, ctx)]
    key = dotted(arg)
    if key in backpropagated_elements(ctx):
        return [arg]
    dict_of_losses = key in losses.summed_dicts(ctx) or losses.loss_dict(arg, ctx, ctx.pos) is True
    return [arg] if how == per_step.ENTRIES and dict_of_losses else []


def _elements(values):
    """The values the accumulated expressions store: dict / list / tuple entries, else each itself;
    kept clones are TEN203's finding."""
    items = []
    for expr in values:
        if isinstance(expr, ast.Dict):
            items += expr.values
        elif isinstance(expr, (ast.List, ast.Tuple)):
            items += expr.elts
        else:
            items.append(expr)
    return [e for e in items if not list(kept_clones(e))]


def _carries_graph(expr, ctx) -> bool:
    """`expr` holds a graph, asked where `ctx` is: the rule's context, or a Position of a caller's call."""
    if numbers.graph_free(expr, ctx, 0):
        return False
    return evidence.attached(expr, ctx) or losses.loss_entry(expr, ctx)


def _flows_into_loss(key: str, loop, ctx) -> bool:
    """The accumulator is backpropagated (through any names built from it), or it is returned
    from a loop that neither calls backward() nor steps an optimizer itself (a loss assembled over
    several pieces; a loop that steps has had its backward, in a helper such as `training_step`)."""
    if key in loss_keys(ctx) or (_returned(key, ctx) and backward.result_backpropagated(ctx)):
        return True  # backpropagated here, or returned to a caller that backpropagates it
    if training.calls_backward(loop, ctx) or training.steps_optimizer(loop, ctx) or training.calls_step(loop, ctx):
        return False
    return _returned(key, ctx)


def _returned(key: str, ctx) -> bool:
    """The function returns (or yields) the accumulator, or a value built from it."""
    return key in returned_keys(ctx)


RULE = Rule(
    code="TEN401",
    name="loss-accumulated-with-graph",
    message=("'{value}' is accumulated into '{acc}' with its autograd graph: every step's graph stays "
             "alive across the {loop}; accumulate {use}"),
    nodes=(ast.AugAssign, ast.Assign, ast.Expr),
    # a training step (a backward, an optimizer step, autograd's grad, or a LightningModule's training_step) and an
    # accumulation
    check=check,
    trigger=Trigger(r"\.backward\(", r"\.step\(", r"def training_step\(", r"grad\((?<=\Wgrad\()", *HOT,
                    groups=(4, len(HOT))),
    hot=HOT,
    claim=("A graph-attached loss accumulated across a loop keeps every step's graph reachable: without "
           "a backward through it, each step's saved activations stay alive (weak references to them "
           "survive), and after a per-step backward the accumulator's chain of graph nodes grows with every "
           "step; accumulating loss.item() or loss.detach() keeps neither."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("the accumulated value gets `.detach()` (at the argument, for a method of another module that "
                "keeps it)",
                FixSafety.UNSAFE,
                "gradient flow: nothing backpropagates through the accumulator; it stays a tensor"),
    ),
    # backward() calls and helper defs anywhere in the file decide
    whole_file=True,
)
