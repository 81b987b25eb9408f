"""What an expression is (tensor, parameter, module, state_dict, ndarray, ...) and whether it is
attached to an autograd graph, judged from the file alone and never by importing torch.

`kind()` answers with a `Kind` or None. The kinds are the points of a flat lattice: None (unknown) is
its top, and the join of two different kinds is unknown (`join`), so "unknown" and "known not to be a
tensor" (MODULE, NDARRAY, SCALAR, ...) stay different answers. The evidence's strength is part of the
kind: TENSOR and PARAM are proven by code (a torch factory, an annotation, arithmetic on tensors, what
every caller passes); LIKELY_TENSOR is guessed from method names that are tensor-specific in practice
(`.detach()`, `.clone()`); a MODULE guessed from a name (`model`) only keeps rules quiet.
"""
from __future__ import annotations

import ast
import enum
import re
from dataclasses import replace
from typing import Iterable, Optional

from . import api, elements, hierarchy, names, project, summaries
from .facts import (PARAMETER_CLASSES, Bind, TENSOR_TYPES, base_name, dotted, end_of, guard_key, pos_of,
                    self_attribute, target_path, walk)
from .position import Position
from .unattached import unattached


class Kind(str, enum.Enum):
    """What a value is. A str, equal to (and hashed as) its text: reports and the generated API model
    spell kinds as text."""

    TENSOR = "tensor"
    LIKELY_TENSOR = "likely-tensor"
    PARAM = "param"  # an nn.Parameter (a tensor)
    MODULE = "module"
    STATE_DICT = "state_dict"
    NDARRAY = "ndarray"
    OPTIMIZER = "optimizer"
    CONTAINER = "container"  # a dict, list, tuple or set
    SCALAR = "scalar"  # a Python number, string or bool
    BATCH = "batch"  # what a loader yields: a tensor, or a container of tensors

    __hash__ = str.__hash__
    __str__ = str.__str__
    __format__ = str.__format__


TENSOR, LIKELY_TENSOR, PARAM = Kind.TENSOR, Kind.LIKELY_TENSOR, Kind.PARAM
MODULE, STATE_DICT, NDARRAY, OPTIMIZER, CONTAINER, SCALAR, BATCH = (
    Kind.MODULE, Kind.STATE_DICT, Kind.NDARRAY, Kind.OPTIMIZER, Kind.CONTAINER, Kind.SCALAR, Kind.BATCH,
)
TENSORISH = frozenset({TENSOR, LIKELY_TENSOR, PARAM})
SURE_TENSOR = frozenset({TENSOR, PARAM})

# Tensor-only methods (api.tensor_only) whose names other libraries' objects share (a git repository's clone):
# they make the receiver likely a tensor, not a proven one.
LIKELY_TENSOR_METHODS = frozenset({"clone", "detach_"})
REGISTERS = frozenset({"register_modules", "add_module", "register_module"})
LEAF_ATTRS = ("weight", "bias", "grad")  # a module's parameters, a gradient: leaves of the graph
# torch modules whose forward returns a tuple or that cannot be called (containers)
TUPLE_MODULES = re.compile(r"RNN|LSTM|GRU|MultiheadAttention|AdaptiveLogSoftmax"
                           r"|^Module(List|Dict)$|^Parameter(List|Dict)$")
MAX_DEPTH = 100  # a guard for the interpreter's stack; answers are memoised, so cost stays polynomial


def memoised(unknown):
    """Answer each (expression, position, frame) once per file: chains of rebindings cost linear time and
    branches that all rebind a name cost quadratic, not exponential. A cycle (a loop that rebinds `x`
    from `x`) answers `unknown`."""
    return lambda question: _memo(question, unknown)


def _memo(question, unknown):
    def ask(expr, ctx, pos=None, depth=0):
        if expr is None or depth > MAX_DEPTH:
            return unknown
        pos = pos or ctx.pos
        frame = ctx.frame
        key = (question, id(expr), pos, id(frame.scope), id(frame.cls), frame.guards)
        memo = ctx.facts.memo
        if key not in memo:
            memo[key] = unknown
            memo[key] = question(expr, ctx, pos, depth)
        return memo[key]

    ask.__doc__ = question.__doc__
    return ask


def join(kinds: Iterable[Optional[Kind]]) -> Optional[Kind]:
    """The kind every path agrees on; unknown (None) when two differ or one is unknown."""
    found = set(kinds)
    return found.pop() if len(found) == 1 else None


