"""[tool.flake8-tensorcopy] in pyproject.toml: discovery, validation, use by `check`, and the flake8
plugin's `--tensorcopy-` options."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.cli_tools import BAD, DEEPCOPY, ROOT, reported, run_cli
from flake8_tensorcopy.config.pyproject import ConfigError, load_config
from flake8_tensorcopy.engine.core import analyse

DECLARED = ("import copy\nfrom mylib import make_batch\n\n\n"
            "def f():\n    b = make_batch()\n    return copy.copy(b)\n")


def write_config(folder, body: str):
    (folder / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.flake8-tensorcopy]\n" + body)


def test_found_by_walking_up_past_pyprojects_without_the_table(tmp_path):
    write_config(tmp_path, 'ignore = ["TEN2"]\ntensor-functions = ["make_batch"]\n')
    inner = tmp_path / "sub" / "pkg"
    inner.mkdir(parents=True)
    (tmp_path / "sub" / "pyproject.toml").write_text("[project]\nname = 'sub'\n")
    config = load_config(str(inner))
    assert config.ignore == ("TEN2",) and config.tensor_functions == ("make_batch",)
    assert config.root == str(tmp_path) and config.path == str(tmp_path / "pyproject.toml")


def test_defaults_without_a_configuration(tmp_path):
    config = load_config(str(tmp_path))
    assert (config.select, config.ignore, config.exclude, config.path) == ((), (), None, None)


@pytest.mark.parametrize("body, words", [
    ('selekt = ["TEN"]\n', ["unknown key 'selekt'"]),
    ('extend_select = ["TEN9"]\n', ["unknown key 'extend_select'", "did you mean 'extend-select'"]),
    ('select = ["E501"]\n', ["invalid rule code 'E501'", "'select'"]),
    ('ignore = ["TEN777"]\n', ["invalid rule code 'TEN777'", "'ignore'"]),
    ('select = "TEN"\n', ["'select' must be a list of strings"]),
    ('per-file-ignores = { "tests/*" = ["X1"] }\n', ["invalid rule code 'X1'", "per-file-ignores.tests/*"]),
    ('select = [\n', ["cannot read"]),
])
def test_mistakes_are_one_line_errors_naming_the_key(tmp_path, body, words):
    write_config(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load_config(str(tmp_path))
    assert all(w in str(info.value) for w in words), str(info.value)
    (tmp_path / "a.py").write_text(DEEPCOPY)
    proc = run_cli("check", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert all(w in proc.stderr for w in words)


def test_check_applies_select_ignore_and_per_file_ignores(tmp_path):
    write_config(tmp_path, 'ignore = ["TEN101"]\n[tool.flake8-tensorcopy.per-file-ignores]\n"tests/" = ["TEN2"]\n')
    for name in ("src/a.py", "tests/test_a.py"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(BAD + "\n" + DEEPCOPY.replace("def f", "def g"))
    found = {(p, c) for p, _, c in reported(run_cli("check", ".", cwd=tmp_path / "src").stdout)}
    assert found == {("a.py", "TEN201")}  # run from a sub-folder: the configuration is found above
    found = {(p, c) for p, _, c in reported(run_cli("check", ".", cwd=tmp_path).stdout)}
    assert found == {("src/a.py", "TEN201")}
    # a command-line option overrides the same key of the configuration
    found = {c for _, _, c in reported(run_cli("check", "--ignore", "TEN2", "src", cwd=tmp_path).stdout)}
    assert found == {"TEN101"}


def test_check_applies_config_excludes_relative_to_the_config(tmp_path):
    write_config(tmp_path, 'extend-exclude = ["/vendor/"]\n')
    for name in ("vendor/v.py", "src/vendor/kept.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(DEEPCOPY)
    assert [p for p, _, _ in reported(run_cli("check", ".", cwd=tmp_path).stdout)] == ["src/vendor/kept.py"]


def test_tensor_functions_feed_the_engine_evidence():
    assert analyse(DECLARED, "t.py").findings == []
    for declared in ("make_batch", "mylib.make_batch"):
        found = analyse(DECLARED, "t.py", tensor_functions=[declared]).findings
        assert [f.code for f in found] == ["TEN202"], declared
    assert analyse(DECLARED, "t.py", tensor_functions=["other.make_batch"]).findings == []
    method = DECLARED.replace("make_batch()", "self.loader.make_batch()")
    assert [f.code for f in analyse(method, "t.py", tensor_functions=["make_batch"]).findings] == ["TEN202"]


def test_tensor_functions_from_pyproject_in_check(tmp_path):
    (tmp_path / "a.py").write_text(DECLARED)
    assert run_cli("check", "a.py", cwd=tmp_path).returncode == 0
    write_config(tmp_path, 'tensor-functions = ["make_batch"]\n')
    assert reported(run_cli("check", "a.py", cwd=tmp_path).stdout) == [("a.py", "7:12", "TEN202")]


def flake8(cwd, *args):
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_flake8_plugin_reads_its_prefixed_option_from_the_command_line_and_setup_cfg(tmp_path):
    (tmp_path / "a.py").write_text(DECLARED)
    assert flake8(tmp_path, "a.py").stdout == ""
    cli = flake8(tmp_path, "--tensorcopy-tensor-functions", "other, make_batch", "a.py")
    assert "a.py:7:12: TEN202" in cli.stdout
    (tmp_path / "setup.cfg").write_text("[flake8]\ntensorcopy-tensor-functions =\n    other,\n    make_batch\n")
    assert "a.py:7:12: TEN202" in flake8(tmp_path, "a.py").stdout


def test_flake8_plugin_shares_the_pyproject_tensor_functions_and_survives_a_broken_one(tmp_path):
    (tmp_path / "a.py").write_text(DECLARED)
    write_config(tmp_path, 'tensor-functions = ["make_batch"]\n')
    assert "a.py:7:12: TEN202" in flake8(tmp_path, "a.py").stdout
    write_config(tmp_path, 'tensor-functions = "make_batch"\n')  # invalid: said once (TEN000), flake8 runs
    proc = flake8(tmp_path, "a.py")
    assert proc.stdout.startswith("a.py:1:1: TEN000 flake8-tensorcopy ignores its configuration: ")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_config_option_names_the_file_to_use(tmp_path):
    (tmp_path / "a.py").write_text(DEEPCOPY)
    (tmp_path / "ci.toml").write_text('[tool.flake8-tensorcopy]\nignore = ["TEN201"]\n')
    assert run_cli("check", "--config", "ci.toml", "a.py", cwd=tmp_path).returncode == 0
    (tmp_path / "bad.toml").write_text('[tool.flake8-tensorcopy]\nextend-exclude = [1]\n')
    proc = run_cli("check", "--config", "bad.toml", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and "'extend-exclude' must be a list of strings" in proc.stderr
