"""The alias-write query TEN101 (detach), TEN102 (`.data`) and TEN103 (NumPy) are asked over.

`alias_writes(node, ctx)` answers, for a statement or call: which in-place writes it makes (`z[i] = v`,
`z += v`, `z.add_(v)`, `out=z`, NumPy's writers) through an alias of which named storage, created how.
An alias is an expression whose steps, from a named source outward, keep sharing the source's memory
and include one step that creates a new object over it: `.detach()`, `.data`, `.numpy()`,
`np.asarray(t)`, `torch.from_numpy(a)` (or `torch.as_tensor(a)` of an array). The other steps are
views and may-alias conversions, read from torch's API model (analysis/api.py): views always share,
`.cpu()` / `.to(device)` share when the tensor is already there, dtype casts and `.to(..., copy=True)`
copy (a cast shares only when the dtype already matches, which the file does not show).
What torch cannot declare (NumPy's own views and writers, the tensor properties that are views) is the
small reviewed overlay below. The rules differ only in which aliases they ask about and which sources
matter (`still_used`, parameters written on purpose).

A def of the file or of a neighbouring module (analysis/project.py) is summarised by the same steps:
`returned_alias(fn)` says it returns an alias of its parameter k, through which steps, when every
path of it does (`to_numpy(t)` returning `np.asarray(t.cpu())`); a call of it continues the steps
from the argument passed for k.
"""
from __future__ import annotations

import ast
from collections import Counter
from typing import Iterator, NamedTuple, Optional

from . import api, backward, evidence, names, param_writes, purpose, summaries
from .evidence import CONTAINER, MODULE, NDARRAY, SURE_TENSOR, TENSORISH
from .facts import Bind, Binding, dotted, end_of, entry_added, pos_of
from .kept import new_each_pass as kept_new_each_pass
from .inplace import chain_written, is_inplace_method, written
from .position import at

FAR = (1 << 30, 0)
MAX_HOPS = 8  # local names followed back from a return statement to a parameter

# ---- the overlay: what torch's declarations cannot say ------------------------------------------------
# Tensor properties that are views (the model lists callables only); `.T` and `.real` / `.imag` are views
# on an ndarray too.
VIEW_PROPERTIES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# ndarray methods that return a view of the array (reshape / ravel when the layout allows: may alias).
NUMPY_VIEW_METHODS = frozenset({"transpose", "swapaxes", "squeeze", "reshape", "ravel", "view"})
# NumPy functions whose result is their argument's memory; given a CPU tensor, the tensor's.
NUMPY_ALIASES = frozenset({"numpy.asarray", "numpy.asanyarray"})
# torch functions whose result is an array's memory (the model says they may alias their input; that the
# input is an array, and that as_tensor / asarray then share it, is NumPy's side of the contract).
ARRAY_TO_TENSOR = frozenset({"torch.from_numpy", "torch.as_tensor", "torch.asarray"})
# ndarray methods that write the array in place (NumPy's `fill`, not a tensor's out-of-place `sort`).
ARRAY_WRITE_METHODS = frozenset({"fill", "sort", "put", "itemset", "partition", "resize"})
# NumPy functions that write the argument at this position in place.
NUMPY_WRITERS = {"numpy.copyto": 0, "numpy.put": 0, "numpy.place": 0, "numpy.putmask": 0,
                 "numpy.fill_diagonal": 0, "numpy.random.shuffle": 0}
# The model's may-alias methods that move a tensor between devices: each returns the tensor itself when
# it is already there. The query follows only those that may keep a CPU tensor (`.cpu()`, `.to(device)`).
MOVES = frozenset({"cpu", "cuda", "to", "pin_memory"})
# dtype casts return the tensor itself only when its dtype already matches (`t.float()` of a float32 t is
# t): the query takes them for copies, a known gap that keeps `z = y.detach().double(); z += 1` quiet.
CASTS = frozenset({"float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool",
                   "cfloat", "cdouble", "type"})
INDEX_ARRAYS = TENSORISH | {NDARRAY, CONTAINER}  # an index of one of these kinds is advanced
FRAMEWORKS = ("tensorflow", "jax", "cupy", "mindspore", "paddle")  # their `.numpy()` is not torch's

# Steps, from the source outward.
VIEW, MAY, MOVE, DETACH, DATA, NUMPY, ASARRAY, FROM_NUMPY = (
    "view", "may", "move", "detach", "data", "numpy", "asarray", "from_numpy")
CROSSINGS = frozenset({NUMPY, ASARRAY, FROM_NUMPY})  # steps that change the side (tensor <-> ndarray)
CREATES = CROSSINGS | {DETACH, DATA}
# How the write goes through the alias.
NAME, KEPT, DIRECT = "name", "kept", "direct"  # z = <alias>; z += 1 / w = <alias>.add_(1) / <alias>[i] = v


