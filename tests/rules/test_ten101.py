"""TEN101 (detach-alias-write): an in-place write through a `.detach()` alias while the source is still
used, and when its fix (`.clone()` at the alias site) is withheld: a lesson that only shows both sides
after the write, a hand-written update that means to change the source."""
from __future__ import annotations

import pytest

from tests.support.rule_tools import findings_of as _found, notebook_findings as _notebook_findings
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


# A lesson that writes through an alias and then only shows both sides gets no fix (a class of harmful
# fixes the review of `fix --unsafe-fixes` on unseen repositories found, docs/fix-review.md).
DETACH_LESSON = ("import torch\nsource = torch.tensor([3, 4])",
                 "alias = source.detach()\nalias[0] = 1111\nsource, alias")


def test_a_lesson_cell_showing_a_detach_alias_write_is_not_reported():
    _, found = _notebook_findings("TEN101", *DETACH_LESSON)
    assert found == []


def test_a_detach_alias_write_whose_source_is_computed_with_is_still_fixed():
    cells = DETACH_LESSON[:1] + (DETACH_LESSON[1] + "\ntotal = source.sum()",)
    _, (finding,) = _notebook_findings("TEN101", *cells)
    assert finding.fix is not None and finding.fix.edits[0].text == "source.detach().clone()"


def test_a_displayed_output_only_counts_in_a_notebook():
    source = "\n".join(DETACH_LESSON)
    (finding,) = [f for f in analyse(source, "t.py", [BY_CODE["TEN101"]]).findings]
    assert finding.fix is not None  # a .py file has no cell output: `source, alias` is a read


# Fixes from proof: a case a trial on unseen code found a harmful fix for.
SGD = """
import torch

def fit(x, y, lr):
    theta = torch.zeros(1, 1, requires_grad=True)
    for _ in range(10):
        loss = ((x @ theta - y) ** 2).mean()
        loss.backward()
        tmp = theta.detach()
        tmp -= lr * theta.grad
        theta.grad = None
    return theta
"""


def test_a_hand_written_update_through_a_detach_alias_gets_no_fix():
    (finding,) = _found(SGD, "TEN101")
    assert finding.fix is None  # `.clone()` would silently stop the training
    (other,) = _found(SGD.replace("lr * theta.grad", "lr * torch.ones(1, 1)"), "TEN101")
    assert other.fix is not None


INITIALISER = """
import torch


def block_orthogonal(tensor, sizes, gain=1.0):
    data = tensor.detach()
    for start in range(0, tensor.size(0), sizes[0]):
        block = slice(start, start + sizes[0])
        data[block] = torch.nn.init.orthogonal_(tensor[block].contiguous(), gain=gain)
    return tensor
"""


def test_a_function_that_calls_torchs_initialisers_writes_its_tensor_on_purpose():
    """A def that initialises with `torch.nn.init` writes the tensor it is given through an alias on purpose,
    whatever its name (the fix harness found TEN101 on such a block initialiser once `.data` became
    `.detach()`); the same shape without the initialiser call is still reported."""
    assert _found(INITIALISER, "TEN101") == []
    plain = INITIALISER.replace("torch.nn.init.orthogonal_(tensor[block].contiguous(), gain=gain)",
                                "tensor[block].contiguous() * gain")
    assert [f.code for f in _found(plain, "TEN101")] == ["TEN101"]
