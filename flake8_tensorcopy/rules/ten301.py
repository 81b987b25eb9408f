"""`state_dict()` snapshot kept without a copy while the module keeps training.

## What it does
Flags `snapshot = model.state_dict()`, and the shallow "copies" `dict(...)`, `OrderedDict(...)`,
`.copy()`, `copy.copy(...)`, `{k: v for k, v in ....items()}`, `{k: v.detach() ...}`,
`{k: v.cpu() ...}` of it (or of a name bound to it), when the snapshot outlives a later update of the
module and is then read: reloaded with `load_state_dict`, compared, returned or saved. A later update is a training call
(`.backward()`, `.step()`, a `fit`/`train...` call that involves the module, a trainer's or engine's
`run`/`fit`/`train`, or that of an object built with the module: `sbs = StepByStep(model, ...)`,
`sbs.train(n)`) between the snapshot and the read, a training
loop that takes the snapshot in some iterations (under an `if`) and reads it after the loop (the
"best weights" pattern), or a loop that reloads the snapshot in each iteration and trains after the
reload (a "reset to the initial weights" that resets nothing from the second iteration on). A method of
the class that returns the module's `state_dict()` (`self.get_state_dict()`) counts as the call itself.

Not flagged: a snapshot read before any update (`torch.save(model.state_dict(), path)`, reloading
into another module, `target.load_state_dict(model.state_dict())`), `torch.save(sd)` of a snapshot
whose name does not say it is a frozen copy (`best`, `init`, `orig`, `prev`, ...) after training (that
saves the final weights), a snapshot taken in every iteration and read after the loop, receivers that are not modules
(optimizers, schedulers, scalers, metrics, engines, trainers, callbacks), classes that override
`state_dict()`, dicts used as in-place loading targets (`sd[k].copy_(...)`, `sd[k] = ...`), snapshots
read only for their keys (`sd.keys()`, `len(sd)`, `k in sd`), and calls named for training that do not
involve the module (`pca.fit(features)`).

## Why is this bad?
The entries of a `state_dict()` are detached tensors that **share storage** with the parameters and
buffers. After `optimizer.step()` the "snapshot" equals the live weights, so `load_state_dict(best)`
restores nothing and a "best model" silently becomes the last one. `dict()`, `.copy()`, `copy.copy()`,
`.detach()` copy the dict, not the tensors; `.cpu()` copies only when the model is on a GPU.

## Example
```python
best = model.state_dict()
for epoch in range(epochs):
    train_one_epoch(model, optimizer)
    if evaluate(model) > best_score:
        best = model.state_dict()       # moves with the model
model.load_state_dict(best)             # restores the last epoch, not the best
```

## Use instead
```python
best = copy.deepcopy(model.state_dict())
best = {k: v.detach().clone() for k, v in model.state_dict().items()}
```

## Fix safety
Unsafe: the snapshot becomes `copy.deepcopy(<module>.state_dict())` (adding `import copy`), or the
comprehension's values get `.clone()`; this doubles the memory the snapshot holds, and code that relied
on the snapshot tracking the live model changes behaviour.

## Known problems
Updates made by a function that receives the model (`run_epoch(model)`) are only seen when its name
says it trains (`train`, `fit`, `learn`, `optimize`). A snapshot stored on an attribute
(`self.best = ...`) is reported when it is taken inside a training loop and read anywhere, or read later
in the same function after a training call; one taken in one method and reloaded in another with the
training in between (a callback's `on_train_start` / `on_train_end`) is missed. A snapshot an epoch-end
hook keeps is reported when another class of the file or package reloads an attribute of that name
(`self.model.load_state_dict(callback.best_state_dict)`): the match is by the attribute's name. Branches are not
modelled: a read on a path where no training ran still counts. `optimizer.state_dict()` snapshots,
whose state tensors are live too, are not reported. Measured on about 13,000 files of released
PyTorch libraries: one finding, a true "best model" bug; on a release of a library that later fixed
this bug (with `deepcopy`): seven findings, all of them the bug.

## References
- torch.nn.Module.state_dict docs: "the returned object is a shallow copy. It contains references
  to the module's parameters and buffers."
- pytorch/tutorials#188; pytorch/pytorch#34765 (use `copy.deepcopy(model.state_dict())`)
"""
from __future__ import annotations

import ast
import bisect
import os

from ..analysis import names, project, summaries
from ..analysis.evidence import MODULE
from ..analysis.facts import Bind, base_name, dotted, end_of, pos_of, walk
from .model import FixSafety