@memoised(unknown=None)
def kind(expr: ast.AST, ctx: "Position", pos=None, depth: int = 0) -> Optional[Kind]:
    """The kind of `expr` evaluated at `pos` (defaults to the node under check)."""
    if isinstance(expr, ast.Name):
        key = expr.id
        if key in ctx.frame.guards:
            return TENSOR
        if key == "self" and ctx.frame.cls is not None and is_module_class(ctx.frame.cls, ctx):
            return MODULE
        return join(_binding_kind(b, key, ctx, depth) for b in bindings(expr, ctx, pos))
    if isinstance(expr, ast.Attribute):
        attr = expr.attr
        if attr in ("weight", "bias"):
            return PARAM
        if attr == "grad":
            return TENSOR
        held = api.attribute(attr)
        if held is not None and held.gives_tensor:  # x.data, x.T, x.real
            inner = kind(expr.value, ctx, pos, depth + 1)
            return TENSOR if inner in TENSORISH else None
        dotted_key = dotted(expr)
        if dotted_key and dotted_key in ctx.frame.guards:
            return TENSOR
        if isinstance(expr.value, ast.Name) and expr.value.id == "self":
            value = assigned_just_before(expr, ctx, pos)  # `self.acc = torch.zeros(n)` then `self.acc.to(d)`
            held = _torch_call_kind(ctx.facts.qualname(value.func), value) if isinstance(value, ast.Call) else None
            held = held or self_attribute_kind(attr, ctx)
            if held is not None:
                return held
        elif isinstance(expr.value, (ast.Name, ast.Attribute)):  # corpus.ids, with corpus = Corpus()
            held = instance_attribute_kind(expr, ctx, pos, depth)
            if held is not None:
                return held
        if names.MODULE_NAME(attr) and not names.NOT_MODULE(attr):
            return MODULE
        return None
    if isinstance(expr, ast.Call):
        return _call_kind(expr, ctx, pos, depth)
    if isinstance(expr, ast.BinOp) or _elementwise_comparison(expr):
        left, right = (expr.left, expr.right) if isinstance(expr, ast.BinOp) else (expr.left, expr.comparators[0])
        return _elementwise_kind(kind(left, ctx, pos, depth + 1), kind(right, ctx, pos, depth + 1))
    if isinstance(expr, ast.UnaryOp):
        inner = kind(expr.operand, ctx, pos, depth + 1)
        return TENSOR if inner == PARAM else inner
    if isinstance(expr, ast.Subscript):
        if ctx.frame.guards and guard_key(expr) in ctx.frame.guards:
            return TENSOR
        inner = kind(expr.value, ctx, pos, depth + 1)
        if inner == BATCH:
            return LIKELY_TENSOR  # batch["x"], batch[0]
        if inner in (TENSOR, PARAM, STATE_DICT):
            return TENSOR
        if inner in (LIKELY_TENSOR, NDARRAY):
            return inner
        if inner == CONTAINER:  # an entry of a dict or list the code fills
            found = elements.entry_read(expr, ctx, pos, depth)
            return join(_item_kind(i, ctx, depth) for i in found) if found else None
        return None
    if isinstance(expr, (ast.Dict, ast.DictComp, ast.List, ast.ListComp, ast.Set, ast.SetComp, ast.Tuple)):
        return CONTAINER
    if isinstance(expr, ast.Constant):
        return SCALAR
    if isinstance(expr, ast.IfExp):
        return join((kind(expr.body, ctx, pos, depth + 1), kind(expr.orelse, ctx, pos, depth + 1)))
    return None


class Strength(enum.IntEnum):
    """How sure the code makes a value a tensor: each rule picks the strength it needs."""

    OTHER = 0  # known to be something else (a module, an ndarray, a number, ...)
    UNKNOWN = 1
    LIKELY = 2  # guessed from a method name, a forward's input, a loader's batch
    PROVEN = 3  # a torch factory, an annotation, arithmetic on tensors, what every caller passes


def strength(k: Optional[Kind]) -> Strength:
    if k in SURE_TENSOR:
        return Strength.PROVEN
    return Strength.LIKELY if k == LIKELY_TENSOR else Strength.UNKNOWN if k is None else Strength.OTHER


def tensor_strength(expr: ast.AST, ctx: "Position", pos=None, some_path: bool = False) -> Strength:
    """How sure the code is that `expr` is a tensor at `pos`: on every path (its joined kind), or with
    `some_path`, on the path with the strongest evidence (a hazard on one path of several is a hazard), when
    no path gives a value of another kind (code written for values of several kinds)."""
    if not some_path:
        return strength(kind(expr, ctx, pos))
    found = {strength(k) for k in path_kinds(expr, ctx, pos)}
    return Strength.UNKNOWN if Strength.OTHER in found else max(found)


@memoised(unknown=frozenset({None}))
def path_kinds(expr: ast.AST, ctx: "Position", pos=None, depth: int = 0) -> frozenset:
    """The kinds `expr` may have at `pos`, one per path: through the bindings of a name that reach `pos`
    and both arms of a conditional expression; `kind` joins them into one answer."""
    if isinstance(expr, ast.IfExp):
        return path_kinds(expr.body, ctx, pos, depth + 1) | path_kinds(expr.orelse, ctx, pos, depth + 1)
    if not isinstance(expr, ast.Name) or expr.id in ctx.frame.guards or expr.id == "self":
        return frozenset({kind(expr, ctx, pos, depth + 1)})
    found = set()
    for b in bindings(expr, ctx, pos):
        if b.kind == Bind.ASSIGN and b.annotation is None and b.value is not None:
            found |= path_kinds(b.value, ctx, b.pos, depth + 1)
        else:
            found.add(_binding_kind(b, expr.id, ctx, depth + 1))
    return frozenset(found) or frozenset({None})


def bindings(name: ast.Name, ctx: "Position", pos) -> list:
    """The bindings that may give the name read `name` its value at `pos`: the generator's, for a variable
    of the comprehension it is read in (its own scope), else those that reach it (`reaching`)."""
    own = elements.comprehension_binding(name, ctx.facts)
    return [own] if own is not None else reaching(name.id, ctx, pos)


def reaching(name: str, ctx: "Position", pos) -> list:
    """Bindings that may give `name` its value at `pos` (this scope's, else an enclosing one's). A
    `name = None` binding is left out when others reach too: where a value that is None or a tensor is
    used as a tensor (`if x is not None: torch.tensor(x)`), it is the tensor."""
    found = ctx.frame.scope.reaching(name, pos)
    if not found:
        b = ctx.frame.scope.binding_before(name, pos)
        return [b] if b is not None else []
    some = [b for b in found if not _binds_none(b)]
    return some or found


def _binds_none(b) -> bool:
    return b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and isinstance(b.value, ast.Constant) and b.value.value is None


def _binding_kind(b, name: str, ctx: "Position", depth: int) -> Optional[Kind]:
    if b.annotation is not None:
        ann = annotation_kind(b.annotation, ctx)
        if ann:
            return ann
    if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.value is not None:
        return kind(b.value, ctx, b.pos, depth + 1)
    if b.kind == Bind.IMPORT:
        return summaries.imported(b, ctx, kind, depth + 1)
    if b.kind == Bind.UNPACK:
        return element_kind(b.value, b.index, ctx, b.pos, depth + 1)
    if b.kind == Bind.FOR:
        found = loop_items(b, ctx, depth)
        got = join(_item_kind(i, ctx, depth) for i in found) if found else None
        if got is None and isinstance(b.node, (ast.For, ast.AsyncFor)):
            return _batch_kind(b.node, name, ctx)
        return got
    if b.kind == Bind.ARG:
        passed = summaries.argument(b, ctx, kind, depth + 1)
        if passed is not None:
            return passed
        if names.MODULE_NAME(name):
            return MODULE
        if _forward_input(b, ctx):
            return LIKELY_TENSOR
    return None


