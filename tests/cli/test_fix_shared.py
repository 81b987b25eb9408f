"""`fix` shares `check`'s ground: notebooks, and the [tool.flake8-tensorcopy] configuration."""
import json

from tests.support.cli_tools import DEEPCOPY, notebook_text, run_cli


def test_fix_rewrites_a_notebook_cell_and_keeps_magics_and_outputs(tmp_path):
    nb = tmp_path / "train.ipynb"
    nb.write_text(notebook_text())
    proc = run_cli("fix", "--unsafe-fixes", "train.ipynb", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cells = json.loads(nb.read_text())["cells"]
    assert "".join(cells[3]["source"]) == "for step in range(3):\n    !nvidia-smi\n    saved = h.detach().clone()"
    assert "".join(cells[1]["source"]).count("%matplotlib inline") == 1
    assert cells[1]["outputs"][0]["text"] == ["é\n"]
    assert run_cli("check", "train.ipynb", cwd=tmp_path).returncode == 0  # nothing left
    assert run_cli("fix", "--unsafe-fixes", "train.ipynb", cwd=tmp_path).stderr.startswith("0 finding")  # on stderr


def test_fix_reads_the_project_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nignore = ["TEN201"]\n'
                                             'extend-exclude = ["vendor/"]\n')
    (tmp_path / "a.py").write_text(DEEPCOPY)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "b.py").write_text(DEEPCOPY)
    proc = run_cli("fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / "a.py").read_text() == DEEPCOPY  # TEN201 is ignored
    proc = run_cli("fix", "--unsafe-fixes", "--ignore", "TEN1", ".", cwd=tmp_path)
    assert "t.detach().clone()" in (tmp_path / "a.py").read_text()  # the command line wins over the file
    assert (tmp_path / "vendor" / "b.py").read_text() == DEEPCOPY  # excluded by the configuration


def test_fix_names_a_bad_configuration_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nselct = ["TEN"]\n')
    (tmp_path / "a.py").write_text(DEEPCOPY)
    proc = run_cli("fix", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and "selct" in proc.stderr and "Traceback" not in proc.stderr
