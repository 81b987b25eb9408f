"""TEN903 (data-attribute, opt-in): `.data` read or assigned: the message, and the fix, made only where the
analysis proves the receiver a tensor or parameter."""
from __future__ import annotations

import textwrap

from tests.support.edit_tools import apply_edits
from tests.support.rule_tools import findings, findings_of as _found
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE


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


# Fixes from proof: a case a trial on unseen code found a harmful fix for.
def test_a_parameter_of_named_parameters_is_proven():
    source = "def show(model):\n    for name, p in model.named_parameters():\n        print(name, p.data.norm())\n"
    fixed = fix_source(source, "t.py", [BY_CODE["TEN903"]], unsafe=True).fixed
    assert "p.detach().norm()" in fixed
    unproven = source.replace("model.named_parameters()", "model.items()")
    assert not _found(unproven, "TEN903") or fix_source(unproven, "t.py", [BY_CODE["TEN903"]], unsafe=True).fixed \
        == unproven
