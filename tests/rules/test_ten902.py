"""TEN902 (clone-then-detach, opt-in): clone().detach() fixed to detach().clone(), in both call forms."""
from __future__ import annotations

import textwrap

from tests.support.edit_tools import apply_edits
from tests.support.rule_tools import findings


def test_ten902_fix_keeps_a_comment_between_the_calls():
    source = textwrap.dedent("""
    def snapshot(y):
        return (
            y.clone()  # keep me
            .detach()
        )
    """)
    (finding,) = findings(source, "TEN902")
    fixed = apply_edits(source, finding.fix.edits)
    assert "y.detach().clone()  # keep me" in fixed and ".detach()\n" not in fixed.split("# keep me")[1]
    assert finding.fix.safety.value == "safe"


def test_ten902_torch_clone_form_detaches_the_argument():
    source = textwrap.dedent("""
    import torch

    def momentum(grad):
        return torch.clone(grad * 2).detach()
    """)
    (finding,) = findings(source, "TEN902")
    assert "return torch.clone((grad * 2).detach())\n" in apply_edits(source, finding.fix.edits)
