"""TEN301 beyond its fixtures: training that happens later in a loop, or through an object that holds
the module, and snapshots a method of the class returns; its fix calls deepcopy only through a name that
means it at run time (issue 13)."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


RESET_EACH_ITERATION = """
    def compare(model, loss_fn, optimizers, n_epochs):
        from helpers import Runner
        model_state = model.state_dict()
        for desc, opt in optimizers.items():
            model.load_state_dict(model_state)
            runner = Runner(model, loss_fn, opt(model.parameters()))
            runner.train(n_epochs)
"""


def lines(source: str) -> list[int]:
    return [f.line for f in analyse(textwrap.dedent(source), "t.py", [BY_CODE["TEN301"]]).findings]


def test_a_reset_reloaded_each_iteration_sees_the_last_iterations_training():
    assert lines(RESET_EACH_ITERATION) == [4]


def test_an_object_built_without_the_module_does_not_train_it():
    assert lines(RESET_EACH_ITERATION.replace("Runner(model, ", "Runner(")) == []


def test_a_reload_before_any_training_of_its_iteration_and_none_after_is_fine():
    assert lines(RESET_EACH_ITERATION.replace("            runner.train(n_epochs)\n", "")) == []


def test_a_method_that_returns_what_another_method_returns():
    source = """
        import torch


        class Engine:
            def __init__(self, net):
                self.network = torch.nn.Linear(2, 2)
                self.state_dict_0 = self.get_state_dict()

            def get_network(self):
                return self.network

            def get_state_dict(self):
                return self.get_network().state_dict()

            def train_round(self, optimizer, x):
                self.get_network().load_state_dict(self.state_dict_0)
                self.network(x).sum().backward()
                optimizer.step()
    """
    assert lines(source) == [8]


TRAIN = """
def fit(model, loader, opt{param}):
    best = model.state_dict()
    for x in loader:
        model(x).sum().backward()
        opt.step()
    model.load_state_dict(best)
"""


def fixed(head: str, param: str = "") -> str:
    source = head + "\n" + TRAIN.format(param=param)
    return fix_source(source, "t.py", [BY_CODE["TEN301"]], unsafe=True).fixed


@pytest.mark.parametrize("head, param, expected", [
    ("import copy", "", "best = copy.deepcopy(model.state_dict())"),
    ("from copy import copy, deepcopy", "", "best = deepcopy(model.state_dict())"),
    ("from copy import deepcopy as dc", ", copy=None", "best = dc(model.state_dict())"),
])
def test_the_fix_uses_a_name_that_means_deepcopy(head, param, expected):
    assert expected in fixed(head, param)


@pytest.mark.parametrize("head, param", [
    ("from copy import copy", ""),               # `copy` is the function
    ("import copy", ", copy=None"),              # a parameter shadows the module
    ("import copy\n\ndef copy(x):\n    return x\n", ""),  # a def shadows it
])
def test_no_fix_where_copy_is_something_else(head, param):
    source = head + "\n" + TRAIN.format(param=param)
    assert fixed(head, param) == source


def test_an_import_only_for_type_checkers_is_not_an_import():
    text = fixed("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import copy\n")
    assert "best = copy.deepcopy(model.state_dict())" in text
    assert text.index("import copy\n") < text.index("if TYPE_CHECKING")  # a real import, at run time


CHECKPOINT = """
    import torch
    from torch import nn

    model = nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    best, name = 1e9, "model_state_dict"
    for epoch in range(3):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < best:
            best = loss.item()
            checkpoint = {{"model_state_dict": model.state_dict(), "epoch": epoch}}
            torch.save(checkpoint, "ckpt.pth")
    {read}
"""


@pytest.mark.parametrize("read, reported", [
    ('print(checkpoint["epoch"])', False),
    ('model.load_state_dict(checkpoint["model_state_dict"])', True),
    ("model.load_state_dict(checkpoint[name])", True),
])
def test_a_checkpoint_read_after_the_loop_only_for_another_entry_keeps_no_snapshot(read, reported):
    """Fix review 5's class H: a checkpoint dict saved at once and read after the loop for its epoch only."""
    found = analyse(textwrap.dedent(CHECKPOINT.format(read=read)), "t.py", [BY_CODE["TEN301"]]).findings
    assert bool(found) is reported


LATEST = """
    import torch
    from torch import nn, optim

    def train(model, loader, epochs):
        opt = optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                nn.functional.mse_loss(model(x), y).backward()
                opt.step()
            if epoch % 10 == 9:
                torch.save(model.state_dict(), f"net_{epoch + 1}.pth")
                NAME = model.state_dict()
        model.load_state_dict(NAME)
        return model
"""


@pytest.mark.parametrize("name, reported", [("last_wts", False), ("final_state", False), ("latest", False),
                                            ("best_wts", True), ("current_state", True), ("last_best", True)])
def test_a_snapshot_named_for_the_latest_weights_is_what_it_says(name, reported):
    """Fix review 7 (b, class A): a `last` snapshot retaken every few epochs and reloaded at the end is meant
    to hold the final weights; the deepcopy fix rolled them back by up to nine epochs. A name can keep the
    rule quiet, never make it fire: the same code with a `best` name is the best-weights bug."""
    assert bool(lines(LATEST.replace("NAME", name))) is reported


@pytest.mark.parametrize("call, fixable", [
    ("model.state_dict()", True),
    ("model.state_dict(keep_vars=False)", True),
    ("model.state_dict(keep_vars=True)", False),  # deepcopy raises on a buffer holding a non-leaf tensor
])
def test_a_snapshot_of_the_live_variables_is_reported_without_a_fix(call, fixable):
    source = "import copy\n" + TRAIN.format(param="").replace("model.state_dict()", call)
    assert lines(source) == [4]
    assert (fix_source(source, "t.py", [BY_CODE["TEN301"]], unsafe=True).fixed != source) is fixable