class Step(NamedTuple):
    op: str  # VIEW, MAY (layout: contiguous, reshape), MOVE, or a creating op
    node: ast.AST  # the expression this step gives
    text: str  # how the step reads in a message: '.detach()', '.data', 'torch.from_numpy'


class Via(NamedTuple):
    """A def that built the first `built` steps of an alias in its own body, from its parameter `param`,
    reached through `call` in this file (`returned_alias`); those steps' nodes are in that def."""
    call: ast.Call
    param: str
    built: int


class Alias(NamedTuple):
    """`site` shares the memory of the named `source`; `steps` lead from the source out to `site`.
    `site` is None for an element of a tuple a helper returns (`a, b = f(x)`): nothing to copy there."""
    site: Optional[ast.AST]
    source: ast.AST
    steps: tuple[Step, ...]
    helper: Optional[Via] = None

    @property
    def family(self) -> str:
        """The creating op that decides what the alias is: a NumPy crossing (NUMPY, ASARRAY, FROM_NUMPY,
        the outermost), else DATA (no version counter), else DETACH."""
        ops = [s.op for s in self.steps]
        crossings = [op for op in ops if op in CROSSINGS]
        if crossings:
            return crossings[-1]
        return DATA if DATA in ops else DETACH

    @property
    def side(self) -> str:
        """'ndarray' or 'tensor': what the alias is."""
        return "ndarray" if self.family in (NUMPY, ASARRAY) else "tensor"

    @property
    def moved(self) -> bool:
        """A device move (`.cpu()`, `.to(device)`) is among the steps: shared only when it stays put."""
        return any(s.op == MOVE for s in self.steps)

    def step(self, op: str) -> Optional[Step]:
        return next((s for s in self.steps if s.op == op), None)

    def how(self) -> str:
        """The creating chain as it reads: `.detach().cpu().numpy()`, `torch.from_numpy(...).to()`; for a
        helper's alias, what it returns: `to_numpy() returns np.asarray(t.cpu())`."""
        if self.helper is not None:
            via = self.helper
            expr = via.param
            for s in self.steps[:via.built]:
                if s.op != VIEW:
                    expr = expr + s.text if s.text.startswith(".") else f"{s.text.removesuffix('()')}({expr})"
            then = "".join(s.text for s in self.steps[via.built:] if s.op != VIEW)
            return f"{dotted(via.call.func) or 'the call'}() returns {expr}" + (f", then {then}" if then else "")
        parts = [s.text for s in self.steps if s.op != VIEW]
        if len(parts) > 1 and not parts[0].startswith("."):  # a function: torch.from_numpy(...).to()
            parts[0] = parts[0].removesuffix("()") + "(...)"
        return "".join(parts)


class Write(NamedTuple):
    """An in-place write that reaches `alias.source` through `alias`; `callee` when a def the node calls
    makes it, into the argument it is passed (`center(feats.detach())`, `center(m)`)."""
    how: str  # NAME, KEPT or DIRECT
    name: Optional[str]  # the alias's name (NAME, KEPT): the caller's name, or the callee's parameter
    alias: Alias
    callee: Optional[param_writes.ParamWrite] = None

    def reported_at(self, node: ast.AST) -> ast.AST:
        """Where the write is: `node`, or the callee's statement that writes (the call, for a def of
        another module)."""
        if self.callee is None:
            return node
        return self.callee.stmt if self.callee.here else self.callee.call


def alias_writes(node: ast.AST, ctx) -> list[Write]:
    """The in-place writes `node` (an Assign, AugAssign, Expr or Call) makes through an alias of a named
    source. A write through a name counts when the name's binding at the node is `name = <alias>`; a
    source that is the alias's own name (`y = y.detach()`) has no other name left and does not count."""
    key = ("alias-writes", id(node), id(ctx.frame.scope))
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = list(_writes(node, ctx))
    return memo[key]


def _writes(node, ctx) -> Iterator[Write]:
    if isinstance(node, ast.Assign):
        names_ = [t.id for t in node.targets if isinstance(t, ast.Name)]
        inner = chain_written(node.value)
        alias = alias_of(inner, ctx) if names_ and inner is not None else None
        if alias is not None and not _own_name(alias, names_[0]):
            yield Write(KEPT, names_[0], alias)
    for target, side in _targets(node, ctx):
        if isinstance(target, ast.Name):
            alias = _bound_alias(_binding(target.id, ctx), ctx)
            if alias is not None and not _own_name(alias, target.id) and side in (None, alias.side):
                yield Write(NAME, target.id, alias)
        else:
            alias = alias_of(target, ctx)
            if alias is not None and side in (None, alias.side):
                yield Write(DIRECT, None, alias)
    call = node.value if isinstance(node, (ast.Expr, ast.Assign)) else node
    if isinstance(call, ast.Call):
        yield from _callee_writes(call, ctx)


