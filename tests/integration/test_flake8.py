"""End to end through the real flake8, in a subprocess: files, stdin, -j2, noqa, broken files."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fixture_tools import FIXTURES, expectations
from flake8_tensorcopy.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow  # real flake8 in subprocesses


def flake8(*args, stdin=None, cwd=None):
    cmd = [sys.executable, "-m", "flake8", "--select", "TEN", "--isolated", *args]
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=cwd)
    return proc


def parse(output: str) -> set[tuple[str, int, int, str]]:
    found = set()
    for line in output.splitlines():
        path, lineno, col, rest = line.split(":", 3)
        found.add((Path(path).name if path != "stdin" else path, int(lineno), int(col), rest.split()[0]))
    return found


def test_plugin_is_registered():
    proc = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True)
    assert "flake8-tensorcopy" in proc.stdout


def test_every_bad_fixture_reports_exactly_its_annotations():
    for bad in sorted(FIXTURES.glob("TEN*/bad.py")):
        code = bad.parent.name
        selected = {r.code for r in RULES if r.default_on} | {code}
        proc = flake8("--select", ",".join(sorted(selected)), str(bad))
        got = {(line, col, c) for _, line, col, c in parse(proc.stdout)}
        want = {e for e in expectations(bad) if e[2] in selected}
        assert got == want, (bad, proc.stdout, proc.stderr)
        assert proc.returncode == 1


def test_good_and_fixed_fixtures_are_clean():
    # `--select TEN` would also turn on the opt-in TEN9xx codes (an explicit select overrides flake8's
    # default ignore list), so each fixture runs with the default-on codes plus its own.
    default_on = ",".join(r.code for r in RULES if r.default_on)
    folders = sorted(FIXTURES.glob("TEN*"))
    runs = [("", [f for f in folders if not f.name.startswith("TEN9")])]
    runs += [("," + f.name, [f]) for f in folders if f.name.startswith("TEN9")]
    for extra, group in runs:
        paths = [str(f / v) for f in group for v in ("good.py", "fixed.py")]
        proc = flake8("--select", default_on + extra, *paths)
        assert proc.stdout == "" and proc.returncode == 0, proc.stdout + proc.stderr


def test_stdin_with_display_name():
    bad = FIXTURES / "TEN101" / "bad.py"
    proc = flake8("--stdin-display-name", "buffer.py", "-", stdin=bad.read_text())
    found = parse(proc.stdout)
    assert {(line, col, c) for _, line, col, c in found} == expectations(bad)
    assert {name for name, *_ in found} == {"buffer.py"}


def test_parallel_run_matches_serial_run():
    bads = [str(p) for p in sorted(FIXTURES.glob("TEN*/bad.py"))]
    serial = flake8("-j1", *bads).stdout
    parallel = flake8("-j2", *bads).stdout
    assert sorted(serial.splitlines()) == sorted(parallel.splitlines()) and serial


def test_noqa_suppresses_by_code(tmp_path):
    src = (FIXTURES / "TEN101" / "bad.py").read_text()
    src = src.replace("z[z < 2.0] = 0.0  # expect: TEN101:5", "z[z < 2.0] = 0.0  # noqa: TEN101")
    src = src.replace("shifted += 1  # expect: TEN101:5", "shifted += 1  # noqa: E501")
    path = tmp_path / "noqa.py"
    path.write_text(src)
    lines = {line for _, line, _, _ in parse(flake8(str(path)).stdout)}
    assert 9 not in lines  # suppressed by its code
    assert 18 in lines  # another code's noqa does not suppress it


def test_syntax_error_file_does_not_hide_other_files(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    x = y.detach()\n")
    good = tmp_path / "real.py"
    good.write_text((FIXTURES / "TEN101" / "bad.py").read_text())
    proc = flake8("--select", "TEN,E999", str(broken), str(good))
    found = parse(proc.stdout)
    assert any(name == "broken.py" and code == "E999" for name, _, _, code in found)
    assert {(line, col, c) for name, line, col, c in found if name == "real.py"} == expectations(
        FIXTURES / "TEN101" / "bad.py")


def test_example_is_reported():
    proc = flake8(str(ROOT / "examples" / "train.py"))
    codes = sorted(code for *_, code in parse(proc.stdout))
    assert codes == ["TEN101", "TEN201", "TEN203"]