def _forward_input(b, ctx: "Position") -> bool:
    """A parameter (not `self`, not *args / **kwargs) of `forward` of a class that subclasses a module."""
    fn, cls = summaries.def_of(b, ctx), ctx.frame.cls
    return (fn is not None and fn.name == "forward" and cls is not None and fn in cls.body
            and b.node in fn.args.args[1:] + fn.args.kwonlyargs and is_module_class(cls, ctx))


def element_kind(value: ast.AST, index: int, ctx: "Position", pos, depth: int) -> Optional[Kind]:
    """The kind of element `index` of `value` (`a, b = value`): of a tuple display, of a loader batch, or
    of what a function of the file (or the forward of a package module called) returns."""
    if isinstance(value, (ast.Tuple, ast.List)):
        return kind(value.elts[index], ctx, pos, depth + 1) if index < len(value.elts) else None
    if isinstance(value, ast.Call):
        made = summaries.runs(value, ctx, pos)
        if made is not None:
            return summaries.returned(made, ctx, index, kind, depth + 1)
    return LIKELY_TENSOR if kind(value, ctx, pos, depth + 1) == BATCH else None


def loop_items(b, ctx: "Position", depth: int = 0) -> Optional[list]:
    """What the name of a loop's or a comprehension's binding `b` may hold: elements.Item's, or None."""
    path = target_path(b.node.target, b.name)
    return None if path is None else elements.items(b.value, path, ctx, b.pos, depth)


def part(ask, expr: ast.AST, path: tuple, ctx: "Position", pos, depth: int):
    """`ask` (kind, attached, a proof) of part `path` of `expr`'s value: the value itself, an element of a
    tuple display, or an element of the tuple a def of the package returns."""
    if not path:
        return ask(expr, ctx, pos, depth + 1)
    if isinstance(expr, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in expr.elts):
        return part(ask, expr.elts[path[0]], path[1:], ctx, pos, depth + 1) if path[0] < len(expr.elts) else None
    if isinstance(expr, ast.Call) and len(path) == 1:
        made = summaries.runs(expr, ctx, pos)
        return summaries.returned(made, ctx, path[0], ask, depth + 1, any_path=ask is attached)
    return None


def _item_kind(item, ctx: "Position", depth: int) -> Optional[Kind]:
    """The kind of what one element of an iterable may be (elements.Item): a parameter, a tensor out of the
    graph, a number, the kind of a value, or a row of a tensor (a tensor of its strength)."""
    how, ctx = item.how, item.where or ctx
    if how in (elements.PARAM, elements.DETACHED, elements.NUMBER):
        return {elements.PARAM: PARAM, elements.DETACHED: TENSOR, elements.NUMBER: SCALAR}[how]
    if how == elements.VALUE:
        return part(kind, item.expr, item.path, ctx, item.pos, depth)
    inner = kind(item.expr, ctx, item.pos, depth + 1)
    if how == elements.ENTRIES:
        return TENSOR if inner == STATE_DICT and not item.path else None
    if inner in TENSORISH:  # the rows of a tensor are tensors
        return LIKELY_TENSOR if inner == LIKELY_TENSOR else TENSOR
    return LIKELY_TENSOR if inner == BATCH and not item.path else None


def _item_attached(item, ctx: "Position", depth: int) -> bool:
    how, ctx = item.how, item.where or ctx
    if how in (elements.PARAM, elements.DETACHED, elements.NUMBER, elements.ENTRIES):
        return how == elements.PARAM
    if how == elements.VALUE:
        return part(attached, item.expr, item.path, ctx, item.pos, depth) is True
    return attached(item.expr, ctx, item.pos, depth + 1)  # a row of an attached tensor


def _sum_kind(arg: ast.AST, ctx: "Position", pos, depth: int) -> Optional[Kind]:
    """`sum(values)`: a tensor when the values are (a parameter's sum is a tensor), a number when they are."""
    found = elements.items(arg, (), ctx, pos, depth)
    got = join(TENSOR if k == PARAM else k for k in (_item_kind(i, ctx, depth) for i in found or ()))
    return got if got in TENSORISH or got == SCALAR else None


def _batch_kind(loop, name: str, ctx: "Position") -> Optional[Kind]:
    """What a loop over a data loader binds: `for x, y in loader` (or `enumerate(loader)`, `tqdm(loader)`)
    gives tensors, `for batch in loader` a batch (whose items are tensors). A loader is a DataLoader the
    code builds, or one named so whose loop trains or runs under `no_grad` (names alone are not enough)."""
    it, target = loop.iter, loop.target
    while isinstance(it, ast.Call) and it.args and (dotted(it.func) or "").rsplit(".", 1)[-1] in ("enumerate", "tqdm"):
        if (dotted(it.func) or "").endswith("enumerate"):
            if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                return None
            if isinstance(target.elts[0], ast.Name) and target.elts[0].id == name:
                return SCALAR  # the index
            target = target.elts[1]
        it = it.args[0]
    collated = _collated_kind(it, loop, ctx)
    if isinstance(target, ast.Name) and target.id == name and collated in TENSORISH:
        return collated  # `collate_fn=pad`, a def that returns a tensor: each batch is one
    if not _is_loader(it, loop, ctx):
        return None
    if isinstance(target, ast.Name):
        return BATCH if target.id == name else None
    return LIKELY_TENSOR if any(isinstance(e, ast.Name) and e.id == name for e in walk(target)) else None


def _loader_call(expr, loop, ctx: "Position") -> Optional[ast.Call]:
    """The `DataLoader(...)` call `expr` is, or the one a name holds where the loop starts."""
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, pos_of(loop))
        expr = b.value if b is not None else None
    if isinstance(expr, ast.Call) and (ctx.facts.qualname(expr.func) or "").endswith("DataLoader"):
        return expr
    return None