def _callee_writes(call: ast.Call, ctx) -> Iterator[Write]:
    """The writes a def of the package makes into the aliases `call` passes it: a name bound to an alias
    (`m = feats.detach(); center(m)`) or an alias made in the argument (`center(feats.detach())`). A def
    named for updating parameters (`soft_update(target, source)`) writes its argument on purpose. The
    arguments are asked first whether they are aliases (most calls pass none); only then is the callee
    found and summarised, which may read other modules of the package."""
    passed = {id(a): alias for a in call.args + [k.value for k in call.keywords]
              if (alias := _passed_alias(a, ctx)) is not None}
    if not passed:
        return
    for w in param_writes.call_writes(call, ctx):
        alias = passed.get(id(w.argument))
        if alias is not None and not purpose.updates_weights(w.fn, ctx.facts):
            yield Write(NAME, w.argument.id if isinstance(w.argument, ast.Name) else w.param, alias, w)


def _passed_alias(arg: ast.AST, ctx) -> Optional[Alias]:
    if isinstance(arg, ast.Name):
        alias = _bound_alias(_binding(arg.id, ctx), ctx)
        return None if alias is None or _own_name(alias, arg.id) else alias
    return alias_of(arg, ctx) if isinstance(arg, (ast.Attribute, ast.Subscript, ast.Call)) else None


def _targets(node, ctx) -> Iterator[tuple[ast.AST, Optional[str]]]:
    """(expression written in place, the side it must be on or None for either): tensors' in-place
    methods, subscript stores, `op=`, `out=`; NumPy's writer methods and functions for arrays only."""
    call = node.value if isinstance(node, ast.Expr) else node
    if isinstance(node, ast.Expr) and not isinstance(call, ast.Call):
        return
    if isinstance(call, ast.Call):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ARRAY_WRITE_METHODS:
            yield _root(func.value), "ndarray"
            return
        index = NUMPY_WRITERS.get(ctx.facts.qualname(func) or "")
        if index is not None:
            if len(call.args) > index:
                yield _root(call.args[index]), "ndarray"
            return
        if isinstance(func, ast.Attribute) and is_inplace_method(func.attr):
            yield written(call), "tensor"
            return
    target = written(call)
    if target is not None:
        yield target, None
    elif isinstance(node, ast.Expr) and chain_written(call) is not None:
        yield chain_written(call), "tensor"  # `x.data.normal_().to(device)`: the chain writes x


def _root(expr: ast.AST) -> ast.AST:
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def _own_name(alias: Alias, name: str) -> bool:
    return isinstance(alias.source, ast.Name) and alias.source.id == name


def _binding(name: str, ctx) -> Optional[Binding]:
    """The `name = value` (or `name, other = call(...)`) statement, in the current scope, that gave `name`
    its object at the node under check (augmented assignments keep the object), or None."""
    origin = ctx.frame.scope.origin(name, ctx.pos)
    if origin is None or origin.kind not in (Bind.ASSIGN, Bind.ANNASSIGN, Bind.UNPACK) or origin.value is None:
        return None
    return origin


def _bound_alias(origin: Optional[Binding], ctx) -> Optional[Alias]:
    """The alias a binding gave its name: its value's, or a helper's element of a returned tuple."""
    if origin is None:
        return None
    if origin.kind != Bind.UNPACK:
        return alias_of(origin.value, ctx)
    helper = _helper_alias(origin.value, origin.index, ctx)
    if helper is None:
        return None
    via, source, inner, side = helper
    return Alias(None, source, inner, via)


def alias_of(expr: ast.AST, ctx) -> Optional[Alias]:
    """The alias `expr` is (of which named source, through which steps), or None: a fresh temporary
    (`f(x).detach()`), a copy on the way (`.clone()`, a cast, fancy indexing), or no creating step.
    A value built by a def of the file or a neighbouring module that returns an alias of its parameter
    (`returned_alias`) continues the steps from the argument passed for it: `to_numpy(t)[0]`."""
    base, steps = _walk(expr, ctx)
    named_base = isinstance(base, (ast.Name, ast.Attribute)) and dotted(base) is not None
    if named_base and CREATES & {s.op for s in steps}:  # the alias is made here: its source is `base`
        return Alias(expr, base, steps) if _fits(base, steps, ctx) is not None else None
    helper = None
    if isinstance(base, ast.Name):
        found = ctx.frame.scope.reaching(base.id, pos_of(base))
        b = found[0] if len(found) == 1 and found[0].kind in (Bind.ASSIGN, Bind.ANNASSIGN, Bind.UNPACK) else None
        helper = _helper_alias(b.value, b.index, ctx) if b is not None else None  # `x_t, y_t = cast(x, y)`
    elif isinstance(base, ast.Call):
        helper = _helper_alias(base, None, ctx)
    if helper is None:
        return None
    via, source, inner, side = helper
    return Alias(expr, source, inner + steps, via) if _fits(source, steps, ctx, side, start=via.call) else None


