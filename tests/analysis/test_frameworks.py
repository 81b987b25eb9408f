"""Framework calls that train the model they are given (analysis/frameworks.py), and package defs whose
body trains the parameter they are passed the module for (analysis/training.py)."""
from __future__ import annotations

import ast

import pytest

from tests.support.analysis_tools import context_at
from tests.support.project_tools import write
from tests.support.rule_tools import findings
from flake8_tensorcopy.analysis import frameworks, training
from flake8_tensorcopy.engine import core as engine


def _call(text: str) -> ast.Call:
    return ast.parse(text).body[0].value


@pytest.mark.parametrize("text", ["trainer.fit(model)", "tuner.lr_find(model)", "tuner.find_lr(model, loader)",
                                  "tuner.scale_batch_size(model=model)", "trainer.tune(model)"])
def test_framework_methods_that_train_the_module_passed(text):
    assert frameworks.trains_argument(_call(text), "model")


@pytest.mark.parametrize("text", ["pca.fit(features)", "model.fit(loader)", "trainer.fit(other)",
                                  "tuner.lr_find(model.encoder)", "model.find_lr(x)", "trainer.predict(model)"])
def test_not_given_the_module(text):
    assert not frameworks.trains_argument(_call(text), "model")


def test_built_trainer_method_needs_the_framework_class_and_the_module():
    def qualname(expr):
        return {"Trainer": "transformers.trainer.Trainer", "Own": "mypkg.Own"}.get(getattr(expr, "id", None))
    assert frameworks.built_trainer_method(_call("Trainer(model=model, args=a)"), "model", qualname) == "train"
    assert frameworks.built_trainer_method(_call("Trainer(model=other)"), "model", qualname) is None
    assert frameworks.built_trainer_method(_call("Own(model)"), "model", qualname) is None


def training_lines(body: str, defs: str = "") -> list[int]:
    node, ctx = context_at(f"""
        import torch
        from transformers import Trainer
{defs}
        def run(model, loader, optimizer, tuner, other, args):
            best = model.state_dict()  # <-
{body}
    """)
    return [line for line, _ in training.training_calls(ctx, "model")]


@pytest.mark.parametrize("body", ["tuner.find_lr(model)", "Trainer(model=model, args=args).train()",
                                  "t = Trainer(model=model, args=args)\n            t.train()"])
def test_framework_training_calls(body):
    assert training_lines(f"            {body}") != []


@pytest.mark.parametrize("body", ["tuner.find_lr(other)", "t = Trainer(model=other)\n            t.train()",
                                  "t = Trainer(model=model)\n            t.evaluate()"])
def test_not_framework_training_calls(body):
    assert training_lines(f"            {body}") == []


EPOCH = """
        def run_epoch(net, batches, opt):
            for x, y in batches:
                loss = net(x).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()

        def go(net, batches, opt):
            run_epoch(net, batches, opt)

        def show(net):
            net.eval()
            print(net)
"""


@pytest.mark.parametrize("body", ["run_epoch(model, loader, optimizer)", "go(model, loader, optimizer)"])
def test_a_package_def_that_trains_its_parameter(body):
    assert training_lines(f"            {body}", EPOCH) != []


@pytest.mark.parametrize("body", ["show(model)", "run_epoch(other, loader, optimizer)"])
def test_a_package_def_that_does_not_train_the_module(body):
    assert training_lines(f"            {body}", EPOCH) == []


def test_a_snapshot_before_a_framework_call_that_trains_the_model():
    found = findings("""
        import torch
        def test_reset(model, tuner):
            before = model.state_dict()
            tuner.find_lr(model)
            after = model.state_dict()
            return all(torch.equal(before[k], after[k]) for k in before)
    """)
    assert [(f.line, f.code) for f in found] == [(4, "TEN301")]


def test_a_snapshot_before_a_call_that_only_reads_the_model_is_quiet():
    assert findings("""
        import torch
        def check(model, tuner, loader):
            before = model.state_dict()
            tuner.validate(model, loader)
            model.load_state_dict(before)
    """) == []


def test_a_def_of_another_module_that_trains_its_parameter(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/loops.py": "\n        import torch\n" + EPOCH, "pkg/main.py": """
        import torch
        from .loops import run_epoch

        def main(model, loader, optimizer):
            init = model.state_dict()
            run_epoch(model, loader, optimizer)
            model.load_state_dict(init)
    """})
    path = tmp_path / "pkg" / "main.py"
    result = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on])
    assert [(f.line, f.code) for f in result.findings] == [(6, "TEN301")]
