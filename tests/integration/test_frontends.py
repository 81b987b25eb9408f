"""`check`, `fix`, the flake8 plugin and the LibCST codemod agree: the same files, the same options with
the same defaults, the same [tool.flake8-tensorcopy] table, the same notebook positions (issue 14)."""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from tests.support.cli_tools import DEEPCOPY, ROOT, notebook_text, reported, run_cli
from tests.support.line_ends import STYLES, with_line_ends
from tests.support.programs import compiles, programs, run_plugin
from tests.support.server_tools import Server, apply
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import RULES
from flake8_tensorcopy.config import pyproject as config
from flake8_tensorcopy.cli.main import build_parser
from flake8_tensorcopy.config.settings import Options, selection

pytestmark = pytest.mark.slow  # every front end over the same files, most in subprocesses
FIX_ONLY = {"--diff", "--check", "--unsafe-fixes"}
CHECK_ONLY = {"--add-noqa", "--statistics", "--exit-zero", "--show-settings"}
DECLARED = "import copy\nfrom mylib import load\n\n\ndef f():\n    b = load()\n    return copy.copy(b)\n"


def make(root, names, text=DEEPCOPY):
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def fixed_names(proc) -> set[str]:
    return {line[4:] for line in proc.stdout.splitlines() if line.startswith("+++ ")}


def test_check_and_fix_diff_see_the_same_files(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*_gen.py\n/scratch/\n")
    make(tmp_path, ["src/a.py", "src/b_gen.py", "scratch/s.py", "env/lib/v.py", "build/x.py", "src/keep/c.py"])
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    (tmp_path.parent / "outside.py").write_text(DEEPCOPY)
    (tmp_path / "src" / "link.py").symlink_to(tmp_path.parent / "outside.py")
    check = run_cli("check", "-j1", cwd=tmp_path)
    fix = run_cli("fix", "--diff", "--unsafe-fixes", cwd=tmp_path)  # both default to "."
    assert {path for path, _, _ in reported(check.stdout)} == {"src/a.py", "src/keep/c.py"}
    assert fixed_names(fix) == {"src/a.py", "src/keep/c.py"}
    note = f"src/link.py: skipped: a symlink to {tmp_path.parent / 'outside.py'}, outside ."
    assert note in check.stderr and note in fix.stderr


def test_check_and_fix_share_every_option_with_the_same_defaults():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))

    def options(name):
        return {repr((a.option_strings or a.dest, a.default, a.nargs, a.type, a.choices, a.help))
                for a in sub.choices[name]._actions if not set(a.option_strings) & (FIX_ONLY | CHECK_ONLY)}

    assert options("check") == options("fix")
    assert {"--exclude", "--extend-exclude", "--config", "--tensor-functions", "--format", "--show-source"} <= {
        s for a in sub.choices["fix"]._actions for s in a.option_strings}


def test_fix_honours_the_options_check_has(tmp_path):
    make(tmp_path, ["a.py", "legacy/old.py"])
    (tmp_path / "ci.toml").write_text('[tool.flake8-tensorcopy]\nignore = ["TEN201"]\n')
    assert fixed_names(run_cli("fix", "--diff", "--unsafe-fixes", "--extend-exclude", "legacy", cwd=tmp_path)) == {
        "a.py"}
    assert run_cli("fix", "--check", "--unsafe-fixes", "--config", "ci.toml", cwd=tmp_path).returncode == 0
    quiet = run_cli("fix", "--diff", "-q", "--unsafe-fixes", "a.py", cwd=tmp_path)
    assert quiet.returncode == 1 and "finding(s) would be fixed" not in quiet.stderr + quiet.stdout


def test_fix_prints_the_findings_it_leaves_in_check_formats(tmp_path):
    make(tmp_path, ["a.py"], DECLARED)
    check = run_cli("check", "--format", "json", "--tensor-functions", "load", "a.py", cwd=tmp_path)
    fix = run_cli("fix", "--format", "json", "--tensor-functions", "load", "a.py", cwd=tmp_path)
    assert check.returncode == fix.returncode == 1  # TEN202's fix is unsafe: nothing fixed, one left
    assert json.loads(fix.stdout)["findings"] == json.loads(check.stdout)["findings"] != []
    assert run_cli("fix", "--format", "json", "a.py", cwd=tmp_path).returncode == 0  # load() is not a tensor
    refused = run_cli("fix", "--diff", "--format", "sarif", "a.py", cwd=tmp_path)
    assert refused.returncode == 2 and "--diff prints a diff" in refused.stderr


