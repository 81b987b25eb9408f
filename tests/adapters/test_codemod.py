"""The LibCST codemod: run by libcst.tool as users run it, it makes the fixes `fix --unsafe-fixes` makes."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.support.fix_tools import BAD, FIXED

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_libcst_codemod_class(tmp_path):
    f = tmp_path / "a.py"
    f.write_text(BAD)
    cmd = [sys.executable, "-m", "libcst.tool", "codemod", "-x", "flake8_tensorcopy.adapters.codemod.TensorCopyCodemod",
           "--no-format", "--unsafe-fixes", str(f)]
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f.read_text() == FIXED
