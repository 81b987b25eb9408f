"""TEN102 claim: an in-place write through `.data` gives a silently wrong gradient (no error)."""
import torch

from fixture_tools import cases, load
from flake8_tensorcopy.engine import analyse
from flake8_tensorcopy.rules import BY_CODE

# The gradient each case would have without the hidden write, from the inputs the cases use.
TRUE_GRAD = {
    "case_alias_write": lambda x: torch.sigmoid(x) * (1 - torch.sigmoid(x)),
    "case_alias_subscript": torch.exp,
    "case_alias_augassign": lambda x: 1 - torch.tanh(x) ** 2,
    "case_noise_overwrites_source": torch.exp,
}


def _run(case):
    """Runs a case and returns (x, the true gradient for x's values); any error fails the test."""
    x = case()
    true = TRUE_GRAD[case.__name__](x.detach())
    return x, true


def assert_hazard(bad: dict) -> None:
    """Every bad case runs without error, and x.grad differs from the true gradient."""
    assert set(bad) <= set(TRUE_GRAD)
    for case in bad.values():
        x, true = _run(case)
        assert x.grad is not None and not torch.allclose(x.grad, true), case.__name__


def assert_fixed(fixed: dict) -> None:
    """The same cases, fixed: x.grad equals the true gradient."""
    for case in fixed.values():
        x, true = _run(case)
        assert x.grad is not None and torch.allclose(x.grad, true), case.__name__


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN102", "bad")))


def test_fixed_cases_are_safe():
    bad, fixed = cases(load("TEN102", "bad")), cases(load("TEN102", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)


def test_data_write_does_not_bump_the_version_counter():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    y = x.sigmoid()
    y.data.mul_(0)
    assert y._version == 0
    y.detach().mul_(1)
    assert y._version == 1


DIRECT = '''
import torch

def direct_write():
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    y = x.sigmoid()
    y.data[0] = 1.0
    y.sum().backward()
    return x
'''


def test_direct_write_is_reported_without_a_fix_and_gives_a_wrong_gradient():
    found = analyse(DIRECT, "direct.py", [BY_CODE["TEN102"]]).findings
    assert [(f.line, f.col, f.code, f.fix) for f in found] == [(7, 4, "TEN102", None)]
    namespace = {}
    exec(compile(DIRECT, "direct.py", "exec"), namespace)
    x = namespace["direct_write"]()
    s = torch.sigmoid(x.detach())
    assert not torch.allclose(x.grad, s * (1 - s))