CODE = "TEN301"
NAME = "state-dict-snapshot-aliased"
MESSAGE = ("'{target}' keeps {what}: its tensors share storage with the live weights and change with "
           "{why}; use {use}")
FIX = FixSafety.UNSAFE
TRIGGER = r"state_dict\("
WHOLE_FILE = True  # reads of `self.best` in other methods, and the file's functions that train
NODES = (ast.Assign, ast.AnnAssign)
CLAIM = ("The tensors of module.state_dict() (and of dict()/.copy()/{k: v.detach()} of it) share storage "
         "with the parameters: after optimizer.step() the snapshot equals the live weights; "
         "copy.deepcopy(module.state_dict()) does not change.")
SHALLOW_CALLS = frozenset({"dict", "collections.OrderedDict", "OrderedDict", "copy.copy"})
ALIAS_METHODS = frozenset({"detach", "cpu", "to", "float", "contiguous", "requires_grad_", "view_as"})
MODE_SWITCH = frozenset({"train", "eval"})
TRAINER_RUNS = frozenset({"run", "fit", "train", "learn"})


def check(node, ctx):
    value = node.value
    target = node.targets[0] if isinstance(node, ast.Assign) else node.target
    if value is None or (isinstance(node, ast.Assign) and len(node.targets) != 1):
        return
    key = dotted(target)
    if key is None:
        return
    snapshot = _snapshot(value, ctx)
    if snapshot is None:
        return
    call, what = snapshot
    why = _outlived_by_update(node, target, key, _module_root(call, ctx), ctx)
    if why is None:
        return
    source = ctx.text(call)
    if isinstance(value, ast.DictComp):
        fix = ctx.replace(value.value, _cloned(value.value, ctx), FIX)
        use = f"{_cloned(value.value, ctx)} in the comprehension"
    else:
        deepcopy = _deepcopy_spelling(ctx)
        use = f"{deepcopy or 'copy.deepcopy'}({source})"
        imports = ("copy",) if deepcopy == "copy.deepcopy" else ()
        fix = ctx.replace(value, use, FIX, imports=imports) if deepcopy else None
    yield ctx.finding(value, fix, target=key, what=what, why=why, use=use)


def _deepcopy_spelling(ctx):
    """How the fix may call deepcopy here: `copy.deepcopy` when `copy` is the module or unbound (the fix
    imports it), the name of a `from copy import deepcopy`, or None when `copy` means something else
    (`from copy import copy`, a parameter, a local def) and nothing else names deepcopy."""
    if ctx.facts.aliases.get("copy") in (None, "copy") and _copy_unshadowed(ctx):
        return "copy.deepcopy"
    for name, target in ctx.facts.aliases.items():
        if target == "copy.deepcopy":
            return name
    return None


def _copy_unshadowed(ctx) -> bool:
    """`copy` is not bound to anything but the module in the scopes the fix's code runs in."""
    scope = ctx.frame.scope
    while scope is not None:
        for b in scope.bindings.get("copy", ()):
            if not (b.kind == Bind.IMPORT and isinstance(b.node, ast.Import)
                    and any(a.name == "copy" and a.asname is None for a in b.node.names)):
                return False
        scope = scope.parent
    return True


# ---- is the value an aliasing snapshot of a module's state_dict()? ---------------------------------
def _snapshot(value, ctx):
    """(the state_dict() call or the name bound to it, a description) when `value` holds the module's
    live tensors."""
    call = _state_dict_call(value, ctx)
    if call is not None:
        return call, "the module's state_dict()"
    if _returns_state_dict(value, ctx):
        return value, f"the state_dict() that {ctx.text(value.func)}() returns"
    if isinstance(value, ast.Call):
        q = ctx.qualname(value.func) or (value.func.id if isinstance(value.func, ast.Name) else None)
        if q in SHALLOW_CALLS and len(value.args) == 1 and not value.keywords:
            if _state_dict_source(value.args[0], ctx) is not None:
                return value.args[0], f"a shallow copy of {ctx.text(value.args[0])}"
        if (isinstance(value.func, ast.Attribute) and value.func.attr == "copy" and not value.args
                and not value.keywords):
            if _state_dict_source(value.func.value, ctx) is not None:
                return value.func.value, f"a shallow copy of {ctx.text(value.func.value)}"
    if isinstance(value, ast.DictComp) and len(value.generators) == 1:
        gen = value.generators[0]
        it = gen.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                and isinstance(gen.target, ast.Tuple) and len(gen.target.elts) == 2
                and isinstance(gen.target.elts[1], ast.Name)):
            inner = it.func.value
            if _state_dict_source(inner, ctx) is not None and _aliases(value.value, gen.target.elts[1].id):
                device_moves = any(isinstance(n, ast.Attribute) and n.attr in ("cpu", "to")
                                   for n in walk(value.value))
                where = " on a CPU model" if device_moves else ""
                return inner, f"entries of {ctx.text(inner)} that are not copies{where}"
    return None


