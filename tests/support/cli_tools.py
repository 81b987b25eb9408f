"""Running `flake8-tensorcopy` in a subprocess, from any folder, on this checkout's code."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BAD = (ROOT / "fixtures" / "TEN101" / "bad.py").read_text()
DEEPCOPY = ("import copy\nimport torch\n\n\ndef f():\n    t = torch.ones(3, requires_grad=True) * 2\n"
            "    return copy.deepcopy(t)\n")


def run_cli(*args, cwd=None, stdin=None, env=None) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "flake8_tensorcopy", *map(str, args)], input=stdin,
                          capture_output=True, text=True, cwd=cwd, env=environ)


def reported(stdout: str) -> list[tuple[str, str, str]]:
    """(path, position, code) for each `path:pos: CODE message` line."""
    out = []
    for line in stdout.splitlines():
        head, _, rest = line.partition(": ")
        path, _, pos = head.partition(":")
        out.append((path, pos, rest.split()[0]))
    return out


CELLS = [
    ("markdown", ["# Training\n", "Notes."]),
    ("code", ["import copy\n", "import torch\n", "%matplotlib inline\n", "files = !ls\n",
              "h = torch.ones(3)[:2]"]),
    ("code", ["%%bash\n", "echo copy.deepcopy(h)\n"]),
    ("code", ["for step in range(3):\n", "    !nvidia-smi\n", "    saved = copy.deepcopy(h)"]),
]


def notebook_text(cells=CELLS, language="python", **layout) -> str:
    data = {
        "cells": [
            {"cell_type": kind, "metadata": {}, "source": source,
             **({"execution_count": 1, "outputs": [{"output_type": "stream", "name": "stdout",
                                                    "text": ["é\n"]}]} if kind == "code" else {})}
            for kind, source in cells
        ],
        "metadata": {"kernelspec": {"language": language, "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, **{"indent": 1, "ensure_ascii": False, **layout}) + "\n"


def load_script(name: str):
    """scripts/NAME.py as a module, registered under NAME (dataclasses and worker processes look it up)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
