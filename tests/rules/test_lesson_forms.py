"""Lessons and scripts that show the sharing on purpose, from fix review 5: a percent-format script (`# %%`
cells, run in an interactive window) shows each cell's last expression as a notebook does; a `.data`
write whose result is never read, or whose source is then only displayed, is no copy taken by mistake;
an alias write followed only by backwards through other graphs breaks nothing."""
from __future__ import annotations

import pytest

from tests.support.rule_tools import findings, findings_of
from flake8_tensorcopy.text import percent_cell_ends

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

FROM_NUMPY = """
    import numpy as np
    import torch

    {marker}
    a = np.random.rand(4, 3)
    a

    {marker}
    b = torch.from_numpy(a)
    b

    {marker}
    # The memory is shared: change the tensor in place and the array changes too
    b.mul_(2)

    {marker}
    a
"""


@pytest.mark.parametrize("marker, reported", [("#%%", False), ("# %%", False), ("# cell", True)])
def test_a_percent_format_script_shows_each_cells_last_expression(marker, reported):
    """A cell's last expression is its displayed output: a lesson that only shows the array after writing
    through the tensor is not reported; `# cell` is no marker, so `a` there is a discarded read."""
    found = findings_of(FROM_NUMPY.format(marker=marker), "TEN103")
    assert bool(found) is reported and all(f.fix is not None for f in found)


def test_a_cells_last_expression_in_a_percent_script_is_its_output():
    source = "import torch\n# %%\nm = torch.rand(2, 3)\nb = m.t()\n\n# %%\nb.contiguous()\n"
    assert percent_cell_ends(source) == {1, 5, 7}
    assert findings_of(source, "TEN104") == []
    assert [f.line for f in findings_of(source.replace("# %%", "# --"), "TEN104")] == [7]


@pytest.mark.parametrize("body, expected", [
    ("_ = real.data.fill_(1)\nprint(real)\n", []),  # the result is never read: an initialisation
    ("d = real.data.fill_(1)\nout = d * 2\n", ["fixed"]),  # the result used as if it were a new tensor
])
def test_a_data_write_whose_result_is_never_read_is_no_copy_taken(body, expected):
    source = ("import torch\n\n\ndef f(x):\n    w = torch.ones(3, requires_grad=True)\n    real = w * x\n"
              + "".join("    " + line + "\n" for line in body.splitlines()) + "    real.sum().backward()\n")
    found = [f for f in findings(source) if f.code == "TEN102"]
    assert ["fixed" if f.fix is not None else "no fix" for f in found] == expected


@pytest.mark.parametrize("backward, reported", [
    ("z.backward()", False), ("c.sum().backward()", True),
    ("torch.autograd.grad(z, x)", False), ("torch.autograd.grad([z], [x])", False),  # review 15
    ("torch.autograd.grad(c.sum(), [x])", True), ("torch.autograd.grad(outputs=z, inputs=x)", False),
])
def test_an_alias_write_before_a_backward_through_another_graph_breaks_nothing(backward, reported):
    """Also (review 15) when the later backward's graph is not known, if nothing read after the write holds
    the source or a value computed from it before the write."""
    source = ("import torch\n\na = torch.ones(3, 4, requires_grad=True)\nc = a * 2\ntensor = a.detach()\n"
              f"tensor[0] = 1\nx = torch.ones(3, requires_grad=True)\nz = (x * 2).sum()\n{backward}\n")
    assert bool(findings_of(source, "TEN101")) is reported


@pytest.mark.parametrize("later, reported", [
    ("loss = helper(x)\nloss.backward()", False),   # a graph of unknown make, but nothing holding `a` is read
    ("loss = helper(c)\nloss.backward()", True),    # `c` was computed from `a` before the write
    ("loss = helper(a)\nloss.backward()", True),
    ("c = helper(x)\nc.backward()", False),         # `c` rebound first: another object
])
def test_a_later_backward_reaches_the_source_only_through_what_holds_it(later, reported):
    source = ("import torch\n\na = torch.ones(3, 4, requires_grad=True)\nc = a * 2\nview = a.detach()\n"
              f"view[0] = 1\nx = torch.ones(3, requires_grad=True)\n{later}\n")
    assert bool(findings_of(source, "TEN101")) is reported
