"""State-dict snapshots: when a value holds a module's live tensors (its `state_dict()`, a shallow copy of
it, a comprehension over its entries that copies none), and where such a snapshot is read: for its keys
alone, as a loading target, by `torch.save`, as an attribute anywhere in the file, or reloaded by a class
that trains (or by a trainer elsewhere in the package, for a callback's snapshot).
"""
from __future__ import annotations

import ast
import builtins
import os
from typing import NamedTuple, Optional

from . import accumulators, evidence, names, project, summaries, training
from .bodies import item_sources
from .evidence import MODULE
from .facts import ADDERS, Bind, assigned, base_name, dotted, end_of, pos_of, walk

SHALLOW_CALLS = frozenset({"dict", "collections.OrderedDict", "OrderedDict", "copy.copy"})
ALIAS_METHODS = frozenset({"detach", "cpu", "to", "float", "contiguous", "requires_grad_", "view_as"})


def snapshot(value, ctx):
    """(the state_dict() call or the name bound to it, a description) when `value` holds the module's
    live tensors."""
    call = state_dict_call(value, ctx)
    if call is not None:
        return call, "the module's state_dict()"
    if _returns_state_dict(value, ctx):
        return value, f"the state_dict() that {ctx.facts.segment(value.func)}() returns"
    if isinstance(value, ast.Call):
        q = ctx.facts.qualname(value.func) or (value.func.id if isinstance(value.func, ast.Name) else None)
        if q in SHALLOW_CALLS and len(value.args) == 1 and not value.keywords:
            if state_dict_source(value.args[0], ctx) is not None:
                return value.args[0], f"a shallow copy of {ctx.facts.segment(value.args[0])}"
        if (isinstance(value.func, ast.Attribute) and value.func.attr == "copy" and not value.args
                and not value.keywords):
            if state_dict_source(value.func.value, ctx) is not None:
                return value.func.value, f"a shallow copy of {ctx.facts.segment(value.func.value)}"
    if isinstance(value, ast.DictComp) and len(value.generators) == 1:
        gen = value.generators[0]
        it = gen.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                and isinstance(gen.target, ast.Tuple) and len(gen.target.elts) == 2
                and isinstance(gen.target.elts[1], ast.Name)):
            inner = it.func.value
            if state_dict_source(inner, ctx) is not None and _aliases(value.value, gen.target.elts[1].id):
                device_moves = any(isinstance(n, ast.Attribute) and n.attr in ("cpu", "to")
                                   for n in walk(value.value))
                where = " on a CPU model" if device_moves else ""
                return inner, f"entries of {ctx.facts.segment(inner)} that are not copies{where}"
    return None


class Kept(NamedTuple):
    """A snapshot a statement keeps: `holder` (a name or attribute, `key` as text) holds it itself or, with
    `entry`, in an entry (`best["model"] = sd`, `ckpts.append(sd)`, `ckpt = {"model": sd}`); `value` is the
    expression that holds the live tensors; `binds` when the statement binds the holder (`best = ...`, not
    `best[k] = ...`); `per_step` when each step of an enclosing loop adds a new entry."""
    holder: ast.AST
    key: str
    shown: str
    value: ast.AST
    call: ast.AST
    what: str
    entry: bool
    binds: bool
    per_step: bool


def kept_snapshots(node, ctx) -> list[Kept]:
    """The snapshots `node` (an assignment or an expression statement) keeps: `best = sd`,
    `self.best = sd`, `best["model"] = sd`, `self.states[epoch] = sd`, `ckpts.append(sd)`, any of those
    with `sd` inside a dict, list or tuple display, and each target of `best = last = sd` or of
    `best_loss, best = loss.item(), sd` paired with its own element."""
    if isinstance(node, ast.Expr):
        found = accumulators.accumulation(node)
        pairs = [(found[0], found[1][0])] if found is not None and found[1] else []
    elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        pairs = assigned(node, whole=False)
    else:
        return []
    return [kept for target, value in pairs if (kept := _kept(node, target, value, ctx)) is not None]