def test_fix_reports_notebook_findings_by_cell_as_check_does(tmp_path):
    (tmp_path / "train.ipynb").write_text(notebook_text())
    assert reported(run_cli("check", "train.ipynb", cwd=tmp_path).stdout) == [("train.ipynb", "cell 4:3:13", "TEN201")]
    left = run_cli("fix", "--diff", "train.ipynb", cwd=tmp_path).stdout.splitlines()
    assert left[0].startswith("train.ipynb:cell 4:3:13: TEN201 ") and left[0].endswith("[unsafe fix: --unsafe-fixes]")
    done = run_cli("fix", "--diff", "--unsafe-fixes", "train.ipynb", cwd=tmp_path).stdout.splitlines()
    assert done[0].startswith("train.ipynb:cell 4:3:13: TEN201 ") and done[0].endswith("[would fix, unsafe]")


def test_codemod_honours_the_configuration(tmp_path):
    make(tmp_path, ["a.py", "vendor/v.py"])
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nignore = ["TEN201"]\n')
    cmd = [sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.adapters.codemod.TensorCopyCodemod",
           "--no-format", "--unsafe-fixes", "."]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, check=True)
    assert (tmp_path / "a.py").read_text() == DEEPCOPY  # TEN201 is ignored
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nextend-exclude = ["vendor/"]\n')
    subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, check=True)
    assert "t.detach().clone()" in (tmp_path / "a.py").read_text()
    assert (tmp_path / "vendor" / "v.py").read_text() == DEEPCOPY  # excluded


def flake8(cwd, *args):
    return subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("body, words", [
    (b'selekt = ["TEN"]\n', "unknown key 'selekt'"),
    (b'tensor-functions = "make_batch"\n', "'tensor-functions' must be a list of strings"),
    (b'select = ["TEN1"] # \xff\n', "not UTF-8"),
    (b'select = [\n', "cannot read"),
])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_plugin_reports_a_bad_table_once_per_run_as_check_does(tmp_path, body, words, jobs):
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.flake8-tensorcopy]\n" + body)
    make(tmp_path, [f"m{i}.py" for i in range(6)] + ["sub/a.py"])
    check = run_cli("check", ".", cwd=tmp_path)
    message = check.stderr.strip().removeprefix("flake8-tensorcopy: error: ")
    assert check.returncode == 2 and words in message
    proc = flake8(tmp_path, "-j", jobs, ".")
    notices = [line for line in proc.stdout.splitlines() if " TEN000 " in line]
    assert notices == [f"./m0.py:1:1: TEN000 flake8-tensorcopy ignores its configuration: {message}"]
    assert proc.stdout.count(" TEN201 ") == 7 and "Traceback" not in proc.stderr  # every file still checked


def test_the_plugin_uses_the_table_found_as_check_finds_it(tmp_path):
    make(tmp_path, ["pkg/a.py"], DECLARED)
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\ntensor-functions = ["load"]\n')
    path = f"{tmp_path.name}/pkg/a.py"  # run from outside the project: found above the path, not the cwd
    assert [c for _, _, c in reported(flake8(tmp_path.parent, path).stdout)] == ["TEN202"]
    assert [c for _, _, c in reported(run_cli("check", path, cwd=tmp_path.parent).stdout)] == ["TEN202"]


def test_rules_and_explain_say_what_ten000_is(tmp_path):
    assert "TEN000 is not a rule" in run_cli("rules", cwd=tmp_path).stdout
    assert run_cli("explain", "TEN000", cwd=tmp_path).stdout.startswith("TEN000 is not a rule")


