"""Issue 26, items 12 and 13: a message is one line of printable text in every output format, whatever the
code it quotes (written over several lines, very long, holding raw control characters) or the file name of
the neighbouring module it names (TEN204's "the call at FILE:LINE")."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.cli_tools import ROOT, run_cli
from flake8_tensorcopy.text import MAX_QUOTED, one_line, printable

ESC = "\x1b"
QUOTING = (
    "import copy\nimport torch\n\n\n"
    "def spread(model: torch.nn.Module, x):\n"
    "    return copy.deepcopy(\n        model(x)\n        + 1\n    )\n\n\n"
    "def escaped(model: torch.nn.Module, x):\n"
    f"    h = model(x)\n    return copy.deepcopy(h[len('{ESC}[2J{ESC}]0;owned{chr(7)}')])\n\n\n"
    "def long(model: torch.nn.Module, x):\n"
    "    return copy.deepcopy(" + " + ".join(f"model(x) * {i}" for i in range(12)) + ")\n"
)
CONVERT = "import torch\n\n\ndef to_tensor(values):\n    return torch.tensor(values, dtype=torch.float32)\n"
CALLER = "import torch\nfrom .convert import to_tensor\n\nto_tensor(torch.ones(3))\n"
CALLER_NAME = f"r{ESC}[31mun\nnext.py"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("messages")
    (root / "quoting.py").write_text(QUOTING)
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "convert.py").write_text(CONVERT)
    (root / "pkg" / CALLER_NAME).write_text(CALLER)
    return root


def assert_clean(message: str) -> None:
    assert message.isprintable(), repr(message)  # no line break, no escape character, no bell


def test_text_output_has_one_printable_line_per_finding(project):
    proc = run_cli("check", "-q", "quoting.py", "pkg/convert.py", cwd=project)
    lines = proc.stdout.split("\n")
    assert lines.pop() == "" and len(lines) == 4, proc.stdout
    for line in lines:
        assert_clean(line)
    neighbour, spread, escaped, long = lines
    assert spread.startswith("quoting.py:6:12: TEN201 ") and "'model(x) + 1'" in spread
    assert "h[len('\\x1b[2J\\x1b]0;owned\\x07')]" in escaped
    quoted = long.split("'")[1]
    assert len(quoted) == MAX_QUOTED and "..." in quoted and quoted.startswith("model(x) * 0 + ")
    assert neighbour.startswith("pkg/convert.py:5:12: TEN204 ") and "(the call at r\\x1b[31mun next.py:4 " in neighbour


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_every_format_carries_the_same_clean_messages(project, fmt):
    text = run_cli("check", "-q", "quoting.py", "pkg/convert.py", cwd=project).stdout.splitlines()
    proc = run_cli("check", "-q", "--format", fmt, "quoting.py", "pkg/convert.py", cwd=project)
    if fmt == "github":
        messages = [line.split("::", 2)[2].split(" ", 1)[1] for line in proc.stdout.splitlines()]
    elif fmt == "json":
        messages = [f["message"] for f in json.loads(proc.stdout)["findings"]]
    else:
        messages = [r["message"]["text"] for r in json.loads(proc.stdout)["runs"][0]["results"]]
    assert messages == [line.split(" ", 2)[2] for line in text]
    for message in messages:
        assert_clean(message)


def test_flake8_prints_one_printable_line_per_finding(project):
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "quoting.py", "pkg/convert.py"],
                          cwd=project, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    lines = proc.stdout.split("\n")
    assert lines.pop() == "" and len(lines) == 4, proc.stdout
    for line in lines:
        assert_clean(line)


def test_one_line_and_printable():
    assert one_line("f(\n    a,\n    b,\n)") == "f( a, b, )"
    assert one_line("x" * 200) == "x" * 51 + "..." + "x" * 26
    assert printable(f"a\n\tb{ESC}c\u2028d\x00\x9b") == "a b\\x1bc d\\x00\\x9b"
