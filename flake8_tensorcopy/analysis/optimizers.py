"""Which modules an optimizer's step updates, read from how the optimizer was built.

`opt = torch.optim.SGD(student.parameters())` holds the parameters of `student`: `opt.step()` (or
`scaler.step(opt)`) changes `student`'s weights and no other module's. `stepped(call, scope)` gives the
root names of the modules a step call updates, or None when the code does not say (an optimizer passed in,
built from a list of tensors, given more parameters by `add_param_group`, or a `self.` attribute).
`kept_apart(name, root, scope)` says whether the module `name` is used in `root` only in ways that share
no parameters with another module (called, asked for its state, switched to eval): only then is a step of
another module's optimizer no update of it.
"""
from __future__ import annotations

import ast
from typing import Optional

from .facts import Bind, base_name, walk

PARAMETERS = frozenset({"parameters", "named_parameters"})
HOLDERS = frozenset({"list", "tuple", "filter", "chain", "itertools.chain"})  # keep the parameters they are given
# what may be done with a module that shares no parameters with another one and is not written in place
KEPT_APART_USES = frozenset({"state_dict", "load_state_dict", "eval", "train", "to", "cuda", "cpu", "half",
                             "float", "double", "requires_grad_", "zero_grad"})
MAX_DEPTH = 3  # names followed, one from another, to the expression that built them


def stepped(call: ast.Call, scope, facts) -> Optional[frozenset]:
    """Root names of the modules `opt.step()` / `scaler.step(opt)` updates, or None when unknown."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "step"):
        return None
    opt = call.args[0] if len(call.args) == 1 and isinstance(call.args[0], ast.Name) else func.value
    if not isinstance(opt, ast.Name) or _grows(opt.id, scope):
        return None
    return _held(opt, scope, facts, 0)


def _held(expr: ast.expr, scope, facts, depth: int) -> Optional[frozenset]:
    """Root names of the modules whose parameters `expr` holds (an optimizer holds those it was built
    with), or None when some of them are not known."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        found = scope.reaching(expr.id, (expr.lineno, expr.col_offset))
        if not found or any(b.kind != Bind.ASSIGN or b.value is None for b in found):
            return None
        return _union([_held(b.value, scope, facts, depth + 1) for b in found])
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in PARAMETERS:
            root = base_name(func.value)
            return frozenset({root}) if root not in (None, "self") else None
        name = facts.qualname(func) or (func.id if isinstance(func, ast.Name) else None)
        if name in HOLDERS:
            held = expr.args[1:] if name == "filter" else expr.args
            return _union([_held(a, scope, facts, depth) for a in held]) if held else None
        given = [k.value for k in expr.keywords if k.arg == "params"] or expr.args[:1]
        return _held(given[0], scope, facts, depth) if given else None  # an optimizer, or one wrapping one
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _union([_held(expr.left, scope, facts, depth), _held(expr.right, scope, facts, depth)])
    if isinstance(expr, (ast.List, ast.Tuple)):
        return _union([_group(e, scope, facts, depth) for e in expr.elts]) if expr.elts else None
    if isinstance(expr, (ast.ListComp, ast.GeneratorExp)) and len(expr.generators) == 1:
        return _held(expr.generators[0].iter, scope, facts, depth)
    return None


def _group(expr: ast.expr, scope, facts, depth: int) -> Optional[frozenset]:
    """A parameter group `{"params": model.parameters(), "lr": ...}`, or an iterable of parameters."""
    if isinstance(expr, ast.Dict):
        given = [v for k, v in zip(expr.keys, expr.values) if isinstance(k, ast.Constant) and k.value == "params"]
        return _held(given[0], scope, facts, depth) if len(given) == 1 and None not in expr.keys else None
    return _held(expr, scope, facts, depth) if isinstance(expr, ast.Call) else None


def _union(parts: list) -> Optional[frozenset]:
    return None if any(p is None for p in parts) else frozenset().union(*parts)


def _grows(name: str, scope) -> bool:
    """`name.add_param_group(...)` anywhere in the scope: the optimizer gets parameters built elsewhere."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_param_group"
               and isinstance(n.func.value, ast.Name) and n.func.value.id == name for n in walk(scope.node))


def kept_apart(name: str, root: ast.AST, scope, others: frozenset, facts) -> bool:
    """The module `name` shares no parameters with the modules `others` as far as `root` shows: every
    binding of it in the scope is a parameter or a call that does not mention them (`copy.deepcopy(m)`
    aside), and every read of it calls it, one of KEPT_APART_USES or deepcopy; anything else (passed to a call, an
    attribute read, `name.parameters()` written in place) may share or change its weights."""
    for b in scope.bindings.get(name, ()):
        if b.kind == Bind.ARG:
            continue
        if b.kind != Bind.ASSIGN or not isinstance(b.value, ast.Call):
            return False
        if facts.qualname(b.value.func) == "copy.deepcopy":
            continue
        if any(isinstance(n, ast.Name) and n.id in others for n in walk(b.value)):
            return False
    allowed = set()
    for n in walk(root):
        if isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Name) and func.id == name:
                allowed.add(id(func))
            elif (isinstance(func, ast.Attribute) and func.attr in KEPT_APART_USES and isinstance(func.value, ast.Name)
                  and func.value.id == name):
                allowed.add(id(func.value))
            elif facts.qualname(func) == "copy.deepcopy":  # a copy shares nothing with it
                allowed.update(id(a) for a in n.args)
    return all(id(n) in allowed for n in walk(root)
               if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load))
