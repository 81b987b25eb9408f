"""TEN103 claim: on CPU, a write into a NumPy alias changes the tensor (and from_numpy the array)."""
import numpy as np
import pytest
import torch

from fixture_tools import cases, load


def _source_before(name):
    """The source each case starts from (tensor or array), rebuilt independently of the case."""
    return {
        "case_numpy_scaled": torch.arange(4.0).numpy(),
        "case_detached_cpu_image": torch.linspace(0, 1, 6).reshape(1, 2, 3).numpy(),
        "case_transposed_view": torch.arange(6.0).reshape(2, 3).numpy(),
        "case_asarray_clip": torch.linspace(0, 1, 5).numpy(),
        "case_fill": torch.ones(3).numpy(),
        "case_from_numpy_sub": np.arange(4, dtype=np.float32),
        "case_from_numpy_chain": np.arange(4, dtype=np.float32),
    }[name]


def _as_array(source):
    return source.detach().numpy() if isinstance(source, torch.Tensor) else source


def assert_hazard(bad: dict) -> None:
    """Every bad case changes its source: the written alias and the source hold the same values."""
    for name, case in bad.items():
        source, alias = case()
        before = _source_before(name)
        after = _as_array(source)
        assert not np.array_equal(after, before), name
        assert np.shares_memory(after, _as_array(alias)), name


def assert_fixed(fixed: dict) -> None:
    """The same cases, fixed: the source is unchanged and the copy holds the written values."""
    for name, case in fixed.items():
        source, copy = case()
        assert np.array_equal(_as_array(source), _source_before(name)), name
        assert not np.shares_memory(_as_array(source), _as_array(copy)), name


def test_bad_cases_change_the_source_on_cpu():
    assert_hazard(cases(load("TEN103", "bad")))


def test_fixed_cases_leave_the_source_alone():
    bad, fixed = cases(load("TEN103", "bad")), cases(load("TEN103", "fixed"))
    assert sorted(fixed) == sorted(bad)
    assert_fixed(fixed)


def test_cpu_is_the_same_storage_and_numpy_requires_detach():
    t = torch.ones(2)
    assert t.cpu() is t and t.detach().cpu().numpy().__array_interface__["data"][0] == t.data_ptr()
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Use tensor.detach\(\).numpy\(\) instead"):
        x.numpy()
