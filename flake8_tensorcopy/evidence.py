"""What an expression is (tensor, parameter, module, state_dict, ndarray, ...) and whether it is
attached to an autograd graph, judged from the file alone and never by importing torch.

`kind()` answers with one of the KIND constants or None (unknown). TENSOR is real evidence
(a torch factory, an annotation, arithmetic on tensors); LIKELY_TENSOR comes from method names
that are tensor-specific in practice (`.detach()`, `.clone()`).
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Optional

from . import api
from .facts import TENSOR_TYPES, base_name, dotted

if TYPE_CHECKING:  # pragma: no cover
    from .context import Context

TENSOR, LIKELY_TENSOR, PARAM = "tensor", "likely-tensor", "param"
MODULE, STATE_DICT, NDARRAY, OPTIMIZER, CONTAINER, SCALAR = (
    "module", "state_dict", "ndarray", "optimizer", "container", "scalar",
)
TENSORISH = frozenset({TENSOR, LIKELY_TENSOR, PARAM})
SURE_TENSOR = frozenset({TENSOR, PARAM})

# Methods that, whatever the receiver was, mean it is a tensor in PyTorch code.
TENSOR_ONLY_METHODS = frozenset(
    """detach requires_grad_ new_zeros new_ones new_full new_empty new_tensor unsqueeze masked_fill
    masked_fill_ softmax log_softmax index_select view_as expand_as type_as numel nelement
    data_ptr untyped_storage is_contiguous contiguous""".split()
)
LIKELY_TENSOR_METHODS = frozenset({"clone", "detach", "detach_"})
MODULE_NAME = re.compile(
    r"(^|_)(model|net|network|module|encoder|decoder|backbone|policy|actor|critic|classifier|generator|"
    r"discriminator|teacher|student|layer|block|head|qnet|q_net|value_net|agent_net|transformer|unet|vae|"
    r"autoencoder|mlp|cnn|rnn|lstm|gru|ema_model|target_net|online_net)s?\d*$",
    re.IGNORECASE,
)
LOSS_CALLEE = re.compile(r"(loss|criterion|objective)", re.IGNORECASE)
NOT_MODULE_RECEIVER = re.compile(
    r"(optim|sched|scaler|metric|engine|trainer|accelerator|lr_|tokenizer|dataset|loader|buffer|env|"
    r"logger|callback|plugin|strategy|client|runner|manager|stats)",
    re.IGNORECASE,
)
MAX_DEPTH = 8


def kind(expr: ast.AST, ctx: "Context", pos=None, depth: int = 0) -> Optional[str]:
    """The kind of `expr` evaluated at `pos` (defaults to the node under check)."""
    if depth > MAX_DEPTH or expr is None:
        return None
    pos = pos or ctx.pos
    if isinstance(expr, ast.Name):
        key = expr.id
        if key in ctx.frame.guards:
            return TENSOR
        if key == "self" and ctx.frame.cls is not None and _is_module_class(ctx.frame.cls, ctx):
            return MODULE
        kinds = {_binding_kind(b, key, ctx, depth) for b in _reaching(key, ctx, pos)}
        return kinds.pop() if len(kinds) == 1 else None  # unknown, or different on different paths
    if isinstance(expr, ast.Attribute):
        attr = expr.attr
        if attr in ("weight", "bias"):
            return PARAM
        if attr == "grad":
            return TENSOR
        if attr in ("data", "T", "mT", "H", "real", "imag"):
            inner = kind(expr.value, ctx, pos, depth + 1)
            return TENSOR if inner in TENSORISH else None
        dotted_key = dotted(expr)
        if dotted_key and dotted_key in ctx.frame.guards:
            return TENSOR
        if MODULE_NAME.search(attr) and not NOT_MODULE_RECEIVER.search(attr):
            return MODULE
        return None
    if isinstance(expr, ast.Call):
        return _call_kind(expr, ctx, pos, depth)
    if isinstance(expr, ast.BinOp):
        left = kind(expr.left, ctx, pos, depth + 1)
        right = kind(expr.right, ctx, pos, depth + 1)
        if NDARRAY in (left, right):
            return NDARRAY
        if left in TENSORISH or right in TENSORISH:
            return TENSOR if SURE_TENSOR & {left, right} else LIKELY_TENSOR
        return None
    if isinstance(expr, ast.UnaryOp):
        inner = kind(expr.operand, ctx, pos, depth + 1)
        return TENSOR if inner == PARAM else inner
    if isinstance(expr, ast.Subscript):
        inner = kind(expr.value, ctx, pos, depth + 1)
        if inner in (TENSOR, PARAM, STATE_DICT):
            return TENSOR
        if inner in (LIKELY_TENSOR, NDARRAY):
            return inner
        return None
    if isinstance(expr, (ast.Dict, ast.DictComp, ast.List, ast.ListComp, ast.Set, ast.SetComp, ast.Tuple)):
        return CONTAINER
    if isinstance(expr, ast.Constant):
        return SCALAR
    if isinstance(expr, ast.IfExp):
        a, b = kind(expr.body, ctx, pos, depth + 1), kind(expr.orelse, ctx, pos, depth + 1)
        return a if a == b else None
    return None


def _reaching(name: str, ctx: "Context", pos) -> list:
    """Bindings that may give `name` its value at `pos` (this scope's, else an enclosing one's)."""
    reaching = ctx.frame.scope.reaching(name, pos)
    if reaching:
        return reaching
    b = ctx.frame.scope.binding_before(name, pos)
    return [b] if b is not None else []


def _binding_kind(b, name: str, ctx: "Context", depth: int) -> Optional[str]:
    if b.annotation is not None:
        ann = annotation_kind(b.annotation, ctx)
        if ann:
            return ann
    if b.kind in ("assign", "annassign") and b.value is not None:
        return kind(b.value, ctx, b.pos, depth + 1)
    if b.kind == "for" and isinstance(b.node, (ast.For, ast.AsyncFor)) and isinstance(b.node.target, ast.Name):
        it = b.node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "parameters":
            return PARAM
    if b.kind == "arg" and MODULE_NAME.search(name):
        return MODULE
    return None


def _binding_attached(b, expr: ast.Name, ctx: "Context", pos, depth: int) -> bool:
    if b.grad_off:
        return False
    if b.kind in ("assign", "annassign") and b.value is not None:
        return attached(b.value, ctx, b.pos, depth + 1)
    if b.kind == "for":
        return _binding_kind(b, expr.id, ctx, depth) == PARAM
    return False


def _call_kind(call: ast.Call, ctx: "Context", pos, depth: int) -> Optional[str]:
    q = ctx.facts.qualname(call.func)
    if ctx.facts.tensor_functions and _declared_tensor_function(call.func, q, ctx.facts.tensor_functions):
        return TENSOR
    if q:
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return PARAM
        if q in ("copy.deepcopy", "copy.copy") and call.args:
            return kind(call.args[0], ctx, pos, depth + 1)
        if api.is_module_class(q):
            return MODULE
        if api.is_optimizer_class(q):
            return OPTIMIZER
        op = api.function(q)
        if op is not None:
            return _result_kind(op, TENSOR)
        if q.startswith("numpy."):
            return NDARRAY
        if q in ("collections.OrderedDict", "dict"):
            return CONTAINER
    func = call.func
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
        if recv not in TENSORISH:  # the method says what the receiver is; the API says what it returns
            recv = TENSOR if method in TENSOR_ONLY_METHODS else LIKELY_TENSOR if method in LIKELY_TENSOR_METHODS else recv
        if recv in TENSORISH:
            op = api.method(method)
            return _result_kind(op, TENSOR if recv in SURE_TENSOR else LIKELY_TENSOR) if op else None
        if isinstance(func.value, ast.Name) and func.value.id == "self" and MODULE_NAME.search(method):
            return TENSOR  # self.encoder(x)
        return None
    if isinstance(func, ast.Name):
        if kind(func, ctx, pos, depth + 1) == MODULE:
            return TENSOR  # model(x)
    return None


def _result_kind(op: api.Op, tensor: str) -> Optional[str]:
    """The kind of a torch call's result: `tensor` (TENSOR, or LIKELY_TENSOR for a guessed receiver), an
    ndarray, a number, or unknown (a tuple, a Size, ...)."""
    if op.gives_tensor:
        return tensor
    return {"ndarray": NDARRAY, "int": SCALAR, "float": SCALAR, "bool": SCALAR, "number": SCALAR}.get(op.returns)


def _declared_tensor_function(func: ast.AST, qualname: Optional[str], names: frozenset) -> bool:
    """The callee is one the user declared tensor-returning: by qualified name (`pkg.mod.make`), by its
    dotted text (`self.make`), or, for a declared bare name, by its last component (`make`)."""
    text = dotted(func)
    return bool(text) and (text in names or qualname in names or text.rsplit(".", 1)[-1] in names)


def annotation_kind(ann: ast.AST, ctx: "Context") -> Optional[str]:
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


def attached(expr: ast.AST, ctx: "Context", pos=None, depth: int = 0) -> bool:
    """Whether `expr` is (by the file's evidence) part of an autograd graph: it requires grad."""
    if depth > MAX_DEPTH or expr is None:
        return False
    pos = pos or ctx.pos
    if isinstance(expr, ast.Name):
        scope = ctx.frame.scope
        if expr.id in scope.backward_names:
            return True
        reaching = _reaching(expr.id, ctx, pos)
        return bool(reaching) and all(_binding_attached(b, expr, ctx, pos, depth) for b in reaching)
    if isinstance(expr, ast.Attribute):
        if expr.attr in ("weight", "bias"):
            return True
        if expr.attr in ("grad", "data", "shape", "device", "dtype"):
            return False
        return attached(expr.value, ctx, pos, depth + 1) and expr.attr in ("T", "mT", "real", "imag")
    if isinstance(expr, ast.Subscript):
        return attached(expr.value, ctx, pos, depth + 1)
    if isinstance(expr, ast.BinOp):
        return attached(expr.left, ctx, pos, depth + 1) or attached(expr.right, ctx, pos, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return attached(expr.operand, ctx, pos, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        if any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in expr.keywords):
            return True
        q = ctx.facts.qualname(func)
        if q:
            if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                return True
            op = api.function(q)
            if op is not None and op.keeps_grad:
                return any(attached(a, ctx, pos, depth + 1) for a in expr.args)
            return False
        if isinstance(func, ast.Attribute):
            op = api.method(func.attr)
            if op is not None and not op.keeps_grad:
                return False
            recv = func.value
            if isinstance(recv, ast.Name) and recv.id == "self" and MODULE_NAME.search(func.attr):
                return True  # self.encoder(x)
            if kind(func, ctx, pos, depth + 1) == MODULE:
                return True  # self.model.encoder(x)
            if LOSS_CALLEE.search(func.attr):
                return any(attached(a, ctx, pos, depth + 1) for a in expr.args) or bool(expr.args)
            return attached(recv, ctx, pos, depth + 1)
        if isinstance(func, ast.Name):
            if kind(func, ctx, pos, depth + 1) == MODULE:
                return True  # model(x)
            if LOSS_CALLEE.search(func.id):
                return any(attached(a, ctx, pos, depth + 1) for a in expr.args)
        return False
    return False


def _is_module_class(cls: ast.ClassDef, ctx: "Context") -> bool:
    for base in cls.bases:
        q = ctx.facts.qualname(base) or ""
        if q.startswith("torch.nn.") or (isinstance(base, (ast.Name, ast.Attribute)) and
                                          (dotted(base) or "").endswith(("Module", "Model", "Net"))):
            return True
    return False


def is_param_like(expr: ast.AST, ctx: "Context") -> bool:
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
    return bool(name and re.match(r"^(p|param|params|parameter|w|weight|bias|grad|g|buf|state|exp_avg\w*|"
                                  r"momentum\w*|ema\w*|shadow\w*|avg\w*|running\w*|master\w*)$", name))
