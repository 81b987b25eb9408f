"""Questions about torch's API, answered from the generated model in torch_api.py (never from torch)."""
from __future__ import annotations

from typing import NamedTuple, Optional

from . import torch_api

TENSOR_RESULTS = frozenset({"tensor", "tensor|tensors"})


class Op(NamedTuple):
    returns: str  # 'tensor', 'tensors', 'tensor|tensors', 'int', 'bool', 'number', 'ndarray', 'none', ...
    alias: str  # 'view', 'alias', 'self', 'fresh'
    mutates: bool
    grad: str  # 'keeps', 'drops', '' (not probed)

    @property
    def gives_tensor(self) -> bool:
        return self.returns in TENSOR_RESULTS

    @property
    def keeps_grad(self) -> bool:
        return self.gives_tensor and self.grad != "drops"


def method(name: str) -> Optional[Op]:
    """The Tensor method `name`, or None when torch has no such method."""
    entry = torch_api.METHODS.get(name)
    return Op(*entry) if entry else None


def function(qualname: Optional[str]) -> Optional[Op]:
    """The torch function with this qualified name (`torch.cat`, `torch.nn.functional.relu`), or None."""
    entry = torch_api.FUNCTIONS.get(qualname or "")
    return Op(*entry) if entry else None


def is_module_class(qualname: Optional[str]) -> bool:
    return qualname in torch_api.MODULE_CLASSES


def is_optimizer_class(qualname: Optional[str]) -> bool:
    return qualname in torch_api.OPTIMIZER_CLASSES


def module_returns_self(name: str) -> bool:
    """`model.to(...)`, `model.float()`: converts the module in place and returns it."""
    return name in torch_api.MODULE_SELF_METHODS
