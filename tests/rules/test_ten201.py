"""TEN201 (deepcopy-tensor): `copy.deepcopy` of a tensor deepcopy mishandles, and its fix. Which modules
keep a tensor with its graph: tests/analysis/test_module_state.py."""
from __future__ import annotations

from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE


def test_a_deepcopy_of_a_detached_tensor_becomes_one_clone():
    source = ("import copy\n\nimport torch\n\n\ndef f(t: torch.Tensor):\n    t = t[1:]\n"
              "    return copy.deepcopy(t.detach()), copy\n")
    outcome = fix_source(source, "t.py", [BY_CODE["TEN201"]], unsafe=True)
    assert "return t.detach().clone(), copy" in outcome.fixed

