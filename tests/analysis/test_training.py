"""analysis/training.py: calls that update a module's weights, and loops that train the torch way."""
from __future__ import annotations

import ast

import pytest

from tests.support.analysis_tools import context_at
from tests.support.rule_tools import codes
from flake8_tensorcopy.analysis import training


def training_lines(body: str, module: str = "model") -> list[int]:
    node, ctx = context_at(f"""
        import torch
        def run(model, loader, optimizer, trainer, pca, features, sbs_cls):
            best = model.state_dict()  # <-
{body}
    """)
    return [line for line, _ in training.training_calls(ctx, module)]


@pytest.mark.parametrize("call", ["loss.backward()", "optimizer.step()", "train_epoch(model, loader)",
                                  "model.fit(loader)", "trainer.fit(loader)"])
def test_training_calls(call):
    assert training_lines(f"            {call}") == [5]


@pytest.mark.parametrize("call", ["model.train()", "model.eval()", "pca.fit(features)", "print(model)",
                                  "env.step(action)"])
def test_not_training_calls(call):
    assert training_lines(f"            {call}") == []


def test_an_object_built_with_the_module_trains_it():
    body = "            sbs = sbs_cls(model, optimizer)\n            sbs.train(3)"
    assert training_lines(body) == [6]
    assert training_lines(body, module="other") == []


BODY = " " * 20  # inside the loop below


def loop_answers(body: str) -> tuple[bool, bool, bool, bool]:
    node, ctx = context_at(f"""
        import torch
        class Runner:
            def train_one_batch(self, x):
                self.model(x).sum().backward()

            def fit(self, loader, optimizer):
                for x in loader:  # <-
{body}
    """, ast.For)
    return (training.trains(node, ctx), training.calls_step(node, ctx), training.calls_backward(node, ctx),
            training.steps_optimizer(node, ctx))


def test_a_loop_that_backpropagates_and_steps():
    assert loop_answers(BODY + "self.model(x).sum().backward()\n" + BODY + "optimizer.step()") == (
        True, False, True, True)


def test_a_loop_that_calls_a_training_step_of_the_file():
    assert loop_answers(BODY + "self.train_one_batch(x)") == (False, True, False, False)


HELPERS = """
    import torch
    class Learner:
        def apply_gradients(self, loss):
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()

        def through_two(self, loss):
            self.apply_gradients(loss)

        def epoch(self, loader):
            for x in loader:
                self.apply_gradients(self.model(x).sum())

        def again(self, loss):
            self.again(loss)

        def fit(self, loader):
            for x in loader:  # <-
                {call}
"""


@pytest.mark.parametrize("call, step", [
    ("self.apply_gradients(self.model(x).sum())", True),
    ("self.through_two(self.model(x).sum())", True),  # the backward two calls down
    ("self.epoch(loader)", False),  # a def whose own loop trains is an epoch, not a step
    ("self.again(x)", False),  # a def that only calls itself trains nothing
    ("self.model(x)", False),
])
def test_a_step_whose_backward_is_in_a_helper_it_calls(call, step):
    """`self.fit_batch(x, y)` runs `self.apply_gradients(loss)`, which backpropagates: a training step too."""
    node, ctx = context_at(HELPERS.format(call=call), ast.For)
    assert training.calls_step(node, ctx) is step


def test_a_hand_written_step_is_no_torch_training():
    assert loop_answers(BODY + "env.step(x)") == (False, False, False, False)


def test_a_loop_fact_is_computed_once_per_file():
    node, ctx = context_at("""
        for x in range(3):  # <-
            pass
    """, ast.For)
    asked = []
    answer = lambda loop, ctx: asked.append(loop) or len(asked)  # noqa: E731
    assert training.per_loop(ctx, node, "q", answer) == training.per_loop(ctx, node, "q", answer) == 1
    assert training.per_loop(ctx, node, "other", answer) == 2


