"""Whether a function writes weights, gradients or optimizer / EMA state on purpose (an init, a reset, an EMA
update, a load, a fuse): its name says so, or it calls torch's initialisers (`torch.nn.init.orthogonal_`), and
its own code does not say otherwise. A def that runs a backward pass itself trains: a name such as
`train_step` or `update` does not make its copies and `.data` writes deliberate surgery. A name may keep a
rule quiet only where the code gives no other evidence.
"""
from __future__ import annotations

import ast

from . import backward, names, project
from .facts import walk


def updates_weights(fn, facts) -> bool:
    """`fn` (a def of the file of `facts`, or of a neighbouring module) is named for updating weights on
    purpose, or initialises tensors with torch's initialisers, and runs no backward pass of its own."""
    home = project.home(fn) or facts
    if not (names.PARAM_UPDATE_FUNC(getattr(fn, "name", "")) or _initialises(fn, home)):
        return False
    return not backward.positions(home, fn)


def _initialises(fn, facts) -> bool:
    """`fn` calls a function of `torch.nn.init` (asked once per def)."""
    key = ("initialises", id(fn))
    if key not in facts.memo:
        facts.memo[key] = any(isinstance(n, ast.Call) and (facts.qualname(n.func) or "").startswith("torch.nn.init.")
                              for n in walk(fn)) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else False
    return facts.memo[key]
