"""TEN203 (clone-kept-with-graph): a clone of a graph-attached tensor kept as if it were a detached copy;
a parameter's clone kept on `self` is one only when the class computes with it, not when it only compares
it."""
from __future__ import annotations

from tests.support.rule_tools import codes


PROBE = """
    import torch
    from torch import nn


    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(2, 2)

        def on_train_batch_start(self, batch, batch_idx):
            self.weight_before = self.layer.weight.clone()

        def on_train_batch_end(self, outputs, batch, batch_idx):
            {use}
"""


def test_a_parameters_clone_on_self_only_compared_is_quiet():
    assert codes(PROBE.format(use="assert not torch.equal(self.weight_before, self.layer.weight)")) == []


def test_a_parameters_clone_on_self_computed_with_is_kept_with_its_graph():
    found = codes(PROBE.format(use="return (self.layer.weight - self.weight_before).pow(2).sum()"))
    assert found == [(12, "TEN203")]

