"""Which modules an optimizer's step updates (analysis/optimizers.py), and the training calls that may
change a module's weights (training.training_calls): a teacher's snapshot does not move with a student's
optimizer; one that shares parameters with the stepped module, or is written in place, does."""
from __future__ import annotations

import pytest

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes
from flake8_tensorcopy.analysis import optimizers

PROGRAM = """
import itertools
import torch

def f(student, teacher, head, given):
    {built}
    {line}
"""


def _stepped(built: str, line: str = "opt.step()"):
    node, ctx = context_at(PROGRAM.format(built=built, line=line + "  # <-"))
    return optimizers.stepped(node.value, ctx.frame.scope, ctx.facts)


@pytest.mark.parametrize("built, modules", [
    ("opt = torch.optim.SGD(student.parameters(), lr=0.1)", {"student"}),
    ("opt = torch.optim.AdamW(params=student.named_parameters())", {"student"}),
    ("opt = torch.optim.SGD(list(student.parameters()) + list(head.parameters()))", {"student", "head"}),
    ("opt = torch.optim.SGD(itertools.chain(student.parameters(), head.fc.parameters()))", {"student", "head"}),
    ("opt = torch.optim.SGD(filter(lambda p: p.requires_grad, student.parameters()))", {"student"}),
    ("opt = torch.optim.SGD([p for p in student.parameters() if p.requires_grad])", {"student"}),
    ('opt = torch.optim.SGD([{"params": student.parameters()}, {"params": head.parameters(), "lr": 1}])',
     {"student", "head"}),
    ("params = list(student.parameters()); opt = torch.optim.SGD(params)", {"student"}),
])
def test_an_optimizer_built_from_modules_parameters_steps_those_modules(built, modules):
    assert _stepped(built) == modules


@pytest.mark.parametrize("built, line", [
    ("opt = given", "opt.step()"),                                      # passed in: not known
    ("opt = torch.optim.SGD([w, b])", "opt.step()"),                    # tensors of unknown owners
    ("opt = torch.optim.SGD(self.net.parameters())", "opt.step()"),     # an attribute of self
    ("opt = torch.optim.SGD(student.parameters()); opt.add_param_group({'params': given})", "opt.step()"),
    ('opt = torch.optim.SGD([{"lr": 1}])', "opt.step()"),               # a group without params
    ("opt = torch.optim.SGD(student.parameters())", "env.step(opt, 1)"),
])
def test_an_optimizer_whose_parameters_are_not_all_known_steps_unknown_modules(built, line):
    assert _stepped(built, line) is None


def test_a_scaler_steps_the_optimizer_it_is_given():
    assert _stepped("opt = torch.optim.SGD(student.parameters())", "scaler.step(opt)") == {"student"}


TEACHER = """
import copy
import torch

def distill(loader):
    teacher = torch.nn.Linear(4, 2)
    student = {student}
    before = teacher.state_dict()
    opt = torch.optim.SGD({params}.parameters(), lr=0.1)
    for x in loader:
        loss = (student(x) - teacher(x).detach()).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        {extra}
    teacher.load_state_dict(before)
    return student
"""


@pytest.mark.parametrize("student, params, extra, expected", [
    ("torch.nn.Linear(4, 2)", "student", "pass", []),
    ("copy.deepcopy(teacher)", "student", "pass", []),                  # a copy shares nothing
    ("torch.nn.Linear(4, 2)", "teacher", "pass", [(8, "TEN301")]),      # the teacher is the one stepped
    ("torch.nn.Sequential(teacher)", "student", "pass", [(8, "TEN301")]),   # the student holds the teacher
    ("torch.nn.Linear(4, 2)", "student",                                 # an EMA update writes the teacher
     "[t.data.mul_(0.9) for t in teacher.parameters()]", [(8, "TEN301")]),
    ("torch.nn.Linear(4, 2)", "student", "helper(teacher)", [(8, "TEN301")]),  # handed to unknown code
])
def test_a_snapshot_moves_only_with_the_training_of_its_module(student, params, extra, expected):
    assert codes(TEACHER.format(student=student, params=params, extra=extra)) == expected
