"""analysis/unattached.py: a value computed only from values proven unattached is proven unattached, and
evidence.attached (so every rule that needs an attached value, TEN401 first) defers to that proof. The
programs a proof accepts are run with real torch: the probed value holds no graph."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis.unattached import unattached
from tests.support.analysis_tools import context_at
from tests.support.rule_tools import findings

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

HEAD = """
import numpy as np
import torch
import torch.nn.functional as F

model = torch.nn.Linear(4, 1)
x = torch.randn(2, 4)
loss = F.mse_loss(model(x), torch.zeros(2, 1))
device = "cuda" if torch.cuda.is_available() else "cpu"
"""

PROVEN = {
    "factory": "probe = torch.zeros(4)  # <-",
    "arithmetic of factories": "probe = torch.randn(4) * 2 + torch.ones(4)  # <-",
    "from numpy, converted": "probe = torch.from_numpy(np.ones(3)).float().unsqueeze(1).to(device)  # <-",
    "from a list": "probe = torch.tensor([1.0, 2.0]) / 3  # <-",
    "legacy constructor of an ndarray": "probe = torch.Tensor(np.zeros((3, 1)))  # <-",
    "numbers": "probe = loss.item() * 2 + float(x.sum()) + len(x)  # <-",
    "detached output": "out = model(x)\nprobe = out.detach() + 1  # <-",
    "ops of unattached": ("w = torch.zeros(4, 1)\nxs = torch.randn(4, 1)\n"
                          "probe = torch.matmul(torch.transpose(w, 0, 1), xs)  # <-"),
    "loop rebinding": ("w = torch.zeros(4)\nfor step in range(3):\n    xs = torch.randn(4)\n"
                       "    d = 1.0 + (w * xs).sum()\n    w = w + 0.1 * d * xs\nprobe = w  # <-"),
    "op under no_grad": "with torch.no_grad():\n    y = torch.relu(model(x))\nprobe = y  # <-",
    "a def of the file": ("def feats(s):\n    return torch.tensor(s, dtype=torch.float32)\n"
                          "probe = feats([1.0, 2.0])  # <-"),
    "what every caller passes": ("def scale(t, k):\n    return t * k\nw = scale(torch.ones(2), 3)\n"
                                 "probe = scale(torch.zeros(2), 0.5)  # <-"),
    "in-place write of a proven value": "w = torch.zeros(4)\nw += torch.ones(4)\nw.add_(2)\nprobe = w  # <-",
    "requires_grad=False": "probe = torch.zeros(3, requires_grad=False)  # <-",
    "rows of a factory": "for row in torch.zeros(3, 4):\n    probe = row * 2  # <-",
    "a parameter of the same name is another variable": (
        "w = torch.zeros(3)\ndef leaf(w):\n    w.requires_grad_()\nprobe = w  # <-"),
    "a module name read in a def": ("w = torch.zeros(3)\ndef f():\n    probe = w * 2  # <-\n    return probe\n"
                                    "probe = f()"),
}

NOT_PROVEN = {
    "requires_grad=True": "probe = torch.zeros(4, requires_grad=True)  # <-",
    "requires_grad unknown": "flag = bool(input())\nprobe = torch.zeros(4, requires_grad=flag)  # <-",
    "flag set after": "w = torch.zeros(4)\nw.requires_grad = True\nprobe = w * 2  # <-",
    "requires_grad_()": "w = torch.zeros(4)\nw.requires_grad_()\nprobe = w  # <-",
    "in place with a loss": "w = torch.zeros(1)\nw += loss\nprobe = w  # <-",
    "add_ of a loss": "w = torch.zeros(1)\nw.add_(loss)\nprobe = w  # <-",
    "entry of a loss": "w = torch.zeros(3)\nw[0] = loss\nprobe = w  # <-",
    "list holding a loss": "losses = []\nlosses.append(loss)\nprobe = losses  # <-",
    "out=": "w = torch.zeros(1)\ntorch.add(loss, 1, out=w)\nprobe = w  # <-",
    "a parameter": "probe = torch.nn.Parameter(torch.zeros(3))  # <-",
    "a model output": "probe = model(x)  # <-",
    "a loss": "probe = loss * 2  # <-",
    "a gradient": "probe = model.weight.grad  # <-",
    "loop mixing a loss": "w = torch.zeros(1)\nfor step in range(3):\n    w = w + 0.1 * loss\nprobe = w  # <-",
    "a global made a leaf in a def": ("w = torch.zeros(3)\ndef make():\n    w.requires_grad_()\n"
                                      "probe = w  # <-"),
    "alias under no_grad": "with torch.no_grad():\n    y = model.weight\nprobe = y  # <-",
    "an unknown call": "r = input()\nprobe = torch.tensor([1.0]) * r.value  # <-",
    "a loaded object": "probe = torch.load('w.pt')  # <-",
    "a module name rebound to an output": "w = torch.zeros(3)\ndef f():\n    probe = w * 2  # <-\nw = model(x)",
    "a list a closure appends a loss to": ("kept = []\ndef keep():\n    kept.append(loss)\n"
                                           "probe = kept  # <-"),
    "an element unpacked into an entry": "w = torch.zeros(2)\nw[0], b = loss, 1\nprobe = w  # <-",
}


def _probe(body: str) -> bool:
    node, ctx = context_at(HEAD + body, ast.Assign)
    return unattached(node.value, ctx)


@pytest.mark.parametrize("body", PROVEN.values(), ids=PROVEN.keys())
def test_proven_unattached_and_torch_agrees(body):
    assert _probe(body)
    scope = {}
    exec(compile(textwrap.dedent(HEAD + body), "<probe>", "exec"), scope)
    probe = scope["probe"]
    assert not getattr(probe, "requires_grad", False) and getattr(probe, "grad_fn", None) is None


@pytest.mark.parametrize("body", NOT_PROVEN.values(), ids=NOT_PROVEN.keys())
def test_not_proven(body):
    assert not _probe(body)


# A hand-written GTD update (the second fix review's class B): weight vectors built only from factories and
# numpy, in a loop whose backward is on another graph (the actor's `u`). `xs` is among the names that
# backward runs through, yet it is made from numpy: no graph.
GTD = """
import numpy as np
import torch

