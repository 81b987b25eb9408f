"""A def imported from a neighbouring module is summarised from that module's source (analysis/project.py):
`a, b = split(x, y)` with `from .utils import split` is known to give tensors when utils.py says so."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.support.cli_tools import ROOT, reported, run_cli
from tests.support.project_tools import CONVERT, write
from flake8_tensorcopy.engine import core as engine

SPLIT = """
    import torch


    def split(X: torch.Tensor, Y: torch.Tensor):
        order = torch.randperm(len(X))
        return X[order], Y[order]
"""
TRAIN = """
    import torch
    {import_line}


    def fit(X, Y, device):
        train_x, train_y = split(X, Y)
        train_x.to(device)
        return train_x, train_y
"""


def codes_at(path) -> list[tuple[int, str]]:
    result = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.default_on])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("files, checked", [
    ({"pkg/__init__.py": "", "pkg/utils.py": SPLIT,
      "pkg/train.py": TRAIN.format(import_line="from .utils import split")}, "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/utils.py": SPLIT,
      "pkg/train.py": TRAIN.format(import_line="from pkg.utils import split")}, "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/utils.py": SPLIT,
      "pkg/sub/train.py": TRAIN.format(import_line="from ..utils import split")}, "pkg/sub/train.py"),
    ({"pkg/__init__.py": "from .ops import split\n", "pkg/ops.py": SPLIT,
      "pkg/train.py": TRAIN.format(import_line="from pkg import split")}, "pkg/train.py"),
    ({"helpers.py": SPLIT, "train.py": TRAIN.format(import_line="from helpers import split as split")}, "train.py"),
    ({"helpers.py": SPLIT, "train.py": TRAIN.format(import_line="import helpers")
      .replace("= split(", "= helpers.split(")}, "train.py"),
    ({"pkg/__init__.py": "", "pkg/utils.py": SPLIT, "pkg/train.py": TRAIN.format(import_line="from . import utils")
      .replace("= split(", "= utils.split(")}, "pkg/train.py"),
    ({"pkg/__init__.py": "", "pkg/utils.py": SPLIT, "pkg/train.py": TRAIN.format(import_line="import pkg.utils as U")
      .replace("= split(", "= U.split(")}, "pkg/train.py"),
    ({"common/__init__.py": "", "common/utils.py": SPLIT, "jobs/__init__.py": "",
      "jobs/train.py": TRAIN.format(import_line="from common.utils import split")}, "jobs/train.py"),
    ({"models/utils.py": SPLIT,
      "scripts/train.py": TRAIN.format(import_line="from models.utils import split")}, "scripts/train.py"),
], ids=["relative", "absolute", "parent", "re-export", "script", "module", "from-package-import-module",
        "import-as", "sibling-package", "script-folder-from-the-root"])
def test_a_def_of_a_neighbouring_module_is_summarised(tmp_path, files, checked):
    write(tmp_path, files)
    line = 1 + (tmp_path / checked).read_text().splitlines().index("    train_x.to(device)")
    assert codes_at(tmp_path / checked) == [(line, "TEN104")]


@pytest.mark.parametrize("utils", [
    None,  # no such module
    "def split(X, Y):\n    return X, Y\n",  # nothing says they are tensors
    "import torch\n\ndef split(X, Y):\n    return [X], [Y]\n",  # lists, not tensors
    "def split(X, Y:\n",  # does not parse
    "import torch\n\ndef split(X: torch.Tensor, Y: torch.Tensor):\n    return X, Y\n\nsplit = print\n",  # rebound
    b"\xff\xfe not a source file",
], ids=["missing", "unknown", "lists", "syntax-error", "rebound", "undecodable"])
def test_what_a_neighbour_does_not_prove_gives_no_finding(tmp_path, utils):
    files = {"pkg/__init__.py": "", "pkg/train.py": TRAIN.format(import_line="from .utils import split")}
    write(tmp_path, files)
    if isinstance(utils, bytes):
        (tmp_path / "pkg" / "utils.py").write_bytes(utils)
    elif utils is not None:
        (tmp_path / "pkg" / "utils.py").write_text(utils)
    assert codes_at(tmp_path / "pkg" / "train.py") == []


def test_an_absolute_import_of_another_package_is_not_read_from_the_package(tmp_path):
    """`from utils import split` inside a package means the top-level utils, not the package's own."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": SPLIT,
                     "pkg/train.py": TRAIN.format(import_line="from utils import split")})
    assert codes_at(tmp_path / "pkg" / "train.py") == []


