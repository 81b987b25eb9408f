"""Notebooks: code cells as one program, IPython syntax neutralised in place, cell:line reporting, and
writing a fixed program back without disturbing the rest of the file."""
from __future__ import annotations

import json
import re

import pytest

from tests.support.cli_tools import CELLS, notebook_text, reported, run_cli
from tests.support.notebook_tools import cell_sources, code_notebook, fix_notebook
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.sources.notebook import BOUNDARY, NotebookError, read_notebook


def test_program_keeps_line_numbers_and_neutralises_ipython():
    nb = read_notebook(notebook_text())
    assert nb.program.splitlines() == [
        "import copy", "import torch", "pass", "files = None", "h = torch.ones(3)[:2]", BOUNDARY,
        "", "", BOUNDARY,
        "for step in range(3):", "    pass", "    saved = copy.deepcopy(h)",
    ]
    assert nb.locate(12) == (4, 3)  # cell 4 on screen (the markdown cell counts), its line 3
    assert nb.locate(1) == (2, 1)
    assert nb.source_line(11) == "    !nvidia-smi"


def test_findings_across_cells_via_the_engine():
    nb = read_notebook(notebook_text())
    found = analyse(nb.program, "nb.ipynb").findings
    assert [(nb.locate(f.line), f.col, f.code) for f in found] == [((4, 3), 12, "TEN201")]


def test_other_languages_and_broken_json():
    assert read_notebook(notebook_text(language="julia")).program == ""
    with pytest.raises(NotebookError, match="invalid JSON"):
        read_notebook("{")
    with pytest.raises(NotebookError, match="no 'cells'"):
        read_notebook('{"nbformat": 4}')


@pytest.mark.parametrize("layout", [{"indent": 1}, {"indent": 2}, {"indent": None},
                                    {"indent": None, "separators": (",", ":")}, {"indent": 4, "ensure_ascii": True}])
def test_write_back_keeps_layout_outputs_and_magics(layout):
    text = notebook_text(**layout)
    nb = read_notebook(text)
    assert nb.with_program(nb.program) == text  # no change: byte for byte the same
    fixed = nb.program.replace("saved = copy.deepcopy(h)", "saved = h.detach().clone()")
    out = nb.with_program(fixed)
    assert out == text.replace("saved = copy.deepcopy(h)", "saved = h.detach().clone()")


def test_write_back_puts_new_lines_in_the_right_cells():
    nb = read_notebook(notebook_text())
    lines = nb.program.splitlines()
    lines.insert(0, "import numpy")  # e.g. an import the fixer adds at the top
    lines[-1] = "    saved = h.detach()\n    saved = saved.clone()"  # one line becomes two
    data = json.loads(nb.with_program("\n".join(lines) + "\n"))
    sources = ["".join(c["source"]) for c in data["cells"]]
    assert sources[1] == ("import numpy\nimport copy\nimport torch\n%matplotlib inline\nfiles = !ls\n"
                          "h = torch.ones(3)[:2]")
    assert sources[2] == "%%bash\necho copy.deepcopy(h)\n"
    assert sources[3] == ("for step in range(3):\n    !nvidia-smi\n    saved = h.detach()\n"
                          "    saved = saved.clone()")
    assert data["cells"][1]["outputs"][0]["text"] == ["é\n"]


def test_check_reports_cell_and_line(tmp_path):
    (tmp_path / "train.ipynb").write_text(notebook_text())
    proc = run_cli("check", "train.ipynb", cwd=tmp_path)
    assert proc.stdout.startswith("train.ipynb:cell 4:3:13: TEN201 ")
    assert proc.returncode == 1
    source = run_cli("check", "--show-source", "train.ipynb", cwd=tmp_path).stdout.splitlines()
    assert source[1:] == ["        saved = copy.deepcopy(h)", "                ^"]