def _returns_state_dict(value, ctx) -> bool:
    """`self.get_state()` where that method of the class returns `self...state_dict()` on every path."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    fn = summaries.callee(value, ctx, ctx.pos)
    returns = summaries.returns(fn)
    return bool(returns) and all(r.value is not None and base_name(r.value) == "self"
                                 and _state_dict_call(r.value, ctx) is not None for r in returns)


def _state_dict_source(expr, ctx):
    """The state_dict() call behind `expr`: the call itself, or a name bound to it (`sd`)."""
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        if b is None or b.kind != Bind.ASSIGN or b.value is None:
            return None
        expr = b.value
    return _state_dict_call(expr, ctx)


def _state_dict_call(expr, ctx):
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict"
            and not expr.args):
        return None
    return expr if _is_module(expr.func.value, ctx) else None


def _is_module(recv, ctx) -> bool:
    if isinstance(recv, ast.Name) and recv.id == "self":
        cls = ctx.frame.cls
        return (cls is not None and cls.name not in ctx.facts.classes_with_state_dict
                and not names.NOT_MODULE_CLASS(cls.name) and ctx.kind(recv) == MODULE)
    key = dotted(recv)
    if key is None:
        return ctx.kind(recv) == MODULE  # self.get_network(): what the method returns
    last = key.rsplit(".", 1)[-1].strip("_")
    if names.NOT_MODULE(last):
        return False
    if isinstance(recv, ast.Name):
        b = ctx.frame.scope.binding_before(recv.id, ctx.pos)
        made = b.value if b is not None and b.kind == Bind.ASSIGN else None
        if isinstance(made, ast.Call) and isinstance(made.func, ast.Name):
            if made.func.id in ctx.facts.classes_with_state_dict:
                return False
    return ctx.kind(recv) == MODULE or bool(names.MODULE_NAME(last))


def _aliases(expr, name: str) -> bool:
    """`v`, `v.detach()`, `v.cpu()`, `v.to(device)`: the value is (or may be) the entry itself."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id == name
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr = expr.value
        elif (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in ALIAS_METHODS
              and not any(k.arg == "copy" for k in expr.keywords)):
            expr = expr.func.value
        else:
            return False


def _cloned(expr, ctx) -> str:
    text = ctx.text(expr)
    return f"{text}.detach().clone()" if isinstance(expr, ast.Name) else f"{text}.clone()"


# ---- does the snapshot outlive a later update and get read afterwards? -----------------------------
def _module_root(call, ctx):
    """The name at the root of the module whose state_dict() is kept (`model`, `self`), or None."""
    sd = call if isinstance(call, ast.Call) else _state_dict_source(call, ctx)
    return base_name(sd.func.value) if sd is not None else None


def _outlived_by_update(node, target, key: str, module, ctx):
    start, end = pos_of(node), end_of(node)
    if isinstance(target, ast.Name):
        scope = ctx.frame.scope
        keys_only = _key_reads(ctx, key)
        reads = [p for p in scope.loads_after(key, end) if _origin_pos(scope, key, p) == start and p not in keys_only]
        if _used_as_loading_target(ctx, key):
            return None
    else:
        reads = _attribute_reads(ctx, key, start, end)
        if not reads:  # read only by another class: `load_state_dict(callback.best_state_dict)`
            return _reloaded_by_a_training_class(key, ctx)
    if not reads:
        return None
    # torch.save(sd) after the training that follows saves the final weights, which may be the intent;
    # a snapshot taken inside a training loop and read after it (the "best" pattern) is not
    saved = set() if names.SNAPSHOT_NAME(key.rsplit(".", 1)[-1]) else _saved_positions(ctx, key)
    trainings = _training_calls(ctx, module)
    for read in reads:
        if read not in saved and _any_between(trainings, end, read):
            return "the training that follows"
    for loop in ctx.frame.loops:
        loop_start, loop_end = pos_of(loop), end_of(loop)
        if (_conditional_in(loop, start, ctx) and _any_between(trainings, loop_start, loop_end, inclusive=True)
                and any(p > loop_end or not _in_function(ctx, p) for p in reads)):
            return "the training in later iterations of the loop"
    for loop in _loops_after(ctx, end):  # reloaded each iteration, trained later in it: the next reload
        loop_start, loop_end = pos_of(loop), end_of(loop)  # gets the trained weights ("reset" that is not)
        if (any(loop_start <= p <= loop_end and p not in saved for p in reads)
                and any(loop_start <= p <= loop_end for p in trainings)):
            return "the training in earlier iterations of the loop"
    return None if isinstance(target, ast.Name) else _reloaded_by_a_training_class(key, ctx)


