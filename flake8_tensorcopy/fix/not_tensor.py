"""Method calls on values the analysis knows are not tensors: what fix verification refuses to add.

A fix appends tensor methods (`.detach()`, `.clone()`, `.item()`, `.copy()`); on an int, a dict, a module
or an ndarray (for a torch-only method) that call raises AttributeError. `suspect_calls` lists such calls
in a text, so a fix that adds one can be dropped. Known: what evidence.kind() proves (literals, displays,
`.item()` / `.numpy()` results, modules, optimizers, state_dicts, ndarrays), calls of builtins that
return numbers or containers (`len(x)`), and tensor methods that return Python values (`x.storage_offset()`).
"""
from __future__ import annotations

import ast
import builtins
from collections import Counter
from typing import Optional, Sequence

from ..analysis import api, builtins_api, evidence
from ..analysis.facts import FileFacts
from ..rules.context import Context

PY_VALUES = (int, float, bool, complex, str, bytes, list, type(None))
PY_CONTAINERS = (dict, list, tuple, set, frozenset)
# ndarray methods that a Tensor also has (a torch-only method on an ndarray raises AttributeError).
NDARRAY_METHODS = frozenset(
    """all any argmax argmin argsort astype byteswap choose clip compress conj conjugate copy cumprod cumsum
    diagonal dot dump dumps fill flatten getfield item max mean min nonzero partition prod ptp put ravel repeat
    reshape resize round searchsorted setfield setflags sort squeeze std sum swapaxes take tobytes tofile
    tolist tostring trace transpose var view""".split())
PYTHON_RESULTS = frozenset(("int", "bool", "float", "number", "none"))
WHAT = {evidence.SCALAR: "a Python number or string", evidence.CONTAINER: "a dict, list, tuple or set",
        evidence.STATE_DICT: "a state_dict (a dict)", evidence.MODULE: "a module",
        evidence.OPTIMIZER: "an optimizer", evidence.NDARRAY: "a NumPy array"}


def _names(*types) -> frozenset:
    return frozenset(name for t in types for name in dir(t))


HAS = {evidence.SCALAR: _names(*PY_VALUES), evidence.CONTAINER: _names(*PY_CONTAINERS),
       evidence.STATE_DICT: _names(dict)}


def missing_method(kind: Optional[str], method: str) -> bool:
    """`method` is certainly not an attribute of a value of this kind."""
    if kind in HAS:
        return method not in HAS[kind]
    if kind == evidence.NDARRAY:
        return api.method(method) is not None and method not in NDARRAY_METHODS
    if kind == evidence.MODULE:
        return api.method(method) is not None and not api.module_returns_self(method)
    if kind == evidence.OPTIMIZER:
        return api.method(method) is not None
    return False


def what_it_is(expr: ast.expr, ctx: Context) -> tuple[Optional[str], str]:
    """(kind, description) of a receiver, or (None, '') when it may be a tensor."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not _rebound(expr.func.id, ctx):
        name = expr.func.id
        if builtins_api.gives_value(name):
            return evidence.SCALAR, f"the result of {name}()"
        if name in builtins_api.CONTAINER_BUILTINS:
            return evidence.CONTAINER, f"the result of {name}()"
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
        op = api.method(expr.func.attr)
        if op is not None and op.returns in PYTHON_RESULTS and not hasattr(dict, expr.func.attr):
            return evidence.SCALAR, f"the result of .{expr.func.attr}() (a Python {op.returns})"
    kind = evidence.kind(expr, ctx)
    return (kind, WHAT[kind]) if kind in WHAT else (None, "")


def _rebound(name: str, ctx: Context) -> bool:
    """The file binds this builtin's name itself somewhere (a local `len`, an import of `list`)."""
    return not hasattr(builtins, name) or name in ctx.facts.aliases or ctx.frame.scope.binding_before(
        name, ctx.pos) is not None


def suspect_calls(tree: ast.Module, source: str, lines: Optional[Sequence[int]] = None) -> Counter:
    """Counter of (receiver text, method, what the receiver is) for each call `recv.method(...)` on a value
    known not to have that method; with `lines`, only calls starting on those lines (and only the defs
    that hold them are analysed)."""
    hot = sorted(set(lines)) if lines is not None else None
    facts = FileFacts(tree, source, (ast.Call,), hot)
    wanted = set(hot) if hot is not None else None
    found: Counter = Counter()
    for node, frame in facts.nodes:
        func = node.func
        if not isinstance(func, ast.Attribute) or (wanted is not None and node.lineno not in wanted):
            continue
        ctx = Context(facts, frame, node, None)
        kind, what = what_it_is(func.value, ctx)
        if kind is not None and missing_method(kind, func.attr):
            found[(" ".join(facts.segment(func.value).split()), func.attr, what)] += 1
    return found


def new_receivers(before: Counter, after: Counter) -> list[tuple[str, str, str]]:
    """The suspect calls of `after` on receivers that get none in `before`: a receiver the code already
    calls a tensor method on (`x.clone()` where `x = 1`) contradicts the analysis, or is broken already."""
    known = {recv for recv, _, _ in before}
    return sorted(call for call in after if call[0] not in known)