def _helper_alias(value: Optional[ast.AST], index: Optional[int], ctx):
    """(Via, the argument, the helper's steps, the side they end on) when `value` is a call of a def
    that returns an alias of a parameter (element `index` of the tuple it returns), passed a name."""
    if not isinstance(value, ast.Call):
        return None
    fn = summaries.callee(value, ctx, pos_of(value))
    returned = returned_alias(fn, ctx, index) if fn is not None else None
    arg = summaries.passed(fn, returned.param, value) if returned is not None else None
    if not isinstance(arg, (ast.Name, ast.Attribute)) or dotted(arg) is None:
        return None  # a fresh temporary (`f(x.copy())`) or nothing passed: nobody else holds it
    return Via(value, returned.param, len(returned.steps)), arg, returned.steps, returned.side


class Returned(NamedTuple):
    """A def returns an alias of its parameter `param`: `steps` from it out to the value returned."""
    param: str
    steps: tuple[Step, ...]
    side: str


def returned_alias(fn: ast.AST, ctx, index: Optional[int] = None) -> Optional[Returned]:
    """What def `fn` returns (element `index` of the tuple it returns), when that is an alias of one of
    its parameters on every path: each return statement, each binding of a local name that reaches it,
    each branch of `a if c else b`, ends in the same parameter through memory-keeping steps, and one
    path creates the alias (the query's own steps: `torch.from_numpy(x)`, `np.asarray(t.cpu())`).
    Returning the parameter itself on another path shares too; so does `np.asarray(x)` of any x (the
    array itself, a CPU tensor's memory, or a new array of a list that nobody else holds). One path
    that copies (`np.array(x)`, `.clone()`, `.cuda()`) or builds anything else makes it None: which path
    runs is unknown, and a result that may be fresh is the caller's to write."""
    ctx = summaries.in_home(fn, ctx)
    key = ("returned-alias", id(fn), index)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None  # recursion answers None
        memo[key] = _returned_alias(fn, ctx, index)
    return memo[key]


def _returned_alias(fn, ctx, index) -> Optional[Returned]:
    found = summaries.returns(fn)
    frame = ctx.facts.function_frame(fn) if found else None
    if frame is None:
        return None
    paths = []
    for r in sorted(found, key=pos_of):  # the first path that makes the alias is the one messages show
        value = r.value
        if index is not None:
            plain = isinstance(value, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in value.elts)
            value = value.elts[index] if plain and index < len(value.elts) else None
        inner = at(ctx, frame, r)
        got = _paths(value, inner, 0) if value is not None else None
        if got is None:
            return None
        paths += [(inner, *p) for p in got]
    if len({id(b) for _, b, _, _ in paths}) != 1 or not all(_shares(steps) for *_, steps in paths):
        return None
    for inner, b, name, steps in paths:
        side = _fits(name, steps, inner) if CREATES & {s.op for s in steps} else None
        if side is not None:
            return Returned(b.name, steps, side)
    return None


def _paths(expr: ast.AST, ctx, hops: int) -> Optional[list[tuple[Binding, ast.Name, tuple[Step, ...]]]]:
    """(the parameter's binding, the name it is read by, the steps from it) for each way the memory of
    `expr`, in a def, comes from a parameter; None when one way does not (a copy, a fresh value)."""
    if isinstance(expr, ast.IfExp):
        body, orelse = _paths(expr.body, ctx, hops), _paths(expr.orelse, ctx, hops)
        return None if body is None or orelse is None else body + orelse
    base, steps = _walk(expr, ctx)
    found = ctx.frame.scope.reaching(base.id, pos_of(base)) if isinstance(base, ast.Name) else []
    if not found or hops > MAX_HOPS:
        return None
    out = []
    for b in found:
        if b.kind == Bind.ARG:
            out.append((b, base, steps))
            continue
        inner = _paths(b.value, ctx, hops + 1) if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.value else None
        if inner is None:
            return None
        out += [(p, name, before + steps) for p, name, before in inner]
    return out


def _shares(steps: tuple[Step, ...]) -> bool:
    """Every step keeps the memory: device moves only to where a CPU tensor already is."""
    return all(s.op != MOVE or _to_cpu(s.node) for s in steps)


def _walk(expr: ast.AST, ctx) -> tuple[ast.AST, tuple[Step, ...]]:
    """(the expression the memory-keeping steps of `expr` start from, those steps from it outward)."""
    steps: list[Step] = []
    on_array = False
    while True:
        step = _step(expr, ctx, on_array)
        if step is None:
            break
        steps.append(step[0])
        expr = step[1]
        if step[0].op in CROSSINGS:
            on_array = step[0].op == FROM_NUMPY
    return expr, tuple(reversed(steps))


