"""TEN301 beyond its fixtures: training that happens later in a loop, or through an object that holds
the module, and snapshots a method of the class returns."""
from __future__ import annotations

import textwrap

from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE

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
