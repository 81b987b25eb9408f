"""Fixes from proof: a fix adds a tensor method to, or rebinds, only what the analysis proves is a tensor; a
device move is fixed only where the code uses the value on that device; a notebook cell's last expression is
its output. Each case is one a trial on unseen code found a harmful fix for."""
from __future__ import annotations

import textwrap

from tests.support.notebook_tools import cell_sources, code_notebook, fix_notebook
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE, RULES
from flake8_tensorcopy.sources.notebook import cell_ends, read_notebook


def _found(source: str, code: str):
    return [f for f in analyse(textwrap.dedent(source), "t.py", [BY_CODE[code]]).findings if f.code == code]


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


def test_a_dtype_conversion_is_not_a_device_move():
    (finding,) = _found("import torch\nx = torch.arange(3)\nx.to(torch.float64)\n", "TEN104")
    assert finding.fix is not None and finding.fix.edits[0].text == "x = x.to(torch.float64)"


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


LOSSES = """
import torch
from collections import defaultdict

def train(model, loader, optimizer, criterion):
    totals = defaultdict(float)
    for x, y in loader:
        terms = criterion(model(x), y)  # may hold floats beside the loss
        optimizer.zero_grad()
        sum(terms.values()).backward()
        optimizer.step()
        for k, v in terms.items():
            totals[k] += v
    return totals
"""


def test_a_loop_over_a_dict_of_mixed_values_gets_no_fix():
    (finding,) = _found(LOSSES, "TEN401")
    assert finding.fix is None
    assert fix_source(textwrap.dedent(LOSSES), "t.py", RULES, unsafe=True).fixed == textwrap.dedent(LOSSES)


def test_a_loss_autograd_ran_backward_from_is_proven_and_fixed():
    source = LOSSES.replace("sum(terms.values()).backward()", "loss = terms['loss']\n        loss.backward()") \
        .replace("for k, v in terms.items():\n            totals[k] += v", "totals['loss'] += loss")
    (finding,) = _found(source, "TEN401")
    assert finding.fix is not None and finding.fix.tensors
    assert "totals['loss'] += loss.item()" in fix_source(textwrap.dedent(source), "t.py", RULES, unsafe=True).fixed


LESSON = """
import numpy as np
import torch

n = np.ones(5)
t = torch.from_numpy(n)
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")
"""


def test_a_lesson_that_prints_the_shared_memory_is_reported_without_a_fix():
    (finding,) = _found(LESSON, "TEN103")
    assert finding.fix is None
    (used,) = _found(LESSON + "total = n.sum()\n", "TEN103")
    assert used.fix is not None  # read other than printed: the copy is what the code needs


def test_a_parameter_of_named_parameters_is_proven():
    source = "def show(model):\n    for name, p in model.named_parameters():\n        print(name, p.data.norm())\n"
    fixed = fix_source(source, "t.py", [BY_CODE["TEN903"]], unsafe=True).fixed
    assert "p.detach().norm()" in fixed
    unproven = source.replace("model.named_parameters()", "model.items()")
    assert not _found(unproven, "TEN903") or fix_source(unproven, "t.py", [BY_CODE["TEN903"]], unsafe=True).fixed \
        == unproven


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