def _collated_kind(expr, loop, ctx: "Position") -> Optional[Kind]:
    """The kind of the batches of a DataLoader built with `collate_fn=f`, for a def `f` of the package: what
    every return of `f` gives; None for anything else."""
    call = _loader_call(expr, loop, ctx)
    given = [k.value for k in call.keywords if k.arg == "collate_fn"] if call is not None else []
    if not given or not isinstance(given[0], (ast.Name, ast.Attribute)):
        return None
    fn = summaries.callee(ast.Call(func=given[0], args=[], keywords=[]), ctx, pos_of(loop))
    return summaries.returned(fn, ctx, None, kind, 1) if isinstance(fn, summaries.DEFS) else None


def _is_loader(expr, loop, ctx: "Position") -> bool:
    """A loader of tensor batches: a DataLoader the code builds with the default collation (a `collate_fn`
    makes batches of whatever it returns), or one named so whose loop trains or runs under `no_grad`."""
    if isinstance(expr, ast.Name):
        b = ctx.frame.scope.binding_before(expr.id, pos_of(loop))
        if b is not None and isinstance(b.value, ast.Call) and (ctx.facts.qualname(b.value.func) or "").endswith(
                "DataLoader"):
            return not any(k.arg == "collate_fn" or k.arg is None for k in b.value.keywords)
    return names.LOADER(dotted(expr)) and (id(loop) in ctx.facts.training_loops or id(loop) in ctx.facts.no_grad_loops)


def _binding_attached(b, expr: ast.Name, ctx: "Position", pos, depth: int) -> bool:
    if b.grad_off or ctx.frame.scope.grad_off_at(b.pos):
        return False
    if b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and b.value is not None:
        return attached(b.value, ctx, b.pos, depth + 1)
    if b.kind == Bind.UNPACK and isinstance(b.value, ast.Call):
        made = summaries.runs(b.value, ctx, b.pos)
        return summaries.returned(made, ctx, b.index, attached, depth + 1, any_path=True) is True \
            or summand_of_backpropagated(b, made, ctx)
    if b.kind == Bind.FOR:
        found = loop_items(b, ctx, depth)
        return bool(found) and all(_item_attached(i, ctx, depth) for i in found)
    if b.kind == Bind.ARG:
        return summaries.argument(b, ctx, attached, depth + 1) is True or summaries.hook_output(b, ctx)
    return False


def _call_kind(call: ast.Call, ctx: "Position", pos, depth: int) -> Optional[Kind]:
    q = ctx.facts.qualname(call.func)
    if ctx.facts.tensor_functions and _declared_tensor_function(call.func, q, ctx.facts.tensor_functions):
        return TENSOR
    if q:
        if q in ("copy.deepcopy", "copy.copy") and call.args:
            return kind(call.args[0], ctx, pos, depth + 1)
        made = _torch_call_kind(q, call)
        if made is not None:
            return made
        if q.startswith("numpy."):
            inputs = {kind(a, ctx, pos, depth + 1) for a in numpy_tensor_inputs(call, q)}
            if inputs & TENSORISH:  # numpy.ceil(t) is a tensor (Tensor.__array_wrap__)
                return TENSOR if inputs & SURE_TENSOR else LIKELY_TENSOR
            return NDARRAY
        if q in ("collections.OrderedDict", "dict"):
            return CONTAINER
    func = call.func
    summed = elements.sum_argument(call, ctx)
    if summed is not None:
        return _sum_kind(summed, ctx, pos, depth)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
        got = summaries.returned(summaries.runs(call, ctx, pos), ctx, None, kind, depth + 1)
        if got is not None:
            return got
        if held_torch_module(func, ctx):
            return TENSOR  # self.head(x), with self.head = nn.Linear(...)
    if isinstance(func, ast.Attribute):
        method = func.attr
        if method == "state_dict":
            return STATE_DICT
        if method == "numpy":
            return NDARRAY
        if method in ("item", "tolist"):
            return SCALAR
        recv = kind(func.value, ctx, pos, depth + 1)
        if recv == MODULE:
            return MODULE if api.module_returns_self(method) else None
        if recv == NDARRAY:
            return NDARRAY
        if recv not in TENSORISH and q is None and not _imported(func.value, ctx, pos):
            # the method tells a tensor receiver (an imported module's function does not: `L.permute(...)`);
            # the API says what it returns
            if method in LIKELY_TENSOR_METHODS:
                recv = LIKELY_TENSOR
            elif api.tensor_only(method):
                recv = TENSOR
        if recv in TENSORISH:
            op = api.method(method)
            return _result_kind(op, TENSOR if recv in SURE_TENSOR else LIKELY_TENSOR, call) if op else None
        if _submodule_call(func, ctx):
            return LIKELY_TENSOR  # self.encoder(x): only the attribute's name says it holds a module
        return None
    if isinstance(func, ast.Name):
        if kind(func, ctx, pos, depth + 1) == MODULE and not _only_named(func.id, ctx, pos):
            made = summaries.runs(call, ctx, pos)  # a module of the package: what its forward returns, if known
            got = summaries.returned(made, ctx, None, kind, depth + 1) if made is not None else None
            return TENSOR if got is None else got  # model(x)
    callee = summaries.callee(call, ctx, pos)
    if isinstance(callee, ast.ClassDef):
        return MODULE if is_module_class(callee, ctx) else None
    if callee is not None:
        return summaries.returned(callee, ctx, None, kind, depth + 1)
    return None


def numpy_tensor_inputs(call: ast.Call, qualname: Optional[str]) -> list:
    """The arguments of a numpy call that, when a tensor, make its result a tensor: any input of
    `numpy.maximum(a, t)`, the first of `numpy.ceil(t)` and `numpy.round(t)`; none for `numpy.mean(t)`."""
    passes = api.numpy_passes_tensor(qualname)
    if passes is None or any(isinstance(a, ast.Starred) for a in call.args):
        return []  # `numpy.maximum(*pair)`: which argument is where is unknown
    return list(call.args) if passes == "any" else call.args[:1]


def _imported(expr: ast.AST, ctx: "Position", pos) -> bool:
    """`L` of `from .. import lowering as L`: a name an import binds."""
    return isinstance(expr, ast.Name) and any(b.kind == Bind.IMPORT for b in reaching(expr.id, ctx, pos))


