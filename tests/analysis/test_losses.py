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


SIBLINGS = """
import torch


def two_losses(pred, target):
    parts = [(p - t).abs().sum() for p, t in zip(pred, target)]
    first = torch.stack(parts).mean()
    second = torch.stack(parts[::-1]).max()
    RETURN


def fit(model, loader, opt):
    first_sum = 0
    for x, y in loader:
        loss, first, second = two_losses(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        first_sum += first
    return first_sum
"""


@pytest.mark.parametrize("returned, reported", [
    ("return first + second, first, second", True),
    ("return first + 0.1 * second, first, second", True),
    ("total = first - second\n    return total, first, second", True),
    ("return second * 2.0, first, second", False),  # `first` is no summand of what is backpropagated
    ("return first + second, first.detach(), second", False),
])
def test_a_term_returned_beside_the_backpropagated_sum_holds_a_graph(returned, reported):
    """evidence.summand_of_backpropagated: `loss, first, second = f(...)` and `loss.backward()`, with `f`
    returning the sum of `first` and `second` beside them: autograd ran backward through `first`."""
    from tests.support.rule_tools import codes
    line = 19 + returned.count("\n")
    assert codes(SIBLINGS.replace("RETURN", returned)) == ([(line, "TEN401")] if reported else [])
