"""`state_dict()` snapshot kept without a copy while the module keeps training.

## What it does
Flags `snapshot = model.state_dict()` (also as one target of `best = last = ...` or one element of
`best_loss, best = loss.item(), model.state_dict()`), and the shallow "copies" `dict(...)`, `OrderedDict(...)`,
`.copy()`, `copy.copy(...)`, `{k: v for k, v in ....items()}`, `{k: v.detach() ...}`,
`{k: v.cpu() ...}` of it (or of a name bound to it), when the snapshot outlives a later update of the
module and is then read: reloaded with `load_state_dict`, compared, returned or saved. A later update is a training call
(`.backward()`, `.step()`, a `fit`/`train...` call that involves the module, a trainer's or engine's
`run`/`fit`/`train`, or that of an object built with the module: `sbs = StepByStep(model, ...)`,
`sbs.train(n)`; a framework's training entry point given the module: `trainer.fit(model)`,
`tuner.lr_find(model)`, `Trainer(model=model).train()`; a def of the package passed the module whose
body trains it: `run_epoch(model, loader)`) between the snapshot and the read, a training
loop that takes the snapshot in some iterations (under an `if`) and reads it after the loop (the
"best weights" pattern; also when a method of the file takes it under an `if`, a training loop calls that
method once per step on one object, `stopper.step(score, model)`, and reads `stopper.best` after the loop),
or a loop that reloads the snapshot in each iteration and trains after the
reload (a "reset to the initial weights" that resets nothing from the second iteration on). A method of
the class that returns the module's `state_dict()` (`self.get_state_dict()`) counts as the call itself.
A snapshot kept in a container entry is kept all the same: `best["model"] = model.state_dict()`,
`self.states[epoch] = ...`, `ckpts.append(...)`, `ckpt = {"model": model.state_dict(), ...}`; one that
adds a new entry at every step of a training loop (`append`, an index that is the loop's variable) and
is read after the loop holds the last weights in every entry.

Not flagged: a snapshot read before any update (`torch.save(model.state_dict(), path)`, reloading into another
module, `target.load_state_dict(model.state_dict())`), `torch.save(sd)` of a snapshot whose name does not say
it is a frozen copy (`best`, `init`, `orig`, `prev`, ...) after training (that saves the final weights), a
snapshot bound in every iteration and read after the loop, receivers that are not modules (optimizers,
schedulers, scalers, metrics, engines, trainers, callbacks), a module the code's optimizers do not hold (a
teacher's snapshot, where every optimizer stepped is built from the student's `parameters()` and the teacher
is only called, switched to eval or reloaded), classes that override `state_dict()`, dicts used as in-place
loading targets (`sd[k].copy_(...)`, `sd[k] = ...`, entries written while iterating, `for v, new in
zip(sd.values(), flat): v.data = new`, or handed to code that may fill them, `buffer.unpack(sd.values())`; in
any method for `self.sd`), the snapshots of a module built anew in each pass of a loop (an ensemble, k folds),
snapshots read only for their keys (`sd.keys()`, `len(sd)`, `k in sd`), a checkpoint dict read later only for
another entry (`ckpt = {"model": model.state_dict(), "epoch": epoch}`, then `ckpt["epoch"]`), calls named for
training that do not involve the module (`pca.fit(features)`), and a snapshot named for the latest weights
(`last_wts`, `latest_state`, `final_weights`): what the alias holds is what the name says, and a copy would
roll the weights back to whenever the snapshot was last taken.

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
on the snapshot tracking the live model changes behaviour. No fix for `state_dict(keep_vars=True)`: its
entries are the live Parameters and buffers, and deepcopy raises on a buffer holding a non-leaf tensor.

## Known problems
Updates made by a function that receives the model (`run_epoch(model)`) are seen when the package
holds its def and that def trains what it receives, or when its name says it trains (`train`, `fit`,
`learn`, `optimize`); a function of another library is only known by the framework APIs the analysis
declares (analysis/frameworks.py). A snapshot stored on an attribute
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

from ..analysis import feasible, names, per_step, state_dicts, training
from ..analysis import kept as kept_objects
from ..analysis.bodies import loops
from ..analysis.facts import Bind, end_of, pos_of
from .model import FixAvailability, FixForm, FixSafety, Rule
from .edits import tensor_replace


def check(node, ctx):
    for kept in state_dicts.kept_snapshots(node, ctx):
        if not _meant_latest(kept.key):
            yield from _judged(node, kept, ctx)


def _judged(node, kept, ctx):
    value, call = kept.value, kept.call
    why = _outlived_by_update(node, kept, state_dicts.module_root(call, ctx), ctx)
    if why is None:
        return
    source = ctx.text(call)
    if isinstance(value, ast.DictComp):
        fix = tensor_replace(ctx, [value.value], value.value, _cloned(value.value, ctx), FixSafety.UNSAFE)
        use = f"{_cloned(value.value, ctx)} in the comprehension"
    else:
        deepcopy = _deepcopy_spelling(ctx)
        use = f"{deepcopy or 'copy.deepcopy'}({source})"
        imports = ("copy",) if deepcopy == "copy.deepcopy" else ()
        fix = ctx.replace(value, use, FixSafety.UNSAFE, imports=imports) if deepcopy and not _keeps_vars(call) else None
    yield ctx.finding(value, fix, target=kept.shown, what=kept.what, why=why, use=use)


def _keeps_vars(call: ast.Call) -> bool:
    """`state_dict(keep_vars=True)` (or any value but False): its entries are the live Parameters and buffers,
    and deepcopy raises on a buffer that holds a non-leaf tensor; the fix is left to the author."""
    return any(k.arg == "keep_vars" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               or k.arg is None for k in call.keywords) or len(call.args) >= 3


def _meant_latest(key: str) -> bool:
    """A snapshot named for the latest weights (`last_wts`, `final_state`): the alias gives what it says."""
    name = key.rsplit(".", 1)[-1]
    return names.LATEST_NAME(name) and not names.SNAPSHOT_NAME(name)


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


def _cloned(expr, ctx) -> str:
    text = ctx.text(expr)
    return f"{text}.detach().clone()" if isinstance(expr, ast.Name) else f"{text}.clone()"


def _outlived_by_update(node, kept, module, ctx):
    start, end = pos_of(node), end_of(node)
    key = kept.key
    written_only = state_dicts.entry_writes(ctx, key) if kept.entry else set()
    if isinstance(kept.holder, ast.Name):
        scope = ctx.frame.scope
        keys_only = state_dicts.key_reads(ctx, key) | state_dicts.other_entry_reads(ctx, key, node, kept.value)
        home = start if kept.binds else _origin_pos(scope, key, start)
        reads = [p for p, found in _loads_reached(scope, key, ctx).get(home, ()) if p > end
                 and _feasible(found, home, ctx) and p not in keys_only and p not in written_only]
        if not kept.entry and state_dicts.used_as_loading_target(ctx, key):
            return None
    else:
        if not kept.entry and state_dicts.used_as_loading_target(ctx, key):
            return None  # `self.sd` loaded into entry by entry, in this method or another
        reads = [p for p in state_dicts.attribute_reads(ctx, key, start, end) if p not in written_only]
        if not reads:  # read only by another class: `load_state_dict(callback.best_state_dict)`
            return state_dicts.reloaded_by_a_training_class(key, ctx) or _kept_for_caller(node, key, ctx)
    if not reads:
        return None
    # torch.save(sd) after the training that follows saves the final weights, which may be the intent;
    # a snapshot taken inside a training loop and read after it (the "best" pattern) is not
    saved = set() if names.SNAPSHOT_NAME(key.rsplit(".", 1)[-1]) else state_dicts.saved_positions(ctx, key)
    trainings = training.training_calls(ctx, module)
    for read in reads:
        if read not in saved and _any_between(trainings, end, read):
            return "the training that follows"
    for loop in ctx.frame.loops:
        loop_start, loop_end = pos_of(loop), end_of(loop)
        if module is not None and kept_objects.new_each_pass(ctx.frame.scope, module, loop):
            continue  # `m = Net()` in each pass: later passes train another module
        if ((kept.per_step or _conditional_in(loop, start, ctx))
                and _any_between(trainings, loop_start, loop_end, inclusive=True)
                and any(p > loop_end or not _in_function(ctx, p) for p in reads)):
            return "the training in later iterations of the loop"
    for loop in _loops_after(ctx, end):  # reloaded each iteration, trained later in it: the next reload
        loop_start, loop_end = pos_of(loop), end_of(loop)  # gets the trained weights ("reset" that is not)
        if (any(loop_start <= p <= loop_end and p not in saved for p in reads)
                and any(loop_start <= p <= loop_end for p in trainings)):
            return "the training in earlier iterations of the loop"
    if isinstance(kept.holder, ast.Name):
        return None
    return state_dicts.reloaded_by_a_training_class(key, ctx) or _kept_for_caller(node, key, ctx)


def _kept_for_caller(node, key: str, ctx):
    """`self.best = model.state_dict()` taken on some calls only (under an `if`) of a method that a training
    loop calls once per step on one object (`stopper.step(score, model)`), whose caller reads `stopper.best`
    after the loop: the later steps train the weights the snapshot shares."""
    attr = key.split(".", 1)[1] if key.startswith("self.") and key.count(".") == 1 else None
    if attr is None or ctx.frame.func is None or not _conditional_in(ctx.frame.func, pos_of(node), ctx):
        return None
    if any(per_step.read_after_loop(s, attr) for s in per_step.per_step_calls(attr, ctx)):
        return "the training in the caller's later steps"
    return None


def _loops_after(ctx, pos) -> list:
    """The loops of the snapshot's function (or module code) that start after `pos`."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return [n for n in loops(ctx.facts, root) if pos_of(n) > pos]


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


