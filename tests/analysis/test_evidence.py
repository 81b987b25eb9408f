"""analysis/evidence.py: the kinds of the value lattice (text-compatible, and joined exactly), and what a
loop over a data loader binds: a loader the code builds with DataLoader(...), or an iterable named like a
loader whose loop trains or runs under no_grad, gives batches of tensors. A name alone is not enough, nor is
the batch object itself (a BatchEncoding or a PyG Batch converts in place)."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.analysis.evidence import (LIKELY_TENSOR, MODULE, NDARRAY, PARAM, SURE_TENSOR, TENSOR,
                                                 TENSORISH, Kind, join)
from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.rules import BY_CODE


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
