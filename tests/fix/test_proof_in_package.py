"""The harness's proof check asks the analysis as the engine does: a parameter proven a tensor by the
package's callers is proven for the check too (the check once built its facts without the package)."""
from __future__ import annotations

from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.fix.proof import unproven
from flake8_tensorcopy.rules import RULES

INITS = "import torch\n\n\ndef orth(tensor):\n    torch.nn.init.orthogonal_(tensor.data)\n"
LAYER = """import torch
from .inits import orth


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(3, 3))
        orth(self.weight)
"""


def _fixed(tmp_path, layer: str):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "inits.py").write_text(INITS)
    (pkg / "layer.py").write_text(layer)
    path = str(pkg / "inits.py")
    return path, fix_source(INITS, path, RULES, unsafe=True)


def test_a_fix_proven_through_the_callers_is_proven_for_the_check(tmp_path):
    path, outcome = _fixed(tmp_path, LAYER)
    applied = [(text, f) for text, fs in outcome.passes for f in fs]
    assert [f.code for _, f in applied] == ["TEN903"]
    assert [unproven(text, path, f) for text, f in applied] == [None]


def test_without_a_caller_that_passes_a_tensor_there_is_no_fix(tmp_path):
    _, outcome = _fixed(tmp_path, LAYER.replace("orth(self.weight)", "orth(object())"))
    assert not outcome.applied
