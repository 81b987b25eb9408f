"""TEN401 in a LightningModule's training_step (analysis/lightning.py): the trainer is the loop, so a list
of the class that the step appends the attached loss to, emptied in another hook, keeps every step's graph.
The class is known to be a LightningModule through its bases, here or in a neighbouring module."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.analysis import lightning
from flake8_tensorcopy.analysis.facts import FileFacts
from flake8_tensorcopy.rules import BY_CODE

BASE = """
    import torch
    {lightning}


    class Base({base}):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)
            self.outputs = []

        def on_train_epoch_end(self):
            self.outputs.clear()
"""
STEP = """
    import torch.nn.functional as F
    {import_line}


    class Model(Base):
        def training_step(self, batch, batch_idx):
            x, y = batch
            out = self.shared(x, y)
            self.outputs.append(out)
            return out["loss"]

        def shared(self, x, y):
            return {{"loss": F.mse_loss(self.net(x), y), "size": len(x)}}
"""
PL = "import pytorch_lightning as pl"


def write(folder, files: dict[str, str]):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def ten401_lines(path) -> list[int]:
    return [f.line for f in engine.analyse(path.read_text(), str(path), [BY_CODE["TEN401"]]).findings]


@pytest.mark.parametrize("files", [
    {"model.py": BASE.format(lightning=PL, base="pl.LightningModule") + STEP.format(import_line="")},
    {"pkg/__init__.py": "", "pkg/base.py": BASE.format(lightning=PL, base="pl.LightningModule"),
     "pkg/model.py": STEP.format(import_line="from .base import Base")},
    {"pkg/__init__.py": "from .base import Base\n",
     "pkg/base.py": BASE.format(lightning="from lightning.pytorch import LightningModule", base="LightningModule"),
     "pkg/model.py": STEP.format(import_line="from pkg import Base")},
], ids=["same file", "neighbour", "re-exported"])
def test_a_lightning_step_keeping_its_loss_dict_is_reported(tmp_path, files):
    write(tmp_path, files)
    name = next(name for name in files if name.endswith("model.py"))
    lines = textwrap.dedent(files[name]).splitlines()
    assert ten401_lines(tmp_path / name) == [1 + next(i for i, line in enumerate(lines) if ".append(" in line)]


@pytest.mark.parametrize("base, extra", [
    ("torch.nn.Module", ""),  # no LightningModule: who calls training_step is not known
    ("pl.LightningModule", "\n\n    Base = object\n"),  # bound twice: which class it is is not known
], ids=["plain module", "rebound"])
def test_a_base_the_code_does_not_show_to_be_lightning(tmp_path, base, extra):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE.format(lightning=PL, base=base) + extra,
                     "pkg/model.py": STEP.format(import_line="from .base import Base")})
    assert ten401_lines(tmp_path / "pkg" / "model.py") == []


def test_manual_optimization_in_a_base_keeps_the_returned_dict_unproven(tmp_path):
    base = BASE.format(lightning=PL, base="pl.LightningModule").replace(
        "self.outputs = []", "self.outputs = []\n        self.automatic_optimization = False")
    write(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": base,
                     "pkg/model.py": STEP.format(import_line="from .base import Base")})
    assert ten401_lines(tmp_path / "pkg" / "model.py") == []


def test_bases_that_name_each_other_end(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from .b import B\n\n\nclass A(B):\n    pass\n",
                     "pkg/b.py": "from .a import A\n\n\nclass B(A):\n    pass\n",
                     "pkg/model.py": STEP.format(import_line="from .a import A as Base")})
    path = tmp_path / "pkg" / "model.py"
    source = path.read_text()
    facts = FileFacts(ast.parse(source), source, ())
    facts.path = str(path)
    model = next(n for n in facts.tree.body if isinstance(n, ast.ClassDef))
    assert lightning.lineage(model, facts) == ()
