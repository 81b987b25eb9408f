"""Whether a function writes weights, gradients or optimizer / EMA state on purpose (an init, a reset, an EMA
update, a load, a fuse): its name says so and its own code does not say otherwise. A def that runs a
backward pass itself trains: a name such as `train_step` or `update` does not make its copies and `.data`
writes deliberate surgery. A name may keep a rule quiet only where the code gives no other evidence.
"""
from __future__ import annotations

from . import backward, names, project


def updates_weights(fn, facts) -> bool:
    """`fn` (a def of the file of `facts`, or of a neighbouring module) is named for updating weights on
    purpose and runs no backward pass of its own."""
    if not names.PARAM_UPDATE_FUNC(getattr(fn, "name", "")):
        return False
    return not backward.positions(project.home(fn) or facts, fn)