def test_installed_libraries_are_not_read_as_the_codes_own_modules(tmp_path):
    """In site-packages, `from common.utils import split` is another installed library: not summarised."""
    root = tmp_path / "site-packages"
    write(root, {"common/__init__.py": "", "common/utils.py": SPLIT, "jobs/__init__.py": "",
                 "jobs/train.py": TRAIN.format(import_line="from common.utils import split")})
    assert codes_at(root / "jobs" / "train.py") == []


def test_an_edited_neighbour_is_read_again(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": "def split(X, Y):\n    return X, Y\n",
                     "pkg/train.py": TRAIN.format(import_line="from .utils import split")})
    assert codes_at(tmp_path / "pkg" / "train.py") == []
    write(tmp_path, {"pkg/utils.py": SPLIT})
    assert codes_at(tmp_path / "pkg" / "train.py") == [(8, "TEN104")]


def test_modules_that_import_each_other_end(tmp_path):
    cycle = """
        import torch
        from .b import g


        def f(x):
            return g(x)
    """
    write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": cycle,
                     "pkg/b.py": "from .a import f\n\n\ndef g(x):\n    return f(x)\n",
                     "pkg/train.py": TRAIN.format(import_line="from .a import f as split")})
    assert codes_at(tmp_path / "pkg" / "train.py") == []


def test_check_flake8_and_stdin_agree(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/utils.py": SPLIT,
                     "pkg/train.py": TRAIN.format(import_line="from .utils import split")})
    check = run_cli("check", "-q", "pkg", cwd=tmp_path)
    assert reported(check.stdout) == [("pkg/train.py", "8:5", "TEN104")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "pkg/train.py"], cwd=tmp_path,
                            env=env, capture_output=True, text=True)
    assert reported(flake8.stdout) == [("pkg/train.py", "8:5", "TEN104")]
    source = (tmp_path / "pkg" / "train.py").read_text()
    named = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "--stdin-display-name",
                            "pkg/train.py", "-"], cwd=tmp_path, env=env, capture_output=True, text=True, input=source)
    assert reported(named.stdout) == [("pkg/train.py", "8:5", "TEN104")]
    unnamed = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "-"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, input=source)
    assert unnamed.returncode == 0 and unnamed.stdout == ""


TABLE = """
    import numpy as np
    import torch

    ROOTS = torch.tensor(np.load("roots.npy"), dtype=torch.float32)
"""
BASIS = """
    import torch
    {import_line}


    def spherical(r, max_l, max_n):
        roots = ROOTS[:max_l, :max_n]
        roots = roots.to(r.device)
        return [torch.tensor(roots[i]) for i in range(max_l)]
"""


@pytest.mark.parametrize("files", [
    {"pkg/maths.py": TABLE, "pkg/basis.py": BASIS.format(import_line="from .maths import ROOTS")},
    {"pkg/maths.py": TABLE, "pkg/basis.py": BASIS.format(import_line="from pkg.maths import ROOTS as ROOTS")},
    {"pkg/maths.py": TABLE.replace("ROOTS =", "ROOTS: torch.Tensor ="),
     "pkg/basis.py": BASIS.format(import_line="from .maths import ROOTS")},
    {"pkg/__init__.py": "from .maths import ROOTS\n", "pkg/maths.py": TABLE,
     "pkg/basis.py": BASIS.format(import_line="from pkg import ROOTS")},
], ids=["relative", "absolute", "annotated", "re-export"])
def test_a_module_level_tensor_of_a_neighbouring_module_is_judged_in_its_module(tmp_path, files):
    """matgl 1.1.1 layers/_basis.py: SPHERICAL_BESSEL_ROOTS, built with torch.tensor in utils/maths.py."""
    write(tmp_path, {"pkg/__init__.py": "", **files})
    line = 1 + (tmp_path / "pkg" / "basis.py").read_text().splitlines().index(
        "    return [torch.tensor(roots[i]) for i in range(max_l)]")
    assert codes_at(tmp_path / "pkg" / "basis.py") == [(line, "TEN204")]


