"""TEN104 (copy-result-discarded): a copy or conversion whose result is thrown away, and its fix (assign the
result back): a device move is fixed only where a module or operand the value is used with is moved the
same way; a notebook cell's last expression is its displayed output, not a discarded result."""
from __future__ import annotations

import pytest

from tests.support.notebook_tools import cell_sources, code_notebook, fix_notebook
from tests.support.rule_tools import findings_of as _found
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE
from flake8_tensorcopy.sources.notebook import cell_ends, read_notebook

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


# Fixes from proof: each case is one a trial on unseen code found a harmful fix for.
HELPER = """
import torch

def check_layer(module):
    x = torch.randn(2, 3)
    x.cuda()
    {more}
    return module(x)
"""


def test_a_device_move_nothing_else_makes_is_reported_without_a_fix():
    (finding,) = _found(HELPER.format(more="pass"), "TEN104")
    assert finding.fix is None
    assert "no fix: nothing it is used with here is moved the same way" in finding.message


def test_a_device_move_the_module_makes_too_is_fixed():
    (finding,) = _found(HELPER.format(more="module.cuda()"), "TEN104")
    assert finding.fix is not None and finding.fix.edits[0].text == "x = x.cuda()"


def test_a_device_move_an_operand_makes_too_is_fixed():
    source = """
    import torch

    def shift(y, device):
        x = torch.randn(2, 3)
        y = y.to(device)
        x.to(device)
        return x + y
    """
    (finding,) = _found(source, "TEN104")
    assert finding.fix is not None and finding.fix.edits[0].text == "x = x.to(device)"
    (other,) = _found(source.replace("y = y.to(device)", "y = y.to(other)"), "TEN104")
    assert other.fix is None  # moved elsewhere: not the same decision


@pytest.mark.parametrize("line", ["x.to(torch.float64)", "x.float()", "x.data.type(torch.float32)",
                                  "x.to(dtype=torch.half)", "x.cuda().float()"])
def test_a_dtype_conversion_is_reported_without_a_fix(line):
    """Fix review 5 (class D): `y.data.type(torch.float32)` on class labels, assigned back, made the next
    CrossEntropyLoss raise; the code as written runs with the old dtype, so the fix is the author's call."""
    (finding,) = _found(f"import torch\nx = torch.arange(3)\n{line}\n", "TEN104")
    assert finding.fix is None and "meant to see that dtype" in finding.message


CELLS = ("import torch\nmodel = torch.nn.Linear(3, 1)\nx = torch.randn(4, 3)",
         "y_preds = model(x)\ny_preds.cpu()",
         "y_preds.cpu()\nprint(y_preds)",
         "y_preds.detach();")


def test_the_last_expression_of_a_cell_is_its_output_not_a_discarded_result():
    nb = read_notebook(code_notebook(*CELLS))
    assert sorted(cell_ends(nb.program)) == [3, 6, 9, 11]
    found = analyse(nb.program, "nb.ipynb", [BY_CODE["TEN104"]], cell_ends=nb.cell_ends).findings
    assert [nb.locate(f.line) for f in found] == [(3, 1), (4, 1)]  # not cell 2's displayed `y_preds.cpu()`
    every = analyse(nb.program, "nb.ipynb", [BY_CODE["TEN104"]]).findings  # a .py file has no cell ends
    assert len(every) == 3


def test_fix_leaves_a_cells_displayed_output_alone(tmp_path, capsys):
    code, _, _ = fix_notebook(tmp_path, capsys, code_notebook(*CELLS), "--unsafe-fixes", "--select", "TEN104")
    sources = cell_sources((tmp_path / "nb.ipynb").read_text())
    assert sources[1] == "y_preds = model(x)\ny_preds.cpu()"