def _step(expr, ctx, on_array: bool = False) -> Optional[tuple[Step, ast.AST]]:
    """(the step `expr` takes, its input) when `expr` keeps sharing its input's memory, else None.
    `on_array`: inside `torch.from_numpy(...)`, where `x.data` is an attribute, not a tensor's `.data`."""
    if isinstance(expr, ast.Subscript):
        return (Step(VIEW, expr, "[]"), expr.value) if not _advanced(expr.slice, ctx) else None
    if isinstance(expr, ast.Attribute):
        if expr.attr == "data" and not on_array:
            return Step(DATA, expr, ".data"), expr.value
        if expr.attr in VIEW_PROPERTIES:
            return Step(VIEW, expr, "." + expr.attr), expr.value
        return None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    q = ctx.facts.qualname(func)
    if q in ARRAY_TO_TENSOR:
        if len(expr.args) == 1 and not any(k.arg in ("dtype", "device", "copy") for k in expr.keywords):
            return Step(FROM_NUMPY, expr, q), expr.args[0]
        return None
    if q in NUMPY_ALIASES:
        if len(expr.args) == 1 and not expr.keywords:
            return Step(ASARRAY, expr, q.replace("numpy.", "np.") + "()"), expr.args[0]
        return None
    op = api.function(q)  # torch.transpose(t, 0, 1), torch.detach(t)
    if op is not None:
        if op.alias not in ("view", "alias") or op.mutates or not expr.args:
            return None
        kind = VIEW if op.alias == "view" else MAY
        return Step(DETACH if kind == VIEW and op.grad == "drops" else kind, expr, q), expr.args[0]
    if not isinstance(func, ast.Attribute):
        return None
    name, recv = func.attr, func.value
    if name == "numpy" and not expr.args:
        return Step(NUMPY, expr, ".numpy()"), recv
    op = api.method(name)
    if op is not None and (op.may_give_tensor or op.returns == "tensors") and not op.mutates:
        if op.alias == "view":
            return Step(DETACH if op.grad == "drops" else VIEW, expr, f".{name}()"), recv
        if op.alias == "alias":
            if name in CASTS:
                return None
            if name in MOVES:
                return (Step(MOVE, expr, f".{name}()"), recv) if _moves_only(expr) else None
            return Step(MAY, expr, f".{name}()"), recv
    if name in NUMPY_VIEW_METHODS:
        return Step(VIEW, expr, f".{name}()"), recv
    return None


def _moves_only(call: ast.Call) -> bool:
    """`.to(device)`, `.to("cpu")`, `.cpu()`: a device move that keeps the dtype and makes no forced copy;
    `.to(torch.float32)`, `.to(other)` (another tensor's dtype) and `copy=True` may copy."""
    if any(k.arg == "copy" or k.arg == "dtype" for k in call.keywords):
        return False
    if call.func.attr != "to":
        return True
    if len(call.args) > 1:
        return False  # .to(device, dtype)
    if not call.args:
        return any(k.arg == "device" for k in call.keywords)
    arg = call.args[0]
    if isinstance(arg, ast.Constant):
        return isinstance(arg.value, str)
    if isinstance(arg, ast.Call):
        return (dotted(arg.func) or "").endswith("device")
    return names.DEVICE_NAME(dotted(arg))


def _advanced(index: ast.AST, ctx) -> bool:
    """Advanced indexing copies: a list, a mask (a comparison, `~m`), an array or tensor built for it, or a
    name the file shows holds one; slices, ints, None and names of unknown kind give (or may give) views."""
    for part in index.elts if isinstance(index, ast.Tuple) else [index]:
        if isinstance(part, (ast.Slice, ast.Constant)) or (isinstance(part, ast.UnaryOp) and isinstance(
                part.op, (ast.USub, ast.UAdd)) and isinstance(part.operand, ast.Constant)):
            continue
        if isinstance(part, (ast.Name, ast.Attribute, ast.BinOp)) and evidence.kind(part, ctx) not in INDEX_ARRAYS:
            continue
        return True
    return False


