"""What flows into a backward pass, read from one function's code (the module's code outside functions:
the whole file): the loss keys (names, attribute paths and dict entries with a fixed key whose values reach
a `backward()`, `torch.autograd.grad` or Lightning's `self.manual_backward(...)` call), the lists
backpropagated through one element (`losses[-1].backward()`), the dicts whose entries are summed into a
loss (`sum(parts.values())`), whether a value holds a dict of loss terms (from a def, or unpacked beside
a backpropagated loss), and whether an expression is an entry of such a dict.
"""
from __future__ import annotations

import ast
from typing import Optional

from . import api, elements, evidence, numbers, project, summaries
from .facts import GRAD_CALLS, Bind, children, dotted, entry_added, pos_of, walk

SUMS = frozenset({"torch.stack", "torch.cat", "torch.sum"})


def loss_keys(ctx) -> frozenset:
    """Names and attribute paths that reach a backward() / autograd.grad call in the function (the
    module's code outside functions: the whole file)."""
    return _backwards(ctx)[0]


def backpropagated_in(facts, root) -> frozenset:
    """The loss keys of the code under `root` (a class: all its methods' code, their names pooled)."""
    return facts.index(_backward_keys, root)[0]


def attribute_backpropagated(attr: str, facts) -> bool:
    """Some code of the file backpropagates through an attribute `attr` of an object (`self.attr`,
    `policy.attr`, iterated into a loss): what it holds is a loss term, its graph needed."""
    return any("." in k and k.rsplit(".", 1)[1] == attr for k in backpropagated_in(facts, facts.tree))


def backpropagated_elements(ctx) -> frozenset:
    """Lists an element of which is backpropagated (`losses[-1].backward()`): what they hold requires grad,
    and backward through one element leaves the others' graphs alive."""
    return _backwards(ctx)[1]


def summed_dicts(ctx) -> frozenset:
    """Dicts whose entries are summed into what is backpropagated (`sum(losses.values()).backward()`):
    each entry (`losses["ce"]`, or `v` of `for k, v in losses.items()`) is a loss term."""
    return _backwards(ctx)[2]


def _backwards(ctx) -> tuple[frozenset, frozenset, frozenset]:
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return ctx.facts.index(_backward_keys, root)


def _backward_keys(facts, root) -> tuple[frozenset, frozenset, frozenset]:
    """(loss keys, lists backpropagated through one element, dicts whose entries are summed into a loss)
    of the code under `root`, in one walk. A dict entry with a fixed key (`out["loss"]`,
    `out[self.metric]`) is a key of its own: storing another entry (`out["mean"] = torch.stack(losses)`)
    does not flow into the loss; storing the whole dict (`out = model(x)`) does."""
    keys, elements, assigns, losses = set(), set(), [], []
    for n in walk(root):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and n.func.attr == "backward":
                element = _element_of(n.func.value)
                if element is None:
                    losses.append(n.func.value)
                else:
                    elements.add(element)
                losses += list(n.args) + [k.value for k in n.keywords]
            elif facts.qualname(n.func) in GRAD_CALLS or (
                    isinstance(n.func, ast.Attribute) and n.func.attr == "manual_backward"):  # Lightning's
                losses += list(n.args) + [k.value for k in n.keywords]
            elif (added := entry_added(n)) is not None:  # `terms.append(v)` stores v's reads in `terms`
                container, entry = added
                assigns.append((_stored(container), _reads(entry), entry))
        elif isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            assigns.append((set().union(*(_stored(t) for t in targets)), _reads(n.value), n.value))
        elif isinstance(n, (ast.For, ast.AsyncFor)):  # what is iterated gives the items (a comprehension's
            assigns.append((_stored(n.target), _reads(n.iter), n.iter))  # variables are its own: not pooled)
    for expr in losses:
        keys |= _reads(expr)
    changed = True
    while changed:
        changed = False
        for targets, sources, value in assigns:
            flowing = _flowing(targets, sources, value, keys)
            if not flowing <= keys:
                keys |= flowing
                changed = True
    losses += [value for targets, sources, value in assigns if _flowing(targets, sources, value, keys)]
    summed = frozenset(d for expr in losses for d in _summed_entries(expr, facts))
    names = frozenset(k if isinstance(k, str) else k[0] for k in keys)
    return names, frozenset(elements), summed


def fixed_entry(expr) -> Optional[tuple[str, str]]:
    """('out', index) for a dict entry with a fixed key: `out["loss"]`, `out[self.metric]`, `out[f"m_{k}"]`."""
    if isinstance(expr, ast.Subscript):
        base, index = dotted(expr.value), expr.slice
        if base and (isinstance(index, (ast.Attribute, ast.JoinedStr)) or (
                isinstance(index, ast.Constant) and isinstance(index.value, str))):
            return base, ast.dump(index, annotate_fields=False)
    return None


