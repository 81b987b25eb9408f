"""TEN203 (clone-kept-with-graph): a clone of a graph-attached tensor kept as if it were a detached copy;
a parameter's clone kept on `self` is one only when the class computes with it, not when it only compares
it. Over its bad fixture: the fix makes the snapshot the message advises."""
from __future__ import annotations

import ast

import pytest

from tests.support.edit_tools import apply_edits
from tests.support.rule_tools import call_at, case_findings, codes, findings_of, fixture_cases

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


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


@pytest.mark.parametrize("case", fixture_cases("TEN203"))
def test_the_fix_turns_the_kept_clone_into_the_snapshot_the_message_advises(case):
    """Over the cases of the bad fixture (where each finding is: tests/rules/test_fixtures.py)."""
    source, _, (finding,) = case_findings("TEN203", case)
    call = call_at(source, finding, "clone")
    cloned = ast.unparse(call.func.value)
    assert finding.message.startswith(f"clone() of '{cloned}' keeps it attached to the graph (")
    advice = finding.message.rsplit("; use ", 1)[1].removesuffix(" for a snapshot")
    assert advice == f"{cloned}.detach().clone()"
    line = source.splitlines()[finding.line - 1]
    fixed = apply_edits(source, finding.fix.edits).splitlines()[finding.line - 1]
    assert fixed == line.replace(ast.get_source_segment(source, call), advice, 1)


SNAPSHOT = """
    import torch
    import torch.nn.functional as F


    def fit(model, loader, opt):
        best_loss, {name} = float("inf"), None
        for x, y in loader:
            out = model(x)
            loss = F.mse_loss(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if loss.item() < best_loss:
                best_loss = loss.item()
                {name} = out.clone()
        return {name}
"""
FORWARD = """
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Linear(4, 4)
            self.body = nn.Linear(4, 4)

        def forward(self, X):
            X = F.relu(self.conv1(X))
            {name} = X.clone()
            X = self.body(X)
            return F.relu(X + {name})
"""


@pytest.mark.parametrize("name", ["best_out", "kept"])
def test_a_clone_kept_beyond_its_step_is_reported_whatever_its_name(name):
    assert [f for f in codes(SNAPSHOT.format(name=name)) if f[1] == "TEN203"] == [(16, "TEN203")]


@pytest.mark.parametrize("name", ["X_before_resblks", "X_orig", "skip", "snapshot"])
def test_a_clone_used_within_its_step_is_quiet_whatever_its_name(name):
    """Fix review 5 (class A of the second reviewer): a residual skip cloned and added back in the same
    forward was reported when its name read as a frozen copy; detaching it cut the gradient to conv1."""
    assert [f for f in codes(FORWARD.format(name=name)) if f[1] == "TEN203"] == []


SURGERY = """
    import torch
    from torch import nn


    class Net(nn.Module):
        def widen_first_conv(self, in_ch):
            modules = list(self.base.modules())
            conv, parent = modules[1], modules[0]
            params = [p.clone() for p in conv.parameters()]
            kernel_size = params[0].size()
            new_size = kernel_size[:1] + (in_ch,) + kernel_size[2:]
            w = params[0].data.mean(dim=1, keepdim=True).expand(new_size).contiguous()
            new = nn.Conv2d(in_ch, conv.out_channels, conv.kernel_size, bias=len(params) == 2)
            new.weight.data = w
            if len(params) == 2:
                new.bias.data = params[1].data
            parent[0] = new
            return USE
"""


@pytest.mark.parametrize("use, reported", [("new", False), ("params[0] * 2", True), ("params[1].sum()", True)])
def test_a_parameters_clone_read_only_for_its_size_and_data_is_not_computed_with(use, reported):
    """Fix review 7 (b, class E): clones of a layer's parameters in a model-surgery method, read only through
    `.size()` and `.data`, carry no graph into anything; a method whose result may hold the graph (`sum`) or
    arithmetic on a clone still is a computation with it."""
    assert [code for _, code in codes(SURGERY.replace("USE", use))] == ["TEN203"] * reported