def test_check_notebook_noqa_and_syntax_errors_name_the_cell(tmp_path):
    cells = [c if c[0] != "code" or "saved" not in "".join(c[1]) else
             ("code", [*c[1][:-1], c[1][-1] + "  # noqa: TEN201"]) for c in CELLS]
    (tmp_path / "quiet.ipynb").write_text(notebook_text(cells))
    broken = [("code", ["x = 1\n"]), ("code", ["def f(:\n", "    return copy.deepcopy(x)\n"])]
    (tmp_path / "broken.ipynb").write_text(notebook_text(broken))
    proc = run_cli("check", ".", cwd=tmp_path)
    assert reported(proc.stdout) == []
    assert "broken.ipynb:cell 2: error: cannot parse at line 1: " in proc.stderr
    assert proc.returncode == 2


def test_notebook_on_stdin(tmp_path):
    proc = run_cli("check", "--stdin-filename", "nb.ipynb", "-", stdin=notebook_text(), cwd=tmp_path)
    assert reported(proc.stdout) == [("nb.ipynb", "cell 4:3:13", "TEN201")]


def _fixed_cells(tmp_path, capsys, text, *flags):
    return cell_sources(fix_notebook(tmp_path, capsys, text, *flags)[1])


def test_a_fix_that_shortens_a_cell_keeps_every_other_cell_in_place(tmp_path, capsys):
    first = "import torch\nh = torch.ones(3)\na = torch.tensor(\n    h\n)"
    cells = _fixed_cells(tmp_path, capsys, code_notebook(first, "b = torch.tensor(h)\nprint(b)", "print(a)"))
    assert cells == ["import torch\nh = torch.ones(3)\na = h.detach().clone()",
                     "b = h.detach().clone()\nprint(b)", "print(a)"]


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_an_added_import_never_lands_in_a_cell_of_another_language(tmp_path, capsys):
    train = ("def fit(model, loader, opt):\n    best = model.state_dict()\n    for x in loader:\n"
             "        model(x).sum().backward()\n        opt.step()\n    model.load_state_dict(best)")
    cells = _fixed_cells(tmp_path, capsys, code_notebook("%%bash\necho hi", train), "--unsafe-fixes")
    assert cells[0] == "%%bash\necho hi"
    assert cells[1].startswith("import copy\n") and "best = copy.deepcopy(model.state_dict())" in cells[1]


def test_lines_added_above_a_cell_of_another_language_go_to_the_first_python_cell():
    nb = read_notebook(code_notebook("%%bash\necho hi", "x = 1\n"))
    cells = json.loads(nb.with_program("import copy\n" + nb.program))["cells"]
    assert ["".join(c["source"]) for c in cells] == ["%%bash\necho hi", "import copy\nx = 1\n"]


def test_lost_cell_boundaries_leave_the_notebook_untouched():
    text = code_notebook("x = 1\n", "y = 2\n")
    nb = read_notebook(text)
    assert nb.with_program(nb.program.replace(BOUNDARY + "\n", "")) == text


def test_a_crlf_notebook_keeps_crlf_and_changes_only_the_fixed_line(tmp_path, capsys):
    text = code_notebook("import torch\nh = torch.ones(3)\nb = torch.tensor(h)\n", "print(b)\n").replace("\n", "\r\n")
    path = tmp_path / "nb.ipynb"
    path.write_bytes(text.encode())
    from tests.support.fix_tools import run_fix

    run_fix(capsys, path)
    after = path.read_bytes().decode()
    assert "\n" not in after.replace("\r\n", "")
    changed = [(a, b) for a, b in zip(text.split("\r\n"), after.split("\r\n")) if a != b]
    assert len(changed) == 1 and "h.detach().clone()" in changed[0][1]


def test_a_notebook_whose_first_code_cell_is_empty_is_fixed(tmp_path, capsys):
    source = "import torch\nh = torch.ones(3)\nb = torch.tensor(h)\n"
    code, text, _ = fix_notebook(tmp_path, capsys, code_notebook([], source))
    assert code == 0 and cell_sources(text) == ["", source.replace("torch.tensor(h)", "h.detach().clone()")]


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_an_added_import_goes_below_a_python_cell_magic(tmp_path, capsys):
    train = ("def fit(model, loader, opt):\n    best = model.state_dict()\n    for x in loader:\n"
             "        opt.step()\n    model.load_state_dict(best)\n")
    cells = _fixed_cells(tmp_path, capsys, code_notebook("\n%%time\n" + train), "--unsafe-fixes")
    fixed = train.replace("= model.state_dict()", "= copy.deepcopy(model.state_dict())")
    assert cells == ["\n%%time\nimport copy\n\n" + fixed]  # above it, %%time would be a line magic


