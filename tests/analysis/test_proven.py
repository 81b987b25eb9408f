"""analysis/proven.py: proof that a value is a tensor, asked once per binding however often it is read."""
from flake8_tensorcopy.engine import core as engine
from flake8_tensorcopy.rules import RULES
from tests.support.scaling_cases import WorkCounter


def _work(rebindings: int) -> int:
    """A module-level name rebound from itself, each binding reading it twice, then read in a def: every
    binding may reach the def's read, so an unmemoised proof walks 2**n paths (a real notebook hung)."""
    source = "import torch\n" + "A = A + A\n" * rebindings + "def f():\n    return torch.tensor(A)\n"
    with WorkCounter() as counter:
        result = engine.analyse(source, "t.py", RULES)
    assert result.errors == [] and result.findings == []  # nothing proves A a tensor
    return counter.steps


def test_a_name_rebound_from_itself_costs_linear_work():
    _work(1)  # the analysis's modules load on first use: not work of the sizes compared
    assert _work(160) <= _work(40) * 4 * 1.5