@pytest.mark.parametrize("step, over_models", [
    ("optimizers[x].step()", True),  # the loop's target selects the optimizer: a pass per model
    ("x.optimizer.step()", True),
    ("optimizer.step()", False),  # one optimizer stepped every pass: a pass per step
    ("optimizers[0].step()", False),
    ("optimizers[x % 2].step()", False),  # alternating on a counter is still a step per pass
])
def test_a_loop_over_models_steps_the_optimizer_its_target_selects(step, over_models):
    node, ctx = context_at(f"""
        import torch
        def fit(loader, optimizers, optimizer):
            for x in loader:  # <-
                {step}
    """, ast.For)
    assert training.over_models(node, ctx) is over_models


META = """
import torch


class Meta:
    def inner(self, w, x):
        g, = torch.autograd.grad((w * x).pow(2).sum(), w{create})
        return w - 0.1 * g

    def meta_forward(self, w, xs):
        loss = torch.tensor(0.0)
        for x in xs:
            loss += (self.inner(w, x) * x).pow(2).sum()
        return loss

    def run(self, w, opt, tasks):
        opt.zero_grad()
        self.meta_forward(w, tasks).backward()
        opt.step()
"""


@pytest.mark.parametrize("create, expected", [
    (", create_graph=True", []),  # review 15: a differentiable inner step; the sum is the meta-loss
    ("", []),                     # a first-order inner step: the sum is still the loss the caller backpropagates
])
def test_a_sum_returned_to_a_caller_that_backpropagates_it_is_the_loss(create, expected):
    assert codes(META.format(create=create)) == expected


def test_a_differentiable_gradient_is_no_training_step():
    node, ctx = context_at("""
    import torch
    def f(w, xs):
        for x in xs:
            g, = torch.autograd.grad(w.sum(), w, create_graph=True)
            h, = torch.autograd.grad(g.sum(), w)  # <-
    """)
    graph, step = (s.value for s in ctx.frame.loops[0].body)
    assert training.differentiable_grad(graph) and not training.differentiable_grad(step)


SWAP = """
import torch


def adapt(net, batches, lr):
    saved = net.state_dict(keep_vars=True)
    for xb, yb in batches:
        err = ((net(xb) - yb) ** 2).mean()
        err.backward({create})
        net.load_functional({{n: p - lr * p.grad for n, p in saved.items()}})
    net.load_functional(saved)
"""


@pytest.mark.parametrize("create, expected", [
    ("create_graph=True", []),  # review 16: a backward for a meta-gradient updates no weight; the swap is intended
    ("", [(6, "TEN301")]),     # a plain backward counts as training that may follow (the step may be elsewhere)
])
def test_a_backward_that_builds_differentiable_gradients_is_no_training_step(create, expected):
    assert codes(SWAP.format(create=create)) == expected


ADAPT = """
import torch
import torch.nn.functional as F
{imported}


def adapt(net, xs, ys, xq, yq, steps):
    trace = [0.0] * (steps + 1)
    for k in range(steps):
        grads = {grad}(F.mse_loss(net(xs), ys), list(net.parameters()){create})
        with torch.no_grad():
            for p, g in zip(net.parameters(), grads):
                p.sub_(0.01 * g)
        trace[k + 1] += F.mse_loss(net(xq), yq)
    return trace
"""


@pytest.mark.parametrize("imported, grad, create, expected", [
    ("", "torch.autograd.grad", "", [(14, "TEN401")]),      # study 4: a step by autograd.grad is a training step
    ("from torch.autograd import grad", "grad", "", [(14, "TEN401")]),
    ("", "torch.autograd.grad", ", create_graph=True", []),  # a differentiable step: the trace may be the loss
])
def test_a_loop_that_steps_by_autograd_grad_trains(imported, grad, create, expected):
    assert codes(ADAPT.format(imported=imported, grad=grad, create=create)) == expected