def _fits(source: ast.AST, steps: tuple[Step, ...], ctx, side: Optional[str] = None,
          start: Optional[ast.AST] = None) -> Optional[str]:
    """The side ('ndarray' / 'tensor') `steps` end on when they fit the side they are on (from `side`, or
    the one the first crossing implies) and the evidence agrees on what crosses: `.numpy()` of a
    tensor in a torch file, `np.asarray` of something known to be a tensor, `torch.from_numpy` of
    something not known to be a tensor (`torch.as_tensor` / `torch.asarray` of a known array); else None.
    Device moves count as shared only where they may keep a CPU tensor (`.cpu()`, `.to(device)`):
    from_numpy's result is one, and that is where `.numpy()` works. `start`: what the first step is
    taken of, when not `source` (a helper's call)."""
    if side is None:
        crossings = [s.op for s in steps if s.op in CROSSINGS]
        side = "ndarray" if crossings and crossings[0] == FROM_NUMPY else "tensor"
    before = start or source  # what each step is taken of
    for s in steps:
        if s.op in CROSSINGS:
            if not _crosses(s, before, source, ctx, side):
                return None
            side = "tensor" if s.op == FROM_NUMPY else "ndarray"
        elif side == "ndarray":
            if s.op not in (VIEW, MAY) or not _array_view(s.node):
                return None  # a tensor's method on an array
        elif s.op == MOVE and (not _to_cpu(s.node) or _on_gpu(s.node.func.value, ctx)):
            return None
        before = s.node
    return side


def _crosses(step: Step, before: ast.AST, source: ast.AST, ctx, side: str) -> bool:
    if step.op == NUMPY:
        return side == "tensor" and _imports_torch(ctx) and evidence.kind(source, ctx) not in (NDARRAY, MODULE)
    if step.op == ASARRAY:
        return side == "tensor" and evidence.kind(before, ctx) in TENSORISH
    known = evidence.kind(before, ctx)
    if step.text == "torch.from_numpy":
        return side == "ndarray" and known not in SURE_TENSOR
    return side == "ndarray" and known == NDARRAY


def _to_cpu(call: ast.Call) -> bool:
    """A device move that keeps a CPU tensor where it is, for all the file shows (`.cpu()`, `.to(device)`
    with `device` unknown); `.cuda()`, `.pin_memory()`, `.to("cuda")` copy it."""
    name = call.func.attr
    if name in ("cuda", "pin_memory"):
        return False
    if name == "to":
        given = call.args[0] if call.args else next(k.value for k in call.keywords if k.arg == "device")
        if isinstance(given, ast.Constant):
            return str(given.value).startswith("cpu")
    return True


def _on_gpu(expr: ast.AST, ctx) -> bool:
    """The code moves `expr`'s tensor to a GPU on every path: it is (`.data` or `.detach()` of) a
    `.cuda()` / `.to("cuda")` result, or a name every reaching binding of which is one. A device move of
    it makes a CPU copy (or stays on the GPU, where `.numpy()` raises): no CPU alias."""
    while True:
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "detach":
            expr = expr.func.value
        else:
            break
    if isinstance(expr, ast.Name):
        found = ctx.frame.scope.reaching(expr.id, pos_of(expr))
        return bool(found) and all(b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and _moved_to_gpu(b.value)
                                   for b in found)
    return _moved_to_gpu(expr)


def _moved_to_gpu(value) -> bool:
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    if value.func.attr == "cuda":
        return True
    given = value.args[0] if value.func.attr == "to" and value.args else None
    return isinstance(given, ast.Constant) and str(given.value).startswith("cuda")


def _array_view(node: ast.AST) -> bool:
    """A view step that an ndarray can take: a basic index, `.T` / `.real` / `.imag`, a NumPy view method."""
    if isinstance(node, ast.Subscript):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr in ("T", "real", "imag")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in NUMPY_VIEW_METHODS


def _imports_torch(ctx) -> bool:
    aliases = ctx.facts.aliases.values()
    return any(a == "torch" or a.startswith("torch.") for a in aliases) and not any(
        a.startswith(FRAMEWORKS) for a in aliases)


def fresh(expr: ast.AST, ctx, depth: int = 0) -> bool:
    """`expr` makes new storage that nothing else holds: a call of a torch function or a tensor method that
    torch's declarations say returns a fresh tensor (`torch.zeros(n)`, `x.exp()`), a legacy constructor given
    sizes (`torch.Tensor(4, 3)`), or a view or a conversion that may return its receiver (`.unsqueeze(-1)`,
    `.float()`) of such a temporary: its storage is the temporary's, which nothing else holds either."""
    if not isinstance(expr, ast.Call) or depth > 8:
        return False
    q = ctx.facts.qualname(expr.func)
    if q in LEGACY_CONSTRUCTORS:
        return bool(expr.args) and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in expr.args)
    receiver = _same_storage_receiver(expr, ctx)
    if receiver is not None:
        return fresh(receiver, ctx, depth + 1)
    op = api.function(q)
    if op is None and isinstance(expr.func, ast.Attribute) and q is None:
        op = api.method(expr.func.attr)
    return op is not None and op.alias == "fresh"


