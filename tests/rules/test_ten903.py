"""TEN903 (data-attribute, opt-in): `.data` read or assigned: the message and the fix."""
from __future__ import annotations

import textwrap

from tests.support.edit_tools import apply_edits
from tests.support.rule_tools import findings


def test_ten903_assignment_is_reported_without_a_fix():
    source = """
    import torch

    def shrink(layer):
        layer.weight.data = torch.zeros(1)
        return layer.weight.data.sum()
    """
    store, load = findings(source, "TEN903")
    assert store.fix is None and "no_grad" in store.message
    assert load.fix is not None and "layer.weight.detach()" in load.message


def test_ten903_fix_rewrites_only_the_attribute():
    source = textwrap.dedent("""
    import torch

    def total(x: torch.Tensor, y: torch.Tensor):
        return (x + y).data.sum()
    """)
    (finding,) = findings(source, "TEN903")
    assert "return (x + y).detach().sum()\n" in apply_edits(source, finding.fix.edits)
    assert "use (x + y).detach()" in finding.message
