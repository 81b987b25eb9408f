"""analysis/evidence.py: the kinds of the value lattice (text-compatible, and joined exactly), and what a
loop over a data loader binds: a loader the code builds with DataLoader(...), or an iterable named like a
loader whose loop trains or runs under no_grad, gives batches of tensors. A name alone is not enough, nor is
the batch object itself (a BatchEncoding or a PyG Batch converts in place)."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.analysis import evidence
from flake8_tensorcopy.analysis.evidence import (LIKELY_TENSOR, MODULE, NDARRAY, PARAM, SURE_TENSOR, TENSOR,
                                                 TENSORISH, Kind, join)
from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.rules import BY_CODE

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes


def test_a_kind_is_its_text():
    """Reports, the generated API model and the not-a-tensor table spell kinds as text."""
    assert TENSOR == "tensor" and hash(TENSOR) == hash("tensor") and "tensor" in SURE_TENSOR
    assert f"{MODULE}" == "module" and str(NDARRAY) == "ndarray"
    assert {Kind(k.value) for k in Kind} == set(Kind)


@pytest.mark.parametrize("kinds, joined", [
    ([TENSOR, TENSOR], TENSOR),
    ([TENSOR], TENSOR),
    ([TENSOR, PARAM], None),  # different answers on different paths: unknown, not a guess
    ([TENSOR, None], None),  # a path with no answer
    ([MODULE, NDARRAY], None),
    ([], None),
])
def test_join_is_exact(kinds, joined):
    assert join(kinds) == joined


def test_proven_and_guessed_tensors_are_different_kinds():
    assert TENSORISH - SURE_TENSOR == {LIKELY_TENSOR}


PREDICT = """
    import torch


    def predict(model, {loader}, device):
        {context}
            for x, _ in {loader}:
                for name in x.keys():
                    x[name].to(device)
                model(x)
"""


def ten104_lines(source: str) -> list[int]:
    return [f.line for f in engine.analyse(textwrap.dedent(source), "t.py", [BY_CODE["TEN104"]]).findings]


@pytest.mark.parametrize("loader, context, found", [
    ("dataloader", "with torch.no_grad():", [9]),
    ("test_loader", "with torch.inference_mode():", [9]),
    ("dataloader", "if model.training:", []),  # neither trains nor runs under no_grad: the name alone
    ("frames", "with torch.no_grad():", []),  # no loader by name or construction
])
def test_entries_of_a_loader_batch_under_no_grad_are_tensors(loader, context, found):
    assert ten104_lines(PREDICT.format(loader=loader, context=context)) == found


def test_the_batch_object_of_an_inference_loop_is_not_taken_for_a_tensor():
    source = """
        import torch


        def predict(model, dataloader, device):
            with torch.no_grad():
                for batch in dataloader:
                    batch.to(device)
                    model(**batch)
    """
    assert ten104_lines(source) == []


COMPARED = """
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.allowed = VALUE


def build(n, device):
    model = Decoder(n)
    model.allowed.to(device)
"""


@pytest.mark.parametrize("value, reported", [
    ("(torch.ones(n, n).tril() == 1).transpose(0, 1)", True),  # an elementwise comparison of a tensor
    ("torch.ones(n, n) * 2", True),
    ("(n == 1)", False),  # of numbers: a bool
    ("(torch.ones(n) is None)", False),  # `is` compares objects
])
def test_an_elementwise_comparison_of_a_tensor_is_a_tensor(value, reported):
    from tests.support.rule_tools import codes
    assert codes(COMPARED.replace("VALUE", value)) == ([(14, "TEN104")] if reported else [])


def test_an_attribute_set_from_a_helper_defined_below_the_class_in_another_module(tmp_path):
    """`self.window = band_matrix(n)` with `band_matrix` defined after the class, in the class's module: the
    method runs once the module is loaded, so the helper is known (evidence._free_kind)."""
    from tests.support.project_tools import write
    from flake8_tensorcopy.analysis import package_index
    from flake8_tensorcopy.engine import core as engine
    blocks = ("import torch\nfrom torch import nn\n\n\nclass Decoder(nn.Module):\n    def __init__(self, n):\n"
              "        super().__init__()\n        self.window = band_matrix(n)\n\n\ndef band_matrix(n):\n"
              "    return torch.ones(n, n).tril()\n")
    build = "from pkg.blocks import Decoder\n\n\ndef build(n, device):\n    model = Decoder(n)\n" \
            "    model.window.to(device)\n"
    write(tmp_path, {"pkg/__init__.py": "", "pkg/blocks.py": blocks, "pkg/build.py": build})
    package_index.reset()
    path = tmp_path / "pkg" / "build.py"
    found = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on]).findings
    assert [(f.line, f.code) for f in found] == [(6, "TEN104")]


@pytest.mark.parametrize("value, graph", [
    ("loss if flag else 2 * loss", True),
    ("loss if flag else loss.item()", False),  # one branch holds no graph: not attached on every path
    ("loss.item() if flag else 0.0", False),
])
def test_a_conditional_expression_is_attached_when_both_branches_are(value, graph):
    node, ctx = context_at(f"""
        import torch
        def step(model, x, flag):
            loss = model(x).sum()
            kept = {value}  # <-
    """)
    assert evidence.attached(node.value, ctx) is graph


COLLATED = """
import torch
from torch.utils.data import DataLoader


def pad(rows):
    return torch.tensor(rows, dtype=torch.long)


def listed(rows):
    return list(rows)


def fit(model, data, opt):
    for step, ids in enumerate(DataLoader(data, batch_size=4, collate_fn={collate})):
        ids.to("cuda")
        model(ids).sum().backward()
        opt.step()
"""


@pytest.mark.parametrize("collate, expected", [
    ("pad", [(16, "TEN104")]),   # study 4: a batch is what the collate_fn returns, a tensor here
    ("listed", []),              # a list
    ("lambda rows: rows", []),   # not a def the package holds
])
def test_a_batch_is_what_the_loaders_collate_fn_returns(collate, expected):
    assert codes(COLLATED.format(collate=collate)) == expected


CALLED_PARAMETER = """
import torch


def evaluate(net, x):
    out = net(x)
    print(out)  # <-


def main(make):
    evaluate({passed}, torch.ones(2, 4))
"""


@pytest.mark.parametrize("passed, expected", [
    ("torch.nn.Linear(4, 2)", TENSOR),   # study 4: every caller passes a torch module, so calling it gives a tensor
    ("make()", None),                    # what the callers pass is unknown: the parameter is only a name
])
def test_calling_a_parameter_gives_what_the_callers_module_gives(passed, expected):
    node, ctx = context_at(CALLED_PARAMETER.format(passed=passed))
    assert evidence.kind(node.value.args[0], ctx) == expected
