"""analysis/devices.py: where the code puts a tensor, asked by TEN104 to tell a discarded move that changes
nothing (the value is there already) from one that leaves the value behind."""
from __future__ import annotations

import pytest

from flake8_tensorcopy.analysis import devices
from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes

PLACES = """
    import torch

    def f(obs, mask, device, other, cuda, rows):
        ones = mask.unsqueeze(2).to(device)
        joined = torch.cat([obs, obs ** 2, ones], dim=2)
        mixed = torch.stack([ones, mask.to(other)])
        made = torch.zeros(3, device=device)
        legacy = torch.cuda.FloatTensor([1.0]) if cuda else torch.FloatTensor([1.0])
        either = ones if rows else obs.to(device)
        half = obs.to(torch.float16)
        print(ones, joined, mixed, made, legacy, either, half, obs.cpu(), obs.cuda(), rows)  # <-
"""


@pytest.mark.parametrize("index, key", [
    (0, "device"),  # a move
    (1, "device"),  # a join with one input known to be there: torch refuses two devices
    (2, None),      # two keys: not known to be one device
    (3, "device"),  # a factory given device=
    (4, None),      # a conditional expression whose test the read is not under
    (5, "device"),  # both arms agree
    (6, None),      # a dtype, not a device
    (7, "cpu"), (8, "cuda"),
    (9, None),      # a parameter: nothing shows where it is
])
def test_where_the_code_puts_a_value(index, key):
    node, ctx = context_at(PLACES)
    assert devices.placed(node.value.args[index], ctx) == key


MOVED_AGAIN = """
import torch


class Edge(torch.nn.Module):
    def __init__(self, cuda=False):
        super().__init__()
        self.weight = {made}  # a plain tensor attribute: the module's own .to() does not move it
        if cuda:
            self.weight.cuda()
"""


@pytest.mark.parametrize("made, found", [
    ("torch.cuda.FloatTensor([[1.0]]) if cuda else torch.zeros(1, 1)", []),  # review 15: a no-op move
    ("torch.zeros(1, 1)", [(10, "TEN104")]),  # on the CPU: the discarded move leaves it there
])
def test_a_discarded_move_to_where_the_value_is_changes_nothing(made, found):
    assert codes(MOVED_AGAIN.format(made=made)) == found


def test_a_parameter_of_a_module_is_moved_by_the_module():
    """Review 18: `self.w.to(dev)` of a module's parameter changes nothing the module's `.to()` does not do; a
    plain tensor attribute is not moved by it (still reported)."""
    assert codes("""
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, dev):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.mask = torch.ones(3)
        self.mask.to(dev)
        self.w.to(dev)
""") == [(11, "TEN104")]


def test_a_module_class_through_a_base_of_the_file_moves_its_parameters():
    """`class LinearHead(Head)` with `class Head(nn.Module)`: a torch module through its base (evidence)."""
    assert codes("""
import torch
from torch import nn


class Head(nn.Module):
    pass


class LinearHead(Head):
    def __init__(self, dev):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))
        self.w.to(dev)
""") == []
