"""The one per-file pipeline: analyse, drop what `# noqa` suppresses, place notebook findings in cells."""
import json

import pytest

from flake8_tensorcopy.engine.core import AnalysisError
from flake8_tensorcopy.pipeline.lint import Document, lint
from flake8_tensorcopy.rules import BY_CODE, RULES
from flake8_tensorcopy.sources.document import read_document

BUG = "import copy\nimport torch\nx = torch.randn(3, requires_grad=True) * 2\ny = copy.deepcopy(x)\n"


def test_findings_and_items_agree_and_noqa_drops_a_finding():
    found = lint(Document("t.py", BUG), RULES)
    assert [(f.line, f.code) for f in found.findings] == [(4, "TEN201")]
    (item,) = found.items
    assert (item.path, item.line, item.column, item.code) == ("t.py", 4, 5, "TEN201")
    assert item.source_line == "y = copy.deepcopy(x)"
    quiet = lint(Document("t.py", BUG.replace("(x)\n", "(x)  # noqa: TEN201\n")), RULES)
    assert quiet.findings == [] and quiet.items == []


@pytest.mark.parametrize("comment, kept", [
    ("# noqa: E501, TEN201", []), ("# noqa:E501,TEN2", []), ("# noqa: TEN101", ["TEN201", "TEN905"]),
    ("# noqa: E501, W291", ["TEN201"])])
def test_noqa_codes_of_several_letters_are_read_as_flake8_reads_them(comment, kept):
    source = BUG.replace("(x)\n", f"(x)  {comment}\n")
    assert [f.code for f in lint(Document("t.py", source), RULES).findings] == kept


def test_noqa_false_keeps_suppressed_findings_for_flake8():
    source = BUG.replace("(x)\n", "(x)  # noqa: TEN201\n")
    assert [f.code for f in lint(Document("t.py", source), RULES, noqa=False).findings] == ["TEN201"]


def test_a_notebook_finding_is_placed_in_its_cell_and_its_noqa_read_there():
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# title"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["%matplotlib inline\n", "import copy\n", "import torch\n"]},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": ["x = torch.randn(3, requires_grad=True) * 2\n", "y = copy.deepcopy(x)\n"]}]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    (item,) = lint(read_document(text, "nb.ipynb"), RULES).items
    assert (item.cell, item.line, item.column, item.source_line) == (3, 2, 5, "y = copy.deepcopy(x)")
    cells[2]["source"][1] = "y = copy.deepcopy(x)  # noqa\n"
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert lint(read_document(text, "nb.ipynb"), RULES).items == []


def test_only_the_rules_given_report():
    assert lint(Document("t.py", BUG), [BY_CODE["TEN101"]]).findings == []


def test_a_file_that_cannot_be_analysed_raises_one_line():
    with pytest.raises(AnalysisError) as err:
        lint(Document("t.py", "import copy\ny = copy.deepcopy(\n"), RULES)
    assert "\n" not in str(err.value)
