"""Generate flake8_tensorcopy/analysis/torch_api.py, the analysis's model of torch's API, from torch itself.

    python scripts/gen_torch_api.py            # write the module (needs the pinned torch installed)
    python scripts/gen_torch_api.py --check    # exit 1 when the committed module differs (tests run this)

Development time only: the linter reads the generated data and never imports torch. Sources, in order:
1. the .pyi stubs (`torch/_C/__init__.pyi` for Tensor methods, `_VariableFunctions.pyi` and the Python
   namespaces for functions): which names exist and what they return (a tensor, tensors, an int, ...);
2. the operator schemas (`torch._C._jit_get_all_schemas()`): `Tensor(a!) self` mutates its receiver,
   `-> Tensor(a)` may alias it; torchgen's VIEW_FUNCTIONS and RETURNS_VIEWS_OF_INPUT: always a view;
3. probes of real torch where declarations are silent: does the result keep `grad_fn` when the input
   is attached (a float64 tensor that requires grad)? Does a Module method return the module itself? Does
   a Tensor method return the tensor itself when it already is what is asked (a conversion: `x.float()`)?
   Which attributes hold the graph (`x.T`, `x.grad_fn`) and which may code set (`x.requires_grad`)?
4. dir() of the types PyTorch code also calls methods on (builtins, ndarray, Module, Optimizer) and of
   numpy: the Tensor methods none of them has tell a tensor receiver;
5. probes of numpy's functions given tensors: which return a torch.Tensor (`numpy.ceil(t)`: Tensor defines
   `__array_wrap__` and `__array_priority__`; `numpy.round(t)` calls `t.round()`);
6. OVERLAY below: what none of these can say (reviewed by hand, each line with its reason).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import inspect
import io
import sys
import typing
import warnings
from pathlib import Path

import numpy
import torch

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "flake8_tensorcopy" / "analysis" / "torch_api.py"
TORCH = Path(torch.__file__).parent
TENSORS = ("tensor", "tensors", "tensor|tensors")
NAMESPACES = ("torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special")
# Results that may be the input itself or a copy (torchgen: "may sometimes return a copy").
MAY_COPY = {"contiguous", "reshape", "reshape_as", "to", "type_as", "float", "double", "half", "bfloat16",
            "long", "int", "short", "bool", "byte", "char", "cpu", "cuda", "type"}

# What declarations cannot say (see shared torch-facts.md): (returns, alias, mutates, grad).
OVERLAY_METHODS = {
    "numpy": ("ndarray", "view", False, "drops"),  # shares memory with a CPU tensor (Q6)
    "tolist": ("other", "fresh", False, "drops"),
    "item": ("number", "fresh", False, "drops"),
    "cpu": ("tensor", "alias", False, "keeps"),  # the tensor itself when already on the CPU
    "cuda": ("tensor", "alias", False, "keeps"),  # the tensor itself when already on that GPU
    "xpu": ("tensor", "alias", False, "keeps"),  # likewise for the other devices
    "ipu": ("tensor", "alias", False, "keeps"),
    "mtia": ("tensor", "alias", False, "keeps"),
    "backward": ("none", "fresh", False, "drops"),
    "register_hook": ("other", "fresh", False, "drops"),
    "share_memory_": ("tensor", "self", True, "keeps"),
}
# Callables that are classes, not functions, but build tensors: the legacy constructors and Variable.
LEGACY_CONSTRUCTORS = sorted({f"torch.{n}" for n in dir(torch) if n.endswith("Tensor") and n[0].isupper()
                              and callable(getattr(torch, n))}
                             | {"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# Tensor methods that return the tensor itself when it is already there, but cannot be probed without the device.
OVERLAY_RETURNS_RECEIVER = {"cuda", "xpu", "ipu", "mtia"}
# Module methods that return the module but cannot be probed without a device or an argument.
OVERLAY_MODULE_SELF = {"cuda", "xpu", "ipu", "mtia", "apply", "type", "to_empty"}
OVERLAY_FUNCTIONS = {
    "torch.from_numpy": ("tensor", "view", False, "drops"),  # shares the array's memory (Q6)
    "torch.as_tensor": ("tensor", "alias", False, "keeps"),  # the input itself when it is a tensor
    "torch.asarray": ("tensor", "alias", False, "keeps"),
    "torch.tensor": ("tensor", "fresh", False, "drops"),  # a copy cut from the graph (Q6)
}


# ---- declarations ----------------------------------------------------------------------------------
def kind_of(annotation: str) -> str:
    """'tensor', 'tensors', 'int', 'float', 'bool', 'number', 'none', 'str' or 'other' for a stub's return."""
    a = annotation.replace(" ", "").replace("torch.", "").replace("typing.", "")
    if a.startswith(("Union[", "Optional[")) or "|" in a:
        inner = a[a.index("[") + 1:-1] if a.startswith(("Union[", "Optional[")) else a
        parts = top_level_split(inner) + (["None"] if a.startswith("Optional[") else [])
        return join({kind_of(p) for p in parts if p})
    if a in ("Tensor", "Self", "Parameter"):
        return "tensor"
    if a.startswith("return_types.") or a.startswith(("tuple[Tensor", "Tuple[Tensor", "list[Tensor", "List[Tensor",
                                                      "Sequence[Tensor")):
        return "tensors"
    simple = {"_int": "int", "int": "int", "SymInt": "int", "_bool": "bool", "bool": "bool", "_float": "float",
              "float": "float", "Number": "number", "_complex": "number", "None": "none", "str": "str"}
    return simple.get(a, "other")


