"""The alias helpers TEN101, TEN102 and TEN103 share: which sources count as still used."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.engine import analyse
from flake8_tensorcopy.rules import BY_CODE


def lines(code: str, source: str) -> list[int]:
    return [f.line for f in analyse(textwrap.dedent(source), "t.py", [BY_CODE[code]]).findings]


@pytest.mark.parametrize("source, expected", [
    ("""
     import torch
     class Cell:
         def remember(self):
             z = self.h.detach()
             z.mul_(2)
     """, [6]),  # an attribute of self outlives the method
    ("""
     import torch
     def remember(out):
         z = out.h.detach()
         z.mul_(2)
     """, [5]),  # the caller still holds `out`
    ("""
     import torch
     def remember(make):
         out = make()
         z = out.h.detach()
         z.mul_(2)
         return z
     """, []),  # a local whose attribute nobody reads again
])
def test_attribute_sources(source, expected):
    assert lines("TEN101", source) == expected


def test_a_statement_that_rebinds_the_source_frees_it():
    source = """
    import torch
    def load(read, path):
        pos = read(path)
        pos = torch.from_numpy(pos.values).div_(1000.0)
        return pos
    """
    assert lines("TEN103", source) == []
    kept = source.replace("        pos = torch", "        out = torch").replace("return pos", "return out, pos")
    assert lines("TEN103", kept) == [5]


def test_next_loop_iteration_counts_as_a_later_use():
    source = """
    import torch
    def run(n):
        x = torch.ones(3, requires_grad=True)
        for _ in range(n):
            y = x.sigmoid()
            loss = y.sum()
            d = y.data
            d.mul_(0)
            loss.backward()
    """
    assert lines("TEN102", source) == [9]


def test_a_loop_that_rebinds_the_source_first_does_not_read_the_old_one():
    source = """
    import torch
    def attack(x, restarts, step):
        best = None
        for _ in range(restarts):
            adv = step(x) + torch.zeros(1)
            if best is None:
                best = adv.detach()
            wrong = adv.sum(1) > 0
            best[wrong] = adv[wrong]
        return best
    """
    assert lines("TEN101", source) == []
    rebound_sometimes = """
    import torch
    def attack(x, restarts, step):
        best = None
        adv = x.exp()
        for _ in range(restarts):
            if x.sum() > 0:
                adv = step(x) + torch.zeros(1)
            if best is None:
                best = adv.detach()
            wrong = adv.sum(1) > 0
            best[wrong] = adv[wrong]
        return best
    """
    assert lines("TEN101", rebound_sometimes) == [12]