@pytest.mark.parametrize("maths", [
    "import torch\n\nROOTS = [[1.0, 2.0], [3.0, 4.0]]\n",  # a list
    "import torch\n\nROOTS = torch.ones(2, 2)\nROOTS = ROOTS.tolist()\n",  # rebound
    "import torch\n\ntry:\n    ROOTS = torch.ones(2, 2)\nexcept ImportError:\n    ROOTS = None\n",  # bound on two paths
    "import torch\n\nROOTS = torch.ones(2, 2)\n\n\ndef reset():\n    global ROOTS\n    ROOTS = [[0.0]]\n",  # global
    "import torch\n\nROOTS, OTHER = torch.ones(2, 2), 0\n",  # not a plain `NAME = value`
    "import torch\n\nROOTS = torch.ones(2, 2)\nROOTS += 1\n",  # augmented: bound twice
    "from .basis import spherical as ROOTS\n",  # modules that import each other
], ids=["list", "rebound", "two-paths", "global", "tuple-target", "augmented", "cycle"])
def test_a_neighbouring_module_level_name_that_is_not_one_tensor_gives_no_finding(tmp_path, maths):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/maths.py": maths,
                     "pkg/basis.py": BASIS.format(import_line="from .maths import ROOTS")})
    assert codes_at(tmp_path / "pkg" / "basis.py") == []


def test_an_imported_tensor_table_has_a_kind_for_every_rule(tmp_path):
    """evidence.kind follows the import too: `ROOTS.to(device)` as a statement moves nothing (TEN104)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/maths.py": TABLE,
                     "pkg/move.py": "from .maths import ROOTS\n\n\ndef move(device):\n    ROOTS.to(device)\n"})
    assert codes_at(tmp_path / "pkg" / "move.py") == [(5, "TEN104")]


@pytest.mark.parametrize("caller, found", [
    ("from .convert import to_tensor\n\n\ndef run(x):\n    return to_tensor(torch.ones(3) * x)\n", [6]),
    ("from . import convert\n\n\ndef run(x):\n    return convert.to_tensor(torch.ones(3) * x)\n", [6]),
    ("from pkg.convert import Potential\n\n\nclass Trainer(torch.nn.Module):\n"
     "    def __init__(self, model):\n        super().__init__()\n"
     "        self.register_buffer('mean', torch.zeros(1))\n"
     "        self.potential = Potential(model, mean=self.mean)\n", [12]),
    ("from .convert import Potential\n\nPOT = Potential(None, torch.zeros(1))\n", [12]),
    ("from .convert import to_tensor\n\n\ndef run(x):\n    return to_tensor([x, x])\n", []),  # a list
    ("from other.convert import to_tensor\n\n\ndef run(x):\n    return to_tensor(torch.ones(3))\n", []),
    ("from .convert import to_tensor as convert\n\n\ndef to_tensor(x):\n    return x\n\n\n"
     "to_tensor(torch.ones(3))\n", []),  # a def of the same name, not the import
    ("from .convert import Potential\n\nPOT = Potential(torch.zeros(1))\n", []),  # that is `model`
], ids=["import-from", "module-attribute", "class-keyword", "class-positional", "list", "other-package",
        "same-name", "other-parameter"])
def test_callers_in_the_package_say_what_a_parameter_is(tmp_path, caller, found):
    """A tensor passed by a caller in another module of the package reaches `torch.tensor(values)`."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/convert.py": CONVERT, "pkg/run.py": "import torch\n" + caller})
    assert codes_at(tmp_path / "pkg" / "convert.py") == [(line, "TEN204") for line in found]


def test_a_caller_in_a_script_beside_a_script(tmp_path):
    write(tmp_path, {"convert.py": CONVERT, "train.py": "import torch\nimport convert\n\n"
                     "convert.to_tensor(torch.zeros(2))\n"})
    assert codes_at(tmp_path / "convert.py") == [(6, "TEN204")]
    (tmp_path / "train.py").write_text("import torch\nimport convert\n\nconvert.to_tensor([1.0, 2.0])\n")
    assert codes_at(tmp_path / "convert.py") == []  # the edited caller is read again


