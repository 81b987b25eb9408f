"""TEN103 (numpy-alias-write): an in-place write through a NumPy alias of a tensor (or a tensor alias of an
array), and when its fix (a copy at the alias site) is withheld: a lesson that only shows the shared
memory after the write, in a notebook or a script."""
from __future__ import annotations

import pytest

from tests.support.rule_tools import findings_of as _found, notebook_findings as _notebook_findings

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")


# A lesson that writes through an alias and then only shows both sides gets no fix (a class of harmful
# fixes the review of `fix --unsafe-fixes` on unseen repositories found, docs/fix-review.md).
NUMPY_LESSON = ("import numpy as np\nimport torch\narr = np.ones(5)\nt = torch.from_numpy(arr)",
                "t.add_(1)\nprint(arr)\nprint(t)",
                "arr = np.zeros(3)\narr = arr * 2\nprint(arr.sum() + 1)")


def test_a_lesson_that_rebinds_the_array_later_still_only_shows_the_shared_one():
    _, found = _notebook_findings("TEN103", *NUMPY_LESSON)
    assert found == []  # the later cell's reads are of another array: a lesson, not reported (review 15)


def test_a_read_of_the_shared_array_itself_keeps_the_fix():
    cells = (NUMPY_LESSON[0], "t.add_(1)\ntotal = arr.sum()\nprint(arr)")
    _, (finding,) = _notebook_findings("TEN103", *cells)
    assert finding.fix is not None  # the first look at the array after the write uses it


def test_a_first_look_at_the_source_itself_is_a_lesson_whatever_comes_next():
    """Fix review 5 (the second reviewer's class C): `print(q)` right after writing through the alias, then
    `np.matmul(q, r)`: with the copy, the lesson prints the opposite of what it teaches."""
    cells = NUMPY_LESSON[:2] + ("total = arr.sum()",)
    _, found = _notebook_findings("TEN103", *cells)
    assert found == []


SHOWN_TOGETHER = ("import numpy as np\nimport torch\narr = np.ones(5)\nt = torch.from_numpy(arr)",
                  "arr += 1\nprint(arr, t)\nt += 1\nprint(arr, t)",
                  "c = torch.tensor(arr)\narr += 1\nprint(arr, c)")


def test_a_write_whose_next_read_shows_both_sides_together_is_a_lesson():
    _, found = _notebook_findings("TEN103", *SHOWN_TOGETHER)
    assert found == []  # `print(arr, t)` right after the write: the lesson shows the sharing
    alone = SHOWN_TOGETHER[:1] + (SHOWN_TOGETHER[1].replace("print(arr, t)\nt += 1\nprint(arr, t)",
                                                            "t += 1\nprint(arr)"),)
    _, contrast = _notebook_findings("TEN103", *alone, SHOWN_TOGETHER[2])
    assert contrast == []  # the array shown, then only copied for a contrast: still the lesson
    _, other = _notebook_findings("TEN103", *alone, "total = arr.sum()\nprint(total)")
    assert other == []  # the array itself shown first: the lesson, whatever the code does with it next
    _, used = _notebook_findings("TEN103", *alone[:1], "t += 1\ntotal = arr.sum()\nprint(arr)")
    assert len(used) == 1 and used[0].fix is not None  # the first look at the array computes with it


# Fixes from proof: a case a trial on unseen code found a harmful fix for.
LESSON = """
import numpy as np
import torch

n = np.ones(5)
t = torch.from_numpy(n)
t.add_(1)
print(f"t: {t}")
print(f"n: {n}")
"""


def test_a_lesson_that_prints_the_shared_memory_is_not_reported():
    assert _found(LESSON, "TEN103") == []  # review 15: reviewers judge a lesson's finding a false alarm
    (used,) = _found(LESSON.replace('print(f"t: {t}")', "total = n.sum()"), "TEN103")
    assert used.fix is not None  # read other than printed first: the copy is what the code needs


GPU_ALIAS = """
import torch

x = torch.ones(2){move}
s = x.data.cpu().numpy()
s += 1.0
y = x * 2
"""


