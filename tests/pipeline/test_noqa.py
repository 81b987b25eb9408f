"""`# noqa` as flake8 reads it: every form in a table is run through the real flake8 and through the pipeline
every other front end uses, and the two must suppress the same findings (issues 25 and 26)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import flake8.defaults
import pytest

from tests.support.cli_tools import ROOT, reported
from flake8_tensorcopy.pipeline import noqa
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.rules import RULES

HEAD = "import copy\nimport torch\n\n\ndef f():\n    w = torch.nn.Parameter(torch.ones(3))\n    hidden = w * 2\n"
INLINE = ["", "# noqa", "#noqa", "# NOQA", "# NoQA:TEN201", "# noqa: TEN201", "# noqa:TEN201", "# noqa: TEN101",
          "# noqa: E501,TEN201", "# noqa: E501, TEN201", "# noqa:E501 TEN201", "# noqa: E501", "# noqa:ten201",
          "# noqa : TEN201", "# noqa:  TEN201", "# noqa: TEN2", "# noqa: T", "# noqa:TEN201,,", "# noqa:TEN2011",
          "# flake8: noqa", "# type: ignore  # noqa: TEN201", "# noqa: E501 # noqa: TEN201"]
BODIES = {f"inline_{i}": HEAD + f"    return copy.deepcopy(hidden)  {form}\n" for i, form in enumerate(INLINE)}
BODIES.update({
    "string_tail": HEAD + '    return copy.deepcopy(hidden), """\n    text\n    """  # noqa: TEN201\n',
    "string_inside": HEAD + '    return copy.deepcopy(hidden), """\n    # noqa\n    """\n',
    "backslash": HEAD + "    return copy.deepcopy(hidden), \\\n        1  # noqa: TEN201\n",
    "bracket_next_line": HEAD + "    return (copy.deepcopy(hidden),\n            1)  # noqa: TEN201\n",
    "line_above": HEAD + "    # noqa: TEN201\n    return copy.deepcopy(hidden)\n",
    "file_bare": "# flake8: noqa\n" + HEAD + "    return copy.deepcopy(hidden)\n",
    "file_codes": "# flake8: noqa: E501\n" + HEAD + "    return copy.deepcopy(hidden)\n",
    "file_equals": "  # FLAKE8= NOQA\n" + HEAD + "    return copy.deepcopy(hidden)\n",
    "file_after_code": "x = 1  # flake8: noqa\n" + HEAD + "    return copy.deepcopy(hidden)\n",
})


@pytest.fixture(scope="module")
def flake8_says(tmp_path_factory):
    """{name: [(line, code)]} as the real flake8 reports each body."""
    root = tmp_path_factory.mktemp("noqa")
    for name, body in BODIES.items():
        (root / f"{name}.py").write_text(body)
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "TEN", "."], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(ROOT)})
    said = {name: [] for name in BODIES}
    for path, pos, code in reported(proc.stdout):
        said[os.path.basename(path)[:-3]].append((int(pos.split(":")[0]), code))
    return said


@pytest.mark.parametrize("name", BODIES)
def test_the_pipeline_suppresses_what_flake8_suppresses(flake8_says, name):
    found = [(f.line, f.code) for f in lint(Document(f"{name}.py", BODIES[name]), RULES).findings]
    assert found == flake8_says[name]


def test_the_table_holds_both_outcomes(flake8_says):
    """The comparison means something: flake8 suppresses some bodies and reports others."""
    reported_names = {name for name, found in flake8_says.items() if found}
    assert {"inline_0", "inline_2", "inline_7", "inline_12", "bracket_next_line", "file_after_code"} <= reported_names
    assert {"inline_1", "inline_8", "string_tail", "backslash", "file_codes"}.isdisjoint(reported_names)


def test_the_patterns_are_flake8s_own_or_an_identical_copy():
    assert noqa.NOQA_INLINE is flake8.defaults.NOQA_INLINE_REGEXP and noqa.NOQA_FILE is flake8.defaults.NOQA_FILE
    source = (ROOT / "flake8_tensorcopy" / "pipeline" / "noqa.py").read_text()
    inline, whole = re.findall(r're\.compile\((r".*?"), (re\.\w+)\)', source)
    assert (eval(inline[0]), eval(inline[1])) == (flake8.defaults.NOQA_INLINE_REGEXP.pattern, re.IGNORECASE)
    assert eval(whole[0]) == flake8.defaults.NOQA_FILE.pattern and flake8.defaults.NOQA_FILE.flags & re.I


def test_a_program_that_does_not_tokenize_reads_each_line_alone():
    comments = noqa.Noqa('x = """\n# noqa\n', ['x = """', "# noqa"])
    assert comments.span(1) == range(1, 2) and not comments.suppressed(1, "TEN201") and comments.suppressed(2, "X1")
