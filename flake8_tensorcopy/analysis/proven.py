"""What code proves to be a tensor: the "proven by code" strength of the value model (evidence.py), for rules
whose finding needs more than a name or an annotation (TEN204: `torch.tensor(t)` of a tensor).

A value is proven a tensor when it comes from a torch factory or function, through names (every binding
that may reach the read), methods that return tensors, indexing, arithmetic, the numpy functions that
return a tensor for a tensor, the file's own functions and module-level tensors of neighbouring modules;
`tensor` also counts a parameter that some call in the file or the package passes such a value (a
caller's argument is the evidence: summaries.argument with any_site), `tensor_here` does not. Method
names alone (`x.clone()`), parameter annotations and `.weight` are not proof. Answers are memoised per
file, like the other questions of the model. An element of an iterable is proven by what the API gives
(`named_parameters()`, a state_dict's values: analysis/elements.py) or by its iterable's proven elements;
`backward_root` proves a name by what autograd ran on (`loss.backward()`): fixes ask it too
(rules/edits.proven_tensor).
"""
from __future__ import annotations

import ast
import bisect

from . import api, hierarchy, summaries
from . import elements
from .evidence import (MAX_DEPTH, PARAM, STATE_DICT, TENSOR, Strength, kind, memoised, path_kinds, strength,
                       annotation_kind, numpy_tensor_inputs,
                       bindings, loop_items, part, reaching, instance_attribute_kind, self_attribute_kind,
                       held_torch_module)
from .facts import PARAMETER_CLASSES, Bind, walk
from .position import at

SEQUENCES = (ast.List, ast.Tuple, ast.ListComp)  # literals that `*` repeats


@memoised(unknown=False)
def tensor(expr: ast.AST, ctx, pos=None, depth: int = 0) -> bool:
    """Proven a tensor at `pos`, a caller's argument included."""
    return _tensor(expr, ctx, pos, depth)


@memoised(unknown=False)
def tensor_here(expr: ast.AST, ctx, pos=None, depth: int = 0) -> bool:
    """Proven a tensor at `pos` by the code of the file and its imports alone (no caller's argument)."""
    return _tensor(expr, ctx, pos, depth, callers=False)


def _tensor(expr, ctx, pos, depth, callers=True) -> bool:
    """Proven a tensor (module docstring); with `callers`, a parameter that some call passes one is too."""
    if depth > MAX_DEPTH:
        return False
    ask = tensor if callers else tensor_here
    if isinstance(expr, ast.Name):  # every binding that may reach `pos` must give a tensor
        found = bindings(expr, ctx, pos)
        return bool(found) and all(_binding(b, ctx, depth, callers) for b in found)
    if isinstance(expr, ast.Call):
        if summaries.returned(summaries.runs(expr, ctx, pos), ctx, None, ask, depth + 1):
            return True  # a function of the file (or the forward of a module of the file) that returns one
        summed = elements.sum_argument(expr, ctx)
        if summed is not None:  # a sum of proven tensors
            found = elements.items(summed, (), ctx, pos, depth)
            return bool(found) and all(_item(i, ctx, depth, ask) for i in found)
        if _module_output(expr.func, ctx, pos, depth, callers):
            return True  # model(x), self.head(x): a module whose forward gives a proven tensor
        q = ctx.facts.qualname(expr.func)
        inputs = numpy_tensor_inputs(expr, q)
        if inputs:  # numpy.ceil(t) of a tensor is a tensor
            return any(_tensor(a, ctx, pos, depth + 1, callers) for a in inputs)
        if q:
            op = api.function(q)
            return (op is not None and api.tensor_result(op, expr, method=False)) or \
                q in PARAMETER_CLASSES
        if isinstance(expr.func, ast.Attribute):
            op = api.method(expr.func.attr)
            if op is None or not api.tensor_result(op, expr, method=True):
                return False  # x.storage_offset(), x.tolist(), arr.copy(): not a tensor
            return _tensor(expr.func.value, ctx, pos, depth + 1, callers)
        return False
    if isinstance(expr, ast.Attribute) and expr.attr in ("data", "grad", "T", "mT"):
        return _tensor(expr.value, ctx, pos, depth + 1, callers)
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return self_attribute_kind(expr.attr, ctx) in (TENSOR, PARAM) or (  # the class builds it with torch
            callers and constructor_passed(expr.attr, ctx, depth))
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, (ast.Name, ast.Attribute)):
        return instance_attribute_kind(expr, ctx, pos, depth) in (TENSOR, PARAM)  # corpus.ids of a Corpus()
    if isinstance(expr, ast.Subscript):
        found = elements.entry_read(expr, ctx, pos, depth)
        if found:  # an entry of a dict or list the code fills: every entry it may be is a tensor
            return all(_item(i, ctx, depth, ask) for i in found)
        return _tensor(expr.value, ctx, pos, depth + 1, callers)
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Mult) and any(isinstance(e, SEQUENCES) for e in (expr.left, expr.right)):
            return False  # `[n] * t.sum()` repeats the list (a 0-d integer tensor is an index)
        return (_tensor(expr.left, ctx, pos, depth + 1, callers)
                or _tensor(expr.right, ctx, pos, depth + 1, callers))
    if isinstance(expr, ast.UnaryOp):
        return _tensor(expr.operand, ctx, pos, depth + 1, callers)
    return False