def _kept(node, target, value, ctx) -> Optional[Kept]:
    holder = target
    while isinstance(holder, ast.Subscript):
        holder = holder.value
    key = dotted(holder)
    held = _held_snapshot(value, ctx) if key is not None else None
    if held is None:
        return None
    shown_value, (call, what) = held
    keys = frozenset().union(*(accumulators.loop_keys(loop, ctx) for loop in ctx.frame.loops))
    per_step = isinstance(node, ast.Expr) or isinstance(target, ast.Subscript) and accumulators.per_step_key(
        target.slice, keys)
    shown = ctx.facts.segment(target) if isinstance(target, ast.Subscript) else key
    binds = holder is target and not isinstance(node, ast.Expr)
    entry = not binds or shown_value is not value
    return Kept(holder, key, shown, shown_value, call, what, entry, binds, per_step)


def _held_snapshot(value, ctx):
    """(the expression, its snapshot) for `value` or an element of the displays it is made of."""
    found = snapshot(value, ctx)
    if found is not None:
        return value, found
    items = value.values if isinstance(value, ast.Dict) else value.elts if isinstance(
        value, (ast.List, ast.Tuple)) else []
    return next((held for item in items if item is not None and (held := _held_snapshot(item, ctx))), None)


def entry_writes(ctx, key: str) -> set:
    """Positions where `key` is only written into, not read: `key[k] = v`, `key.append(v)` and the like."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return ctx.facts.index(_entry_writes, body).get(key, set())


def _entry_writes(facts, body) -> dict:
    found: dict = {}
    for n in walk(body):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            holder = n.value
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr in {*ADDERS, "extend"}):
            holder = n.func.value
        else:
            continue
        if dotted(holder) is not None:
            found.setdefault(dotted(holder), set()).add(pos_of(holder))
    return found


def _returns_state_dict(value, ctx) -> bool:
    """`self.get_state()` where that method of the class returns `self...state_dict()` on every path."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    fn = summaries.callee(value, ctx, ctx.pos)
    returns = summaries.returns(fn)
    return bool(returns) and all(r.value is not None and base_name(r.value) == "self"
                                 and state_dict_call(r.value, ctx) is not None for r in returns)


def state_dict_source(expr, ctx):
    """The state_dict() call behind `expr`: the call itself, or a name bound to it (`sd`)."""
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        if b is None or b.kind != Bind.ASSIGN or b.value is None:
            return None
        expr = b.value
    return state_dict_call(expr, ctx)


def state_dict_call(expr, ctx):
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "state_dict"
            and not expr.args):
        return None
    return expr if _is_module(expr.func.value, ctx) else None


def _is_module(recv, ctx) -> bool:
    if isinstance(recv, ast.Name) and recv.id == "self":
        cls = ctx.frame.cls
        return (cls is not None and cls.name not in ctx.facts.classes_with_state_dict
                and not names.NOT_MODULE_CLASS(cls.name) and evidence.kind(recv, ctx) == MODULE)
    key = dotted(recv)
    if key is None:
        return evidence.kind(recv, ctx) == MODULE  # self.get_network(): what the method returns
    last = key.rsplit(".", 1)[-1].strip("_")
    if names.NOT_MODULE(last):
        return False
    if isinstance(recv, ast.Name):
        b = ctx.frame.scope.binding_before(recv.id, ctx.pos)
        made = b.value if b is not None and b.kind == Bind.ASSIGN else None
        if isinstance(made, ast.Call) and isinstance(made.func, ast.Name):
            if made.func.id in ctx.facts.classes_with_state_dict:
                return False
    return evidence.kind(recv, ctx) == MODULE or bool(names.MODULE_NAME(last))


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