def _loops_after(ctx, pos) -> list:
    """The loops of the snapshot's function (or module code) that start after `pos`."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return [n for n in ctx.facts.index(_loops, root) if pos_of(n) > pos]


def _loops(facts, root) -> list:
    body = root.body if isinstance(root.body, list) else [root.body]
    return [n for stmt in body for n in walk(stmt) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]


def _reloaded_by_a_training_class(key: str, ctx):
    """Why `self.best = self.model.state_dict()` in one method goes stale before `load_state_dict(self.best)`
    in another, or None: the class trains (a method calls backward / step / a training function on self),
    or the snapshot is taken in a callback hook (`on_epoch_end`): the framework trains between hook calls,
    and a trainer that reloads the hook's snapshot (`callback.best_state_dict`) does so after training."""
    cls, func = ctx.frame.cls, ctx.frame.func
    if cls is None or func is None or not key.startswith("self."):
        return None
    hook = names.CALLBACK_HOOK(getattr(func, "name", ""))  # a later call of the same hook counts too
    reloads = [n for n in walk(cls) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "load_state_dict" and any(dotted(a) == key for a in n.args)
               and (hook or not pos_of(func) <= pos_of(n) <= end_of(func))]
    if not reloads:
        elsewhere = hook and _reloaded_elsewhere(key.split(".", 1)[1], ctx)
        return "the training that follows the hook, before a trainer reloads it" if elsewhere else None
    trains = hook or any(isinstance(n, ast.Call) and _is_training_call(n, "self", ctx.facts, ctx.frame.scope)
                         for n in walk(cls))
    return "the training between calls of the class's methods" if trains else None


def _reloaded_elsewhere(attr: str, ctx) -> bool:
    """`self.model.load_state_dict(callback.best_state_dict)` in another class of the file or in a module of
    the package that imports the file's: a trainer reloads what the callback's hook kept, after training."""
    path = os.path.abspath(ctx.facts.path) if ctx.facts.path else None
    importers = [f for f in project.mentioning(ctx.facts, attr) if path and project.imports(f, path)]
    for facts in (ctx.facts, *importers):
        for stmt, _ in summaries.statements_mentioning(facts, attr):
            if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "load_state_dict"
                   and any(isinstance(a, ast.Attribute) and a.attr == attr and dotted(a) != f"self.{attr}"
                           for a in n.args) for n in walk(stmt)):
                return True
    return False


def _any_between(positions: list, low, high, inclusive: bool = False) -> bool:
    """Some position of the sorted `positions` lies between `low` and `high`."""
    i = (bisect.bisect_left if inclusive else bisect.bisect_right)(positions, low)
    return i < len(positions) and (positions[i] <= high if inclusive else positions[i] < high)


def _conditional_in(loop, pos, ctx) -> bool:
    """The snapshot is taken only in some iterations (`if score > best: ...`), so after the loop it
    should hold an earlier iteration's weights; taken in every iteration it ends equal to the last."""
    for n in ctx.facts.enclosing(loop, pos):
        if isinstance(n, ast.If) and any(b and pos_of(b[0]) <= pos <= end_of(b[-1]) for b in (n.body, n.orelse)):
            return True
    return False


def _saved_positions(ctx, key: str) -> set:
    """Positions of `key` read as the object of `torch.save(key, ...)` / `save_file(key, ...)`."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return ctx.facts.index(_saves, root).get(key, set())


def _saves(facts, root) -> dict:
    found: dict = {}
    for n in walk(root):
        if (isinstance(n, ast.Call) and n.args and dotted(n.args[0]) is not None
                and (facts.qualname(n.func) or dotted(n.func) or "").rsplit(".", 1)[-1] in ("save", "save_file")):
            found.setdefault(dotted(n.args[0]), set()).add(pos_of(n.args[0]))
    return found


def _attribute_reads(ctx, key: str, start, end) -> list:
    """Where `self.best` (as text) is read in the file, outside the snapshot statement; reads in
    other functions count as reads after it."""
    return [p for p in ctx.facts.index(_attribute_loads, ctx.facts.tree).get(key, ()) if not start <= p <= end]


def _attribute_loads(facts, root) -> dict:
    found: dict = {}
    for n in walk(root):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and dotted(n) is not None:
            found.setdefault(dotted(n), []).append(pos_of(n))
    return found


def _in_function(ctx, pos) -> bool:
    func = ctx.frame.func
    return func is None or pos_of(func) <= pos <= end_of(func)


def _origin_pos(scope, name, pos):
    b = scope.origin(name, pos)
    return b.pos if b is not None else None


def _key_reads(ctx, key: str) -> set:
    """Positions where `key` is read for its keys alone: `key.keys()`, `len(key)`, `k in key`."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return ctx.facts.index(_keys_read, body).get(key, set())


