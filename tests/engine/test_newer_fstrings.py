"""F-strings of a newer Python (PEP 701) in a file this Python cannot parse: the offending literals are
blanked in place, the file is analysed, and its findings come without a fix."""
from __future__ import annotations

import sys

import pytest

from flake8_tensorcopy.engine.core import AnalysisError, analyse, parse, select_rules
from flake8_tensorcopy.engine.newer_fstrings import masked

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses PEP 701 f-strings itself")

NESTED = 'print(f"{log["name"]}: {f"{total:.3f}"}")\n'


@pytest.mark.parametrize("line", [
    NESTED,
    "x = f'{d['k']!r:>{width}}'\n",  # the same quote nested, a conversion and a nested field in the spec
    'x = f"""{\n    d["k"]  # a comment in a field\n}"""\n',  # a multi-line field with a comment
])
def test_a_newer_fstring_is_blanked_in_place(line):
    with pytest.raises(AnalysisError):
        parse(line, "t.py")
    blanked = masked(line)
    assert blanked is not None and len(blanked) == len(line) and blanked.count("\n") == line.count("\n")
    parse(blanked, "t.py")  # now it parses


def test_only_the_literals_this_python_rejects_are_blanked():
    old = "a = f'{x:>{w}}' + 'it''s' + f\"{{}}\"  # f\"{'no'\n"
    assert masked(old + NESTED) == old + 'print(f"' + " " * (len(NESTED) - len('print(f"') - 3) + '")\n'
    assert masked(old) is None  # nothing this Python rejects


@pytest.mark.parametrize("text", [
    'x = f"{d["k"]\n',  # never closed
    'x = f"{d["k"]\n}"\n',  # a single-quoted f-string whose field spans lines cannot be blanked in place
])
def test_what_cannot_be_blanked_in_place_is_left_to_the_parse_error(text):
    assert masked(text) is None


TRAIN = """import torch


def scores(x, log):
    h = torch.exp(x)
    print(f"{log["name"]}: {h.sum()}")
    return torch.tensor(h)
"""


def test_a_file_with_a_newer_fstring_is_analysed_and_its_findings_have_no_fix():
    result = analyse(TRAIN, "t.py", select_rules())
    found = {(f.line, f.code) for f in result.findings}
    assert (7, "TEN204") in found  # a finding that has a safe fix in a file this Python parses
    assert all(f.fix is None for f in result.findings)
    parseable = analyse(TRAIN.replace('{log["name"]}', "{log['name']}"), "t.py", select_rules())
    assert {(f.line, f.code) for f in parseable.findings} == found
    assert any(f.fix is not None for f in parseable.findings)


def test_a_notebook_cell_with_a_newer_fstring_is_analysed_with_the_others():
    """A cell that is Python but for a newer f-string is no cell error: the notebook's program is analysed."""
    from tests.support.rule_tools import notebook_findings

    nb, found = notebook_findings("TEN204", "import torch\nh = torch.exp(torch.randn(3))",
                                  'print(f"{dict(a=1)["a"]}")\nt = torch.tensor(h)')
    assert nb.errors == [] and [f.code for f in found] == ["TEN204"] and found[0].fix is None
