"""The review cases (fixtures/review) give what their annotations say, the same through every front end."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fixture_tools import FIXTURES, expectations
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import RULES

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

CASES = sorted((FIXTURES / "review").glob("*.py"))
DEFAULT_ON = [r for r in RULES if r.default_on]
LINE = re.compile(r"^(?P<path>.+?\.py):(?P<line>\d+):(?P<col>\d+): (?P<code>TEN\d+)", re.M)


def parsed(out: str) -> dict[str, set]:
    found: dict[str, set] = {}
    for m in LINE.finditer(out):
        found.setdefault(Path(m["path"]).name, set()).add((int(m["line"]), int(m["col"]), m["code"]))
    return found


def test_there_are_nineteen_cases():
    assert len(CASES) == 19


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_engine_whole_tree(path):
    result = analyse(path.read_text(), str(path), DEFAULT_ON)
    assert result.errors == []
    assert {(f.line, f.col + 1, f.code) for f in result.findings} == expectations(path)


def test_check_and_flake8_agree_with_the_annotations():
    want = {p.name: expectations(p) for p in CASES}
    want = {k: v for k, v in want.items() if v}
    check = subprocess.run([sys.executable, "-m", "flake8_tensorcopy", "check", "-j", "1", *map(str, CASES)],
                           capture_output=True, text=True)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "TEN", *map(str, CASES)],
                            capture_output=True, text=True)
    assert parsed(check.stdout) == want, check.stderr
    assert parsed(flake8.stdout) == want, flake8.stderr


def _fixed_module(tmp_path, capsys, name):
    """Copy a review case, run `fix --unsafe-fixes` on it, import the result."""
    import importlib.util

    from tests.support.fix_tools import run_fix

    path = tmp_path / name
    path.write_text((FIXTURES / "review" / name).read_text())
    _, out, err = run_fix(capsys, "--unsafe-fixes", path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path.read_text(), module, out + err


def test_accumulator_fix_keeps_the_later_tensor_use_working(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    text, module, _ = _fixed_module(tmp_path, capsys, "fix_accumulator_used_as_tensor.py")
    assert "epoch_loss += loss.detach()" in text
    model = torch.nn.Linear(3, 1)
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    mean = module.train_epoch(model, loader, optimizer, torch.nn.functional.mse_loss)
    assert isinstance(mean, float)


def test_no_fix_makes_a_global_local(tmp_path, capsys):
    text, _, out = _fixed_module(tmp_path, capsys, "fix_global_rebound.py")
    assert text == (FIXTURES / "review" / "fix_global_rebound.py").read_text()
    assert "TEN104" in out and "[no fix]" in out and "0 finding(s) fixed, 1 remaining" in out


def test_intended_write_back_is_neither_reported_nor_fixed(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    text, module, _ = _fixed_module(tmp_path, capsys, "fix_write_through_intended.py")
    assert text == (FIXTURES / "review" / "fix_write_through_intended.py").read_text()
    layer = torch.nn.Linear(2, 2)
    layer(torch.ones(1, 2)).sum().backward()
    module.average_grads(layer, lambda g: g * 0 + 7.0)
    assert torch.all(layer.weight.grad == 7.0)  # the write-back reached p.grad
