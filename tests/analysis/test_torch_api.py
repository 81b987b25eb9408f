"""The generated torch API model: up to date with the installed torch, and right on the facts rules lean on."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from flake8_tensorcopy.analysis import api

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_model_is_what_the_generator_writes_from_this_torch():
    spec = importlib.util.spec_from_file_location("gen_torch_api", ROOT / "scripts" / "gen_torch_api.py")
    gen = importlib.util.module_from_spec(spec)
    sys.modules["gen_torch_api"] = gen
    spec.loader.exec_module(gen)
    assert gen.render() == gen.OUT.read_text(), "torch_api.py is stale: run python scripts/gen_torch_api.py"


@pytest.mark.parametrize("name, returns, alias, mutates, grad", [
    ("round", "tensor", "fresh", False, "keeps"),  # RoundBackward0: the hand list said it dropped the graph
    ("floor", "tensor", "fresh", False, "keeps"),
    ("sign", "tensor", "fresh", False, "keeps"),
    ("argmax", "tensor", "fresh", False, "drops"),
    ("isnan", "tensor", "fresh", False, "drops"),
    ("detach", "tensor", "view", False, "drops"),
    ("transpose", "tensor", "view", False, "keeps"),
    ("reshape", "tensor", "alias", False, "keeps"),
    ("to", "tensor", "alias", False, "keeps"),
    ("clone", "tensor", "fresh", False, "keeps"),
    ("add_", "tensor", "self", True, "keeps"),
    ("numel", "int", "fresh", False, "drops"),
    ("storage_offset", "int", "fresh", False, "drops"),
    ("item", "number", "fresh", False, "drops"),
    ("numpy", "ndarray", "view", False, "drops"),
])
def test_methods(name, returns, alias, mutates, grad):
    assert api.method(name) == (returns, alias, mutates, grad)


def test_functions_classes_and_module_methods():
    assert api.function("torch.cat").keeps_grad and api.function("torch.nn.functional.relu").keeps_grad
    assert api.function("torch.round").keeps_grad and not api.function("torch.argmax").keeps_grad
    assert api.function("torch.numel").returns == "int" and api.function("no.such") is None
    assert api.is_module_class("torch.nn.Linear") and not api.is_module_class("torch.nn.Parameter")
    assert not api.is_module_class("torch.nn.utils.rnn.PackedSequence")
    assert api.is_optimizer_class("torch.optim.Adam") and api.is_optimizer_class("torch.optim.lr_scheduler.StepLR")
    assert api.module_returns_self("to") and api.module_returns_self("eval") and not api.module_returns_self("forward")
    # classes that build tensors: the legacy constructors and Variable (probed like functions)
    assert api.function("torch.LongTensor").gives_tensor and api.function("torch.autograd.Variable").gives_tensor


@pytest.mark.parametrize("name, returns, holds_graph, settable", [
    ("T", "tensor", True, False),
    ("real", "tensor", True, False),
    ("data", "tensor", False, True),  # shares storage, never the graph
    ("grad", "tensor", False, True),
    ("grad_fn", "other", True, False),  # the graph's node itself
    ("shape", "other", False, False),
    ("requires_grad", "bool", False, True),
    ("retains_grad", "bool", False, False),  # read-only: x.retain_grad() sets it
])
def test_attributes(name, returns, holds_graph, settable):
    attr = api.attribute(name)
    assert (attr.returns, attr.holds_graph, attr.settable) == (returns, holds_graph, settable)
    assert api.attribute("names") is None and api.attribute("weight") is None  # named tensors are gone in 2.13


def test_conversions_tensor_only_methods_and_graph_free_methods():
    for name in ("to", "cpu", "cuda", "float", "long", "contiguous", "type", "type_as"):
        assert api.is_conversion(name), name
    for name in ("detach", "clone", "reshape", "view", "float_", "requires_grad_"):
        assert not api.is_conversion(name), name
    assert api.tensor_only("unsqueeze") and api.tensor_only("detach") and api.tensor_only("new_zeros")
    # an ndarray has view and sum, a Module has to, float and requires_grad_, a set has add
    for name in ("view", "sum", "to", "float", "requires_grad_", "add", "no_such_method"):
        assert not api.tensor_only(name), name
    for name in ("item", "tolist", "numpy", "detach", "size", "dim", "argmax", "eq", "long", "nonzero"):
        assert api.drops_graph(name), name
    # x.type(dtype) is a tensor with the graph (ToCopyBackward0), x.type() a string: probed, not dropped
    for name in ("type", "float", "round", "unique", "sort", "no_such_method"):
        assert not api.drops_graph(name), name


def test_numpy_functions_that_give_a_tensor_for_a_tensor():
    """Probed from numpy by the generator: ufuncs and the functions that call the tensor's own method."""
    for name in ("ceil", "floor", "abs", "sqrt", "exp", "round", "clip", "transpose"):
        assert api.numpy_passes_tensor(f"numpy.{name}") == "first", name
    for name in ("maximum", "add", "power", "arctan2"):
        assert api.numpy_passes_tensor(f"numpy.{name}") == "any", name
    # reductions raise (they pass axis= to Tensor.mean), conversions and where give arrays; not numpy: no answer
    for name in ("numpy.mean", "numpy.sum", "numpy.asarray", "numpy.array", "numpy.where", "numpy.modf",
                 "numpy.linalg.norm", "torch.ceil", "ceil", None):
        assert api.numpy_passes_tensor(name) is None, name


def test_a_numpy_function_of_a_tensor_is_a_tensor_for_every_rule():
    """evidence.kind: numpy.ceil(t) and numpy.maximum(array, t) are tensors (`.to(device)` discarded: TEN104);
    numpy.asarray(t) and numpy.ceil(array) stay arrays."""
    from flake8_tensorcopy.engine import core as engine

    source = ("import numpy as np\nimport torch\n\n\ndef move(device, arr):\n    t = torch.ones(3)\n"
              "    a, b, c, d = np.ceil(t), np.maximum(arr, t), np.asarray(t), np.ceil(arr)\n"
              "    a.to(device)\n    b.to(device)\n    c.to(device)\n    d.to(device)\n")
    result = engine.analyse(source, "t.py", [r for r in engine.RULES if r.default_on])
    assert [(f.line, f.code) for f in result.findings] == [(8, "TEN104"), (9, "TEN104")]


@pytest.mark.parametrize("text, method, tensor", [
    ("x.max()", True, True),
    ("x.max(0)", True, False),  # (values, indices)
    ("x.max(dim=1)", True, False),
    ("x.median(-1)", True, False),
    ("x.max(y)", True, True),  # elementwise
    ("x.nonzero()", True, True),
    ("x.nonzero(as_tuple=True)", True, False),
    ("torch.max(x)", False, True),
    ("torch.max(x, 0)", False, False),
    ("torch.max(x, y)", False, True),
    ("torch.where(c, x, y)", False, True),
    ("x.clone()", True, True),  # always a tensor
    ("x.tolist()", True, False),
])
def test_a_result_that_is_a_tensor_for_some_arguments_only(text, method, tensor):
    """`x.max(0)` is a (values, indices) tuple where `x.max()` is a tensor: a fix must not call `.detach()` on it."""
    call = ast.parse(text, mode="eval").body
    name = call.func.attr
    op = api.method(name) if method else api.function(f"torch.{name}")
    assert api.tensor_result(op, call, method) is tensor