def instance_attribute_kind(expr: ast.Attribute, ctx: "Position", pos, depth: int) -> Optional[Kind]:
    """What `obj.attr` holds when `obj` is an instance of a package class (`corpus = Corpus()`, or
    `self.corpus` set to one): what that class's own methods set `self.attr` to, judged in its module."""
    recv = expr.value
    if isinstance(recv, ast.Name):
        classes = summaries.instance_classes(recv, ctx, pos or ctx.pos)
        classes = [c for c in classes if _has_attribute(c, expr.attr, ctx)] if _guarded_by_hasattr(expr, ctx, pos) \
            else classes  # `if hasattr(model, "table"): model.table...`: only the classes that set it
    elif isinstance(recv.value, ast.Name) and recv.value.id == "self":
        classes = [summaries.attribute_class(recv.attr, ctx, pos, depth + 1)]
    else:
        return None
    if not classes or not all(isinstance(c, ast.ClassDef) for c in classes):
        return None
    return join(self_attribute_kind(expr.attr, _in_class(c, ctx)) for c in classes)


def _in_class(cls: ast.ClassDef, ctx: "Position") -> "Position":
    home = summaries.in_home(cls, ctx)
    return Position(home.facts, replace(home.frame, cls=cls), home.pos)


def _has_attribute(cls: ast.ClassDef, attr: str, ctx: "Position") -> bool:
    return attr in summaries.self_assignments(cls, _in_class(cls, ctx))


def _guarded_by_hasattr(expr: ast.Attribute, ctx: "Position", pos) -> bool:
    """The read sits in the body of `if hasattr(obj, "attr"):` testing this object and attribute."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    for n in ctx.facts.enclosing(root, pos or pos_of(expr)):
        test = n.test if isinstance(n, ast.If) else None
        if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "hasattr"
                and len(test.args) == 2 and ast.dump(test.args[0]) == ast.dump(expr.value)
                and isinstance(test.args[1], ast.Constant) and test.args[1].value == expr.attr):
            return True
    return False


def assigned_just_before(expr: ast.Attribute, ctx: "Position", pos=None) -> Optional[ast.AST]:
    """The value `self.attr = value` gave the attribute read at `pos`, when that assignment comes just before
    the read's statement in its block, with only statements between that neither bind the attribute nor call
    a method of `self` or of the attribute (which might): what the read sees, whatever other methods of the
    class set it to (`self.acc = None` in `clear()`). `kind` trusts it for a torch function's result."""
    func = ctx.frame.func
    pos = pos or ctx.pos
    if func is None:
        return None
    key = dotted(expr)
    ancestors = [ctx.facts.at(func, pos)] + ctx.facts.enclosing(func, pos)
    stmt = next((n for n in ancestors if isinstance(n, ast.stmt)), None)
    block = next((body for n in ancestors for body in _bodies(n) if stmt in body), None)
    if stmt is None or block is None:
        return None
    for before in reversed(block[:block.index(stmt)]):
        if isinstance(before, ast.Assign) and len(before.targets) == 1 and dotted(before.targets[0]) == key:
            return before.value
        if not isinstance(before, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Pass)) or any(
                isinstance(n, ast.Attribute) and (dotted(n) == key and not isinstance(n.ctx, ast.Load)
                                                  or isinstance(n.value, ast.Name) and n.value.id == "self"
                                                  and _called(n, before)) for n in walk(before)):
            return None
    return None


def _bodies(node: ast.AST) -> list:
    return [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]


def _called(attr: ast.Attribute, stmt: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and n.func is attr for n in walk(stmt))


def self_attribute_kind(attr: str, ctx: "Position") -> Optional[Kind]:
    """What `self.attr` holds, from every `self.attr = value` and `self.register_buffer("attr", value)` of the
    enclosing class, when they all agree; values are judged without their method's scope (torch calls,
    constructors, conversions of other attributes), so a value built from a local name is unknown."""
    cls = ctx.frame.cls
    if cls is None:
        return None
    key = ("self-attribute", id(cls), attr)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = None  # a cycle (self.a = self.b, self.b = self.a) stays unknown
        values = summaries.self_assignments(cls, ctx).get(attr, ())
        own = [v for v in values if not _reads_self_attribute(v, attr)]
        kinds = {_free_kind(v, ctx) for v in own}
        held = kinds.pop() if len(kinds) == 1 else None
        if held is not None and len(own) < len(values):  # self.k = self.k.expand(...): assume, then confirm
            memo[key] = held
            held = held if {_free_kind(v, ctx) for v in values} == {held} else None
        memo[key] = held
    return memo[key]


def _reads_self_attribute(value: ast.AST, attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name)
               and n.value.id == "self" for n in walk(value))


def _elementwise_comparison(expr) -> bool:
    """`t == 1`, `t > 0`: one comparison of values, elementwise for a tensor (not `is`, `in`, nor a chain)."""
    return isinstance(expr, ast.Compare) and len(expr.ops) == 1 and isinstance(
        expr.ops[0], (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE))


def _elementwise_kind(left: Optional[Kind], right: Optional[Kind]) -> Optional[Kind]:
    """The kind of an arithmetic operation or an elementwise comparison of values of these kinds."""
    if NDARRAY in (left, right):
        return NDARRAY
    if left in TENSORISH or right in TENSORISH:
        return TENSOR if SURE_TENSOR & {left, right} else LIKELY_TENSOR
    return None