SCAN = """
    import torch
    from torch import nn


    class GatedScan(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.gate = nn.Linear(d, d)

        def forward(self, value):
            forget = torch.sigmoid(self.gate(value))
            h = torch.zeros(value.shape[0], value.shape[2])
            outputs = []
            for t in range(value.shape[1]):
                h = forget[:, t] * h + (1 - forget[:, t]) * value[:, t]
                outputs.append(h.clone())
            TAIL
"""


@pytest.mark.parametrize("tail, reported", [
    ("return torch.stack(outputs, dim=1)", False),  # the clones are the layer's output
    ("return outputs", True),  # kept as they are: nothing computes with them here
    ("loss = torch.stack(outputs).sum()\n            loss.backward()\n            return loss", True),  # trains
])
def test_clones_a_forward_computation_stacks_are_its_values_not_snapshots(tail, reported):
    """Fix review 8 (d, class B, harmful): a scan appends each state's clone to a list it stacks into the
    layer's output; detaching them cut the gradient to the gate. Computed with, in code that does not
    train, the clones are the forward's values; in a function that backpropagates they are still kept."""
    found = [code for _, code in codes(SCAN.replace("TAIL", tail))]
    assert found == ["TEN203"] * reported


def test_the_scan_trains_its_gate_through_the_clones():
    """The claim behind the look-alike, with torch: the gate gets a gradient through the stacked clones, and
    none once they are detached."""
    torch = pytest.importorskip("torch")
    gate = torch.nn.Linear(4, 4)

    def run(detach):
        value = torch.randn(2, 5, 4)
        forget, h, outs = torch.sigmoid(gate(value)), torch.zeros(2, 4), []
        for t in range(5):
            h = forget[:, t] * h + (1 - forget[:, t]) * value[:, t]
            outs.append(h.detach().clone() if detach else h.clone())
        return torch.stack(outs, dim=1)

    run(False).sum().backward()
    assert gate.weight.grad.abs().sum() > 0
    assert not run(True).requires_grad


def test_a_self_list_of_a_function_outside_any_class_is_asked_of_the_function():
    """A decorator's wrapper takes `self` as its first parameter, in no class: the ecosystem run found TEN203
    failing there (`self._queue.extend(...)` asked its class, which is none)."""
    source = """
    import torch


    def batched(func):
        def wrapper(self, x):
            self._queue.extend([x.clone()])
            return func(self, torch.stack(self._queue))
        return wrapper
    """
    assert codes(source) == []


PARAMETER_CLONES = """
import torch


def f(actor, opt, batches, net):
    {clone}
    {use}
"""


@pytest.mark.parametrize("clone, use, reported", [
    # review 15: a unit test that never backpropagates compares the weights with a clone
    ("w0 = net.weight.clone()", "assert torch.allclose(net.weight, w0 + 0.3)", False),
    ("w0 = net.weight.clone()", "(net.weight - w0).pow(2).sum().backward()", True),
    # review 15: every use of the clones detaches them, item by item through zip
    ("start = [p.clone() for p in actor.parameters()]",
     "sum(((p - p0.detach()) ** 2).sum() for p, p0 in zip(actor.parameters(), start)).backward()", False),
    ("start = [p.clone() for p in actor.parameters()]",
     "sum(((p - p0) ** 2).sum() for p, p0 in zip(actor.parameters(), start)).backward()", True),
    ("start = [p.clone() for p in actor.parameters()]",
     "sum(((p - p0) ** 2).sum() for i, p0 in enumerate(start)).backward()", True),
])
def test_a_parameters_clone_matters_only_computed_with_and_backpropagated(clone, use, reported):
    assert bool(findings_of(PARAMETER_CLONES.format(clone=clone, use=use), "TEN203")) is reported