def _reads(expr) -> set:
    """The keys an expression reads: names, attribute paths, and dict entries with a fixed key."""
    found, todo = set(), [expr]
    while todo:
        n = todo.pop()
        entry = fixed_entry(n)
        if entry is not None:
            found.add(entry)
            continue
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute) and dotted(n):
            found.add(dotted(n))
        todo.extend(children(n))
    return found


def _stored(target) -> set:
    """What an assignment target stores: a name, an attribute path, a dict entry, or (`d[i]`) the whole `d`."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_stored(e) for e in target.elts)) if target.elts else set()
    if isinstance(target, ast.Starred):
        return _stored(target.value)
    entry = fixed_entry(target)
    if entry is not None:
        return {entry}
    if isinstance(target, ast.Subscript) and dotted(target.value):
        return {dotted(target.value)}
    return {dotted(target)} if dotted(target) else _reads(target)


def _flowing(targets: set, sources: set, value, keys: set) -> set:
    """What an assignment's value passes into the loss keys: all it reads when it stores a key, but of a
    dict display stored whole where only some entries are keys (`out = {**out, **extra}`), only what
    gives those entries."""
    if not any(_hits(t, keys) for t in targets):
        return set()
    if not (isinstance(value, ast.Dict) and len(targets) == 1):
        return sources
    (target,) = targets
    if not isinstance(target, str) or target in keys:
        return sources
    found = set()
    for entry in (k[1] for k in keys if not isinstance(k, str) and k[0] == target):
        for key, item in zip(value.keys, value.values):
            if key is None:  # **spread: its entry of the same key
                found |= {(dotted(item), entry)} if dotted(item) else _reads(item)
            elif _may_be_same(ast.dump(key, annotate_fields=False), entry):
                found |= _reads(item)
    return found


def _hits(target, keys: set) -> bool:
    """Storing `target` may change a loss key: the key itself, a whole dict one of whose entries is a
    key, or an entry that may be the key's (`out["loss"]` and `out["mean"]` are two)."""
    if isinstance(target, str):
        return target in keys or any(not isinstance(k, str) and k[0] == target for k in keys)
    base, index = target
    return base in keys or any(not isinstance(k, str) and k[0] == base and _may_be_same(index, k[1]) for k in keys)


def _may_be_same(a: str, b: str) -> bool:
    """Two fixed keys (their ast dumps) may be equal: not two different strings, nor a key formatted with
    text of its own (f"mean_{m}", a derived entry) and a key held by a name (`self.metric`)."""
    if a == b:
        return True
    if a.startswith("Constant(") and b.startswith("Constant("):
        return False
    for fstr, other in ((a, b), (b, a)):
        if fstr.startswith("JoinedStr(") and "Constant(" in fstr and other.startswith(("Attribute(", "Name(")):
            return False
    return True


def _summed_entries(expr, facts) -> set:
    """Dicts whose entries `expr` adds up: `sum(d.values())`, `torch.stack(list(d.values()))`,
    `sum(v for v in d.values())`."""
    found = set()
    for n in walk(expr):
        if not (isinstance(n, ast.Call) and n.args and (
                (isinstance(n.func, ast.Name) and n.func.id == "sum") or facts.qualname(n.func) in SUMS)):
            continue
        arg = n.args[0]
        while isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in ("list", "tuple"):
            arg = arg.args[0] if len(arg.args) == 1 else None
        if isinstance(arg, (ast.GeneratorExp, ast.ListComp)) and len(arg.generators) == 1:
            arg = arg.generators[0].iter
        if (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in ("values", "items")
                and not arg.args and dotted(arg.func.value)):
            found.add(dotted(arg.func.value))
    return found


def _element_of(expr) -> Optional[str]:
    """The list whose one element `expr` is: 'losses' for `losses[-1]` (a constant index)."""
    if isinstance(expr, ast.Subscript):
        index = expr.slice.operand if isinstance(expr.slice, ast.UnaryOp) else expr.slice
        if isinstance(index, ast.Constant) and type(index.value) is int:
            return dotted(expr.value)
    return None


def returned_keys(ctx) -> set:
    """Every name and attribute path in what the function around `ctx` (or the module) returns or yields."""
    func = ctx.frame.func
    return ctx.facts.index(_returned_keys, func if func is not None else ctx.facts.tree)


def _returned_keys(facts, body) -> set:
    return {k for n in walk(body) if isinstance(n, (ast.Return, ast.Yield)) and n.value is not None
            for k in keys_in(n.value)}


def keys_in(expr) -> set:
    """Every name and attribute path in `expr`."""
    keys = set()
    for n in walk(expr):
        if isinstance(n, ast.Name):
            keys.add(n.id)
        elif isinstance(n, ast.Attribute):
            d = dotted(n)
            if d:
                keys.add(d)
    return keys


