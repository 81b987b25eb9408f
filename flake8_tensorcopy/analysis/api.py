"""Questions about torch's API, answered from the generated model in torch_api.py (never from torch)."""
from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from . import torch_api

TENSOR_RESULTS = frozenset({"tensor", "tensor|tensors"})
CONVERSIONS = torch_api.CONVERSIONS  # see is_conversion


class Op(NamedTuple):
    returns: str  # 'tensor', 'tensors', 'tensor|tensors', 'int', 'bool', 'number', 'ndarray', 'none', ...
    alias: str  # 'view', 'alias', 'self', 'fresh'
    mutates: bool
    grad: str  # 'keeps', 'drops', '' (not probed)

    @property
    def gives_tensor(self) -> bool:
        """A tensor, whatever the arguments (`x.max(0)` is a (values, indices) tuple: see `tensor_result`)."""
        return self.returns == "tensor"

    @property
    def may_give_tensor(self) -> bool:
        return self.returns in TENSOR_RESULTS

    @property
    def keeps_grad(self) -> bool:
        return self.may_give_tensor and self.grad != "drops"

    @property
    def holds_graph(self) -> bool:
        """The result of an attached input may hold its graph: a tensor or tensors (`x.chunk(2)`) not known to
        drop it, or a result that is a tensor for some arguments only (`x.type(dtype)`) seen to keep it."""
        if self.returns in TENSOR_RESULTS or self.returns == "tensors":
            return self.grad != "drops"
        return self.returns == "mixed" and self.grad == "keeps"


class Attribute(NamedTuple):
    returns: str  # 'tensor', 'bool', 'int', 'other'
    grad: str  # 'keeps' when the attribute of an attached tensor holds its graph (`x.T`, `x.grad_fn`)
    settable: bool  # `t.name = value` is allowed (`data`, `grad`, `requires_grad`)

    @property
    def gives_tensor(self) -> bool:
        return self.returns == "tensor"

    @property
    def holds_graph(self) -> bool:
        return self.grad == "keeps"


def method(name: str) -> Optional[Op]:
    """The Tensor method `name`, or None when torch has no such method."""
    entry = torch_api.METHODS.get(name)
    return Op(*entry) if entry else None


def drops_graph(name: str) -> bool:
    """`x.item()`, `x.detach()`, `x.argmax()`, `x.size()`: a Tensor method whose result never holds the graph."""
    op = method(name)
    return op is not None and not op.holds_graph


def tensor_result(op: Op, call, method: bool) -> bool:
    """The call of `op` gives a tensor: an op that always does, or one whose result is a tensor for some
    arguments only, called without a dimension (`x.max()`, `torch.max(a, b)`; `x.max(0)`, `x.max(dim=1)`
    and `torch.median(x, 0)` give a (values, indices) tuple, `x.nonzero(as_tuple=True)` a tuple)."""
    if op.gives_tensor:
        return True
    if op.returns != "tensor|tensors":
        return False
    dims = call.args if method else call.args[1:]
    return not any(k.arg in DIM_KEYWORDS for k in call.keywords) and not any(_int_constant(a) for a in dims)


DIM_KEYWORDS = frozenset({"dim", "keepdim", "as_tuple"})


def _int_constant(expr) -> bool:
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and type(expr.value) is int


WHOLE_ALIASES = frozenset({"detach", "detach_", "requires_grad_", "data"})


def whole_alias(name: str) -> bool:
    """`x.detach()`, `x.data`: the very elements of `x` (same storage, offset, shape and strides). torch calls
    `detach()` a view, but it is no part of a larger tensor: it is a view of a part only when `x` is one."""
    return name in WHOLE_ALIASES


def attribute(name: str) -> Optional[Attribute]:
    """The Tensor attribute `name` (`shape`, `grad`, `T`), or None when a tensor has no such attribute."""
    entry = torch_api.ATTRIBUTES.get(name)
    return Attribute(*entry) if entry else None


def is_conversion(name: str) -> bool:
    """`x.float()`, `x.to(...)`, `x.contiguous()`: returns the tensor itself or a converted copy, never in place."""
    return name in torch_api.CONVERSIONS


def tensor_only(name: str) -> bool:
    """A Tensor method that no Python builtin type, ndarray, Module or Optimizer has and numpy does not spell as a
    function (`xp.moveaxis(...)`): its receiver is a tensor."""
    return name in torch_api.TENSOR_ONLY_METHODS


def function(qualname: Optional[str]) -> Optional[Op]:
    """The torch function with this qualified name (`torch.cat`, `torch.nn.functional.relu`), or None."""
    entry = torch_api.FUNCTIONS.get(qualname or "")
    return Op(*entry) if entry else None


def numpy_passes_tensor(qualname: Optional[str]) -> Optional[str]:
    """For a numpy function that returns a torch.Tensor when given one (`numpy.ceil(t)`), which argument must
    be the tensor: 'any' (a binary ufunc) or 'first'; None for the others (`numpy.mean`, `numpy.asarray`)."""
    if not qualname or not qualname.startswith("numpy."):
        return None
    return torch_api.NUMPY_FUNCTIONS.get(qualname[len("numpy."):])


def is_module_class(qualname: Optional[str]) -> bool:
    return qualname in torch_api.MODULE_CLASSES


def gives_tensor(qualname: Optional[str]) -> bool:
    """A torch.nn module class whose forward torch declares to return one tensor (`nn.Linear`; not `nn.LSTM`)."""
    return qualname in torch_api.TENSOR_OUTPUT_MODULES


def is_parameterless_loss(qualname: Optional[str]) -> bool:
    """A torch.nn loss module that holds no parameter: its output requires grad only when an input does."""
    return qualname in torch_api.PARAMETERLESS_LOSSES


def target_index(qualname: Optional[str]) -> Optional[int]:
    """The position of the `target` parameter of a torch.nn.functional loss (`F.mse_loss(input, target)`)."""
    return torch_api.TARGET_PARAMETERS.get(qualname)


def is_optimizer_class(qualname: Optional[str]) -> bool:
    return qualname in torch_api.OPTIMIZER_CLASSES


def module_returns_self(name: str) -> bool:
    """`model.to(...)`, `model.float()`: converts the module in place and returns it."""
    return name in torch_api.MODULE_SELF_METHODS
