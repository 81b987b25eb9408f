"""Where two rules could speak about one statement, exactly one does."""
from tests.support.rule_tools import LOOP, findings
from flake8_tensorcopy.engine.core import analyse

BARE_DEEPCOPY = """\
import copy
import torch

def f():
    t = torch.zeros(3, requires_grad=True) * 2
    copy.deepcopy(t)
    kept = copy.deepcopy(t)
    return kept
"""


def test_bare_deepcopy_is_a_discarded_copy_not_a_deepcopy_finding():
    found = [(f.line, f.code) for f in analyse(BARE_DEEPCOPY).findings]
    assert found == [(6, "TEN104"), (7, "TEN201")]
    bare = analyse(BARE_DEEPCOPY).findings[0]
    assert bare.fix is None  # which name should receive the copy is unknown


def test_a_kept_clone_is_reported_once_by_ten203():
    found = findings(LOOP.format(line="history.append(loss.clone())"))
    assert [f.code for f in found] == ["TEN203"]