def loss_dict(name, ctx, pos, depth: int = 0) -> Optional[bool]:
    """True when the name (or call) `name` holds a dict of loss terms at `pos`: their sum is backpropagated
    here, or it comes from a def that returns such a dict, or it is unpacked beside a loss that is
    backpropagated here from a call whose returns build that loss as the sum of its entries
    (`loss, parts = self.loss_fn(out, y)` with `return sum(parts.values()), parts`); else None."""
    if depth > 4:
        return None
    if isinstance(name, ast.Call):
        fn = summaries.callee(name, ctx, pos)
        return summaries.returned(fn, ctx, None, loss_dict, depth + 1, any_path=True)
    if not isinstance(name, ast.Name):
        return None
    if name.id in summed_dicts(ctx) or name.id in ctx.frame.scope.backward_names:
        return True
    found = ctx.frame.scope.reaching(name.id, pos)
    b = found[0] if len(found) == 1 else None
    if b is None or b.grad_off or not isinstance(b.value, ast.Call):
        return None
    call = b.value
    if b.kind == Bind.ASSIGN:
        return loss_dict(call, ctx, b.pos, depth + 1)
    if b.kind != Bind.UNPACK or not isinstance(b.node, ast.Assign):
        return None
    fn = summaries.callee(call, ctx, b.pos) or summaries.held_call(call, ctx, b.pos)
    losses = loss_keys(ctx) | ctx.frame.scope.backward_names
    unpacked = next((t for t in b.node.targets if isinstance(t, (ast.Tuple, ast.List))), None)
    for i, elt in enumerate(unpacked.elts if unpacked is not None else ()):
        if i != b.index and isinstance(elt, ast.Name) and elt.id in losses and _sums_entries_into(fn, b.index, i, ctx):
            return True
    return None


def _sums_entries_into(fn, entries: int, total: int, ctx) -> bool:
    """Every return of `fn` is a tuple whose element `total` is the sum of the entries of element
    `entries` (`return sum(parts.values()), parts`, or a name bound to that sum)."""
    home = project.home(fn) or ctx.facts
    returns = summaries.returns(fn)
    frame = home.function_frame(fn) if returns else None
    if frame is None:
        return False
    for r in returns:
        value = r.value
        if not (isinstance(value, ast.Tuple) and max(entries, total) < len(value.elts)):
            return False
        parts, summed = dotted(value.elts[entries]), value.elts[total]
        if isinstance(summed, ast.Name):
            found = frame.scope.reaching(summed.id, pos_of(r))
            summed = found[0].value if len(found) == 1 and found[0].kind == Bind.ASSIGN else None
        if parts is None or summed is None or parts not in _summed_entries(summed, home):
            return False
    return True


def loss_entry(expr, ctx) -> bool:
    """An entry of a dict whose entries' sum (`sum(losses.values()).backward()`) or one of whose entries
    (`out["loss"].backward()`) is backpropagated: `losses["ce"]`, `losses[k]`, `v` of
    `for k, v in losses.items()` (or `for v in losses.values()`), and sums and products of them. Not an entry
    whose value the code shows (`return {"loss": l, "scores": {"mean": float(m)}}`): what it holds says."""
    if isinstance(expr, ast.BinOp):
        return loss_entry(expr.left, ctx) or loss_entry(expr.right, ctx)
    held = None
    if isinstance(expr, ast.Subscript) and (isinstance(expr.slice, ast.Name) or fixed_entry(expr) is not None):
        if elements.entry_read(expr, ctx, ctx.pos):
            return False
        held = expr.value
    elif isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, ctx.pos)
        if b is not None and b.kind == Bind.FOR:
            held = _entries_iterated(b.node, expr.id)
    if held is None or numbers.number_dict(held, ctx):
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


def used_as_target(name: str, ctx) -> bool:
    """The value `name` is bound to here is later passed, in the same function, as the target of a torch
    loss: the `target` parameter of a torch.nn.functional loss (`F.mse_loss(pred, target)`), or the second
    input of a loss module without parameters (`criterion(pred, target)`). A target is meant fixed: if it
    keeps its graph, the loss's gradient flows into it too."""
    scope = ctx.frame.scope
    mine = [b for b in scope.bindings.get(name, ()) if b.pos == ctx.pos]
    if not mine:
        return False
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    targets = ctx.facts.memo.get(("loss-targets", id(body)))
    if targets is None:  # every name passed as a loss's target in the function, found in one walk
        targets = ctx.facts.memo[("loss-targets", id(body))] = {}
        for n in walk(body):
            if not isinstance(n, ast.Call) or len(n.args) + len(n.keywords) < 2:
                continue  # a loss takes an input and a target
            index = api.target_index(ctx.facts.qualname(n.func))
            if index is None and evidence.parameterless_loss(n.func, ctx, pos_of(n)):
                index = 1
            if index is not None:
                for g in [k.value for k in n.keywords if k.arg == "target"] + n.args[index:index + 1]:
                    if isinstance(g, ast.Name):
                        targets.setdefault(g.id, []).append(pos_of(g))
    return any(at > ctx.pos and any(b is mine[0] for b in scope.reaching(name, at)) for at in targets.get(name, ()))