def _same_storage_receiver(call: ast.Call, ctx) -> Optional[ast.expr]:
    """The receiver of a tensor method that returns a view of it, or may return it or an alias (`x.view(-1)`,
    `x.unsqueeze(0)`, `x.float()`, `x.reshape(n)`): the result holds the receiver's storage, or a copy."""
    func = call.func
    if not isinstance(func, ast.Attribute) or ctx.facts.qualname(func) is not None:
        return None
    op = api.method(func.attr)
    return func.value if op is not None and op.alias in ("view", "alias", "self") and not op.mutates else None


LEGACY_CONSTRUCTORS = frozenset(  # `torch.FloatTensor(t)` aliases a tensor t; `torch.FloatTensor(4, 3)` allocates
    f"torch.{prefix}{name}Tensor" for prefix in ("", "cuda.")
    for name in ("", "Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
) - {"torch.cuda.Tensor"}


def held_nowhere_else(expr: ast.AST, ctx) -> bool:
    """`expr` is a fresh temporary, or a name bound only to fresh values (`res = torch.cat(parts)`) that no code
    reads after the statement using it (or that this statement rebinds: `x = torch.Tensor(x).cuda()`):
    nothing else holds its storage, so no one can see an alias of it."""
    if fresh(expr, ctx):
        return True
    if not isinstance(expr, ast.Name):
        return False
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    stmt = next((n for n in ctx.facts.enclosing(root, pos_of(expr)) if isinstance(n, ast.stmt)), None)
    if stmt is None:
        return False
    found = ctx.frame.scope.reaching(expr.id, pos_of(expr))
    if not found or any(b.kind != Bind.ASSIGN or b.value is None or not fresh(b.value, ctx) for b in found):
        return False
    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in stmt.targets):
        return True
    return ctx.frame.scope.read_later(expr.id, end_of(stmt)) is False


def unseen_alias(call: ast.Call, source: ast.expr, ctx) -> bool:
    """An alias `call` makes of `source` that no code can tell from a copy: the result, or a view of it, is
    bound to a local name or appended to a local list, neither that holder nor the source's root name is
    written in place in the function after the alias is made (a write before it, in a pass that binds the
    source anew, reaches no alias; a loop's earlier write reaches a later pass), and the source holds no
    graph (which the alias would carry). `batch = torch.FloatTensor(images[i:j])` of float32 images, only
    read, is one; so is `out.append(torch.FloatTensor(prob).unsqueeze(0))` of a `prob` made in the pass, and
    an alias consumed at once by arithmetic (`torch.Tensor(t) * m`), of a source with no graph."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    around = [ctx.facts.at(root, pos_of(call))] + ctx.facts.enclosing(root, pos_of(call))  # a statement may start there
    stmt = next((n for n in around if isinstance(n, ast.stmt)), None)
    if stmt is not None and _consumed_at_once(call, stmt):
        return not evidence.attached(source, ctx)  # `torch.Tensor(t) * m`: the alias is gone after the op
    holder, value = _alias_holder(stmt)
    while isinstance(value, ast.Call) and value is not call:  # `x = torch.FloatTensor(t).unsqueeze(0)`
        value = _same_storage_receiver(value, ctx)
    if value is not call or holder is None:
        return False
    held = named(source)
    base = held
    while isinstance(base, ast.Attribute):
        base = base.value
    if not isinstance(base, ast.Name) or evidence.attached(source, ctx):
        return False
    writes = _write_positions(ctx, root)
    if writes.get(holder):
        return False
    fresh = all(kept_new_each_pass(ctx.frame.scope, base.id, loop) for loop in ctx.frame.loops)
    return all(fresh and p < pos_of(call) for p in writes.get(base.id, ()))


def _consumed_at_once(call: ast.Call, stmt) -> bool:
    """`call`'s result is an operand of arithmetic or a comparison (out of place): nothing holds it after."""
    return any(isinstance(n, ast.BinOp) and call in (n.left, n.right) or isinstance(n, ast.UnaryOp)
               and n.operand is call or isinstance(n, ast.Compare) and call in (n.left, *n.comparators)
               for n in ast.walk(stmt))


def _alias_holder(stmt) -> tuple:
    """(the local name that keeps a statement's value, the value): `x = v`, `out.append(v)`; else (None, None)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    added = entry_added(stmt.value) if isinstance(stmt, ast.Expr) else None
    if added is not None and isinstance(added[0], ast.Name):
        return added[0].id, added[1]
    return None, None


def _write_positions(ctx, root) -> dict:
    """Root name -> where the code of `root` writes it in place (`x[i] = v`, `x += v`, `x.add_(v)`)."""
    key = ("written-names", id(root))
    if key not in ctx.facts.memo:
        found: dict = {}
        for n in ast.walk(root):
            target = written(n) if isinstance(n, (ast.Assign, ast.AugAssign, ast.Call)) else None
            while isinstance(target, (ast.Attribute, ast.Subscript, ast.Call)):
                target = target.func if isinstance(target, ast.Call) else target.value
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(pos_of(n))
        ctx.facts.memo[key] = found
    return ctx.facts.memo[key]


def named(expr: ast.AST) -> Optional[ast.AST]:
    """`y`, `self.h` or `y[0]` -> the named object (`y`, `self.h`); None for fresh temporaries like
    `f(x)` or `x.clone()`, whose storage nobody else holds."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, (ast.Name, ast.Attribute)) and dotted(expr) is not None:
        return expr
    return None


