"""TEN104 claim: a copy / conversion whose result is discarded leaves its source unchanged."""
import copy

import torch

from fixture_tools import cases, load
from flake8_tensorcopy.engine import analyse
from flake8_tensorcopy.rules import BY_CODE

# What the statement was meant to achieve, checked on the tensor the name holds afterwards.
INTENDED = {
    "case_to_dtype": lambda t: t.dtype == torch.float64,
    "case_double": lambda t: t.dtype == torch.float64,
    "case_float_of_ints": lambda t: t.dtype == torch.float32,
    "case_chain": lambda t: t.dtype == torch.float64 and t.is_contiguous(),
    "case_detach": lambda t: not t.requires_grad and t.grad_fn is None,
    "case_detach_clone": lambda t: not t.requires_grad and t.grad_fn is None,
    "case_clone": lambda t: True,  # a copy: only the new object is asked for
    "case_attribute_detach": lambda t: not t.requires_grad and t.grad_fn is None,
}


def _snapshot(t):
    return t.dtype, t.requires_grad, t.grad_fn, t.is_contiguous(), t.untyped_storage().data_ptr()


def assert_hazard(bad: dict) -> None:
    """After each statement the name still holds the same, unchanged object: nothing happened."""
    assert set(bad) <= set(INTENDED)
    for name, case in bad.items():
        before, after = case()
        assert after is before and _snapshot(after) == _snapshot(before), name
        if name != "case_clone":
            assert not INTENDED[name](after), name


def assert_fixed(fixed: dict) -> None:
    """The same cases, fixed: the name holds the converted tensor, a new object."""
    for name, case in fixed.items():
        before, after = case()
        assert after is not before and INTENDED[name](after), name


def test_bad_cases_leave_the_source_unchanged():
    assert_hazard(cases(load("TEN104", "bad")))


def test_fixed_cases_hold_the_converted_tensor():
    bad, fixed = cases(load("TEN104", "bad")), cases(load("TEN104", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)


def test_module_to_is_in_place_but_tensor_to_is_not():
    model = torch.nn.Linear(2, 2)
    assert model.to(torch.float64) is model and model.weight.dtype == torch.float64
    t = torch.zeros(2)
    assert t.to(torch.float64) is not t and t.dtype == torch.float32


PARAM_DEEPCOPY = '''
import copy
import torch

def snapshot(layer: torch.nn.Linear):
    copy.deepcopy(layer.weight)
    layer.weight.to(torch.float64)
    return layer
'''


def test_parameter_statements_are_reported_without_a_fix_and_change_nothing():
    found = analyse(PARAM_DEEPCOPY, "p.py", [BY_CODE["TEN104"]]).findings
    assert [(f.line, f.col, f.fix) for f in found] == [(6, 4, None), (7, 4, None)]
    namespace = {}
    exec(compile(PARAM_DEEPCOPY, "p.py", "exec"), namespace)
    layer = torch.nn.Linear(2, 2)
    weight = layer.weight
    namespace["snapshot"](layer)
    assert layer.weight is weight and weight.dtype == torch.float32
    assert copy.deepcopy(weight) is not weight