def _keys_read(facts, body) -> dict:
    found: dict = {}
    for n in walk(body):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "keys":
            subject = n.func.value
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and n.args:
            subject = n.args[0]
        elif isinstance(n, ast.Compare) and isinstance(n.ops[-1], (ast.In, ast.NotIn)):
            subject = n.comparators[-1]
        else:
            continue
        if isinstance(subject, ast.Name):
            found.setdefault(subject.id, set()).add(pos_of(subject))
    return found


def _training_calls(ctx, module) -> list:
    """Positions of the training calls in the function (or the module), sorted."""
    return ctx.facts.index(_trainings, ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree, module)


def _trainings(facts, root, module) -> list:
    body = root.body if isinstance(root.body, list) else [root.body]
    frame = facts.function_frame(root) if root is not facts.tree else None
    scope = frame.scope if frame is not None else facts.module_scope
    return sorted(pos_of(n) for stmt in body for n in walk(stmt)
                  if isinstance(n, ast.Call) and _is_training_call(n, module, facts, scope))


def _is_training_call(call: ast.Call, module, facts, scope) -> bool:
    """`loss.backward()`, `optimizer.step()`; a call named for training (`fit`, `train_epoch`) that
    involves the module (its receiver or an argument, or a function of the file that reads it); a
    trainer's or engine's `run` / `fit` / `train` (`trainer.run(loader)`)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if not name:
        return False
    mode_switch = not call.keywords and (not call.args or (
        len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, bool)))
    if (isinstance(func, ast.Attribute) and name in TRAINER_RUNS and _built_with(func.value, module, call, scope)
            and not (name in MODE_SWITCH and mode_switch)):
        return True  # sbs = StepByStep(model, loss_fn, optimizer); sbs.train(n_epochs)
    if name in MODE_SWITCH and isinstance(func, ast.Attribute) and len(call.args) <= 1 and not call.keywords:
        return False  # model.train() / model.eval(): a mode switch, no update
    if name in ("backward", "step"):
        return not (name == "step" and isinstance(func, ast.Attribute) and names.OTHER_OBJECT(dotted(func.value)))
    if isinstance(func, ast.Attribute) and names.TRAINER(base_name(func.value)) and name in TRAINER_RUNS:
        return True
    if not names.TRAINING_FUNC(name):
        return False
    if module is None:
        return True
    involved = {n.id for n in walk(call) if isinstance(n, ast.Name)}
    return module in involved or (isinstance(func, ast.Name) and _reads_global(func.id, module, facts))


def _built_with(recv, module, call, scope) -> bool:
    """`recv` is a name bound (before `call`) to an object built with the module as an argument."""
    if module is None or not isinstance(recv, ast.Name):
        return False
    b = scope.binding_before(recv.id, pos_of(call))
    made = b.value if b is not None and b.kind == Bind.ASSIGN else None
    return isinstance(made, ast.Call) and any(isinstance(a, ast.Name) and a.id == module
                                              for a in made.args + [k.value for k in made.keywords])


def _reads_global(function: str, name: str, facts) -> bool:
    """A module-level function of the file that reads `name` (a notebook's `train()` using `model`)."""
    return name in facts.index(_global_reads, facts.tree).get(function, ())


def _global_reads(facts, tree) -> dict:
    found: dict = {}
    for d in tree.body:
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(d.name, set()).update(n.id for n in walk(d) if isinstance(n, ast.Name))
    return found


def _used_as_loading_target(ctx, name: str) -> bool:
    """`sd[k].copy_(...)`, `sd[k] = ...`, `sd.update(...)`: a dict edited on purpose."""
    func = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return name in ctx.facts.index(_loading_targets, func)


def _loading_targets(facts, func) -> set:
    found = set()
    for n in walk(func):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and isinstance(n.ctx, ast.Store):
            found.add(n.value.id)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            recv, method = n.func.value, n.func.attr
            if isinstance(recv, ast.Subscript) and method.endswith("_"):
                recv = recv.value  # sd[k].copy_(...)
            elif method not in ("update", "pop", "setdefault"):
                continue
            if isinstance(recv, ast.Name):
                found.add(recv.id)
    return found