def module_root(call, ctx):
    """The name at the root of the module whose state_dict() is kept (`model`, `self`), or None."""
    sd = call if isinstance(call, ast.Call) else state_dict_source(call, ctx)
    return base_name(sd.func.value) if sd is not None else None


def other_entry_reads(ctx, key: str, node: ast.AST, value: ast.AST) -> set:
    """Positions where `key`, bound by `node` to a dict display whose constant-keyed entry holds `value`
    (`ckpt = {"model": model.state_dict(), "epoch": epoch}`), is read for another constant entry
    (`ckpt["epoch"]`): such a read does not read the snapshot."""
    held = node.value if isinstance(node, ast.Assign) else None
    if not isinstance(held, ast.Dict) or any(not isinstance(k, ast.Constant) for k in held.keys):
        return set()
    mine = {k.value for k, v in zip(held.keys, held.values) if any(n is value for n in walk(v))}
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return {pos_of(n.value) for n in walk(body) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
            and n.value.id == key and isinstance(n.slice, ast.Constant) and n.slice.value not in mine}


def key_reads(ctx, key: str) -> set:
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


def used_as_loading_target(ctx, name: str) -> bool:
    """`sd[k].copy_(...)`, `sd[k] = ...`, `sd.update(...)`, or an entry written in place while iterating
    over it (`for v, new in zip(sd.values(), flat): v.data = new`): a dict edited on purpose. For
    `self.sd`, in any method of the class."""
    cls = ctx.frame.cls if name.startswith("self.") else None
    root = cls if cls is not None else ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return name in ctx.facts.index(_loading_targets, root)


def _loading_targets(facts, root) -> set:
    found, items = set(), {}
    for n in walk(root):
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            items.update(item_sources(n.target, n.iter))
    for n in walk(root):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            found.add(dotted(n.value))
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and n.attr == "data":
            found.add(items.get(dotted(n.value)))  # `v.data = new` for an entry `v`
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            recv, method = n.func.value, n.func.attr
            if method.endswith("_") and not method.startswith("_"):
                found.add(dotted(recv.value) if isinstance(recv, ast.Subscript) else items.get(dotted(recv)))
            elif method in ("update", "pop", "setdefault"):
                found.add(dotted(recv))
        if isinstance(n, ast.Call):
            found.update(_entries_handed_out(n, facts))
    found.discard(None)
    return found


READERS = frozenset(dir(builtins))  # print, len, list, sum, zip, ...: they read entries, never write them


def _entries_handed_out(call: ast.Call, facts) -> list:
    """`buf.unpack(sd.values())`, `TensorBuffer(list(sd.values()))`: a dict's entries handed to code that is
    neither torch's nor a builtin, which may write them (a buffer to receive weights into)."""
    name = facts.qualname(call.func) or (call.func.id if isinstance(call.func, ast.Name) else "")
    if name in READERS or name.startswith("torch.") or name.startswith("numpy."):
        return []
    found = []
    for arg in call.args + [k.value for k in call.keywords]:
        while (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in ("list", "tuple")
               and len(arg.args) == 1):
            arg = arg.args[0]
        if (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "values"
                and not arg.args):
            found.append(dotted(arg.func.value))
    return found


def saved_positions(ctx, key: str) -> set:
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


def attribute_reads(ctx, key: str, start, end) -> list:
    """Where `self.best` (as text) is read in the file, outside the snapshot statement; reads in
    other functions count as reads after it."""
    return [p for p in ctx.facts.index(_attribute_loads, ctx.facts.tree).get(key, ()) if not start <= p <= end]


def _attribute_loads(facts, root) -> dict:
    found: dict = {}
    for n in walk(root):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load) and dotted(n) is not None:
            found.setdefault(dotted(n), []).append(pos_of(n))
    return found


def reloaded_by_a_training_class(key: str, ctx):
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
    trains = hook or any(isinstance(n, ast.Call) and training.is_training_call(n, "self", ctx.facts, ctx.frame.scope)
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