def test_every_caller_in_the_package_decides_a_discarded_to(tmp_path):
    lib = "def gae(v_preds):\n    v_preds.to('cpu')\n    return v_preds.sum()\n"
    tensor_caller = "import torch\nfrom . import lib\n\nlib.gae(torch.cat([torch.ones(2), torch.zeros(1)]))\n"
    write(tmp_path, {"pkg/__init__.py": "", "pkg/lib.py": lib, "pkg/a.py": tensor_caller})
    assert codes_at(tmp_path / "pkg" / "lib.py") == [(2, "TEN104")]
    write(tmp_path, {"pkg/b.py": "from .lib import gae\n\n\ndef f(model):\n    gae(model)\n"})
    assert codes_at(tmp_path / "pkg" / "lib.py") == []  # another caller passes what may be a module


def test_a_package_of_any_size_is_searched_for_callers_each_module_read_once(tmp_path, monkeypatch):
    """Findings do not depend on the package's size (a cap of 500 modules once stopped the search): the
    caller in the 700th module counts, and the package is indexed once however many files ask (run.py is
    read once more, to be parsed as a neighbour; convert.py, the file under analysis, is its own text)."""
    from flake8_tensorcopy.analysis import package_index

    reads = []
    monkeypatch.setattr(package_index, "read", lambda file, real=package_index.read: reads.append(file) or real(file))
    write(tmp_path, {"pkg/__init__.py": "", "pkg/convert.py": CONVERT,
                     **{f"pkg/m{i:03}.py": f"def f{i}():\n    return {i}\n" for i in range(700)},
                     "pkg/run.py": "import torch\nfrom .convert import to_tensor\n\nto_tensor(torch.ones(3))\n"})
    assert codes_at(tmp_path / "pkg" / "convert.py") == [(6, "TEN204")]
    for i in range(0, 700, 50):
        codes_at(tmp_path / "pkg" / f"m{i:03}.py")
    assert len(set(reads)) == 703 and len(reads) == 703 + 1  # each module once for the index; +1: parsed
    (tmp_path / "pkg" / "run.py").write_text("from .convert import to_tensor\n\nto_tensor([1.0])\n")
    assert codes_at(tmp_path / "pkg" / "convert.py") == []  # the edited caller is read again


CHECKPOINT = """
    class Checkpoint:
        def __init__(self, model):
            self.model, self.best, self.best_state_dict = model, -1.0, None

        def on_epoch_end(self, score):
            if score > self.best:
                self.best = score
                self.best_state_dict = self.model.state_dict()
"""


@pytest.mark.parametrize("import_line, found", [
    ("from pkg.callbacks import Checkpoint", [9]),
    ("from . import callbacks", [9]),
    ("import pkg.callbacks", [9]),
    ("from pkg.other import Checkpoint", []),  # reloads the attribute of some other module's object
], ids=["from-module", "package-import", "import", "no-import"])
def test_a_hook_snapshot_reloaded_by_a_trainer_of_the_package(tmp_path, import_line, found):
    trainer = f"""
        {import_line}


        def fit(model, callback, loader):
            for x in loader:
                model(x).sum().backward()
                callback.on_epoch_end(0.5)
            model.load_state_dict(callback.best_state_dict)
    """
    write(tmp_path, {"pkg/__init__.py": "", "pkg/callbacks.py": CHECKPOINT, "pkg/other.py": "",
                     "pkg/trainer.py": trainer})
    assert codes_at(tmp_path / "pkg" / "callbacks.py") == [(line, "TEN301") for line in found]


def test_the_message_names_the_call_that_passes_the_tensor(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/convert.py": CONVERT, "pkg/sub/__init__.py": "",
                     "pkg/sub/run.py": "import torch\nfrom ..convert import to_tensor\n\nto_tensor(torch.ones(3))\n"})
    path = tmp_path / "pkg" / "convert.py"
    found = engine.analyse(path.read_text(), str(path), [r for r in engine.RULES if r.code == "TEN204"]).findings
    assert [f.fix for f in found] == [None]  # other callers may pass lists
    assert "tensor 'values' (the call at sub/run.py:4 passes one)" in found[0].message