def top_level_split(text: str) -> list[str]:
    """`A, B[C, D] | E` -> ['A', 'B[C, D]', 'E']: split on commas and bars outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch == "[") - (ch == "]")
        if depth == 0 and ch in ",|":
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def join(kinds: set[str]) -> str:
    kinds = set(kinds)
    if len(kinds) == 1:
        return kinds.pop()
    if kinds <= {"int", "float", "bool", "number"}:
        return "number"
    if kinds == {"tensor", "tensors"}:
        return "tensor|tensors"  # x.max() and x.max(dim)
    return "mixed"


def stub_returns(path: Path, cls: str | None) -> dict[str, set[str]]:
    """name -> return kinds over every overload, for module-level defs (cls None) or a class's methods."""
    tree = ast.parse(path.read_text())
    body = tree.body
    if cls:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    out: dict[str, set[str]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and node.returns is not None:
            out.setdefault(node.name, set()).add(kind_of(ast.unparse(node.returns)))
    return out


def python_returns(fn) -> str | None:
    try:
        ann = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return None
    if ann is inspect.Signature.empty:
        return None
    return kind_of(ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann)))


def schemas() -> dict[str, dict]:
    """aten name -> {'mutates': bool, 'alias': bool, 'returns': set}, from overloads with a Tensor self."""
    out: dict[str, dict] = {}
    for s in torch._C._jit_get_all_schemas():
        if not s.name.startswith("aten::") or not s.arguments or str(s.arguments[0].type) != "Tensor":
            continue
        if s.overload_name.endswith("out") or any(a.kwarg_only and a.alias_info and a.alias_info.is_write
                                                  for a in s.arguments):
            continue  # out= variants
        info = out.setdefault(s.name[6:], {"mutates": False, "alias": False})
        first = s.arguments[0].alias_info
        info["mutates"] |= bool(first and first.is_write)
        info["alias"] |= bool(first and not first.is_write and any(r.alias_info for r in s.returns))
    return out