def _in_function(ctx, pos) -> bool:
    func = ctx.frame.func
    return func is None or pos_of(func) <= pos <= end_of(func)


def _origin_pos(scope, name, pos):
    b = scope.origin(name, pos)
    return b.pos if b is not None else None


def _loads_reached(scope, name, ctx) -> dict:
    """binding position -> [(read, the bindings reaching it)] for every read of `name` in the scope, made
    once per scope and name (each snapshot asks only for the reads its binding reaches)."""
    key = ("ten301-reached", id(scope), name)
    memo = ctx.facts.memo
    if key not in memo:
        index: dict = {}
        for p in scope.loads_after(name, (0, -1)):
            found = scope.reaching(name, p)
            for b in found:
                index.setdefault(b.pos, []).append((p, found))
        memo[key] = index
    return memo[key]


def _feasible(found, start, ctx) -> bool:
    """The binding made at `start`, among the `found` ones reaching a read, may give the read its value on
    some path that can run (a snapshot rebound only in some branches still reaches the read after them,
    unless the first pass of their loop certainly takes the branch)."""
    others = [b for b in found if b.pos != start]
    return not (others and all(feasible.replaced_on_first_pass(b, ctx, start) for b in others))


RULE = Rule(
    code="TEN301",
    name="state-dict-snapshot-aliased",
    message=("'{target}' keeps {what}: its tensors share storage with the live weights and change with "
             "{why}; use {use}"),
    nodes=(ast.Assign, ast.AnnAssign, ast.Expr),
    check=check,
    trigger=r"state_dict\(",
    claim=("The tensors of module.state_dict() (and of dict()/.copy()/{k: v.detach()} of it) share storage "
           "with the parameters: after optimizer.step() the snapshot equals the live weights; "
           "copy.deepcopy(module.state_dict()) does not change."),
    doc=__doc__,
    fix=FixAvailability.SOMETIMES,
    fix_forms=(
        FixForm("`copy.deepcopy(model.state_dict())` (or `.clone()` in a comprehension)",
                FixSafety.UNSAFE,
                "aliasing: the snapshot no longer tracks the live weights; memory doubles"),
    ),
    # reads of `self.best` in other methods, and the file's functions that train
    whole_file=True,
)
