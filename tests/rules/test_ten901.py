"""TEN901 (graph-stored-on-module, opt-in): graph-holding state kept on a module in forward, and what is
not such state."""
from __future__ import annotations

from tests.support.rule_tools import findings


def test_ten901_ignores_hook_handles_shapes_and_helpers():
    source = """
    import torch
    from torch import nn

    class Probe(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)

        def forward(self, x):
            out = self.proj(x)
            self.handle = out.register_hook(print)
            self.size = parse_shape(out)
            self.kept = out.view(-1)
            return out
    """
    assert [(f.code, f.line) for f in findings(source, "TEN901")] == [("TEN901", 14)]  # only `self.kept`


def test_ten901_values_passed_along_or_without_graph_are_not_kept_state():
    source = """
    import torch
    from torch import nn

    class Quant(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)

        def forward(self, x):
            self.w_int = self.proj(x)
            self.mask = torch.ones_like(self.proj(x))
            return x * self.w_int
    """
    assert not findings(source, "TEN901")
