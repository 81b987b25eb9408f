"""Issue 26, item 11: the line ends of a file (LF, CRLF, lone CR, a mix) never change its findings, through
`check` and through the plugin. The engine reads line ends as Python does, once, at its entrance."""
from __future__ import annotations

import ast

import pytest

from tests.support.cli_tools import run_cli
from tests.support.fixture_tools import FIXTURES
from tests.support.line_ends import STYLES, with_line_ends
from flake8_tensorcopy.adapters.flake8_plugin import Plugin
from flake8_tensorcopy.rules import RULES

FILES = sorted(p for p in FIXTURES.glob("TEN*/*.py") if p.stem in ("bad", "good", "fixed"))


def name_of(path) -> str:
    return f"{path.parent.name}_{path.stem}.py"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("line_ends")
    for style in STYLES:
        (root / style).mkdir()
        for path in FILES:
            text = path.read_text(encoding="utf-8")
            assert "\r" not in text
            (root / style / name_of(path)).write_bytes(with_line_ends(text, style).encode("utf-8"))
    return root


def test_with_line_ends_keeps_every_line():
    text = "a\n\nb\nc\n\n\nd"
    for style in STYLES:
        converted = with_line_ends(text, style)
        assert converted.replace("\r\n", "\n").replace("\r", "\n") == text
        assert compile(converted, "x", "exec", ast.PyCF_ONLY_AST) is not None


def test_check_finds_the_same_whatever_the_line_ends(folders):
    proc = run_cli("check", "-q", "-j1", "--select", "TEN", *STYLES, cwd=folders)
    assert proc.returncode == 1 and "error" not in proc.stderr, proc.stderr
    by_style: dict[str, set] = {style: set() for style in STYLES}
    for line in proc.stdout.splitlines():
        style, _, rest = line.partition("/")
        by_style[style].add(rest)
    assert by_style["lf"]
    for style in STYLES[1:]:
        assert by_style[style] == by_style["lf"], style


@pytest.mark.parametrize("path", FILES, ids=name_of)
def test_the_plugin_finds_the_same_whatever_the_line_ends(path):
    """As a host that hands the plugin the file's own lines would (flake8 itself reads them as LF)."""
    found = {}
    for style in STYLES:
        source = with_line_ends(path.read_text(encoding="utf-8"), style)
        plugin = Plugin(ast.parse(source), source.splitlines(keepends=True), name_of(path))
        plugin.rules = RULES
        found[style] = [(line, col, text) for line, col, text, _ in plugin.run()]
    for style in STYLES[1:]:
        assert found[style] == found["lf"], style
