"""Framework calls that train the model they are given: declared facts about public APIs, one table each.

A call trains a module when it hands the module to a framework's training entry point: as an argument of a
method below (`trainer.fit(model)`, `tuner.lr_find(model)`), or by running an object that a framework's
class or factory below was built with it (`Trainer(model=model, ...).train()`,
`create_supervised_trainer(model, opt, loss).run(loader)`). The module must be passed: the method's name
alone, on an object that was not given the module, says nothing about it.
"""
from __future__ import annotations

import ast
from typing import Optional

# `obj.method(..., model, ...)`: runs training steps on the module passed (each entry: the APIs it stands for).
TRAINS_ARGUMENT = {
    "fit": "Lightning Trainer.fit(model); Lightning Fabric-, Keras- and skorch-style fit(model, ...)",
    "lr_find": "Lightning Tuner.lr_find(model) / trainer.tuner.lr_find(model): trains over a range of rates",
    "find_lr": "learning-rate range tests find_lr(model, loader, ...): train, then (try to) restore",
    "scale_batch_size": "Lightning Tuner.scale_batch_size(model): runs training steps at growing sizes",
    "tune": "Lightning 1.x Trainer.tune(model): runs the learning-rate and batch-size finders",
}

# Classes and factories built with the module (an argument, or `model=`) whose method then trains it, by
# package and name (`transformers.trainer.Trainer` is `transformers.Trainer`).
TRAINS_WHAT_IT_WAS_BUILT_WITH = {
    "transformers.Trainer": "train",
    "transformers.Seq2SeqTrainer": "train",
    "trl.SFTTrainer": "train",
    "trl.DPOTrainer": "train",
    "trl.RewardTrainer": "train",
    "ignite.create_supervised_trainer": "run",
    "torch_lr_finder.LRFinder": "range_test",
    "skorch.NeuralNet": "fit",
    "skorch.NeuralNetClassifier": "fit",
    "skorch.NeuralNetRegressor": "fit",
}


def trains_argument(call: ast.Call, module: str) -> bool:
    """`obj.fit(module)`, `tuner.lr_find(model=module)`: a framework method of TRAINS_ARGUMENT that is
    passed the module (not called on it)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in TRAINS_ARGUMENT:
        return False
    if isinstance(func.value, ast.Name) and func.value.id == module:
        return False
    return any(isinstance(a, ast.Name) and a.id == module for a in call.args + [k.value for k in call.keywords])


def built_trainer_method(made: Optional[ast.AST], module: str, qualname) -> Optional[str]:
    """The method that trains `module` on the object `made` (a call) builds: `"train"` for
    `transformers.Trainer(model=module, ...)`; None when `made` is no such call or is not given `module`.
    `qualname` resolves a callee expression to its imported name."""
    if not isinstance(made, ast.Call):
        return None
    method = TRAINS_WHAT_IT_WAS_BUILT_WITH.get(_framework_name(qualname(made.func)))
    if method is None:
        return None
    given = made.args + [k.value for k in made.keywords]
    return method if any(isinstance(a, ast.Name) and a.id == module for a in given) else None


def _framework_name(q: Optional[str]) -> Optional[str]:
    """`transformers.trainer.Trainer` -> `transformers.Trainer`: a framework's class by its package and name,
    however deep the module it was imported from."""
    if not q or "." not in q:
        return q
    parts = q.split(".")
    return f"{parts[0]}.{parts[-1]}"


# Attributes true exactly on the passes where the optimizer really steps, under gradient accumulation.
STEP_FLAGS = {
    "sync_gradients": "Accelerate: `accelerator.sync_gradients` after `with accelerator.accumulate(model)`; "
                      "the prepared optimizer's step() does nothing on the other passes",
}


def tests_step_flag(test: ast.expr) -> bool:
    """`if accelerator.sync_gradients:`: the branch runs on the passes where the optimizer steps."""
    return isinstance(test, ast.Attribute) and test.attr in STEP_FLAGS
