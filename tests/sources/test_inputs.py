"""Issue 6: whatever the input, the plugin, real flake8 and `check` never crash, still report the
findings of every file they can analyse, and name the file and the reason for one they cannot."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from flake8.options.parse_args import parse_args
from flake8.processor import FileProcessor

from flake8_tensorcopy.sources.fileio import FileError, decode
from flake8_tensorcopy.engine.core import AnalysisError, analyse
from flake8_tensorcopy.adapters.flake8_plugin import Plugin
from flake8_tensorcopy.rules import RULES
from tests.support.robust_inputs import INPUTS, REAL

ROOT = Path(__file__).resolve().parents[2]
BY_NAME = {i.name: i for i in INPUTS}
SLOW_INPUTS = {"fifty_thousand_lines"}


def each(inputs) -> list:
    """The inputs as test parameters, the big ones marked slow."""
    return [pytest.param(i, id=i.name, marks=[pytest.mark.slow] if i.name in SLOW_INPUTS else []) for i in inputs]


FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every input as a file in one directory, next to a file with a real finding."""
    root = tmp_path_factory.mktemp("inputs")
    for item in INPUTS + [REAL]:
        (root / item.filename).write_bytes(item.data)
    return root


def run(*args, stdin=None, cwd=None):
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, cwd=cwd or ROOT)


def reported(stdout: bytes) -> dict[str, set]:
    found: dict[str, set] = {}
    for line in stdout.decode("utf-8", "replace").splitlines():
        m = FINDING.match(line)
        assert m, line
        found.setdefault(Path(m["path"]).name, set()).add((int(m["line"]), int(m["col"]), m["code"]))
    return found


def ten101(findings) -> set:
    return {(line, col, "TEN101") for line, col in findings}


@pytest.mark.parametrize("item", each(INPUTS))
def test_plugin_in_process_as_flake8_calls_it(item, written):
    """flake8 reads the lines (latin-1 fallback, BOM stripped) and parses them; when that succeeds it
    hands the plugin the tree. The plugin then yields flake8's tuples and never raises."""
    _, options = parse_args(["--isolated"])
    processor = FileProcessor(str(written / item.filename), options)
    try:
        tree = processor.build_ast()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        assert item.flake8 or item.flake8_breaks, "flake8 cannot parse this input, the catalogue says it can"
        return
    results = list(Plugin(tree, processor.lines, item.filename).run())
    assert all(isinstance(r[0], int) and isinstance(r[1], int) and r[3] is Plugin for r in results)
    assert not [r for r in results if r[2].startswith("TEN000")], results
    got = {(line, col + 1, text.split()[0]) for line, col, text, _ in results}
    lines = processor.lines
    kept = {f for f in got if "noqa" not in lines[f[0] - 1]}  # flake8 applies noqa after the plugin
    assert kept == ten101(item.expected_by_flake8)


@pytest.mark.parametrize("item", each(INPUTS))
def test_engine_reports_findings_or_one_line_reason(item, written):
    try:
        source = decode((written / item.filename).read_bytes()).text
    except FileError as exc:
        assert item.reason and re.search(item.reason, str(exc)), exc
        return
    try:
        result = analyse(source, item.filename, RULES)
    except AnalysisError as exc:
        assert item.reason and re.search(item.reason, str(exc)) and "\n" not in str(exc), exc
        return
    assert not item.reason and not result.errors
    found = {(f.line, f.col + 1) for f in result.findings if f.code == "TEN101"}
    noqa = {(8, 12)} if item.name == "form_feed_noqa" else set()  # the adapters apply noqa, not the engine
    assert found == set(item.findings) | noqa


@pytest.mark.slow
def test_check_reports_every_analysable_file_and_names_the_others(written):
    proc = run("-m", "flake8_tensorcopy", "check", "-q", "-j1", str(written))
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err
    found = reported(proc.stdout)
    messages = {}
    for line in err.splitlines():
        name, _, reason = line.partition(": error: ")
        messages.setdefault(Path(name).name, []).append(reason)
    for item in INPUTS + [REAL]:
        if item.reason:
            assert len(messages.get(item.filename, [])) == 1, (item.name, err)
            assert re.search(item.reason, messages[item.filename][0]), (item.name, messages[item.filename])
            assert item.filename not in found
        else:
            assert item.filename not in messages, (item.name, messages.get(item.filename))
            assert found.get(item.filename, set()) == ten101(item.findings), item.name
    assert set(messages) == {i.filename for i in INPUTS if i.reason}
    assert proc.returncode == 2