@pytest.mark.parametrize("saved", [CONVERT, "import torch\n"], ids=["lines-shifted", "def-not-saved-yet"])
def test_an_unsaved_buffer_is_matched_against_itself_not_the_saved_file(tmp_path, saved):
    """An editor sends the buffer over stdin: the package's callers of its def are matched to the buffer, even
    where the saved file of the same name has the def on other lines, or not at all (issue 26, item 8)."""
    write(tmp_path, {"pkg/__init__.py": "", "pkg/convert.py": saved, "pkg/run.py": "import torch\n"
                     "from .convert import to_tensor\n\n\ndef run(x):\n    return to_tensor(torch.ones(3) * x)\n"})
    buffer = "# two lines the editor added\n\n" + textwrap.dedent(CONVERT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN204", "--stdin-display-name",
                             "pkg/convert.py", "-"], cwd=tmp_path, env=env, capture_output=True, text=True,
                            input=buffer)
    check = run_cli("check", "-q", "--stdin-filename", "pkg/convert.py", "-", cwd=tmp_path, stdin=buffer)
    assert reported(flake8.stdout) == reported(check.stdout) == [("pkg/convert.py", "8:12", "TEN204")]


def test_callers_are_looked_for_only_in_modules_that_can_import_the_def(tmp_path, monkeypatch):
    """A module that mentions `to_tensor` but not the module `convert` (nor a package that re-exports it)
    cannot call it: it is not parsed (project._import_names). A caller through a re-export is still read."""
    from flake8_tensorcopy.analysis import package_index, project
    others = {f"pkg/other{i}.py": "def to_tensor(x):\n    return x\n\n\nto_tensor(1)\n" for i in range(5)}
    write(tmp_path, {"pkg/__init__.py": "from .convert import to_tensor\n", "pkg/convert.py": CONVERT, **others,
                     "pkg/run.py": "import torch\nfrom pkg import to_tensor\n\nto_tensor(torch.ones(3))\n"})
    package_index.reset()
    parsed = []
    monkeypatch.setattr(project, "_parse", lambda file, real=project._parse: parsed.append(file) or real(file))
    assert codes_at(tmp_path / "pkg" / "convert.py") == [(6, "TEN204")]  # found through the re-export
    assert not [f for f in parsed if "other" in f]


def test_a_folder_without_init_imports_from_the_repository_root(tmp_path):
    """`from tools.convert import to_tensor` in tools/run.py, tools/ no package: run from the folder above,
    the import reads tools/convert.py (project._namespace_bases)."""
    write(tmp_path, {"tools/convert.py": CONVERT,
                     "tools/run.py": "import torch\nfrom tools.convert import to_tensor\n\nto_tensor(torch.ones(3))\n"})
    assert codes_at(tmp_path / "tools" / "convert.py") == [(6, "TEN204")]
    (tmp_path / "tools" / "run.py").write_text("from tools.convert import to_tensor\n\nto_tensor([1.0])\n")
    assert codes_at(tmp_path / "tools" / "convert.py") == []


@pytest.mark.parametrize("init", [True, False])
def test_a_script_above_the_package_folder_is_a_caller(tmp_path, init):
    """train.py beside the package folder (or beside a folder without __init__.py) calls its def."""
    files = {"pkg/convert.py": CONVERT, "train.py": "import torch\nfrom pkg.convert import to_tensor\n\n"
             "to_tensor(torch.ones(3))\n", **({"pkg/__init__.py": ""} if init else {})}
    write(tmp_path, files)
    assert codes_at(tmp_path / "pkg" / "convert.py") == [(6, "TEN204")]


def test_a_module_is_asked_whether_it_mentions_a_word_without_a_search_of_the_package(tmp_path, monkeypatch):
    """package_index.Package.mentions reads the one module's text (from the package text once read, or its
    file), counts no search towards indexing every word, and sees an edit of the module."""
    from flake8_tensorcopy.analysis import package_index
    write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from .convert import to_tensor\n",
                     "pkg/b.py": "def to_tensor(x):\n    return x\n", "pkg/convert.py": CONVERT})
    package_index.reset()
    package = package_index.package(str(tmp_path / "pkg"))
    a, b = str(tmp_path / "pkg" / "a.py"), str(tmp_path / "pkg" / "b.py")
    assert package.mentions(a, "to_tensor") and package.mentions(a, "convert")
    assert not package.mentions(b, "to_tensor")  # only the name its def binds
    searches = package._searches
    list(package.mentioning("convert"))
    assert package.mentions(a, "convert") and package._searches == searches + 1
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    assert not package.mentions(a, "convert")