@pytest.mark.parametrize("move, reported", [
    (".cuda()", False), ('.to("cuda")', False), ('.to("cuda:1")', False),  # the code moved it: .cpu() copies
    (".to(device)", True), ("", True), ('.to("cpu")', True),
])
def test_a_move_to_cpu_of_a_tensor_the_code_put_on_a_gpu_makes_no_alias(move, reported):
    """Fix review 3, class G: `.cpu()` of a tensor every path moved to a GPU is a copy."""
    source = GPU_ALIAS.replace("{move}", move)
    source = source.replace("x = torch.ones(2).to(device)", "device = 'cpu'\nx = torch.ones(2).to(device)")
    found = [f.line for f in _found(source, "TEN103")]
    assert bool(found) is reported, found


SHOWN_IN_TURN = ("import numpy as np\nimport torch", "arr = np.array([3, 4, 5, 6])", "t = torch.from_numpy(arr)",
                 "t[3] = 100", "t", "arr", "c = torch.tensor(arr)")


def test_a_write_then_both_sides_shown_in_turn_is_a_lesson():
    """Fix review 3, class F: the cells show the alias, then the source, then contrast a copy of it."""
    _, found = _notebook_findings("TEN103", *SHOWN_IN_TURN)
    assert found == []


def test_a_source_read_before_the_alias_is_shown_keeps_the_fix():
    cells = SHOWN_IN_TURN[:4] + ("total = arr.sum()", "t", "arr")
    _, (finding,) = _notebook_findings("TEN103", *cells)
    assert finding.fix is not None


SHAPE_ONLY = '''
import numpy as np
import torch


def load():
    store = dict(conv_out=np.arange(16.0).reshape(1, 2, 2, 4))
    out = torch.from_numpy(store["conv_out"][()])
    out.{call}
    return out, store
'''


@pytest.mark.parametrize("call", ["transpose_(1, 3)", "t_()", "unsqueeze_(0)"])
def test_an_in_place_view_is_no_write_through_the_alias(call):
    """Fix review 6: `t.transpose_(1, 3)` of a `from_numpy` tensor changes its strides, not the array."""
    assert _found(SHAPE_ONLY.format(call=call), "TEN103") == []
    assert _found(SHAPE_ONLY.format(call="add_(1)"), "TEN103")  # an element write still is one


def test_torch_tags_its_in_place_views_and_they_leave_every_element_as_it_was():
    torch = pytest.importorskip("torch")
    from flake8_tensorcopy.analysis.torch_api import INPLACE_VIEWS

    assert {"transpose_", "t_", "unsqueeze_"} <= INPLACE_VIEWS
    np = pytest.importorskip("numpy")
    calls = {"transpose_": (0, 1), "t_": (), "unsqueeze_": (0,), "as_strided_": ((3, 2), (1, 3))}
    for name, args in calls.items():
        array = np.arange(6.0).reshape(2, 3)
        getattr(torch.from_numpy(array), name)(*args)
        assert (array == np.arange(6.0).reshape(2, 3)).all(), name


SHARING_LESSON = """
import numpy as np
import torch

base = np.array([1.0, 2.0, 3.0])
t = torch.from_numpy(base)
view = t.numpy()
view[1] = -1
assert base[1] == view[1], "memory is shared"
BEFORE
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 3)
loss = model(x).pow(2).mean()
loss.backward()
opt.step()
"""


@pytest.mark.parametrize("before, reported", [
    ("", False),
    ("w = torch.ones(3, requires_grad=True)\nx0 = (t * w).sum()", True),
])
def test_a_later_backward_reads_the_source_only_when_something_was_computed_from_it(before, reported):
    """Fix review 7 (a, class A): a lesson asserts that `from_numpy` and `.numpy()` share memory, and a later
    cell trains a model. Nothing is computed from `t` but its alias, so no graph holds it and the backward
    reads nothing the write changed; the copy fix made the lesson's assert fail. Where `t` fed a product
    before the write, a graph may hold it: still reported."""
    source = SHARING_LESSON.replace("BEFORE\n", "").replace("view = t.numpy()", before + "\nview = t.numpy()")
    assert [f.code for f in _found(source, "TEN103")] == ["TEN103"] * reported
