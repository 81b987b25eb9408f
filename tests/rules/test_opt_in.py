"""The TEN9xx codes are opt-in: off in a plain flake8 run, on with --extend-select TEN9 (or their code)."""
from __future__ import annotations

import subprocess
import sys

from tests.support.fixture_tools import FIXTURES, expectations
from flake8_tensorcopy.engine.core import select_rules
from flake8_tensorcopy.rules import RULES

OPT_IN = [r.code for r in RULES if r.code.startswith("TEN9")]
ALL = [r.code for r in RULES]
DEFAULT = [r.code for r in RULES if r.default_on]


def flake8(*args):
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--format", "%(code)s:%(row)d", *args]
    return subprocess.run(cmd, capture_output=True, text=True)


def reported(proc) -> set:
    return {tuple(line.split(":")) for line in proc.stdout.splitlines()}


def test_opt_in_codes_exist_and_are_off_by_default():
    assert {"TEN901", "TEN902", "TEN903"} <= set(OPT_IN)
    assert not any(r.default_on for r in RULES if r.code in OPT_IN)
    assert not {r.code for r in select_rules()} & set(OPT_IN)
    assert {r.code for r in select_rules(extend_select=["TEN9"])} >= set(OPT_IN)


def test_flake8_keeps_opt_in_codes_off_and_extend_select_turns_them_on():
    bads = [FIXTURES / code / "bad.py" for code in OPT_IN]
    plain = reported(flake8(*map(str, bads)))
    assert not any(code.startswith("TEN9") for code, _ in plain)
    enabled = reported(flake8("--extend-select", "TEN9", *map(str, bads)))
    for code, path in zip(OPT_IN, bads):
        want = {(c, str(line)) for line, _, c in expectations(path) if c == code}
        assert want and want <= enabled, code


def test_the_plugin_runs_only_the_rules_flake8_reports(monkeypatch):  # opt-in rules cost nothing until selected
    from flake8.main.application import Application

    from flake8_tensorcopy.adapters.flake8_plugin import Plugin

    # parse_options sets these on the class: restored after
    for name in ("rules", "tensor_functions", "notice", "notice_file", "per_file"):
        monkeypatch.setattr(Plugin, name, getattr(Plugin, name))
    for argv, want in (([], DEFAULT), (["--extend-select", "TEN9"], ALL), (["--select", "TEN903"], ["TEN903"]),
                       (["--extend-ignore", "TEN1"], [c for c in DEFAULT if not c.startswith("TEN1")]),
                       (["--select", "E,W"], [])):
        Application().initialize(["--isolated", *argv])
        assert [r.code for r in Plugin.rules] == want, argv
