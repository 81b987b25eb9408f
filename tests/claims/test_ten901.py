"""TEN901 claim: a graph-attached tensor stored on a module (or hook owner) in forward makes
copy.deepcopy raise after a forward; the stored .detach() copies fine."""
import pytest

from fixture_tools import cases, load

E_DEEPCOPY = (r"Only Tensors created explicitly by the user \(graph leaves\) support the deepcopy "
              r"protocol at the moment")


def assert_hazard(bad: dict) -> None:
    for name, case in bad.items():
        with pytest.raises(RuntimeError, match=E_DEEPCOPY):
            case()


def assert_fixed(fixed: dict) -> None:
    for name, case in fixed.items():
        copied = case()
        stored = [v for v in vars(copied).values() if hasattr(v, "grad_fn")]
        assert stored, name  # the copy still holds the stored tensors ...
        assert all(v.grad_fn is None for v in stored), name  # ... without a graph


def test_bad_cases_show_the_hazard():
    assert_hazard(cases(load("TEN901", "bad")))


def test_fixed_cases_are_safe():
    bad, fixed = cases(load("TEN901", "bad")), cases(load("TEN901", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)