def _module_output(func: ast.AST, ctx, pos, depth: int, callers: bool) -> bool:
    """Calling `func` runs a module whose forward gives a proven tensor: `self.head` that the class sets to
    such a torch module, or a name holding one (with `callers`, also a parameter some call passes one)."""
    if isinstance(func, ast.Attribute):
        return isinstance(func.value, ast.Name) and func.value.id == "self" and held_torch_module(func, ctx)
    return isinstance(func, ast.Name) and (module(func, ctx, pos, depth + 1) if callers else
                                           module_here(func, ctx, pos, depth + 1))


@memoised(unknown=False)
def module(expr: ast.AST, ctx, pos=None, depth: int = 0) -> bool:
    """`expr` is a module whose forward gives a proven tensor, a caller's argument included."""
    return _module(expr, ctx, pos, depth, True)


@memoised(unknown=False)
def module_here(expr: ast.AST, ctx, pos=None, depth: int = 0) -> bool:
    """`module`, by the code of the file and its imports alone."""
    return _module(expr, ctx, pos, depth, False)


def _module(expr: ast.AST, ctx, pos, depth: int, callers: bool) -> bool:
    """A torch module torch declares to return one tensor (`nn.Linear(4, 2)`, not `nn.LSTM`), or a module class
    of the package whose forward returns a proven tensor; made here, held by a name, returned by a def of
    the package, or (with `callers`) passed by some call of the def whose parameter it is."""
    if depth > MAX_DEPTH:
        return False
    ask = module if callers else module_here
    if isinstance(expr, ast.Name):
        found = bindings(expr, ctx, pos)
        return bool(found) and all(
            b.kind == Bind.ASSIGN and b.value is not None and ask(b.value, ctx, b.pos, depth + 1)
            or b.kind == Bind.ARG and callers and summaries.argument(b, ctx, module, depth + 1, any_site=True) is True
            for b in found)
    if not isinstance(expr, ast.Call):
        return False
    if api.gives_tensor(ctx.facts.qualname(expr.func)):
        return not any(k.arg == "return_indices" for k in expr.keywords)
    made = summaries.callee(expr, ctx, pos)
    if isinstance(made, ast.ClassDef):
        forward = summaries.class_method(made, "forward", ctx)
        return (summaries.class_method(made, "__call__", ctx) is None and forward is not None
                and summaries.returned(forward, ctx, None, tensor if callers else tensor_here, depth + 1) is True)
    return summaries.returned(made, ctx, None, ask, depth + 1) is True


def constructor_passed(attr: str, ctx, depth: int = 0) -> bool:
    """`self.attr` of the enclosing class is set in `__init__` to a parameter that some call of the class
    passes a tensor (`Jitter(torch.mean(x, 0))` for `self.scale = scale`), and nowhere else in the class (a
    method's `self.scale = [float(s) for s in self.scale]` may run first): that object holds a tensor."""
    cls = ctx.frame.cls
    init = hierarchy.method(cls, "__init__") if cls is not None else None
    frame = ctx.facts.function_frame(init) if init is not None else None
    if frame is None or len(summaries.self_assignments(cls, ctx).get(attr, ())) != 1:
        return False
    for stmt in walk(init):
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Name):
            continue
        if any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
               and t.value.id == "self" for t in stmt.targets):
            found = frame.scope.reaching(stmt.value.id, (stmt.lineno, stmt.col_offset))
            if len(found) == 1 and found[0].kind == Bind.ARG and _binding(found[0], at(ctx, frame, stmt), depth, True):
                return True
    return False


def passed_tensor(expr: ast.AST, ctx, pos=None, depth: int = 0) -> bool:
    """What a call passes is a tensor, or a parameter whose `None` default the function replaces by a tensor
    (`if scale is None: scale = torch.mean(x)`): on that path the callee gets a tensor, whatever else
    the function's callers pass."""
    return tensor(expr, ctx, pos, depth) or isinstance(expr, ast.Name) and _default_replaced(expr, ctx, pos, depth)


