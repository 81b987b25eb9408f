"""The torch behaviour the rules rely on (docs: ../shared torch-facts), checked over generated tensors:
shapes, dtypes, requires_grad, leaves and non-leaves, views. "Shares" means the same untyped storage."""
from __future__ import annotations

import copy

import torch
from hypothesis import given
from hypothesis import strategies as st

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64]
OTHERS = [torch.int64, torch.int32, torch.uint8, torch.bool]
VIEWS = ["none", "slice", "transpose", "unsqueeze", "flatten", "expand", "select", "real_view"]


def storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


@st.composite
def tensors(draw) -> torch.Tensor:
    """A non-empty tensor (an empty one has no storage to share), possibly requiring grad (a leaf or
    computed from one), possibly a view of a bigger tensor."""
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    dtype = draw(st.sampled_from(FLOATS + OTHERS))
    base = (torch.rand(shape) * 10).to(dtype) if dtype != torch.bool else torch.rand(shape) > 0.5
    grad = dtype in FLOATS and draw(st.booleans())
    if grad:
        base.requires_grad_(True)
        if draw(st.booleans()):
            base = base * 1  # a non-leaf
    view = draw(st.sampled_from(VIEWS))
    if view == "slice" and base.dim():
        base = base[: max(1, base.shape[0] // 2)]
    elif view == "transpose" and base.dim() >= 2:
        base = base.transpose(0, 1)
    elif view == "unsqueeze":
        base = base.unsqueeze(0)
    elif view == "flatten" and base.is_contiguous():
        base = base.view(-1)
    elif view == "expand":
        base = base.unsqueeze(0).expand(2, *base.shape)
    elif view == "select" and base.dim():
        base = base[0]
    return base


def writable(t: torch.Tensor) -> bool:
    """False for an expanded view, where elements overlap and in-place writes are refused."""
    return not any(stride == 0 and size > 1 for stride, size in zip(t.stride(), t.shape))


def bump(t: torch.Tensor) -> None:
    """An in-place write that autograd allows on a tensor that does not require grad."""
    if t.is_floating_point() or t.is_complex():
        t.mul_(1)  # noqa: TEN101 - the property under test is that autograd allows it
    else:
        t.copy_(t.clone())


@given(tensors())
def test_detach_shares_storage_and_version_counter(t):
    d = t.detach()
    assert storage(d) == storage(t) and d.data_ptr() == t.data_ptr()
    assert not d.requires_grad and d._version == t._version
    if writable(d):
        before = t._version
        bump(d)
        assert t._version == before + 1 == d._version


@given(tensors())
def test_clone_never_shares(t):
    c = t.clone()
    assert storage(c) != storage(t)
    before = t._version
    bump(c.detach())
    assert t._version == before
    assert c.requires_grad == t.requires_grad and (c.grad_fn is not None) == t.requires_grad


@given(tensors())
def test_copy_copy_always_shares_storage_but_not_the_version_counter(t):
    c = copy.copy(t)
    assert c is not t and storage(c) == storage(t) and c.data_ptr() == t.data_ptr()
    assert c.requires_grad == t.requires_grad and c.is_leaf and c.grad_fn is None
    if writable(c):
        before, own = t._version, c._version
        with torch.no_grad():
            bump(c)
        assert t._version == before and c._version > own


@given(tensors())
def test_cpu_on_cpu_returns_the_same_object(t):
    assert t.cpu() is t and t.to("cpu") is t and t.to(t.dtype) is t


@given(tensors())
def test_data_shares_storage_but_not_the_version_counter(t):
    d = t.data
    assert storage(d) == storage(t) and d is not t.data and not d.requires_grad
    if writable(d):
        before, own = t._version, d._version
        bump(d)
        assert t._version == before and d._version > own


@given(st.integers(1, 6), st.integers(1, 6), st.booleans(), st.booleans())
def test_state_dict_entries_share_storage_with_the_module(n_in, n_out, bias, batchnorm):
    layers = [torch.nn.Linear(n_in, n_out, bias=bias)] + ([torch.nn.BatchNorm1d(n_out)] if batchnorm else [])
    model = torch.nn.Sequential(*layers)
    state = model.state_dict()
    live = dict(model.named_parameters()) | dict(model.named_buffers())
    assert set(state) == set(live)
    for key, value in state.items():
        assert storage(value) == storage(live[key]) and not value.requires_grad
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1)
    assert all(torch.equal(state[k], v.detach()) for k, v in model.named_parameters())