def view_functions() -> tuple[set[str], set[str]]:
    """torchgen's (VIEW_FUNCTIONS, RETURNS_VIEWS_OF_INPUT) names, read as literals."""
    path = TORCH.parent / "torchgen" / "packaged" / "autograd" / "gen_inplace_or_view_type.py"
    tree = ast.parse(path.read_text())
    lits = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                lits[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    views = set(lits["VIEW_FUNCTIONS"]) | set(lits["VIEW_FUNCTIONS_WITH_METADATA_CHANGE"])
    extra = {"chunk", "detach", "contiguous", "reshape", "reshape_as", "expand_as", "view_as", "real", "imag",
             "narrow", "movedim", "tensor_split", "swapdims", "swapaxes", "mT", "mH", "adjoint", "matrix_H"}
    return views, views | extra  # RETURNS_VIEWS_OF_INPUT is a union expression: its literal part is extra


# ---- probes -----------------------------------------------------------------------------------------
def attached_input() -> torch.Tensor:
    leaf = torch.arange(1.0, 10.0, dtype=torch.float64).reshape(3, 3).requires_grad_()
    return leaf * 1.5  # not a leaf, so in-place methods run too


def probe(call) -> str:
    """'keeps' when some argument pattern that runs returns an attached tensor (`where(x)` drops the graph,
    `where(c, x, y)` keeps it), 'drops' when every one that runs returns a tensor without a graph, ''
    when none runs. Patterns hold the attached input where a tensor goes; a factory (`zeros(3)`) runs on
    ints alone and builds a fresh tensor that keeps nothing."""
    seen = set()
    other = torch.full((3, 3), 2.0, dtype=torch.float64)
    index = torch.tensor([0, 1])
    patterns = [lambda x: (x,), lambda x: (x, 0), lambda x: (x, 1), lambda x: (x, other), lambda x: (x, 0, 1),
                lambda x: (x, 0, 1, 1),
                lambda x: (x, other, other), lambda x: ([x, other],), lambda x: (x, [0, 1]), lambda x: (x, (3, 3)),
                lambda x: (x, 9), lambda x: (x, torch.float32), lambda x: (x, other > 2, 0.0),
                lambda x: (x, other > 2), lambda x: (x, 0, index), lambda x: (x, 0, index.reshape(2, 1)),
                lambda x: (other > 2, x, other)]
    factories = [(3,), (3, 3), ((3, 3),)]
    for args in [p(attached_input()) for p in patterns] + factories:
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                result = call(*args)
        except Exception:  # noqa: BLE001 - a pattern that does not fit this op
            continue
        finally:
            torch.set_grad_enabled(True)
        first = result[0] if isinstance(result, (tuple, list)) and result else result
        if isinstance(first, torch.Tensor):
            seen.add("keeps" if first.grad_fn is not None or first.requires_grad else "drops")
    return "keeps" if "keeps" in seen else seen.pop() if seen else ""


DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.complex128,
          torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)


def returns_receiver(name: str) -> bool:
    """The method returns the tensor itself when it already is what is asked (`x.float()` of a float tensor,
    `x.to(x.device)`, `x.contiguous()` of a contiguous one): a conversion, which never changes its receiver."""
    if name.endswith("_"):
        return False  # in place: returns the receiver it changed
    patterns = [lambda x: (), lambda x: (x.dtype,), lambda x: (x.device,), lambda x: (x,), lambda x: (x.type(),),
                lambda x: (x.shape,), lambda x: (x.layout,)]
    for dtype in DTYPES:
        for args in patterns:
            x = torch.ones(3, dtype=dtype)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if getattr(x, name)(*args(x)) is x:
                        return True
            except Exception:  # noqa: BLE001 - a pattern that does not fit this method
                continue
    return False