def test_a_bare_cuda_call_of_a_package_object_is_not_a_module_moved_alike():
    """Fix review 5 (the second reviewer's class E): `rollouts.cuda()` of a package class, then
    `rollouts.insert(step, current_obs)`, did not make `current_obs = current_obs.cuda()` what the author meant:
    `current_obs` is a CPU staging buffer, and the fixed loop's `current_obs *= masks` mixes devices."""
    source = ("import torch\n\n\nclass Rollouts:\n    def cuda(self):\n        pass\n\n    def insert(self, obs):\n"
              "        pass\n\n\ncurrent_obs = torch.zeros(4, 3)\nrollouts = Rollouts()\nrollouts.cuda()\n"
              "current_obs.cuda()\nrollouts.insert(current_obs)\n")
    (finding,) = _found(source, "TEN104")
    assert finding.fix is None
    (moved,) = _found(source.replace("rollouts = Rollouts()", "rollouts = torch.nn.Linear(3, 3)")
                      .replace("rollouts.insert(current_obs)", "rollouts(current_obs)"), "TEN104")
    assert moved.fix is not None


ATTRIBUTE_JUST_SET = """
import torch
from torch import nn


class Accumulator:
    def clear(self):
        self._acc = None

    def add(self, model, n, k):
        if self._acc is None:
            self._acc = MADE
            BETWEEN
            self._acc.to(model.device)
        self._acc += model.scores()
"""


@pytest.mark.parametrize("made, between, reported", [
    ("torch.zeros((n, k))", "pass", True),  # the assignment just above says what the read sees
    ("torch.zeros((n, k))", "self.reset()", False),  # a method of self between may set it anew
    ("nn.Linear(n, k)", "pass", False),  # a module moves in place: nothing is discarded
])
def test_an_attribute_just_set_has_the_kind_of_its_value(made, between, reported):
    """The kind of `self.attr` where `self.attr = value` comes just before the read, whatever other methods set
    it to (`None` in `clear()`): a held-out class, the discarded `.to()` of a tensor attribute set one line up."""
    source = ATTRIBUTE_JUST_SET.replace("MADE", made).replace("BETWEEN", between)
    assert [f.code for f in _found(source, "TEN104")] == ["TEN104"] * reported


REGISTRY = """
import torch
import torch.nn as nn


class WithTable(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.table = torch.ones(n, n)  # a plain tensor attribute: Module.to does not move it


class Other(nn.Module):
    def __init__(self, n):
        super().__init__()
        OTHER


REGISTRY = {"table": WithTable, "other": Other}


def build(name, device):
    model = REGISTRY[name](4)
    GUARD
        model.table.to(device)
    return model
"""


@pytest.mark.parametrize("other, guard, reported", [
    ("self.table = torch.zeros(n, n)", "if True:", True),  # every class of the registry sets a tensor
    ("pass", "if hasattr(model, 'table'):", True),  # narrowed to the classes that set it
    ("pass", "if True:", False),  # `Other` has no table: what the read sees is not known
    ("self.table = nn.Linear(n, n)", "if True:", False),  # a module moves in place
])
def test_a_class_from_a_registry_dict_is_any_of_its_classes(other, guard, reported):
    """`REGISTRY[name](...)` builds an instance of one of the classes the module-level dict holds: an attribute
    every one of them (or every one a `hasattr` test lets through) sets to a tensor is a tensor (a held-out
    class: dynamic dispatch through a registry)."""
    source = REGISTRY.replace("OTHER", other).replace("GUARD", guard)
    assert [f.code for f in _found(source, "TEN104")] == ["TEN104"] * reported


COLLATED = """
import torch
from torch.utils.data import DataLoader


def collate(items):
    return torch.stack(items), torch.zeros(len(items))


loader = DataLoader([torch.randn(3) for _ in range(4)], batch_size=2{collate})
for x, y in loader:
    x.to("cpu")
"""


@pytest.mark.parametrize("collate, reported", [("", True), (", collate_fn=collate", False)])
def test_a_loader_with_its_own_collation_gives_batches_of_what_it_returns(collate, reported):
    """A DataLoader's default collation gives tensors; a `collate_fn` gives whatever it returns (a batch object
    whose `.to()` works in place, in the review's program)."""
    assert bool(_found(COLLATED.format(collate=collate), "TEN104")) is reported
