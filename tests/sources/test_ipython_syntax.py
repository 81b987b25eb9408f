"""Notebook cells read as IPython reads them (IPython.core.inputtransformer2): special syntax only where
a logical line starts, the cell's common indent removed (and put back by fixes), and a cell that does
not parse reported on its own while the other cells are checked and fixed. The expected readings were
compared with IPython 8.12's TransformerManager.transform_cell (and on 20,000 random cells of IPython
and Python lines, the two readings parse alike but for a `%%time` body, which IPython leaves to run time,
`!cmd (` followed by more lines, and a cell ending in a backslash and a blank line)."""
from __future__ import annotations

import json

import pytest

from tests.support.cli_tools import run_cli
from tests.support.notebook_tools import cell_sources, code_notebook, fix_notebook
from flake8_tensorcopy.sources.ipython_syntax import automagic, neutralise, read_cell
from flake8_tensorcopy.sources.notebook import BOUNDARY, read_notebook
from flake8_tensorcopy.sources.notebook_json import source_spans

# Where a logical line starts (IPython turns these into calls; here they become Python of one line each).
SPECIAL = [
    (["%matplotlib inline"], ["pass"]),
    (["%%time", "x = f()"], ["", "x = f()"]),  # a cell magic whose body is Python
    (["%%writefile a.py", "import os"], ["", ""]),  # another language: the whole cell is blank
    (["", "%%bash", "echo hi"], ["", "", ""]),  # IPython skips leading blank lines first
    (["!nvidia-smi"], ["pass"]),
    (["!!ls"], ["pass"]),
    (["!pip install \\", "    torch", "y = 1"], ["pass", "", "y = 1"]),  # with its continuation lines
    (["!echo (", "x = 1"], ["pass", "x = 1"]),  # a shell line's bracket opens nothing
    (["files = !ls"], ["files = None"]),
    (["x = %time f()"], ["x = None"]),
    (["a, b = %sx ls"], ["a, b = None"]),
    (["x: int = !ls", "d[k] = %env HOME"], ["x: int = None", "d[k] = None"]),
    (["?obj", "??obj"], ["pass", "pass"]),
    (["obj?", "obj.attr??", "%time?"], ["pass", "pass", "pass"]),
    (["for x in y:", "    x?", "    !ls"], ["for x in y:", "    pass", "    pass"]),
    (["foo(a,", "    b).c?"], ["pass", ""]),  # a logical line over two lines, ending in `name?`
    (["[1,", "    z?"], ["pass", ""]),  # the cell's end ends an open logical line, for IPython too
    (["\\", "%time f()"], ["\\", "pass"]),  # a lone backslash: the logical line starts on the next line
    (["/f a b", ",g c d", ";h e f"], ["pass", "pass", "pass"]),  # IPython's autocall escapes
]

# Not special: inside brackets, strings or comments, or not IPython's syntax at all.
PYTHON = [
    ["msg = ('loss %s'", "       % (loss,))"],  # a continuation line starting with `% (` (issue 14)
    ["def f():", '    """Is it?', '    Yes."""', "    return 1"],  # a docstring line ending in `?` (issue 14)
    ["s = '''", "%magic in a string", "!shell", "obj?", "'''"],
    ["x = 1  # why?", "y = 2  # !ls"],
    ["x == !ls", "f(x=%time)"],  # not an assignment / the `=` is inside brackets: IPython leaves them
    ["x = (1 +", "    2)?"],  # ends in `?`, but not `name?`
    ["x = 'it''s'", "y = r'\\'"],  # strings closed where Python closes them
    ["%=3", "!= 3"],  # operators, not escapes (and not Python: the cell is reported as unparsable)
]


@pytest.mark.parametrize("lines, expected", SPECIAL)
def test_special_syntax_at_the_start_of_a_logical_line(lines, expected):
    assert neutralise(lines) == expected


@pytest.mark.parametrize("lines", PYTHON)
def test_everything_else_is_left_as_python(lines):
    assert neutralise(lines) == lines


def test_strings_end_where_python_ends_them():
    cell = ["x = 'abc\\", "def'", "!ls", 'y = """', "!not a shell line", '"""', "!ls"]
    assert neutralise(cell) == ["x = 'abc\\", "def'", "pass", 'y = """', "!not a shell line", '"""', "pass"]


def test_a_cell_with_a_common_indent_is_dedented():
    assert read_cell(["", "    x = f(1,", "      2)", "    if x:", "        y?"]) == (
        ["", "x = f(1,", "  2)", "if x:", "    pass"], "    ")
    assert read_cell(["\tx = 1", "y = 2"]) == (["x = 1", "y = 2"], "\t")  # lines without it stay
    assert read_cell(["  %%bash", "  echo hi"]) == (["", ""], "  ")


