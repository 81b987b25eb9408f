"""The editor path: python-lsp-server runs flake8 over stdin, and the TEN findings reach the editor.

pylsp is started as a subprocess speaking LSP over stdio, configured like an editor would (flake8 plugin
on, its other linters off), and sent an unsaved buffer with a bug; the test reads the diagnostics it
publishes. flake8 runs from this interpreter's environment with this checkout first on the import path.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from tests.support.fixture_tools import FIXTURES, expectations
from tests.support.lsp_client import LspClient

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds for any one reply; generous for a loaded machine, and the test can never hang


def flake8_executable() -> str:
    """The flake8 console script installed next to this interpreter (the environment with the plugin)."""
    bindir = Path(sys.executable).parent
    found = shutil.which("flake8", path=str(bindir))
    assert found, f"flake8 is not installed next to {sys.executable}"
    return found


def editor_settings() -> dict:
    """What an editor sends in workspace/didChangeConfiguration: flake8 on, pylsp's other linters off."""
    off = ("pycodestyle", "pyflakes", "mccabe", "pydocstyle", "pylint", "autopep8", "yapf")
    return {"pylsp": {
        "configurationSources": ["flake8"],
        "plugins": {"flake8": {"enabled": True, "executable": flake8_executable()},
                    **{name: {"enabled": False} for name in off}},
    }}


@pytest.fixture
def pylsp(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    with open(tmp_path / "pylsp.log", "wb") as log:
        client = LspClient([sys.executable, "-m", "pylsp"], cwd=str(tmp_path), env=env, stderr=log)
        try:
            yield client
        finally:
            client.close()


def open_buffer(pylsp: LspClient, workspace: Path, text: str) -> str:
    """Initialize the server for `workspace` like an editor and open an unsaved buffer; its URI."""
    workspace.mkdir()
    uri = (workspace / "train.py").as_uri()  # never written to disk
    pylsp.request("initialize", {"processId": os.getpid(), "rootUri": workspace.as_uri(),
                                 "capabilities": {}}, TIMEOUT)
    pylsp.notify("initialized", {})
    pylsp.notify("workspace/didChangeConfiguration", {"settings": editor_settings()})
    pylsp.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}})
    return uri


def test_pylsp_publishes_ten_diagnostics_at_the_finding(tmp_path, pylsp):
    bad = FIXTURES / "TEN101" / "bad.py"
    uri = open_buffer(pylsp, tmp_path / "project", bad.read_text())

    published = pylsp.wait_for(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        and any(d.get("code", "").startswith("TEN") for d in m["params"]["diagnostics"]), TIMEOUT)

    diagnostics = [d for d in published["params"]["diagnostics"] if d["source"] == "flake8"]
    ten = [d for d in diagnostics if d["code"].startswith("TEN")]
    assert all(d["message"].startswith(d["code"] + " ") for d in ten)
    starts = {(d["range"]["start"]["line"], d["range"]["start"]["character"], d["code"]) for d in ten}
    # LSP positions are 0-based; flake8 (and the fixture annotations) count lines and columns from 1
    assert starts == {(line - 1, col - 1, code) for line, col, code in expectations(bad)}
    first = min(ten, key=lambda d: d["range"]["start"]["line"])
    assert first["range"]["start"] == {"line": 8, "character": 4}  # `z[z < 2.0] = 0.0` in case one
    assert "z" in first["message"] and "y" in first["message"]


def test_diagnostic_goes_away_when_the_buffer_is_fixed(tmp_path, pylsp):
    """A buffer with one finding, then edited into the fixed version as the user types the fix."""
    source = ("import torch\n\nx = torch.ones(3, requires_grad=True)\ny = x.exp()\n"
              "z = y.detach()\nz += 1\ny.sum().backward()\n")
    uri = open_buffer(pylsp, tmp_path / "project", source)
    pylsp.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                   and [(d["code"], d["range"]["start"]) for d in m["params"]["diagnostics"]]
                   == [("TEN101", {"line": 5, "character": 0})], TIMEOUT)

    fixed = source.replace("y.detach()", "y.detach().clone()")
    pylsp.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                            "contentChanges": [{"text": fixed}]})
    pylsp.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                   and m["params"].get("version") == 2 and m["params"]["diagnostics"] == [], TIMEOUT)
