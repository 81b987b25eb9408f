"""Fixes keep the program's meaning: for every rule with a fix, a small program runs with real torch (CPU)
before and after `fix --unsafe-fixes`, and the values the rule says must not change (the loss curve, the
outputs, the logged numbers) are the same.

Each program appends those values to LOG as it goes. The fixed program must run to its end; the original may
stop early where the rule says it fails (`raises`): then the fixed LOG starts with the original's.
"""
from __future__ import annotations

import textwrap

import pytest
import torch

from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import RULES
from flake8_tensorcopy.rules.model import FixAvailability

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

TRAIN = """
import copy
import torch

LOG = []


def setup():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    return model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(8, 3), torch.randn(8, 1)
"""

PROGRAMS = {
    "TEN101": ("""
        def run():
            x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
            y = x.tanh()
            z = y.detach()
            z.mul_(2)
            LOG.append(z.tolist())
            y.sum().backward()  # tanh saved y: the original raises here
            LOG.append(x.grad.tolist())
        """, RuntimeError),
    "TEN102": ("""
        def run():
            x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
            y = x.sigmoid()
            masked = y.data
            masked.mul_(0)
            LOG.append(masked.tolist())
            y.sum().backward()
        """, None),
    "TEN103": ("""
        def run():
            t = torch.arange(4.0)
            a = t.numpy()
            a *= 2
            LOG.append(a.tolist())
            return t
        """, None),
    "TEN104": ("""
        def run():
            model, optimizer, x, y = setup()
            model.to("cpu")
            x.to("cpu")
            for _ in range(3):
                loss = ((model(x) - y) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                LOG.append(loss.item())
        """, None),
    "TEN904": ("""
        def run():
            model, optimizer, x, y = setup()
            history = []
            total = torch.zeros(())
            for _ in range(3):
                loss = ((model(x) - y) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                history.append(total)
                total += loss.detach()
                LOG.append(loss.item())
            return history
        """, None),
    "TEN905": ("""
        def run():
            model, optimizer, x, y = setup()
            for _ in range(3):
                loss = ((model(x) - y) ** 2).mean()  # noqa: TEN401 (nothing to suppress: the fix drops it)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                LOG.append(loss.item())
        """, None),
    "TEN201": ("""
        def run():
            model, optimizer, x, y = setup()
            out = model(x)
            LOG.append(out.tolist())
            kept = copy.deepcopy(out)  # a non-leaf: the original raises here
            LOG.append(kept.tolist())
        """, RuntimeError),
    "TEN202": ("""
        def run():
            t = torch.arange(3.0)
            c = copy.copy(t)
            c.add_(1)
            LOG.append(c.tolist())
            return t  # the source is still used: the write through the shallow copy reaches it
        """, None),
    "TEN203": ("""
        def run():
            model, optimizer, x, y = setup()
            history = []
            for _ in range(4):
                loss = ((model(x) - y) ** 2).mean()
                history.append(loss.clone())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            LOG.append([h.item() for h in history])
        """, None),
    "TEN204": ("""
        def run():
            t = torch.arange(3.0) * 2
            u = torch.tensor(t)
            LOG.append((u.tolist(), str(u.dtype)))
        """, None),
    "TEN301": ("""
        def run():
            model, optimizer, x, y = setup()
            best_loss, best_state = float("inf"), None
            for _ in range(4):
                loss = ((model(x) - y) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                LOG.append(loss.item())
                if loss.item() < best_loss:
                    best_loss = loss.item()
                    best_state = model.state_dict()
            return best_state
        """, None),
    "TEN401": ("""
        def run():
            model, optimizer, x, y = setup()
            total = 0.0
            for _ in range(4):
                loss = ((model(x) - y) ** 2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss
                LOG.append(loss.item())
            LOG.append(float(total))
        """, None),
    "TEN901": ("""
        class Tap(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)

            def forward(self, x):
                h = torch.tanh(self.lin(x))
                self.last = h
                return h


        def run():
            torch.manual_seed(0)
            tap = Tap()
            optimizer = torch.optim.SGD(tap.parameters(), lr=0.1)
            x = torch.randn(4, 3)
            for _ in range(3):
                loss = tap(x).pow(2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                LOG.append((loss.item(), tap.last.tolist()))
        """, None),
    "TEN902": ("""
        def run():
            x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
            y = x * 2
            copied = y.clone().detach()
            LOG.append((copied.tolist(), copied.requires_grad))
        """, None),
    "TEN903": ("""
        def run():
            model, optimizer, x, y = setup()
            for p in model.parameters():
                LOG.append(p.data.sum().item())
        """, None),
}


def _program(code: str) -> str:
    return TRAIN + textwrap.dedent(PROGRAMS[code][0])


def _log(text: str, raises) -> list:
    namespace: dict = {}
    exec(compile(text, "program.py", "exec"), namespace)  # noqa: S102 - our own test programs
    if raises is None:
        namespace["run"]()
    else:
        with pytest.raises(raises):
            namespace["run"]()
    return namespace["LOG"]


def test_every_rule_with_a_fix_has_a_program():
    assert {r.code for r in RULES if r.fix is not FixAvailability.NEVER} == set(PROGRAMS)


@pytest.mark.parametrize("code", sorted(PROGRAMS))
def test_the_fixed_program_runs_and_keeps_its_values(code):
    text = _program(code)
    outcome = fix_source(text, "program.py", RULES, unsafe=True)
    assert code in {f.code for f in outcome.applied}, f"no {code} fix applied"
    before = _log(text, PROGRAMS[code][1])
    after = _log(outcome.fixed, None)
    assert before, "the program logs nothing before it stops"
    assert after[:len(before)] == before
    assert len(after) >= len(before)


def test_the_fixed_programs_change_what_the_rules_say_they_change():
    """The values that must stay are not all there is: the hazard itself is gone after the fix."""
    fixed = {code: fix_source(_program(code), "program.py", RULES, unsafe=True).fixed for code in PROGRAMS}
    namespace: dict = {}
    exec(compile(fixed["TEN103"], "program.py", "exec"), namespace)  # noqa: S102
    assert namespace["run"]().tolist() == [0.0, 1.0, 2.0, 3.0]  # the tensor no longer doubles with its array
    namespace = {}
    exec(compile(fixed["TEN904"], "program.py", "exec"), namespace)  # noqa: S102
    history = namespace["run"]()
    assert history[0].item() == 0.0 and len({h.item() for h in history}) == 3  # each entry kept its own value
    namespace = {}
    exec(compile(fixed["TEN301"], "program.py", "exec"), namespace)  # noqa: S102
    best = namespace["run"]()
    model = namespace["setup"]()[0]
    assert not torch.equal(best["weight"], model.state_dict()["weight"])  # the best state is a snapshot