def _free_kind(value: ast.AST, ctx: "Position") -> Optional[Kind]:
    """The kind of a value that does not depend on local names."""
    if isinstance(value, ast.Constant):
        return SCALAR if value.value is not None else None
    if isinstance(value, ast.BinOp) or _elementwise_comparison(value):
        left, right = (value.left, value.right) if isinstance(value, ast.BinOp) else (value.left, value.comparators[0])
        return _elementwise_kind(_free_kind(left, ctx), _free_kind(right, ctx))
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
        return self_attribute_kind(value.attr, ctx)
    if not isinstance(value, ast.Call):
        return None
    q = ctx.facts.qualname(value.func)
    made = _torch_call_kind(q, value)
    if made is not None:
        return made
    # self.grid = self.make_grid(...), self.window = band_matrix(n): a method runs once its module is loaded,
    # so a module-level name is the one bound at its end, wherever the class sits
    at_end = end_of(ctx.facts.tree.body[-1]) if ctx.frame.func is None and ctx.facts.tree.body else ctx.pos
    callee = summaries.callee(value, ctx, max(ctx.pos, at_end))
    if isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return summaries.returned(callee, ctx, None, kind, 1)
    if isinstance(value.func, ast.Attribute) and q is None:
        recv = _free_kind(value.func.value, ctx)
        if recv in TENSORISH:
            op = api.method(value.func.attr)
            return _result_kind(op, TENSOR, value) if op else None
        if recv == MODULE and api.module_returns_self(value.func.attr):
            return MODULE
    return None


def held_torch_module(func: ast.Attribute, ctx: "Position") -> bool:
    """`self.head` of `self.head(x)` holds, by every assignment of the class, a torch module whose forward
    returns one tensor (not a recurrent layer's or an attention's tuple, nor an uncallable container)."""
    cls = ctx.frame.cls
    if cls is None or func.value.id != "self" or hierarchy.resolved(cls, func.attr, ctx.facts) is not None:
        return False
    values = [v for v in summaries.self_assignments(cls, ctx).get(func.attr, ())
              if not (isinstance(v, ast.Constant) and v.value is None)]
    made = {_module_made(v, ctx) for v in values}
    return bool(made) and None not in made


def _module_made(value: ast.AST, ctx: "Position") -> Optional[str]:
    """The torch module class `value` constructs, when its forward returns a single tensor."""
    if not isinstance(value, ast.Call) or any(k.arg == "return_indices" for k in value.keywords):
        return None
    q = ctx.facts.qualname(value.func)
    if not api.is_module_class(q) or TUPLE_MODULES.search(q.rsplit(".", 1)[-1]):
        return None
    return q


def _submodule_call(func: ast.Attribute, ctx: "Position") -> bool:
    """`self.encoder(x)`: an attribute the class sets (`self.encoder = ...`) and names like a module;
    a method such as `self.get_model()` is not a forward pass."""
    return (isinstance(func.value, ast.Name) and func.value.id == "self" and names.MODULE_NAME(func.attr)
            and func.attr in _self_attributes(ctx))


def _self_attributes(ctx: "Position") -> frozenset:
    """Names the enclosing class sets on `self`: assigned anywhere in its body, or registered
    (`self.register_modules(unet=unet)`, `self.add_module("head", ...)`)."""
    cls = ctx.frame.cls
    if cls is None:
        return frozenset()
    key = ("self-attributes", id(cls))
    if key not in ctx.facts.memo:
        found = set(summaries.self_assignments(cls, ctx))
        for n in walk(cls):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in REGISTERS:
                found.update(k.arg for k in n.keywords if k.arg)
                found.update(a.value for a in n.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str))
        ctx.facts.memo[key] = frozenset(found)
    return ctx.facts.memo[key]


def _only_named(name: str, ctx: "Position", pos) -> bool:
    """`name` is a plain parameter: its name is all that says what it is (`actor_critic` may be a factory),
    not what the callers pass (`evaluate(torch.nn.Linear(4, 2), ...)`)."""
    found = reaching(name, ctx, pos)
    return bool(found) and all(b.kind == Bind.ARG and b.annotation is None
                               and summaries.argument(b, ctx, kind, 1) is None for b in found)


def _torch_call_kind(q: Optional[str], call: ast.Call) -> Optional[Kind]:
    """What `call`, a call of torch's `q`, builds: a parameter, a module, an optimizer, or its API result."""
    if q in PARAMETER_CLASSES:
        return PARAM
    if api.is_module_class(q):
        return MODULE
    if api.is_optimizer_class(q):
        return OPTIMIZER
    op = api.function(q)
    return _result_kind(op, TENSOR, call, method=False) if op is not None else None


def _result_kind(op: api.Op, tensor: Kind, call: ast.Call, method: bool = True) -> Optional[Kind]:
    """The kind of `call`'s result, a call of torch's `op`: `tensor` (TENSOR, or LIKELY_TENSOR for a guessed
    receiver), an ndarray, a number, or unknown (a tuple, a Size, ...)."""
    if api.tensor_result(op, call, method):
        return tensor
    return {"ndarray": NDARRAY, "int": SCALAR, "float": SCALAR, "bool": SCALAR, "number": SCALAR}.get(op.returns)


def _declared_tensor_function(func: ast.AST, qualname: Optional[str], names: frozenset) -> bool:
    """The callee is one the user declared tensor-returning: by qualified name (`pkg.mod.make`), by its
    dotted text (`self.make`), or, for a declared bare name, by its last component (`make`)."""
    text = dotted(func)
    return bool(text) and (text in names or qualname in names or text.rsplit(".", 1)[-1] in names)


def annotation_kind(ann: ast.AST, ctx: "Position") -> Optional[Kind]:
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        text = ann.value
        return TENSOR if text in ("torch.Tensor", "Tensor") else None
    if isinstance(ann, ast.Subscript):  # Optional[Tensor] -> unknown (may be None), keep quiet
        return None
    q = ctx.facts.qualname(ann)
    if q in TENSOR_TYPES:
        return PARAM if q.endswith("Parameter") else TENSOR
    if q and q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in ("Module", "Sequential", "ModuleList"):
        return MODULE
    if q and q.startswith("numpy."):
        return NDARRAY
    return None


