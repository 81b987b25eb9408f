"""A snippet for the unused-noqa tests (TEN905 and the pipeline that runs it): a function whose line 8 holds
a deepcopy TEN201 reports, or a clean copy, and the TEN905 findings of a run."""
from __future__ import annotations

from flake8_tensorcopy.engine.core import select_rules
from flake8_tensorcopy.pipeline.lint import Document, lint

HEAD = "import copy\nimport torch\n\n\ndef f():\n    w = torch.nn.Parameter(torch.ones(3))\n    hidden = w * 2\n"
DEEPCOPY = "    return copy.deepcopy(hidden)"  # TEN201 on line 8
CLEAN = "    return hidden.detach().clone()"  # nothing on line 8
WITH_TEN905 = select_rules(extend_select=["TEN905"])


def unused(source: str, rules=WITH_TEN905, noqa: bool = True) -> list[tuple[int, int, str]]:
    """(line, 1-based column, message) of each TEN905 finding."""
    return [(f.line, f.col + 1, f.message) for f in lint(Document("t.py", source), rules, noqa=noqa).findings
            if f.code == "TEN905"]
