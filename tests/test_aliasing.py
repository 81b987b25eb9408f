"""The alias-write query TEN101, TEN102 and TEN103 share: which writes reach which storage through
which steps, and which sources count as still used."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis.aliasing import alias_writes
from flake8_tensorcopy.analysis.facts import FileFacts
from flake8_tensorcopy.context import Context
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


def writes(source: str) -> list[tuple[int, str, str, str]]:
    """(line, how, family, source) of each alias write the shared query finds, over every statement."""
    tree = ast.parse(textwrap.dedent(source))
    facts = FileFacts(tree, textwrap.dedent(source), (ast.Assign, ast.AugAssign, ast.Expr), None)
    found = []
    for node, frame in facts.nodes:
        for w in alias_writes(node, Context(facts, frame, node, BY_CODE["TEN103"])):
            found.append((node.lineno, w.how, w.alias.family, ast.unparse(w.alias.source)))
    return found


@pytest.mark.parametrize("value, family", [
    ("y.detach()", "detach"),
    ("y.detach().view(-1)", "detach"),
    ("y[0].detach().cpu()", "detach"),
    ("y.detach().to(device)", "detach"),
    ("torch.detach(y)", "detach"),
    ("y.data", "data"),
    ("y.data.t()", "data"),
    ("y.detach().cpu().numpy()", "numpy"),
    ("y.numpy().transpose(1, 0)[:, 0]", "numpy"),
    ("y.numpy().reshape(-1)", "numpy"),
    ("torch.from_numpy(arr).to(device)", "from_numpy"),
    ("torch.from_numpy(arr).cpu().detach()", "from_numpy"),
    ("torch.from_numpy(arr.T)", "from_numpy"),
])
def test_the_query_follows_views_and_moves_that_keep_memory(value, family):
    source = f"""
    import torch
    def f(y, arr, device):
        z = {value}
        z += 1
    """
    found = writes(source)
    assert [(line, how, fam) for line, how, fam, _ in found] == [(5, "name", family)]


@pytest.mark.parametrize("value", [
    "y.clone().detach()",  # a copy first
    "y.detach().double()",  # a cast
    "y.detach()[y > 0]",  # a mask
    "y.detach()[[0, 1]]",  # a list index
    "y.detach().cuda()",  # a CPU tensor copied to the GPU
    "y.detach().to(device, copy=True)",
    "torch.from_numpy(arr).float()",
    "torch.from_numpy(arr).to(device, torch.float32)",
    "torch.from_numpy(arr).to('cuda')",
    "torch.from_numpy(arr).pin_memory()",
    "torch.from_numpy(arr).to(other)",  # another tensor's dtype and device
    "torch.as_tensor(arr)",  # arr is not known to be an array here
    "f(y).detach()",  # a fresh temporary
    "y.view(-1)",  # a view, but nothing creates an alias
])
def test_the_query_stops_at_copies(value):
    source = f"""
    import torch
    def f(y, arr, device, other):
        z = {value}
        z += 1
    """
    assert writes(source) == []


def test_numpy_writers_count_for_arrays_only():
    source = """
    import numpy as np
    import torch
    def f(y):
        a = y.numpy()
        a.sort()
        np.copyto(a, 0)
        z = y.detach()
        z.sort()
    """
    assert [(line, how) for line, how, _, _ in writes(source)] == [(6, "name"), (7, "name")]


def test_from_numpy_moved_to_the_device_aliases_the_array():
    """The ART miss, with the array read after the write: on a CPU run `.to(device)` returns the tensor."""
    source = """
    import torch
    def predict(model, x, device, norm):
        t = torch.from_numpy(x).to(device)
        t /= norm
        return model(t), x.mean()
    """
    assert lines("TEN103", source) == [5]
    assert lines("TEN103", source.replace("to(device)", "to(device, torch.float32)")) == []
    assert lines("TEN103", source.replace(", x.mean()", "")) == []  # only the caller could read x


def test_as_tensor_of_a_known_array():
    source = """
    import numpy as np
    import torch
    def f(path):
        arr = np.load(path)
        t = torch.as_tensor(arr)
        t.mul_(2)
        return arr
    """
    assert lines("TEN103", source) == [7]
    assert lines("TEN103", source.replace("np.load(path)", "[1.0, 2.0]")) == []


def test_data_inside_from_numpy_is_the_array_not_a_tensor_alias():
    source = """
    import torch
    class Set:
        def scaled(self):
            x = torch.from_numpy(self.data)
            x /= 2
            return x
    """
    assert writes(source) == [(6, "name", "from_numpy", "self.data")]