@memoised(unknown=False)
def attached(expr: ast.AST, ctx: "Position", pos=None, depth: int = 0) -> bool:
    """Whether `expr` is (by the file's evidence) part of an autograd graph: it requires grad. Never a value
    proven unattached (analysis/unattached.py), whatever names a backward runs through."""
    if unattached(expr, ctx, pos):
        return False
    if isinstance(expr, ast.Name):
        found = bindings(expr, ctx, pos)
        scope = ctx.frame.scope
        if expr.id in scope.backward_names and _backpropagated_binding(expr.id, found, ctx) and (
                expr.id in scope.backward_plain or _made_to_require_grad(expr.id, ctx, pos)):
            return True  # a factor of `(err * w).backward()` only when made a leaf: `w` may be a number
        return bool(found) and all(_binding_attached(b, expr, ctx, pos, depth) for b in found)

    if isinstance(expr, ast.Attribute):
        if expr.attr in ("weight", "bias") or backpropagated_path(expr, ctx, pos):
            return True
        held = api.attribute(expr.attr)  # x.T keeps the graph; x.grad, x.data, x.shape do not
        return held is not None and held.gives_tensor and held.holds_graph and attached(expr.value, ctx, pos,
                                                                                        depth + 1)
    if isinstance(expr, ast.Subscript):
        found = elements.entry_read(expr, ctx, pos, depth)
        if found:  # an entry of a dict or list the code fills: attached when every entry it may be is
            return all(_item_attached(i, ctx, depth) for i in found)
        return attached(expr.value, ctx, pos, depth + 1)
    if isinstance(expr, ast.BinOp):
        return attached(expr.left, ctx, pos, depth + 1) or attached(expr.right, ctx, pos, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return attached(expr.operand, ctx, pos, depth + 1)
    if isinstance(expr, ast.IfExp):  # `mse if lam else loss`: whichever runs
        return attached(expr.body, ctx, pos, depth + 1) and attached(expr.orelse, ctx, pos, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        if any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in expr.keywords):
            return True
        callee = summaries.callee(expr, ctx, pos)
        if isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return summaries.returned(callee, ctx, None, attached, depth + 1, any_path=True) is True
        summed = elements.sum_argument(expr, ctx)
        if summed is not None:  # a sum keeps the graph of any of its terms
            return any(_item_attached(i, ctx, depth) for i in elements.items(summed, (), ctx, pos, depth) or ())
        q = ctx.facts.qualname(func)
        if q:
            if q in PARAMETER_CLASSES:
                return True
            op = api.function(q)
            if op is not None and op.keeps_grad:
                return any(attached(a, ctx, pos, depth + 1) for a in expr.args)
            return False
        if parameterless_loss(func, ctx, pos):  # criterion(pred, y), self.criterion(pred, y)
            return any(attached(a, ctx, pos, depth + 1) for a in expr.args)
        if isinstance(func, ast.Attribute):
            op = api.method(func.attr)
            if op is not None and not op.keeps_grad:
                return False
            recv = func.value
            if _submodule_call(func, ctx):
                return True  # self.encoder(x)
            if kind(func, ctx, pos, depth + 1) == MODULE:
                return True  # self.model.encoder(x)
            if names.LOSS_FUNC(func.attr):
                return any(attached(a, ctx, pos, depth + 1) for a in expr.args) or bool(expr.args)
            return attached(recv, ctx, pos, depth + 1)
        if isinstance(func, ast.Name):
            if kind(func, ctx, pos, depth + 1) == MODULE:
                return True  # model(x)
            if names.LOSS_FUNC(func.id):
                return any(attached(a, ctx, pos, depth + 1) for a in expr.args)
        return False
    return False


def summand_of_backpropagated(b, fn, ctx: "Position") -> bool:
    """`box` of `loss, box, size = f(...)` where the scope backpropagates `loss` and every return of `f` is a
    tuple whose element for `loss` sums the one for `box` (`return box + size, box, size`, or `total` bound
    once to that sum): autograd ran backward through `box`, so it holds a graph."""
    target = next((t for t in getattr(b.node, "targets", ()) if isinstance(t, (ast.Tuple, ast.List))), None)
    if target is None or not isinstance(fn, summaries.DEFS):
        return False
    totals = [j for j, t in enumerate(target.elts) if j != b.index and isinstance(t, ast.Name)
              and t.id in ctx.frame.scope.backward_names]
    returned = [r.value for r in summaries.returns(fn)]
    if not totals or not returned:
        return False
    for value in returned:
        if not (isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts)):
            return False
        part = ast.dump(value.elts[b.index])
        if not any(part in {ast.dump(e) for e in _summands(value.elts[j], fn)} for j in totals):
            return False
    return True


def _summands(expr, fn) -> list:
    """The operands of a sum (`a + b + c`), or of the sum a name is bound to once in `fn`."""
    if isinstance(expr, ast.Name):
        made = [n.value for n in walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Name) and n.targets[0].id == expr.id]
        expr = made[0] if len(made) == 1 else expr
    return _operands(expr)


def _operands(expr) -> list:
    """`a`, `b`, `c` of `a + b - c`, and `b` of a term scaled by a constant (`0.5 * b`)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _operands(expr.left) + _operands(expr.right)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for scale, term in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(scale, ast.Constant) and isinstance(scale.value, (int, float)):
                return _operands(term)
    return [expr]


def backpropagated_path(expr: ast.Attribute, ctx: "Position", pos=None) -> bool:
    """`out.loss` where the scope calls `out.loss.backward()`, or `loss.backward()` after `loss = out.loss`,
    with `out` bound as here: autograd ran backward from that attribute of the object (a model's output
    object), so it holds a graph."""
    path = dotted(expr)
    root = expr
    while isinstance(root, ast.Attribute):
        root = root.value
    if path is None or not isinstance(root, ast.Name):
        return False
    scope = ctx.frame.scope
    here = {id(b) for b in bindings(root, ctx, pos)}
    if path in scope.backward_paths and _backpropagated_binding(root.id, bindings(root, ctx, pos), ctx):
        return True
    for name in scope.backward_names:  # `loss = out.loss` and `loss.backward()`
        for at in scope.backward_at.get(name, ()):
            for b in scope.reaching(name, at):
                if b.kind == Bind.ASSIGN and b.value is not None and dotted(b.value) == path \
                        and here & {id(r) for r in scope.reaching(root.id, b.pos)}:
                    return True
    return False


def parameterless_loss(func: ast.expr, ctx: "Position", pos) -> bool:
    """`func` holds a torch loss module without parameters (`criterion = nn.MSELoss()`, or `self.criterion`
    set only to such modules): calling it keeps a graph only through its inputs."""
    if isinstance(func, ast.Name):
        values = [b.value for b in bindings(func, ctx, pos)]
    elif self_attribute(func) is not None and ctx.frame.cls is not None:
        values = summaries.self_assignments(ctx.frame.cls, ctx).get(func.attr, [])
    else:
        return False
    return bool(values) and all(isinstance(v, ast.Call) and api.is_parameterless_loss(ctx.facts.qualname(v.func))
                                for v in values)


def _made_to_require_grad(name: str, ctx: "Position", pos) -> bool:
    """`name.requires_grad = True` or `name.requires_grad_()` runs before `pos` in the scope: a leaf."""
    root = ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree
    return any(at < (pos or ctx.pos) for at in ctx.facts.index(_flagged, root).get(name, ()))


def _flagged(facts, root) -> dict:
    found: dict = {}
    for n in walk(root):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and n.value.value is True:
            targets = [t.value.id for t in n.targets if isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                       and isinstance(t.value, ast.Name)]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_" \
                and isinstance(n.func.value, ast.Name) and not (n.args and isinstance(n.args[0], ast.Constant)
                                                                and n.args[0].value is False):
            targets = [n.func.value.id]
        else:
            continue
        for name in targets:
            found.setdefault(name, []).append(pos_of(n))
    return found


def _backpropagated_binding(name: str, found: list, ctx: "Position") -> bool:
    """A backward of the scope runs through `name` bound as here: one of the bindings `found` reaching this
    point also reaches a `name.backward()` (or none is known). A validation loop's `loss`, bound anew from
    outputs made under no_grad, is not the training loop's `loss` that is backpropagated."""
    if not found:
        return True
    return not {id(b) for b in found}.isdisjoint(_backpropagated_bindings(name, ctx))