def still_used(source: ast.AST, ctx, after, caller_holds: bool = True) -> bool:
    """Whether the named `source` is read after position `after`: a name is read later in its scope
    (or in the next iteration of an enclosing loop); with `caller_holds`, a parameter counts as used
    (the caller still holds the object). An attribute outlives the statement unless it hangs off a
    local name that is not read again (`pos = torch.from_numpy(pos.values).div_(1000)`)."""
    root = source
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return False
    if root is not source and root.id in ("self", "cls"):
        return True
    return used_after(root.id, ctx, after, caller_holds or root is not source) or _backward_after(ctx, after, root.id)


def _backward_after(ctx, after, name: str) -> bool:
    """A backward later in the function (or the enclosing loop's next pass) reads the tensors the graph
    saved, the source among them; not when every later backward provably runs through another graph, nor
    when nothing is computed from the source (its one read is the one that made the alias): no graph holds
    it or anything made from it."""
    if _reads_of(ctx, name) <= 1:
        return False
    if backward.after_in_function(ctx, after):
        return not backward.unrelated_after(ctx, after, name) and _graph_read_after(ctx, after, name)
    loop = ctx.frame.loops[0] if ctx.frame.loops else None
    return loop is not None and any(pos_of(loop) <= p <= end_of(loop)
                                    for p in backward.positions(ctx.facts, ctx.frame.scope.node))


def _graph_read_after(ctx, after, name: str) -> bool:
    """After `after`, the code reads the source or a value computed from it before that point (`c = a * b`,
    then `c.sum().backward()`): only through such a value can a later backward reach the graph that saved
    the source. Unknown (True) where the scope's flow cannot say."""
    scope = ctx.frame.scope
    holders, grown = {name}, True
    while grown:  # names bound before `after` from the source, or from a name bound from it
        grown = False
        for other, bindings in scope.bindings.items():
            if other not in holders and any(
                    b.pos < after and b.value is not None
                    and any(isinstance(n, ast.Name) and n.id in holders for n in ast.walk(b.value))
                    for b in bindings):
                holders.add(other)
                grown = True
    for held in holders:
        before = {id(b) for b in scope.reaching(held, after)}
        if any(not before or before & {id(b) for b in scope.reaching(held, p)} for p in scope.loads_after(held, after)):
            return True
    return False


def _reads_of(ctx, name: str) -> int:
    """How many times the code of the scope (its nested defs and comprehensions too) reads `name`."""
    node = ctx.frame.scope.node
    key = ("reads", id(node))
    if key not in ctx.facts.memo:  # one walk of the scope for every name asked
        ctx.facts.memo[key] = Counter(n.id for n in ast.walk(node) if isinstance(n, ast.Name)
                                      and isinstance(n.ctx, ast.Load))
    return ctx.facts.memo[key][name]


def used_after(name: str, ctx, after, caller_holds: bool = True) -> bool:
    scope = ctx.frame.scope
    bindings = scope.bindings.get(name, ())
    if any(b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.pos <= ctx.pos and b.end >= after for b in bindings):
        return False  # the statement that writes also rebinds the name: the old object is gone
    origin = scope.origin(name, ctx.pos)
    if caller_holds and origin is not None and origin.kind == Bind.ARG:
        return True
    later = scope.read_later(name, after)
    if later is not None:
        return later
    rebound = [b.end for b in bindings if b.pos > after and b.kind != Bind.AUG]
    until = min(rebound, default=FAR)
    if scope.loads_between(name, after, until):
        return True
    for loop in ctx.frame.loops:  # the next iteration reads it again, unless it first rebinds it
        if scope.loads_between(name, pos_of(loop), _first_rebinding(loop, bindings)):
            return True
    return False


def _first_rebinding(loop, bindings):
    """Where each iteration of `loop` first rebinds the name for sure: the loop's own target, or a plain
    assignment that is a statement of the loop body itself (not under an `if`); else the loop's end."""
    body = getattr(loop, "body", None) or []
    starts = [pos_of(body[0])] if body and any(b.kind == Bind.FOR and b.node is loop for b in bindings) else []
    starts += [b.pos for b in bindings if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and any(b.node is st for st in body)]
    return min(starts, default=end_of(loop))