def attribute_entry(name: str, declared: dict[str, set[str]]) -> tuple:
    """(returns, grad, settable) of a Tensor attribute: what the stub declares it holds (None left out: an
    attribute that may be unset), whether its value on an attached tensor holds the graph (an attached
    tensor, or the graph node `grad_fn`), and whether `t.name = t.name` is allowed."""
    kinds = declared.get(name, set()) - {"none"}
    returns = join(kinds) if kinds else "other"
    leaf = torch.arange(1.0, 10.0, dtype=torch.float64).reshape(3, 3).requires_grad_()
    (leaf * leaf).sum().backward()  # leaf.grad is set
    keeps = False
    for x in (attached_input(), attached_input().to(torch.complex128), leaf):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = getattr(x, name)
        except Exception:  # noqa: BLE001 - imag of a real tensor
            continue
        keeps |= (isinstance(value, torch.Tensor) and value.grad_fn is not None) or isinstance(
            value, torch.autograd.graph.Node)
    plain = torch.zeros(3, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            setattr(plain, name, getattr(plain, name))
        settable = True
    except Exception:  # noqa: BLE001 - read-only
        settable = False
    return (returns, "keeps" if keeps else "drops", settable)


def attributes() -> dict[str, tuple]:
    """The Tensor's public data attributes (`shape`, `grad`, `T`, ...), by name."""
    path = TORCH / "_C" / "__init__.pyi"
    cls = next(n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef) and n.name == "TensorBase")
    declared: dict[str, set[str]] = {}
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and not node.target.id.startswith("_"):
            declared[node.target.id] = {kind_of(p) for p in top_level_split(ast.unparse(node.annotation))}
    return {name: attribute_entry(name, declared) for name in sorted(dir(torch.Tensor))
            if not name.startswith("_") and inspect.isdatadescriptor(inspect.getattr_static(torch.Tensor, name))}


# Types whose values PyTorch code also calls methods on: a Tensor method none of them has tells a tensor.
OTHER_TYPES = (object, int, float, complex, bool, str, bytes, list, tuple, dict, set, frozenset, numpy.ndarray,
               torch.nn.Module, torch.optim.Optimizer)


def tensor_only(names) -> list[str]:
    """Tensor method names that no type of OTHER_TYPES has and numpy does not spell as a function (`unsqueeze`,
    `detach`; not `view`, an ndarray method, nor `requires_grad_` or `float`, Module methods, nor `moveaxis`
    or `exp`, which array-API namespaces call as functions: `xp.moveaxis(a, 0, 1)`)."""
    others = {n for t in OTHER_TYPES for n in dir(t)} | set(dir(numpy))
    return sorted(set(names) - others)