def mult(weights, features):
    return torch.matmul(torch.transpose(weights, 0, 1), features)

u = torch.zeros(4, 2, requires_grad=True)
critic, criterion = torch.nn.Linear(4, 1), torch.nn.MSELoss()
v = torch.zeros(4, 1)
w = torch.zeros(4, 1)
states = np.random.rand(50, 4)
for step in range(49):
    xs = torch.from_numpy(states[step]).float().unsqueeze(1)
    xs_new = torch.from_numpy(states[step + 1]).float().unsqueeze(1)
    delta = 1.0 + 0.9 * mult(v, xs) - mult(v, xs_new)
    v = v + 0.01 * (delta * xs - 0.1 * mult(w, xs) * xs)
    w = w + 0.001 * (delta * xs - mult(w, xs) * xs)
    torch.softmax(mult(u, xs), dim=0)[0].sum().backward()
    {extra}
"""


def test_ten401_quiet_on_a_hand_written_update_of_unattached_tensors():
    assert [f for f in findings(GTD.replace("{extra}", "pass")) if f.code == "TEN401"] == []
    scope = {}
    exec(GTD.replace("{extra}", "pass"), scope)  # what the rule would have detached holds no graph
    assert not scope["w"].requires_grad and scope["w"].grad_fn is None
    assert not scope["v"].requires_grad and scope["v"].grad_fn is None


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_ten401_still_reports_an_accumulator_that_mixes_in_a_real_loss():
    """Control: the same loop, with a critic's loss (model output -> criterion) mixed into `w`'s update."""
    source = GTD.replace("{extra}", "pass").replace(
        "    w = w + 0.001 * (delta * xs - mult(w, xs) * xs)\n",
        "    loss = criterion(critic(xs.T), torch.zeros(1, 1))\n    loss.backward()\n"
        "    w = w + (0.001 * (delta * xs - mult(w, xs) * xs) + 0.01 * loss)\n")
    found = [f for f in findings(source) if f.code == "TEN401"]
    line = 1 + next(i for i, text in enumerate(source.splitlines()) if text.endswith("+ 0.01 * loss)"))
    assert [(f.line, f.fix is not None) for f in found] == [(line, True)]
    scope = {}
    exec(source, scope)
    assert scope["w"].grad_fn is not None  # torch agrees: that accumulator keeps a graph


def test_ten401_still_reports_where_the_update_reads_a_tensor_made_to_require_grad():
    """`u.requires_grad = True` after a factory makes `u` a leaf: `(u * xs).sum()` is attached."""
    source = textwrap.dedent("""
        import torch
        u = torch.zeros(4)
        u.requires_grad = True
        w = torch.zeros(4)
        for step in range(10):
            xs = torch.randn(4)
            w = w + 0.01 * (u * xs).sum() * xs
            (u * xs).sum().backward()
    """)
    assert [f.code for f in findings(source)] == ["TEN401"]
    scope = {}
    exec(source, scope)
    assert scope["w"].grad_fn is not None


def test_a_comprehension_variable_is_judged_by_its_own_iterable_not_an_outer_name():
    """`p` in the comprehension is an element of what it iterates, whatever an outer `p` holds."""
    def judged(iterable: str) -> bool:
        source = textwrap.dedent(f"""
            import torch

            def f(model):
                p = torch.zeros(3)
                kept = [p * 2 for p in {iterable}]  # <-
                return kept
        """)
        node, ctx = context_at(source)
        read = next(n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == "p"
                    and isinstance(n.ctx, ast.Load))
        return unattached(read, ctx)

    assert not judged("model.parameters()")  # the outer zeros must not prove the parameter unattached
    assert judged("[torch.zeros(2), torch.ones(2)]")


SCALED = """
import torch


def run(net, chunks, opt, denom):
    running = torch.tensor(0.0)
    for ids in chunks:
        w = {weight}
        err = net(ids).pow(2).mean()
        (err * w).backward()
        running = running + err.detach() * w
    opt.step()
    return running
"""


@pytest.mark.parametrize("weight, reported", [
    ("len(ids) / denom", False),  # review 17: a scale of the loss; the loss holds the graph
    ("net(ids).sigmoid().mean()", True),  # a weight the model computes is attached by what it is
])
def test_a_factor_of_a_backpropagated_product_is_judged_by_what_it_is_bound_to(weight, reported):
    found = [f for f in findings(SCALED.format(weight=weight)) if f.code == "TEN401"]
    assert bool(found) is reported