SETUP = "import torch\nh = torch.ones(3)\n"


@pytest.mark.parametrize("indent", ["", "    "])
@pytest.mark.parametrize("held", [[BOUNDARY], ["# --- tensorcopy: next cell 1 ---", BOUNDARY]])
def test_a_cell_holding_the_cell_separator_is_still_fixed(tmp_path, capsys, held, indent):
    """The separator is chosen per notebook among lines no cell holds (as IPython reads the cell: an
    indented cell is dedented)."""
    first = "".join(f"{indent}{line}\n" for line in ["import torch", "h = torch.ones(3)", *held, "b = torch.tensor(h)"])
    code, text, _ = fix_notebook(tmp_path, capsys, code_notebook(first, "print(b)\n"))
    assert code == 0 and cell_sources(text) == [first.replace("torch.tensor(h)", "h.detach().clone()"), "print(b)\n"]
    assert read_notebook(code_notebook(first, "x = 1\n")).boundary not in held


def test_a_fix_the_cells_cannot_take_is_an_error_not_fixed(tmp_path, capsys, monkeypatch):
    from flake8_tensorcopy.sources.notebook import Notebook

    monkeypatch.setattr(Notebook, "with_program", lambda self, program: self.text)  # e.g. boundaries lost
    text = code_notebook(SETUP + "b = torch.tensor(h)\n")
    code, after, err = fix_notebook(tmp_path, capsys, text)
    assert code == 2 and after == text and "the fixes cannot be written back into the notebook's cells" in err


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_a_fixed_cell_keeps_its_line_ends(tmp_path, capsys, end):
    cell = (SETUP + "b = torch.tensor(h)\nprint(b)\n").replace("\n", end)
    mixed = "x = 1\r\ny = 2\nz = torch.tensor(h)\r\n"  # mixed: each kept line keeps its own end
    before = code_notebook(re.findall(r".*?(?:\r\n|\r|\n)", cell), re.findall(r".*?(?:\r\n|\n)", mixed), "print(b)\n")
    code, text, _ = fix_notebook(tmp_path, capsys, before)
    fixed = [source.replace("torch.tensor(h)", "h.detach().clone()") for source in (cell, mixed)]
    assert code == 0 and cell_sources(text) == [*fixed, "print(b)\n"]
    changed = [(a, b) for a, b in zip(before.splitlines(), text.splitlines()) if a != b]
    assert len(changed) == 2 and all("h.detach().clone()" in b for _, b in changed)  # the file's other bytes stay


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_a_new_line_in_a_crlf_cell_gets_crlf(tmp_path, capsys):
    train = ("def fit(model, loader, opt):\r\n    best = model.state_dict()\r\n    for x in loader:\r\n"
             "        opt.step()\r\n    model.load_state_dict(best)\r\n")
    cells = _fixed_cells(tmp_path, capsys, code_notebook(train), "--unsafe-fixes")
    fixed = train.replace("= model.state_dict()", "= copy.deepcopy(model.state_dict())")
    assert cells == ["import copy\r\n\r\n" + fixed]


@pytest.mark.parametrize("tail", ["\n\n", "\n\n\n", "\n \n", "\n", ""])
def test_trailing_blank_lines_of_the_last_cell_are_kept(tmp_path, capsys, tail):
    last = SETUP + "b = torch.tensor(h)" + tail
    cells = _fixed_cells(tmp_path, capsys, code_notebook("import os\n\n", last))
    assert cells == ["import os\n\n", last.replace("torch.tensor(h)", "h.detach().clone()")]


def test_a_source_list_ending_in_empty_strings_keeps_them(tmp_path, capsys):
    """Colab ends some cells' source lists with "" (fix review 11): the fixed cell keeps that entry."""
    lines = [line + "\n" for line in (SETUP + "b = torch.tensor(h)\nprint(b)").split("\n")] + [""]
    code, text, _ = fix_notebook(tmp_path, capsys, code_notebook(lines))
    assert code == 0
    assert json.loads(text)["cells"][0]["source"] == [line.replace("torch.tensor(h)", "h.detach().clone()")
                                                      for line in lines]