def _backpropagated_bindings(name: str, ctx: "Position") -> frozenset:
    """The ids of the bindings of `name` that reach some `name.backward()` of the scope: asked once per scope
    and name (a question per binding, each scanning every backward, was quadratic in one long scope)."""
    scope = ctx.frame.scope
    key = ("backpropagated-bindings", id(scope), name)
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = frozenset(id(b) for at in scope.backward_at.get(name, ()) for b in scope.reaching(name, at))
    return memo[key]


def made_leaf(value: ast.AST, ctx: "Position") -> bool:
    """`value` is made as a graph leaf: a factory call given `requires_grad` (`torch.randn(3,
    requires_grad=True)`), `t.requires_grad_()`, `nn.Parameter(...)`, a module's `.weight` / `.bias`, a `.grad`.
    It may require grad (be attached), yet no op made it: it has no grad_fn."""
    if not isinstance(value, ast.Call):
        return isinstance(value, ast.Attribute) and value.attr in LEAF_ATTRS
    if any(k.arg == "requires_grad" for k in value.keywords):
        return True
    if isinstance(value.func, ast.Attribute) and value.func.attr == "requires_grad_":
        return True
    return (ctx.facts.qualname(value.func) or "").endswith("Parameter")


@memoised(unknown=False)
def leaf(expr: ast.AST, ctx: "Position", pos=None, depth: int = 0) -> bool:
    """`expr` is (by the file's evidence) a graph leaf: made as one (`made_leaf`), a name every reaching
    binding of which binds a leaf, or a call of a def of the file every return of which gives one."""
    if made_leaf(expr, ctx):
        return True
    if isinstance(expr, ast.Name):
        found = bindings(expr, ctx, pos)
        return bool(found) and all(b.kind in (Bind.ASSIGN, Bind.ANNASSIGN) and leaf(b.value, ctx, b.pos, depth + 1)
                                   for b in found)
    if isinstance(expr, ast.Call):
        callee = summaries.callee(expr, ctx, pos)
        return (isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef))
                and summaries.returned(callee, ctx, None, leaf, depth + 1) is True)
    return False


def non_leaf(expr: ast.AST, ctx: "Position", pos=None) -> bool:
    """`expr` is attached to the autograd graph as the result of an op (it has a grad_fn): `model(x)`, `w * 2`,
    a view of a leaf that requires grad. Not a leaf made with requires_grad=True, which deepcopy copies."""
    return attached(expr, ctx, pos) and not leaf(expr, ctx, pos)


def passed_non_leaf(b, ctx: "Position") -> bool:
    """Some caller (in the file or the package) passes parameter `b` a graph tensor made by an op: a
    model's output, `w * 2` of a tensor that requires grad (not a leaf, not a parameter)."""
    return b.kind == Bind.ARG and summaries.argument(b, ctx, _non_leaf, 0, any_site=True) is True


def _non_leaf(expr: ast.AST, ctx: "Position", pos, depth: int) -> bool:
    return attached(expr, ctx, pos, depth) and not leaf(expr, ctx, pos, depth) and not is_param_like(expr, ctx)


def is_module_class(cls: ast.ClassDef, ctx: "Position") -> bool:
    """`cls` derives from a `torch.nn` class, or from a base whose name ends like a model's, itself or through
    a base class the code shows (`class LinearHead(Head)`, `class Head(nn.Module)`)."""
    home = project.home(cls) or ctx.facts
    return _derives_from_module(cls, home) or any(_derives_from_module(c, f) for c, f in hierarchy.ancestors(cls, home))


def _derives_from_module(cls: ast.ClassDef, facts) -> bool:
    for base in cls.bases:
        q = facts.qualname(base) or ""
        if q.startswith("torch.nn.") or (isinstance(base, (ast.Name, ast.Attribute))
                                         and (dotted(base) or "").endswith(("Module", "Model", "Net"))):
            return True
    return False


def is_param_like(expr: ast.AST, ctx: "Position") -> bool:
    """A parameter, gradient or optimizer-state target: `.weight`, `.bias`, `.grad`, params loop vars."""
    node = expr
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
        if isinstance(node, ast.Attribute) and node.attr in ("detach", "data"):
            node = node.value
    if isinstance(node, ast.Attribute) and node.attr in ("weight", "bias", "grad", "data"):
        return True
    k = kind(node, ctx)
    if k == PARAM:
        return True
    name = base_name(node)
    return names.PARAM_NAME(name)
