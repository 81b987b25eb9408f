"""analysis/losses.py: entries of a dict of loss terms (what flows into backward is covered through TEN401
in tests/rules/test_ten401.py)."""
from __future__ import annotations

import pytest

from tests.support.analysis_tools import context_at
from flake8_tensorcopy.analysis import losses

SUMMED = """
    import torch
    def fit(model, loader, opt, log):
        for x in loader:
            parts = model(x)
            sum(parts.values()).backward()
            {loop}
                kept = {value}  # <-
"""


@pytest.mark.parametrize("loop, value", [
    ("if True:", 'parts["ce"]'),
    ("for k in parts:", "parts[k]"),
    ("for k, v in parts.items():", "v"),
    ("for v in parts.values():", "v"),
    ("for k, v in parts.items():", "v * 2 + parts['kl']"),
])
def test_entries_of_a_summed_dict_are_loss_terms(loop, value):
    node, ctx = context_at(SUMMED.format(loop=loop, value=value))
    assert losses.loss_entry(node.value, ctx)


@pytest.mark.parametrize("loop, value", [
    ("for k, v in log.items():", "v"),  # a dict nothing backpropagates
    ("for k, v in parts.items():", "k"),
    ("if True:", "x"),
])
def test_other_values_are_not(loop, value):
    node, ctx = context_at(SUMMED.format(loop=loop, value=value))
    assert not losses.loss_entry(node.value, ctx)


def test_a_dict_of_numbers_holds_no_loss_term():
    node, ctx = context_at("""
        def fit(model, x):
            parts = model(x)
            sum(parts.values()).backward()
            parts = {k: v.item() for k, v in parts.items()}
            kept = parts["ce"]  # <-
    """)
    assert not losses.loss_entry(node.value, ctx)


@pytest.mark.parametrize("call, expected", [
    ("F.mse_loss(pred, t)", True), ("F.mse_loss(t, pred)", False), ("F.kl_div(pred, target=t)", True),
    ("criterion(pred, t)", True), ("model(pred, t)", False), ("print(t)", False),
])
def test_a_value_passed_as_a_loss_target_is_known(call, expected):
    from flake8_tensorcopy.analysis.losses import used_as_target
    from tests.support.analysis_tools import context_at

    node, ctx = context_at(f"""
        import torch
        import torch.nn.functional as F


        def step(model, x):
            criterion = torch.nn.MSELoss()
            pred = model(x)
            t = pred.clone()  # <-
            return {call}
    """)
    assert used_as_target("t", ctx) is expected
