"""A small TEN201 program and a way to run `flake8-tensorcopy fix` in-process."""
from __future__ import annotations

from flake8_tensorcopy.cli.main import main

BAD = '''\
import copy

import torch

DEFAULTS = copy.copy({"lr": 0.1})  # keeps `import copy` used after the fix


def snapshot(w: torch.Tensor):
    t = torch.ones(3, requires_grad=True) * w
    return copy.deepcopy(t)
'''
FIXED = BAD.replace("copy.deepcopy(t)", "t.detach().clone()")


def run_fix(capsys, *args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `flake8-tensorcopy fix ARGS`."""
    code = main(["fix", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def leftovers(folder) -> list:
    """Temporary files the fixer might have left behind."""
    return [p.name for p in folder.iterdir() if p.name.endswith(".tenfix")]
