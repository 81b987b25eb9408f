"""TEN905, a `# noqa` naming TEN codes that suppress nothing (Ruff's RUF100 for TEN codes), as the pipeline
runs it: which comments it reads and on which line, what the fix removes from a comment, and that check,
fix, the flake8 plugin (under the real flake8), the language server and the LibCST codemod all give it.
Which codes the rule reports and what its fix leaves: tests/rules/test_ten905.py."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.support.cli_tools import ROOT, notebook_text, reported, run_cli
from tests.support.fixture_tools import fixture_path
from tests.support.noqa_tools import CLEAN, DEEPCOPY, HEAD, WITH_TEN905, unused
from tests.support.server_tools import Server, apply
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.pipeline.noqa import without_codes
from flake8_tensorcopy.rules import BY_CODE


def test_file_level_noqa_reports_nothing():
    assert unused(f"# flake8: noqa\n{HEAD}{CLEAN}  # noqa: TEN201\n", noqa=False) == []


def test_a_multi_line_statement_is_read_as_flake8_maps_it():
    """The comment after a multi-line string covers the statement's first line, so TEN201 there uses it;
    once the deepcopy is gone, the same comment is reported."""
    used = f'{HEAD}    return copy.deepcopy(hidden), """\n    text\n    """  # noqa: TEN201\n'
    assert unused(used) == []
    [(line, _, _)] = unused(used.replace("copy.deepcopy(hidden)", "hidden.detach().clone()"))
    assert line == 10
    bracket = f"{HEAD}    return (copy.deepcopy(hidden),\n            1)  # noqa: TEN201\n"
    assert [line for line, _, _ in unused(bracket)] == [9]  # a bracket's line break: flake8 reads line 8 alone


def test_only_the_first_noqa_of_a_comment_is_read():
    """flake8 reads `# noqa: E501` and never the second one, so its TEN code suppresses nothing, and is
    not ours to remove (the fix would make the second one read)."""
    assert unused(f"{HEAD}{CLEAN}  # noqa: TEN201  # noqa: E501\n")
    finding = next(f for f in lint(Document("t.py", f"{HEAD}{CLEAN}  # noqa: TEN201 # noqa: E501\n"),
                                   WITH_TEN905).findings)
    assert finding.fix is None
    assert unused(f"{HEAD}{CLEAN}  # noqa: E501 # noqa: TEN201\n") == []


@pytest.mark.parametrize("comment, codes, result", [
    ("# noqa: TEN101", ["TEN101"], ""),
    ("# noqa: E501,TEN101", ["TEN101"], "# noqa: E501"),
    ("# noqa: TEN101, E501", ["TEN101"], "# noqa: E501"),
    ("# noqa:TEN101 E501 TEN2", ["TEN101", "TEN2"], "# noqa:E501"),
    ("# noqa: E501,TEN101,F401", ["TEN101"], "# noqa: E501,F401"),
    ("# noqa: TEN101  # expect: this", ["TEN101"], "# expect: this"),
    ("# noqa: TEN101 kept on purpose", ["TEN101"], "# kept on purpose"),
    ("# type: int  # noqa: TEN101", ["TEN101"], "# type: int"),
    ("# NOQA:TEN101,TEN201,", ["TEN201"], "# NOQA:TEN101,"),
    ("# noqa: TEN101 # noqa", ["TEN101"], None),  # would become a bare noqa
    ("# noqa: TEN101 # noqa: E501", ["TEN101"], None),  # would read another list
    ("# noqa", ["TEN101"], None),
])
def test_the_fix_removes_only_the_unused_codes(comment, codes, result):
    assert without_codes(comment, codes) == result


def test_the_engine_never_parses_a_file_for_it():
    assert analyse(f"{HEAD}{CLEAN}  # noqa: TEN201\n", "t.py", [BY_CODE["TEN905"]]).parsed is False


@pytest.mark.slow  # subprocesses
def test_check_and_fix_in_a_notebook(tmp_path):
    """Positions in the cell (an indented cell is dedented for the program); a line IPython syntax hides
    from the program is not reported (fix could not edit it); fix rewrites the cell."""
    cells = [("code", "import torch\nw = torch.ones(3)\n"),
             ("code", "  y = w.detach().clone()  # noqa: TEN201\n  z = 1\n"),
             ("code", "%time y = w.clone()  # noqa: TEN201\n")]
    nb = tmp_path / "nb.ipynb"
    nb.write_text(notebook_text(cells))
    check = run_cli("check", "--no-cache", "--extend-select", "TEN905", "nb.ipynb", cwd=tmp_path)
    assert reported(check.stdout) == [("nb.ipynb", "cell 2:1:27", "TEN905")], check.stdout
    run_cli("fix", "--extend-select", "TEN905", "nb.ipynb", cwd=tmp_path)
    sources = ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"]]
    assert sources == ["import torch\nw = torch.ones(3)\n", "  y = w.detach().clone()\n  z = 1\n",
                       "%time y = w.clone()  # noqa: TEN201\n"]


def flake8(cwd, *args) -> str:
    """flake8's TEN lines (its other checkers report on the same files)."""
    proc = subprocess.run([sys.executable, "-m", "flake8", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode in (0, 1), proc.stderr
    return "".join(line for line in proc.stdout.splitlines(keepends=True) if ": TEN" in line)


@pytest.mark.slow  # subprocesses
def test_the_flake8_plugin_computes_it_and_flake8_applies_noqa(tmp_path):
    """flake8 owns noqa: the plugin reports TEN905 on a line whose `# noqa: TEN101` names only TEN101, and
    flake8 lets it through (TEN905 does not start with TEN101); one naming TEN905 silences it."""
    (tmp_path / "a.py").write_text(f"{HEAD}{CLEAN}  # noqa: TEN101\n    x = 1  # noqa: TEN201,TEN905\n")
    says = flake8(tmp_path, "--select", "TEN", "a.py")
    assert reported(says) == [("a.py", "8:37", "TEN905")], says
    assert flake8(tmp_path, "a.py") == ""  # opt-in: off by default
    assert flake8(tmp_path, "--extend-select", "TEN905", "a.py") == says


@pytest.mark.slow  # subprocesses
def test_every_front_end_reports_the_fixtures_alike(tmp_path):
    """check, fix --diff and flake8 report the same TEN905 findings on its fixtures; fix and the codemod
    write the same files."""
    for variant in ("bad", "good", "fixed"):
        (tmp_path / f"{variant}.py").write_text(fixture_path("TEN905", variant).read_text())
    check = run_cli("check", "--no-cache", "-q", "--extend-select", "TEN905", ".", cwd=tmp_path)
    positions = sorted((p, pos) for p, pos, _ in reported(check.stdout))
    assert len(positions) == 5 and {p for p, _ in positions} == {"bad.py"}
    plugin = flake8(tmp_path, "--extend-select", "TEN905", ".")
    assert sorted((p[2:], pos) for p, pos, _ in reported(plugin)) == positions, plugin
    diff = run_cli("fix", "--diff", "--extend-select", "TEN905", ".", cwd=tmp_path)
    assert sorted(re.findall(r"^(\w+\.py):(\d+:\d+): TEN905 ", diff.stdout, re.M)) == positions
    codemod = tmp_path / "codemod"
    codemod.mkdir()
    (codemod / "bad.py").write_text((tmp_path / "bad.py").read_text())
    run_cli("fix", "--extend-select", "TEN905", "bad.py", cwd=tmp_path)
    subprocess.run([sys.executable, "-m", "libcst.tool", "codemod", "-x",
                    "flake8_tensorcopy.adapters.codemod.TensorCopyCodemod", "--no-format", "--extend-select",
                    "TEN905", "."], cwd=codemod, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                   check=True)
    assert (codemod / "bad.py").read_text() == (tmp_path / "bad.py").read_text()
    assert "noqa: TEN" not in (tmp_path / "bad.py").read_text()


@pytest.mark.slow  # subprocesses
def test_add_noqa_leaves_nothing_unused_and_a_removed_cause_is_reported(tmp_path):
    """`check --add-noqa` writes comments every one of which a finding uses; once a finding's cause is
    fixed, its comment is reported, and `fix` removes it. A TEN905 finding is never silenced by add-noqa."""
    (tmp_path / "a.py").write_text(f"{HEAD}{DEEPCOPY}\n\n\ndef g():\n    return 1  # noqa: TEN101\n")
    added = run_cli("check", "--add-noqa", "--extend-select", "TEN905", "a.py", cwd=tmp_path)
    text = (tmp_path / "a.py").read_text()
    assert "copy.deepcopy(hidden)  # noqa: TEN201\n" in text and "TEN905" not in text
    assert reported(added.stdout) == [("a.py", "12:15", "TEN905")]  # the old comment, reported, not silenced
    (tmp_path / "a.py").write_text(text.replace("    return 1  # noqa: TEN101\n", "    return 1\n"))
    assert run_cli("check", "--no-cache", "--extend-select", "TEN905", "a.py", cwd=tmp_path).stdout == ""
    (tmp_path / "a.py").write_text((tmp_path / "a.py").read_text().replace("copy.deepcopy(hidden)",
                                                                           "hidden.detach().clone()"))
    after = run_cli("check", "--no-cache", "--extend-select", "TEN905", "a.py", cwd=tmp_path)
    assert reported(after.stdout) == [("a.py", "8:37", "TEN905")]
    run_cli("fix", "--extend-select", "TEN905", "a.py", cwd=tmp_path)
    assert "    return hidden.detach().clone()\n" in (tmp_path / "a.py").read_text()


@pytest.mark.slow  # the language server in a subprocess
def test_the_server_offers_the_fix(tmp_path):
    """Diagnostics for the unused code, its safe fix as the preferred quick fix, and fix-all."""
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nextend-select = ["TEN905"]\n')
    text = f"{HEAD}{CLEAN}  # noqa: E501,TEN201\n"
    (tmp_path / "s.py").write_text(text)
    with Server(tmp_path, tmp_path / "server.log") as server:
        uri = server.open(tmp_path / "s.py")
        [diag] = server.diagnostics([uri])[uri]
        assert diag["code"] == "TEN905" and diag["range"]["start"] == {"line": 7, "character": 36}
        found = {a["title"]: a for a in server.actions(uri, 7)}
        fix = next(a for title, a in found.items() if title.startswith("Fix TEN905"))
        fix_all = next(a for a in found.values() if a["kind"] == "source.fixAll.flake8-tensorcopy")
        assert fix.get("isPreferred")
        assert apply(text, fix["edit"]["changes"][uri]) == apply(text, fix_all["edit"]["changes"][uri]) == \
            f"{HEAD}{CLEAN}  # noqa: E501\n"


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_line_ends_do_not_move_the_fix(end):
    source = f"{HEAD}{CLEAN}  # noqa: E501,TEN201\n    x = 1  # noqa: TEN101\n".replace("\n", end)
    assert [line for line, _, _ in unused(source)] == [8, 9]
    assert fix_source(source, rules=WITH_TEN905).fixed == f"{HEAD}{CLEAN}  # noqa: E501\n    x = 1\n".replace("\n", end)


def test_a_file_that_does_not_parse_gets_none():
    """flake8 runs no plugin on it (E999); check reports the parse error when a rule's trigger makes the engine
    parse it, and TEN905 reports nothing either way."""
    rules = [BY_CODE["TEN902"], BY_CODE["TEN905"]]  # TEN902's trigger is not in the file: the engine never parses
    source = f"{HEAD}{CLEAN}  # noqa: TEN902\n    x = = 1\n"
    assert unused(source, rules) == []
    assert unused(source.replace("    x = = 1\n", ""), rules)