def test_check_reads_an_indented_cell_and_reports_its_own_columns(tmp_path):
    source = "    import torch\n    h = torch.ones(3)\n    b = torch.tensor(h)\n"
    (tmp_path / "nb.ipynb").write_text(code_notebook("msg = ('%s'\n       % (1,))\n", source))
    proc = run_cli("check", "--show-source", "nb.ipynb", cwd=tmp_path)
    assert proc.stdout.splitlines() == [
        "nb.ipynb:cell 2:3:9: TEN204 [*] torch.tensor() on tensor 'h' copies and silently cuts any graph it has "
        "(torch warns); use h.detach().clone()",
        "        b = torch.tensor(h)", "            ^"]
    assert proc.returncode == 1 and "error" not in proc.stderr
    doc = json.loads(run_cli("check", "--format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [(f["cell"], f["line"], f["column"], f["end_column"]) for f in doc["findings"]] == [(2, 3, 9, 24)]


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_a_fix_in_an_indented_cell_keeps_its_indent(tmp_path, capsys):
    train = ("  def fit(model, loader, opt):\n      best = model.state_dict()\n      for x in loader:\n"
             "          opt.step()\n      model.load_state_dict(best)\n")
    code, text, _ = fix_notebook(tmp_path, capsys, code_notebook(train), "--unsafe-fixes")
    assert code == 0
    assert cell_sources(text) == ["  import copy\n\n" + train.replace(
        "best = model.state_dict()", "best = copy.deepcopy(model.state_dict())")]


BROKEN = "def f(:\n    return copy.deepcopy(x)\n"


def test_check_reports_an_unparsable_cell_and_checks_the_others(tmp_path):
    cells = ["import torch\nh = torch.ones(3)\n", BROKEN, "b = torch.tensor(h)\n"]
    (tmp_path / "nb.ipynb").write_text(code_notebook(*cells))
    proc = run_cli("check", "nb.ipynb", cwd=tmp_path)
    assert proc.stdout.startswith("nb.ipynb:cell 3:1:5: TEN204 ")
    assert "nb.ipynb:cell 2: error: cannot parse at line 1: " in proc.stderr
    assert proc.returncode == 2  # an error was reported, even though findings were too
    doc = json.loads(run_cli("check", "--format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [e["path"] for e in doc["errors"]] == ["nb.ipynb"]
    assert doc["errors"][0]["message"].startswith("cell 2: cannot parse at line 1: ")


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_fix_fixes_the_other_cells_and_leaves_an_unparsable_one_byte_identical(tmp_path, capsys):
    train = ("def fit(model, loader, opt):\n    best = model.state_dict()\n    for x in loader:\n"
             "        opt.step()\n    model.load_state_dict(best)\n")
    text = code_notebook(BROKEN, train, "import torch\nh = torch.ones(3)\nb = torch.tensor(h)\n")
    code, after, err = fix_notebook(tmp_path, capsys, text, "--unsafe-fixes")
    assert code == 2
    assert "nb.ipynb:cell 1: error: cannot parse at line 1: " in err
    untouched = text[:source_spans(text)[1][0]]  # everything up to the next cell's source: cell 1 whole
    assert after.startswith(untouched) and json.loads(untouched + "[]}]}")["cells"][0]["source"] == BROKEN
    assert cell_sources(after)[1:] == [  # the import a fix needs goes to a cell that parses
        "import copy\n\n" + train.replace("best = model.state_dict()", "best = copy.deepcopy(model.state_dict())"),
        "import torch\nh = torch.ones(3)\nb = h.detach().clone()\n"]


def test_an_unparsable_cell_is_blank_in_the_program_and_never_edited():
    nb = read_notebook(code_notebook(BROKEN, "x = 1\n", "  y = 2\n"))
    assert nb.errors == [(1, "cannot parse at line 1: invalid syntax")]
    assert nb.program.splitlines() == ["", "", BOUNDARY, "x = 1", BOUNDARY, "y = 2"]
    assert nb.column(6, 0) == 2 and nb.locate(6) == (3, 1)
    assert cell_sources(nb.with_program("import copy\n" + nb.program.replace("y = 2", "y = 3"))) == [
        BROKEN, "import copy\nx = 1\n", "  y = 3\n"]  # lines added to it go to the first cell that parses


def test_a_one_line_cell_that_is_not_python_may_be_automagic():
    assert automagic(["", "pip install torch==2.1"]) == ["", "pass"]
    assert automagic(["ls /content/checkpoints/"]) == ["pass"]
    assert automagic(["pip install a", "import a"]) is None  # two lines: IPython applies it to one only
    assert automagic(["bibtex {x}"]) is None  # not a magic's name
    text = code_notebook("import torch\nh = torch.ones(3)\n", "pip install torch", "cd ..\n", "b = torch.tensor(h)\n")
    nb = read_notebook(text)
    assert nb.errors == [] and nb.program.splitlines()[3:6] == ["pass", BOUNDARY, "pass"]