@pytest.mark.slow
@pytest.mark.parametrize("item", [i for i in INPUTS if i.stdin], ids=lambda i: i.name)
def test_check_and_flake8_on_an_editor_buffer(item):
    proc = run("-m", "flake8_tensorcopy", "check", "-q", "--stdin-filename", "buffer.py", "-", stdin=item.data)
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("buffer.py: error: ") and re.search(item.reason, err), err
    proc = run("-m", "flake8", "--isolated", "--select", "TEN,E9", "--stdin-display-name", "buffer.py", "-",
               stdin=item.data)
    assert proc.stderr == b"" and {c for *_, c in reported(proc.stdout)["buffer.py"]} == {item.flake8}


@pytest.mark.slow
def test_flake8_run_over_every_input_still_reports_all_findings(written):
    """One flake8 run over all the inputs flake8 itself survives, as in CI."""
    paths = [str(written / i.filename) for i in INPUTS + [REAL] if not i.flake8_breaks]
    proc = run("-m", "flake8", "--isolated", "--select", "TEN,E9", *paths)
    assert proc.stderr == b"", proc.stderr.decode()[-2000:]
    found = reported(proc.stdout)
    for item in INPUTS + [REAL]:
        if item.flake8_breaks:
            continue
        if item.flake8:
            assert {c for *_, c in found[item.filename]} == {item.flake8}, item.name
        else:
            assert found.get(item.filename, set()) == ten101(item.expected_by_flake8), item.name


@pytest.mark.slow
@pytest.mark.parametrize("item", [i for i in INPUTS if i.flake8_breaks], ids=lambda i: i.name)
def test_inputs_that_break_flake8_itself_are_not_broken_by_the_plugin(item, written):
    """pyflakes recurses over the tree (and flake8's own ast.parse has limits): those abort the run
    for such a file whatever plugins are installed. The plugin is never the one that fails."""
    proc = run("-m", "flake8", "--isolated", "--select", "TEN,E9", str(written / item.filename),
               str(written / REAL.filename))
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if "failed during execution" not in out and "Traceback" not in out:  # flake8 got through after all
        found = reported(proc.stdout)
        assert found.get(item.filename, set()) == ten101(item.expected_by_flake8)
        assert found[REAL.filename] == ten101(REAL.findings)
        return
    assert "flake8-tensorcopy" not in out and "flake8_tensorcopy" not in out, out[-2000:]
    assert item.flake8_breaks in out, out[-2000:]


def test_check_does_not_stop_at_an_unreadable_path(written):
    proc = run("-m", "flake8_tensorcopy", "check", "-q", str(written / "missing.py"), str(written / REAL.filename))
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "missing.py: error: " in err and "No such file" in err
    assert reported(proc.stdout) == {REAL.filename: ten101(REAL.findings)}


def test_internal_error_in_a_rule_is_one_line_and_spares_other_rules(monkeypatch, capsys, tmp_path):
    from flake8_tensorcopy import rules
    from flake8_tensorcopy.cli import main as cli
    from dataclasses import replace

    def explode(node, ctx):
        raise RuntimeError("boom\nsecond line")

    broken = replace(rules.BY_CODE["TEN203"], check=explode)
    monkeypatch.setitem(rules.BY_CODE, "TEN203", broken)  # check's tasks name rules by code
    path = tmp_path / "f.py"
    path.write_text(REAL.data.decode() + "w = z.clone()\n")
    status = cli.main(["check", "-q", "-j1", str(path)])
    out, err = capsys.readouterr()
    assert status == 2 and "TEN101" in out
    lines = err.splitlines()
    assert f"{path}: error: internal error: TEN203 failed at line 10: RuntimeError: boom" in lines
    assert all(line.startswith(f"{path}: error: internal error: TEN203 failed at line ") for line in lines)