def module_returns_self(name: str) -> bool:
    if name == "compile":  # torch.compile: slow, and returns None
        return False
    m = torch.nn.Linear(2, 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return getattr(m, name)() is m
    except Exception:  # noqa: BLE001
        return False


# numpy's array functions (a ufunc, or a function that dispatches on __array_function__); not np.test or np.info.
ARRAY_FUNCTION_TYPES = (numpy.ufunc, type(numpy.round))
PROBE_DTYPES = (torch.float64, torch.int64, torch.bool)  # bitwise and integer ufuncs run on some only


def numpy_functions() -> dict[str, str]:
    """numpy functions whose result is a torch.Tensor when given tensors: 'any' when a tensor in any input
    position gives one (a ufunc: `numpy.maximum(array, t)`), 'first' when it must be the first argument
    (`numpy.round(t)` calls `t.round()`). Probed with plain tensors: a tensor that requires grad makes a ufunc
    raise, so the code that runs never holds one."""
    out = {}
    for name in sorted(dir(numpy)):
        fn = getattr(numpy, name, None)
        if name.startswith("_") or not isinstance(fn, ARRAY_FUNCTION_TYPES):
            continue
        arity = fn.nin if isinstance(fn, numpy.ufunc) and fn.nout == 1 else 1
        if isinstance(fn, numpy.ufunc) and fn.nout != 1:
            continue  # divmod, frexp, modf: a tuple
        positions = [i for i in range(arity) if any(_numpy_gives_tensor(fn, arity, i, d) for d in PROBE_DTYPES)]
        if positions == list(range(arity)) and arity > 1:
            out[name] = "any"
        elif positions[:1] == [0]:
            out[name] = "first"
    return out


def _numpy_gives_tensor(fn, arity: int, position: int, dtype) -> bool:
    """`fn` of a (2, 2) tensor at `position`, and ndarrays of its values elsewhere, returns a torch.Tensor."""
    t = torch.tensor([[1, 0], [3, 2]]).to(dtype)
    args = [t if i == position else t.numpy() for i in range(arity)]
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            return isinstance(fn(*args), torch.Tensor)
    except Exception:  # noqa: BLE001 - a dtype or shape this function does not take
        return False


# ---- assembling ---------------------------------------------------------------------------------------
def entry(name: str, returns: str, sch: dict, views: set, may_view: set, grad: str, same=frozenset()) -> tuple:
    """`same`: the methods that may return their receiver itself (returns_receiver)."""
    info = sch.get(name, {"mutates": False, "alias": False})
    if returns not in TENSORS + ("mixed",):
        return (returns, "fresh", info["mutates"], "drops")
    if info["mutates"]:
        alias = "self"
    elif name in views or (name in may_view and name not in MAY_COPY):
        alias = "view"
    elif info["alias"] or name in may_view or name in same:
        alias = "alias"
    else:
        alias = "fresh"
    return (returns, alias, info["mutates"], grad)


def methods(sch: dict, views: set, may_view: set, same: frozenset) -> dict[str, tuple]:
    declared = stub_returns(TORCH / "_C" / "__init__.pyi", "TensorBase")
    out = {}
    for name in sorted(n for n in dir(torch.Tensor) if not n.startswith("_")):
        fn = getattr(torch.Tensor, name, None)
        if not callable(fn) or isinstance(fn, type):
            continue
        kinds = declared.get(name) or ({python_returns(fn)} - {None})
        returns = join(kinds) if kinds else None
        grad = probe(lambda x, *a, _n=name: getattr(x, _n)(*a)) if returns in TENSORS + ("mixed", "other", None) \
            else "drops"
        if returns in ("other", None):  # declared nowhere or as Any (`unique`, `as_subclass`): probed
            returns = "tensor" if grad or (returns is None and name in sch) else "other"
        out[name] = entry(name, returns, sch, views, may_view, grad, same)
    out.update(OVERLAY_METHODS)
    return out


def functions(sch: dict, views: set, may_view: set) -> dict[str, tuple]:
    declared = stub_returns(TORCH / "_C" / "_VariableFunctions.pyi", None)
    out = {}
    for space in NAMESPACES:
        mod = importlib.import_module(space)
        for name in sorted(dir(mod)):
            fn = getattr(mod, name, None)
            if name.startswith("_") or not callable(fn) or isinstance(fn, type) or not name[0].islower():
                continue
            if name.startswith(("set_", "use_", "manual_seed", "seed", "compile", "load", "save", "is_")):
                kinds = {python_returns(fn) or "other"}
            else:
                kinds = (declared.get(name) if space == "torch" else None) or ({python_returns(fn)} - {None})
            if not kinds:
                continue
            returns = join(kinds)
            grad = probe(fn) if returns in TENSORS else "drops"
            out[f"{space}.{name}"] = entry(name, returns, sch, views, may_view, grad)
    for qualname in LEGACY_CONSTRUCTORS:
        fn = _resolve(qualname)
        out[qualname] = ("tensor", _shares(fn), False, probe(fn))
    out.update(OVERLAY_FUNCTIONS)
    return out


def _resolve(qualname: str):
    module, _, name = qualname.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _shares(fn) -> str:
    """'alias' when the call returns (a view of) a float tensor it is given, else 'fresh'."""
    x = torch.ones(3)
    try:
        return "alias" if fn(x).data_ptr() == x.data_ptr() else "fresh"
    except Exception:  # noqa: BLE001
        return "fresh"


def classes(*where: tuple[type, str]) -> list[str]:
    """Qualified names of the public subclasses of each base exported by its namespace."""
    found = set()
    for base, space in where:
        mod = importlib.import_module(space)
        for name in dir(mod):
            obj = getattr(mod, name, None)
            if isinstance(obj, type) and issubclass(obj, base) and not name.startswith("_"):
                found.add(f"{space}.{name}")
    return sorted(found)


def inplace_views() -> list[str]:
    """The in-place methods torch tags `inplace_view`: they change the receiver's shape or strides only,
    never an element of its storage (`t.transpose_(0, 1)`). Every aten operator is asked, listed from the
    registered schemas: `dir(torch.ops.aten)` lists only the ones the process has loaded so far, so the
    answer depended on what ran before (the committed model lacked `detach_` and `squeeze_`)."""
    found = set()
    names = {s.name.split("::", 1)[1] for s in torch._C._jit_get_all_schemas() if s.name.startswith("aten::")}
    for name in sorted(names):
        packet = getattr(torch.ops.aten, name, None)
        for overload in getattr(packet, "overloads", lambda: [])():
            if torch.Tag.inplace_view in getattr(packet, overload).tags:
                found.add(name)
    return sorted(found)


def parameterless_losses() -> list[str]:
    """Loss modules of torch.nn (subclasses of its _Loss) that hold no parameter when built with their
    defaults: their output requires grad only when an input does."""
    found = []
    for name in classes((torch.nn.modules.loss._Loss, "torch.nn")):
        try:
            module = getattr(torch.nn, name.rsplit(".", 1)[1])()
        except Exception:  # needs arguments: not known to be free of parameters
            continue
        if not list(module.parameters()):
            found.append(name)
    return found


def tensor_output_modules() -> list[str]:
    """Module classes of torch.nn whose forward's return annotation is Tensor (not a tuple, not unannotated
    as Sequential's and the pools' that may return indices)."""
    found = []
    for name in classes((torch.nn.Module, "torch.nn")):
        forward = getattr(getattr(torch.nn, name.rsplit(".", 1)[1]), "forward", None)
        try:
            returns = typing.get_type_hints(forward).get("return") if forward is not None else None
        except Exception:  # an annotation that does not resolve: not declared
            continue
        if returns is torch.Tensor:
            found.append(name)
    return found


def target_parameters() -> dict[str, int]:
    """torch.nn.functional functions with a `target` parameter (the losses), and the position it takes."""
    found = {}
    for name in sorted(dir(torch.nn.functional)):
        fn = getattr(torch.nn.functional, name)
        if name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if "target" in params:
            found[f"torch.nn.functional.{name}"] = params.index("target")
    return found


def render() -> str:
    torch.manual_seed(0)
    sch = schemas()
    views, may_view = view_functions()
    public = sorted(n for n in dir(torch.Tensor) if not n.startswith("_") and callable(getattr(torch.Tensor, n)))
    same = frozenset(n for n in public if returns_receiver(n)) | OVERLAY_RETURNS_RECEIVER
    rows = ['"""The analysis\'s model of torch\'s API. GENERATED by scripts/gen_torch_api.py from torch '
            f'{torch.__version__.split("+")[0]}: do not edit.',
            "",
            "An entry is (returns, alias, mutates, grad): returns is 'tensor', 'tensors', 'tensor|tensors', 'int',",
            "'float', 'bool', 'number', 'none', 'str', 'ndarray', 'mixed' or 'other'; alias is 'view' "
            "(always shares the input's",
            "storage), 'alias' (may be the input itself or a view), 'self' (in place, returns the receiver) or",
            "'fresh'; mutates is True when the call writes its receiver; grad is 'keeps' when the result of an",
            "attached input is attached, 'drops' when it never is, '' when no probe ran ('mixed': a tensor or not,",
            "by the arguments, as `x.type()` and `x.type(dtype)`, is probed too).",
            '"""',
            f'TORCH_VERSION = "{torch.__version__.split("+")[0]}"',
            "",
            "# Tensor methods, by name.",
            "METHODS = {"]
    rows += [f"    {name!r}: {value!r}," for name, value in sorted(methods(sch, views, may_view, same).items())]
    rows += ["}", "",
             "# Tensor attributes, by name: (returns, grad, settable); grad is 'keeps' when the attribute of an",
             "# attached tensor holds its graph (`x.T`, `x.grad_fn`), settable when `t.name = value` is allowed.",
             "ATTRIBUTES = {"]
    rows += [f"    {name!r}: {value!r}," for name, value in attributes().items()]
    rows += ["}", "",
             "# Conversions: Tensor methods that return the tensor itself when it already has the asked dtype,",
             "# device or layout (`x.float()` of a float tensor); never in place.", "CONVERSIONS = frozenset({"]
    rows += [f"    {name!r}," for name in sorted(same)]
    rows += ["})", "",
             "# Tensor methods that no Python builtin type, numpy.ndarray, nn.Module or Optimizer has, and that",
             "# numpy does not spell as a function.",
             "TENSOR_ONLY_METHODS = frozenset({"]
    rows += [f"    {name!r}," for name in tensor_only(public)]
    rows += ["})", "", "# In-place methods torch tags `inplace_view`: they change shape or strides, never an element.",
             "INPLACE_VIEWS = frozenset({"]
    rows += [f"    {name!r}," for name in inplace_views()]
    rows += ["})", "", "# Functions, by qualified name (" + ", ".join(NAMESPACES) + ").", "FUNCTIONS = {"]
    rows += [f"    {name!r}: {value!r}," for name, value in sorted(functions(sch, views, may_view).items())]
    rows += ["}", "", "# nn.Module subclasses that torch.nn exports.", "MODULE_CLASSES = frozenset({"]
    rows += [f"    {name!r}," for name in classes((torch.nn.Module, "torch.nn"))]
    rows += ["})", "", "# nn.Module subclasses whose forward torch annotates `-> Tensor`: one tensor out.",
             "TENSOR_OUTPUT_MODULES = frozenset({"]
    rows += [f"    {name!r}," for name in tensor_output_modules()]
    rows += ["})", "", "# Loss modules holding no parameter (built with their defaults): attached only through inputs.",
             "PARAMETERLESS_LOSSES = frozenset({"]
    rows += [f"    {name!r}," for name in parameterless_losses()]
    rows += ["})", "", "# torch.nn.functional losses: the position of their `target` parameter.",
             "TARGET_PARAMETERS = {"]
    rows += [f"    {name!r}: {index!r}," for name, index in target_parameters().items()]
    rows += ["}", "", "# Optimizers and LR schedulers: their state_dict() is data, not live parameters.",
             "OPTIMIZER_CLASSES = frozenset({"]
    rows += [f"    {name!r}," for name in classes((torch.optim.Optimizer, "torch.optim"),
                                                  (torch.optim.lr_scheduler.LRScheduler, "torch.optim.lr_scheduler"))]
    rows += ["})", "", "# Module methods that convert the module in place and return it (`model.to(device)`).",
             "MODULE_SELF_METHODS = frozenset({"]
    probed = {n for n in dir(torch.nn.Module) if not n.startswith("_") and module_returns_self(n)}
    rows += [f"    {name!r}," for name in sorted(probed | OVERLAY_MODULE_SELF)]
    rows += ["})", "",
             f"# numpy {numpy.__version__} functions that return a torch.Tensor when given tensors: 'any' when a",
             "# tensor in any input position does (a ufunc, `numpy.maximum(array, t)`), 'first' when the first",
             "# argument must be it (`numpy.round(t)` calls `t.round()`). Not `numpy.mean(t)` (raises) nor",
             "# `numpy.asarray(t)`.",
             "NUMPY_FUNCTIONS = {"]
    rows += [f"    {name!r}: {value!r}," for name, value in numpy_functions().items()]
    rows += ["}", ""]
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed module differs")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python scripts/gen_torch_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    assert importlib.util.find_spec("torch") is not None
    sys.exit(main())
