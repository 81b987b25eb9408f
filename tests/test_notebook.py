"""Notebooks: code cells as one program, IPython syntax neutralised in place, cell:line reporting, and
writing a fixed program back without disturbing the rest of the file."""
from __future__ import annotations

import json

import pytest

from cli_tools import CELLS, notebook_text, reported, run_cli
from flake8_tensorcopy.engine import analyse
from flake8_tensorcopy.notebook import NotebookError, neutralise, read_notebook


def test_program_keeps_line_numbers_and_neutralises_ipython():
    nb = read_notebook(notebook_text())
    assert nb.program.splitlines() == [
        "import copy", "import torch", "pass", "files = None", "h = torch.ones(3)[:2]",
        "", "",
        "for step in range(3):", "    pass", "    saved = copy.deepcopy(h)",
    ]
    assert nb.locate(10) == (4, 3)  # cell 4 on screen (the markdown cell counts), its line 3
    assert nb.locate(1) == (2, 1)
    assert nb.source_line(9) == "    !nvidia-smi"


@pytest.mark.parametrize("lines, expected", [
    (["%%time", "x = f()"], ["", "x = f()"]),
    (["%%writefile a.py", "import os"], ["", ""]),
    (["!pip install \\", "    torch", "y = 1"], ["pass", "", "y = 1"]),
    (["model?", "x = 1  # why?"], ["pass", "x = 1  # why?"]),
    (["a, b = %sx ls"], ["a, b = None"]),
])
def test_neutralise(lines, expected):
    assert neutralise(lines) == expected


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
    assert sources[1] == "import numpy\nimport copy\nimport torch\n%matplotlib inline\nfiles = !ls\nh = torch.ones(3)[:2]"
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
    assert "broken.ipynb: error: cannot parse at cell 2, line 1" in proc.stderr
    assert proc.returncode == 2


def test_notebook_on_stdin(tmp_path):
    proc = run_cli("check", "--stdin-filename", "nb.ipynb", "-", stdin=notebook_text(), cwd=tmp_path)
    assert reported(proc.stdout) == [("nb.ipynb", "cell 4:3:13", "TEN201")]
