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


DEFAULT_PATH = """
import torch


def apply(x, scale=0.01):
    return x + torch.randn_like(x) * torch.tensor(scale)


def run(x, scale=None):
    if scale is None:
        scale = {made}
    return apply(x, scale)
"""


def test_a_caller_passing_a_tensor_on_one_path_only_proves_the_parameter(tmp_path):
    """proven.passed_tensor: the default path gives `apply` a tensor, whatever callers of `run` pass."""
    from tests.support.rule_tools import codes, findings
    assert codes(DEFAULT_PATH.format(made="torch.mean(torch.abs(x), 0)")) == [(6, "TEN204")]
    assert "(the call at line 12 passes one)" in findings(DEFAULT_PATH.format(made="torch.ones(3)"))[0].message
    assert codes(DEFAULT_PATH.format(made="0.5")) == []  # a number on that path, unknown on the other


CONSTRUCTED = """
import torch


class Jitter:
    def __init__(self, scale=0.01):
        self.scale = scale

    def apply(self, x):
        return x + torch.randn_like(x) * torch.tensor(self.scale)


def run(x):
    return Jitter({scale}).apply(x)
"""


def test_an_attribute_set_from_what_a_call_of_the_class_passes():
    """proven.constructor_passed: `self.scale = scale` in `__init__`, the class called with a tensor."""
    from tests.support.rule_tools import codes
    assert codes(CONSTRUCTED.format(scale="torch.mean(torch.abs(x), 0)")) == [(10, "TEN204")]
    assert codes(CONSTRUCTED.format(scale="0.5")) == []
    assert codes(CONSTRUCTED.format(scale="")) == []  # the default: a float


def test_a_name_that_is_a_tensor_on_one_path_of_its_own_assignments_proves_no_parameter():
    """Only a `None` default replaced by a tensor counts: `x = x0` then `x = x - step` in a loop passes the
    caller's `x0` on the first pass, whatever it is (a flag of the callee may say what arrives)."""
    from tests.support.rule_tools import codes
    assert codes('''
import torch


def grad(u, ret_np=False):
    if ret_np:
        u = torch.tensor(u)
    return u * 2


def solve(x0, n):
    x = x0
    for _ in range(n):
        g = grad(u=x)
        x = x - g * torch.ones(3)
    return x
''') == []


MODULE_OUTPUT = """
import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.proj(x)


class Passes(torch.nn.Module):
    def forward(self, x):
        return x


def convert(net, x):
    return torch.tensor(net(x))


def run(x):
    return convert({module}, x)
"""


def test_what_a_module_gives_is_proven_by_torchs_declaration_of_its_forward():
    """proven.module: torch declares `nn.Linear.forward -> Tensor` (not nn.LSTM's tuple, not Sequential's
    unannotated forward); a package module whose forward returns such an output; a parameter some caller
    passes one. A forward that returns its input proves nothing."""
    from tests.support.rule_tools import codes
    assert codes(MODULE_OUTPUT.format(module="torch.nn.Linear(4, 2)")) == [(20, "TEN204")]
    assert codes(MODULE_OUTPUT.format(module="Encoder()")) == [(20, "TEN204")]
    assert codes(MODULE_OUTPUT.format(module="torch.nn.LSTM(4, 2)")) == []
    assert codes(MODULE_OUTPUT.format(module="torch.nn.Sequential(torch.nn.Linear(4, 2))")) == []
    assert codes(MODULE_OUTPUT.format(module="torch.nn.MaxPool1d(2, return_indices=True)")) == []
    assert codes(MODULE_OUTPUT.format(module="Passes()")) == []


def test_a_module_made_by_a_factory_of_another_module_gives_a_tensor(tmp_path):
    from tests.support.project_tools import write
    from flake8_tensorcopy.rules import RULES as ALL
    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": """
        import torch

        def build(kind):
            if kind == "wide":
                return torch.nn.Linear(4, 8)
            return torch.nn.Conv1d(4, 4, 1)
    """, "pkg/run.py": """
        import torch
        from .models import build

        def centroids(encoder, batches, keys):
            sums = {}
            for x, key in batches:
                sums[key] = encoder(x)
            return [torch.tensor(sums[k]) for k in keys]

        centroids(build("wide"), [], [])
    """})
    path = tmp_path / "pkg" / "run.py"
    result = engine.analyse(path.read_text(), str(path), [r for r in ALL if r.default_on])
    assert [(f.line, f.code) for f in result.findings] == [(9, "TEN204")]