def test_a_pyproject_is_parsed_once_however_many_files_ask(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nignore = ["TEN2"]\n')
    for name in ("a", "b/c"):
        (tmp_path / name).mkdir(parents=True)
    parsed = []
    real = config._parse
    monkeypatch.setattr(config, "_parse", lambda path: parsed.append(path) or real(path))
    for folder in ["a", "b/c", "a", "."] * 5:
        assert selection(Options(paths=[str(tmp_path / folder)])).ignore == ("TEN2",)
    assert parsed == [str(tmp_path / "pyproject.toml")]
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\nignore = ["TEN1"]\n\n')  # a new version
    assert selection(Options(paths=[str(tmp_path / "a")])).ignore == ("TEN1",) and len(parsed) == 2


NOQA_FORMS = {  # each finding line gets the comment its form makes of the line's codes
    "bare": lambda codes: "# noqa",
    "no_space": lambda codes: "#noqa",
    "own": lambda codes: "# noqa: " + ",".join(codes),
    "merged_first": lambda codes: f"# noqa: E501,{codes[0]}",
    "other_tool": lambda codes: "# noqa: E501",
    "lower_case": lambda codes: f"# noqa:{codes[0].lower()}",
    "prefix": lambda codes: f"# noqa:{codes[0][:4]}",
}


def noqa_variants(root, sources: dict[str, str], found: dict[str, dict[int, list[str]]]) -> None:
    """Write each source once per noqa form (comments on its finding lines) and once under `# flake8: noqa`."""
    import ast

    for name, text in sources.items():
        (root / f"file_level__{name}").write_text("# flake8: noqa\n" + text)
        for form, comment in NOQA_FORMS.items():
            lines = text.splitlines(keepends=True)
            for line, codes in found.get(name, {}).items():
                edited = lines[line - 1].rstrip("\n") + "  " + comment(sorted(codes)) + "\n"
                trial = lines[:line - 1] + [edited] + lines[line:]
                if ast.dump(ast.parse("".join(trial))) == ast.dump(ast.parse(text)):  # never inside a string
                    lines = trial
            (root / f"{form}__{name}").write_text("".join(lines))


def findings_by_file(stdout: str) -> dict[str, list[tuple[int, str]]]:
    """{file name: sorted (line, code)} from the finding lines of an output (a diff's lines left out)."""
    out: dict[str, list[tuple[int, str]]] = {}
    lines = [line for line in stdout.splitlines() if re.match(r"[^\s:]+\.py:\d+:\d+: TEN\d+ ", line)]
    for path, pos, code in reported("\n".join(lines)):
        out.setdefault(os.path.basename(path), []).append((int(pos.split(":")[0]), code))
    return {name: sorted(found) for name, found in out.items()}


SELECT_ALL = '[tool.flake8-tensorcopy]\nselect = ["TEN"]\n'  # for the server, which takes no command line


def notebook_cells(text: str) -> list[tuple[str, str]]:
    """A notebook of a program: a title, a magic in a cell of its own, the program in the third cell."""
    return [("markdown", "# A tutorial"), ("code", "%matplotlib inline\n"), ("code", text)]


def notebook_findings(stdout: str) -> dict[str, list[tuple[int, int, str]]]:
    """{notebook name: sorted (cell, line, code)} from `nb.ipynb:cell N:line:col: CODE ...` lines."""
    out: dict[str, list] = {}
    for name, cell, line, code in re.findall(r"^(\S+\.ipynb):cell (\d+):(\d+):\d+: (TEN\d+) ", stdout, re.M):
        out.setdefault(name, []).append((int(cell), int(line), code))
    return {name: sorted(found) for name, found in out.items()}


def served(tree, notebooks, log, fix_all: str) -> tuple[dict, dict, dict]:
    """What one language server publishes for every .py file of `tree` and every notebook of `notebooks`,
    opened as an editor opens them: {name: sorted (line, code)}, {name: sorted (cell, line, code)}; and the
    text of each file whose name starts with `fix_all` after its fix-all action."""
    with Server(tree, log) as server:
        files = {server.open(p): p.name for p in sorted(tree.glob("*.py"))}
        cells = {p.name: server.open_notebook(notebooks / p.with_suffix(".ipynb").name, notebook_cells(p.read_text()))
                 for p in sorted(tree.glob("*.py"))}
        published = server.diagnostics(list(files) + [u for uris in cells.values() for u in uris[1:]])
        fixed = {}
        for uri, name in files.items():
            if name.startswith(fix_all):
                text = (tree / name).read_text()
                [action] = server.actions(uri, 0, only=["source.fixAll"]) or [{"edit": {"changes": {uri: []}}}]
                fixed[name] = apply(text, action["edit"]["changes"][uri])
    by_file = {name: sorted((d["range"]["start"]["line"] + 1, d["code"]) for d in published[uri])
               for uri, name in files.items()}
    by_notebook = {name.replace(".py", ".ipynb"): sorted(
        (cell + 1, d["range"]["start"]["line"] + 1, d["code"]) for cell in (1, 2) for d in published[uris[cell]])
        for name, uris in cells.items()}
    return {k: v for k, v in by_file.items() if v}, {k: v for k, v in by_notebook.items() if v}, fixed


def test_every_front_end_suppresses_the_same_findings_over_fixtures_and_review_cases(tmp_path):
    """flake8 (the plugin), check, fix --diff, the codemod and the language server over the fixtures and the
    review cases, each with every noqa form on its finding lines: the same findings reported, the same ones
    suppressed; and each of them as a notebook with a magic, in check and in the server."""
    import shutil

    review = sorted(p for p in (ROOT.parent / "shared" / "cases" / "review").glob("*.py")) or sorted(
        (ROOT / "fixtures" / "review").glob("*.py"))
    # TEN905's bad lines already hold the noqa flake8 reads (a comment appended is never read): see
    # tests/pipeline/test_unused_noqa.py
    sources = {f"{p.parent.name}_{p.name}": p.read_text() for p in sorted(ROOT.glob("fixtures/TEN*/bad.py"))
               if p.parent.name != "TEN905"}
    sources.update({f"review_{p.name}": p.read_text() for p in review})
    base = tmp_path / "base"
    base.mkdir()
    for name, text in sources.items():
        (base / name).write_text(text)
    found: dict[str, dict[int, list[str]]] = {}
    for name, pairs in findings_by_file(run_cli("check", "--select", "TEN", "-q", ".", cwd=base).stdout).items():
        for line, code in pairs:
            found.setdefault(name, {}).setdefault(line, []).append(code)
    assert len(found) > 20
    tree, notebooks = tmp_path / "variants", tmp_path / "notebooks"
    tree.mkdir()
    notebooks.mkdir()
    noqa_variants(tree, sources, found)
    (tree / "pyproject.toml").write_text(SELECT_ALL)
    (notebooks / "pyproject.toml").write_text(SELECT_ALL)
    for path in tree.glob("*.py"):
        (notebooks / path.name.replace(".py", ".ipynb")).write_text(notebook_text(notebook_cells(path.read_text())))
    flake8_says = findings_by_file(flake8(tree, ".").stdout)
    check_says = findings_by_file(run_cli("check", "--select", "TEN", "-q", ".", cwd=tree).stdout)
    assert check_says == flake8_says
    server_says, server_notebooks, fixed_all = served(tree, notebooks, tmp_path / "server.log", "other_tool__")
    assert server_says == flake8_says
    check_notebooks = notebook_findings(run_cli("check", "--select", "TEN", "-q", ".", cwd=notebooks).stdout)
    assert server_notebooks == check_notebooks
    assert check_notebooks == {name.replace(".py", ".ipynb"): [(3, line, code) for line, code in pairs]
                               for name, pairs in flake8_says.items()}  # the program's findings, in its cell
    suppressed = {form: sum(len(v) for k, v in flake8_says.items() if k.startswith(form)) for form in NOQA_FORMS}
    in_notebooks = {form: sum(len(v) for k, v in check_notebooks.items() if k.startswith(form)) for form in NOQA_FORMS}
    everything = sum(len(codes) for lines in found.values() for codes in lines.values())
    assert suppressed["bare"] == suppressed["own"] == in_notebooks["bare"] == in_notebooks["own"] == 0
    assert "file_level__" not in "".join(flake8_says) + "".join(check_notebooks)
    assert suppressed["no_space"] == suppressed["other_tool"] == suppressed["lower_case"] == everything
    assert 0 < suppressed["merged_first"] < everything
    diff = run_cli("fix", "--diff", "--select", "TEN", "-q", ".", cwd=tree)
    assert findings_by_file(diff.stdout) == flake8_says  # what fix would fix or leave is what flake8 reports
    fixed, codemod, safe = tmp_path / "fixed", tmp_path / "codemod", tmp_path / "safe"
    shutil.copytree(tree, fixed)
    shutil.copytree(tree, codemod)
    safe.mkdir()
    for name in fixed_all:
        shutil.copy(tree / name, safe / name)
    run_cli("fix", "--select", "TEN", "-q", ".", cwd=safe)
    assert fixed_all == {name: (safe / name).read_text() for name in fixed_all}  # fix-all is `fix`'s safe fixes
    assert sum(text != (tree / name).read_text() for name, text in fixed_all.items()) >= 2  # the cases with safe fixes
    run_cli("fix", "--unsafe-fixes", "--select", "TEN", "-q", ".", cwd=fixed)
    cmd = [sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.adapters.codemod.TensorCopyCodemod",
           "--no-format", "--unsafe-fixes", "--select", "TEN", "."]
    subprocess.run(cmd, cwd=codemod, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, check=True)
    for path in sorted(tree.iterdir()):
        edited = (fixed / path.name).read_text()
        assert (codemod / path.name).read_text() == edited, path.name
        if path.name.startswith(("bare__", "own__", "file_level__")):
            assert edited == path.read_text(), path.name  # everything suppressed: nothing rewritten


def test_each_file_uses_the_nearest_configuration_above_it(tmp_path):
    """Ruff's way: a nested pyproject.toml governs the files under it, its patterns relative to it, in
    check and fix alike; --config still overrides it for every file; --show-settings says which applies."""
    make(tmp_path, ["a.py", "sub/b.py", "sub/deep/c.py"])
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-tensorcopy]\ntensor-functions = ["load"]\n')
    (tmp_path / "sub" / "pyproject.toml").write_text(
        '[tool.flake8-tensorcopy]\nignore = ["TEN201"]\nextend-exclude = ["deep/"]\n')
    assert [p for p, _, _ in reported(run_cli("check", ".", cwd=tmp_path).stdout)] == ["a.py"]
    assert fixed_names(run_cli("fix", "--diff", "--unsafe-fixes", ".", cwd=tmp_path)) == {"a.py"}
    every = reported(run_cli("check", "--config", "pyproject.toml", ".", cwd=tmp_path).stdout)
    assert [p for p, _, _ in every] == ["a.py", "sub/b.py", "sub/deep/c.py"]
    shown = run_cli("check", "--show-settings", "a.py", "sub/b.py", cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.count("configuration: ") == 2
    assert f"configuration: {tmp_path / 'sub' / 'pyproject.toml'}" in shown.stdout
    assert "tensor-functions: load" in shown.stdout and "TEN201" not in shown.stdout.split("sub/b.py:")[1]


# ---- a bounded, derandomised fuzz run through every front end (issue 26) -----------------------------
FUZZ = settings(max_examples=20, derandomize=True, database=None, deadline=None,
                suppress_health_check=list(HealthCheck), phases=[Phase.generate])


def generated_programs() -> list[str]:
    """The same 20 programs composed from the fixtures' vocabulary (tests/support/programs.py) on every run."""
    found = []

    @FUZZ
    @given(programs())
    def collect(source):
        found.append(source)

    collect()
    return list(dict.fromkeys(found))


def normal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def test_generated_programs_get_the_same_findings_and_fixes_from_every_front_end(tmp_path):
    """Engine, plugin in-process, `check`, `fix --diff` and `fix` agree on each program, written with LF,
    CRLF, lone CR or mixed line ends; every fixed text compiles and is a fixed point."""
    expected, fixed = {}, {}
    for i, source in enumerate(generated_programs()):
        name, text = f"p{i:02d}.py", with_line_ends(source, STYLES[i % len(STYLES)])
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        found = [(f"{f.line}:{f.col + 1}", f.code) for f in analyse(source, name, RULES).findings]
        assert [(f"{f.line}:{f.col + 1}", f.code) for f in analyse(text, name, RULES).findings] == found
        lines = text.splitlines(keepends=True)
        assert [(f"{line}:{col + 1}", out.split()[0]) for line, col, out, _ in
                run_plugin(ast.parse(source), lines, name)] == found
        fixed[name] = fix_source(source, name, RULES, unsafe=True).fixed
        assert compiles(fixed[name]) or not compiles(source)
        assert fix_source(fixed[name], name, RULES, unsafe=True).fixed == fixed[name]
        expected[name] = found
    assert len(expected) >= 15 and any(expected.values())
    check = run_cli("check", "-q", "-j1", "--select", "TEN", ".", cwd=tmp_path)
    got: dict[str, list] = {name: [] for name in expected}
    for path, pos, code in reported(check.stdout):
        got[path].append((pos, code))
    assert got == expected and "error" not in check.stderr
    args = ("--unsafe-fixes", "--select", "TEN", "-j1", ".")
    diff = run_cli("fix", "--diff", *args, cwd=tmp_path)
    assert fixed_names(diff) == {n for n in expected if fixed[n] != normal((tmp_path / n).read_text())}
    run_cli("fix", "-q", *args, cwd=tmp_path)
    for name in expected:
        on_disk = (tmp_path / name).read_bytes().decode("utf-8")
        assert normal(on_disk) == fixed[name]
    assert fixed_names(run_cli("fix", "--diff", *args, cwd=tmp_path)) == set()
