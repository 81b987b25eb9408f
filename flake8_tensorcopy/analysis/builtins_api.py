"""What torch cannot declare: Python's builtins called on a tensor. Kept by hand and reviewed; each fact was
checked against torch 2.13 (a float64 tensor that requires grad):

- `float(t)`, `int(t)`, `bool(t)`, `complex(t)` give Python numbers (Tensor.__float__ and the like) and
  `len(t)` an int; none keeps the graph.
- `round(t)` raises TypeError (Tensor defines no `__round__`), so a `round(...)` that runs gives a number;
  the method `t.round()` and `torch.round` keep the graph (RoundBackward0: see torch_api.METHODS).
- `abs`, `max`, `min`, `sum`, `pow` of tensors give tensors that keep the graph (AbsBackward0, ...): they
  are not here.
- `list(t)`, `sorted(t)`, `tuple(t)` hold the tensor's rows, tensors that keep the graph: containers, not
  Python values.
"""
from __future__ import annotations

# Builtins whose result is a Python value (a number, a bool, a string) whatever the argument.
VALUE_BUILTINS = {
    "float": "float", "int": "int", "bool": "bool", "complex": "number", "round": "number", "len": "int",
    "str": "str", "repr": "str", "format": "str", "chr": "str", "ord": "int", "id": "int", "hash": "int",
    "isinstance": "bool", "hasattr": "bool", "callable": "bool",
}
# Builtins that build a container (whose items may be tensors).
CONTAINER_BUILTINS = frozenset("list dict tuple set frozenset sorted range enumerate zip".split())


def gives_value(name: str) -> bool:
    """`float(x)`, `len(x)`: the builtin `name` returns a Python value, never a tensor."""
    return name in VALUE_BUILTINS