def _default_replaced(name: ast.Name, ctx, pos, depth: int) -> bool:
    found = bindings(name, ctx, pos)
    given = [b for b in found if b.kind == Bind.ARG]
    made = [b for b in found if b.kind == Bind.ASSIGN]
    if len(found) != 2 or len(given) != 1 or len(made) != 1 or not _none_default(given[0], ctx):
        return False
    fn = summaries.def_of(given[0], ctx)
    tests = [n.test for n in ctx.facts.enclosing(fn, made[0].pos) if isinstance(n, ast.If)
             and any(made[0].node is s for s in n.body)]
    is_none = any(isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == name.id
                  and [type(o) for o in t.ops] == [ast.Is] and isinstance(t.comparators[0], ast.Constant)
                  and t.comparators[0].value is None for t in tests)
    return is_none and _binding(made[0], ctx, depth, True)


def _none_default(b, ctx) -> bool:
    """The parameter of binding `b` defaults to None."""
    fn = summaries.def_of(b, ctx)
    if fn is None:
        return False
    args = fn.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return any(a is b.node and isinstance(d, ast.Constant) and d.value is None for a, d in pairs)


def on_some_path(name: ast.Name, ctx, pos=None) -> bool:
    """Of the bindings of `name` that reach `pos`, one is proven a tensor (with a caller's argument) and
    none gives a value known to be something else: on that path the value is a tensor."""
    found = bindings(name, ctx, pos or ctx.pos)
    return (len(found) > 1 and any(_binding(b, ctx, 0, True) for b in found)
            and Strength.OTHER not in {strength(k) for k in path_kinds(name, ctx, pos)})


def _binding(b, ctx, depth, callers) -> bool:
    ask = tensor if callers else tensor_here
    if b.kind == Bind.ARG:
        return callers and summaries.argument(b, ctx, passed_tensor, depth + 1, any_site=True) is True
    if b.kind == Bind.IMPORT:  # a module-level tensor of a neighbouring module
        return summaries.imported(b, ctx, ask, depth + 1) is True
    if b.kind == Bind.FOR:  # an element of an iterable whose elements are proven tensors
        found = loop_items(b, ctx, depth)
        return bool(found) and all(_item(i, ctx, depth, ask) for i in found)
    if b.kind == Bind.UNPACK and isinstance(b.value, ast.Call):
        return summaries.returned(summaries.runs(b.value, ctx, b.pos), ctx, b.index, ask, depth + 1) is True
    if b.kind not in (Bind.ASSIGN, Bind.ANNASSIGN):
        return False
    if b.annotation is not None and annotation_kind(b.annotation, ctx) in (TENSOR, PARAM):
        return True
    return b.value is not None and ask(b.value, ctx, b.pos, depth + 1)  # memoised: `A = A + A` read in a def


def _item(item, ctx, depth, ask) -> bool:
    """An element (elements.Item) is proven a tensor: a parameter or buffer by the API, a proven value, an
    entry of a state_dict, a row of a proven tensor."""
    ctx = item.where or ctx
    if item.how in (elements.PARAM, elements.DETACHED, elements.NUMBER):
        return item.how != elements.NUMBER
    if item.how == elements.VALUE:
        return part(ask, item.expr, item.path, ctx, item.pos, depth) is True
    if item.how == elements.ENTRIES:
        return not item.path and kind(item.expr, ctx, item.pos, depth + 1) == STATE_DICT
    return ask(item.expr, ctx, item.pos, depth + 1)


def backward_root(name: str, ctx, pos=None) -> bool:
    """The value `name` holds at `pos` had `name.backward()` called on it first (one binding reaches both):
    autograd ran backward from it, so it is a tensor (`loss = criterion(out, y); loss.backward(); total += loss`)."""
    pos = pos or ctx.pos
    found = reaching(name, ctx, pos)
    if len(found) != 1:
        return False
    sole = _sole_reaching_backwards(name, ctx).get(id(found[0]), [])
    return bisect.bisect_left(sole, pos) > bisect.bisect_right(sole, found[0].pos)


def _sole_reaching_backwards(name: str, ctx) -> dict[int, list]:
    """id of a binding of `name` -> the sorted positions of the `name.backward(...)` calls that it alone reaches:
    made once per function and name (each question scanning every backward was quadratic in one long scope)."""
    body = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    key = ("sole-reaching-backwards", id(body), id(ctx.frame.scope), name)
    memo = ctx.facts.memo
    if key not in memo:
        found: dict[int, list] = {}
        for call_pos in ctx.facts.index(_backward_calls, body).get(name, ()):
            here = reaching(name, ctx, call_pos)
            if len(here) == 1:
                found.setdefault(id(here[0]), []).append(call_pos)
        memo[key] = {k: sorted(v) for k, v in found.items()}
    return memo[key]


def _backward_calls(facts, body) -> dict[str, list]:
    """Positions of the calls `name.backward(...)` under `body`, by name."""
    calls: dict[str, list] = {}
    for n in walk(body):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward" \
                and isinstance(n.func.value, ast.Name):
            calls.setdefault(n.func.value.id, []).append((n.lineno, n.col_offset))
    return calls
