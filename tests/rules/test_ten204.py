"""TEN204 (tensor-from-tensor): on a parameter its own function declares may be a tensor (by a union
annotation with a tensor and another kind, or by an isinstance test that cannot narrow the call),
reported without a fix; a legacy constructor's alias in a lesson that only shows it, without a fix; and
the safety of each fix form."""
from __future__ import annotations

import textwrap

import pytest

from flake8_tensorcopy.engine.core import analyse, select_rules
from flake8_tensorcopy.rules import BY_CODE
from flake8_tensorcopy.rules.model import FixSafety

# what a fix writes and means is tested whether or not its form is offered yet (tests/rules/test_fix_record.py)
pytestmark = pytest.mark.usefixtures("every_fix_offered")

HEAD = "from typing import Optional, Union\n\nimport numpy as np\nimport torch\nfrom torch import Tensor\n\n\n"


def findings(body: str):
    return [f for f in analyse(HEAD + textwrap.dedent(body), "case.py", [BY_CODE["TEN204"]]).findings]


FLAGGED = {
    "union": "def f(value: Union[float, torch.Tensor]):\n    return torch.tensor(value)\n",
    "pipe": "def f(value: float | Tensor):\n    return torch.tensor(value)\n",
    "string": "def f(value: 'Union[np.ndarray, torch.Tensor]'):\n    return torch.tensor(value)\n",
    "optional union": "def f(value: Optional[Union[int, Tensor]]):\n    return torch.tensor(value)\n",
    "new_tensor": "def f(value: Union[float, Tensor], base):\n    return base.new_tensor(value)\n",
    "tested after": ("def f(value):\n    t = torch.tensor(value)\n    if isinstance(value, torch.Tensor):\n"
                     "        return t\n    return t.item()\n"),
    "is_tensor after": ("def f(value):\n    t = torch.tensor(value)\n"
                        "    return t if torch.is_tensor(value) else t.item()\n"),
    "tuple with Tensor": ("def f(value):\n    t = torch.tensor(value)\n    if isinstance(value, (float, Tensor)):\n"
                          "        print(t)\n    return t\n"),
    "tested before, no exit": ("def f(value):\n    if isinstance(value, torch.Tensor):\n        print(value.device)\n"
                               "    return torch.tensor(value)\n"),
    "branch on no parameter": ("def f(value: Union[float, Tensor]):\n    if distributed():\n"
                               "        value = torch.tensor(value)\n    return value\n"),
}

QUIET = {
    "optional": "def f(value: Optional[Tensor]):\n    return torch.tensor(value)\n",
    "union with None": ("def f(value: Union[Tensor, None], other: 'Tensor | None'):\n"
                        "    return torch.tensor(value), torch.tensor(other)\n"),
    "tensors only": "def f(value: Union[Tensor, torch.nn.Parameter]):\n    return torch.tensor(value)\n",
    "plain Tensor": "def f(value: Tensor):\n    return torch.tensor(value)\n",
    "other library": "def f(value: Union[float, 'tf.Tensor']):\n    return torch.tensor(value)\n",
    "no test": "def f(value):\n    return torch.tensor(value)\n",
    "returned before": ("def f(value: Union[float, Tensor]):\n    if isinstance(value, Tensor):\n        return value\n"
                        "    return torch.tensor(value)\n"),
    "raised before": ("def f(value):\n    if torch.is_tensor(value):\n        raise TypeError\n"
                      "    return torch.tensor(value)\n"),
    "guarding branch": ("def f(value):\n    if isinstance(value, torch.Tensor):\n        return torch.tensor(value)\n"
                        "    return value\n"),
    "type-testing branch": ("def f(value: Union[float, Tensor]):\n    if isinstance(value, float):\n"
                            "        value = torch.tensor(value)\n    return value\n"),
    "same statement": "def f(value):\n    return value if isinstance(value, Tensor) else torch.tensor(value)\n",
    "asserted": "def f(value):\n    assert not isinstance(value, Tensor)\n    return torch.tensor(value)\n",
    "rebound": "def f(value: Union[float, Tensor]):\n    value = float(value)\n    return torch.tensor(value)\n",
    "rebound in the test's branch": ("def f(value):\n    if isinstance(value, Tensor):\n        value = value.item()\n"
                                     "    return torch.tensor(value)\n"),
    "other branch": ("def f(value, ok):\n    if ok:\n        return torch.tensor(value)\n"
                     "    elif isinstance(value, Tensor):\n        return value\n"),
    "mode flag": ("def f(value: Union[Tensor, np.ndarray], ret_np=False):\n    if ret_np:\n"
                  "        value = torch.tensor(value)\n    return value\n"),
    "outer function's parameter": ("def f(value: Union[float, Tensor]):\n    def g():\n"
                                   "        return torch.tensor(value)\n    return g\n"),
    "test in a nested def": ("def f(value):\n    t = torch.tensor(value)\n    def g(value):\n"
                             "        return isinstance(value, Tensor)\n    return t, g\n"),
    "legacy constructor": "def f(value: Union[float, Tensor]):\n    return torch.FloatTensor(value)\n",
    "expression, not a name": "def f(value: Union[float, Tensor]):\n    return torch.tensor(value * 2)\n",
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_declared_tensor_is_reported_without_a_fix(name):
    found = findings(FLAGGED[name])
    assert len(found) == 1 and found[0].fix is None
    assert "which may be a tensor" in found[0].message and "for a tensor" in found[0].message


@pytest.mark.parametrize("name", sorted(QUIET))
def test_look_alikes_stay_quiet(name):
    assert findings(QUIET[name]) == []


def test_message_names_the_evidence_and_the_tensor_form():
    (by_annotation,) = findings("def f(value: Union[float, torch.Tensor]):\n"
                                "    return torch.tensor(value, dtype=torch.float, requires_grad=False)\n")
    assert by_annotation.message == (
        "torch.tensor() on 'value', which may be a tensor (annotated Union[float, torch.Tensor]), copies a tensor "
        "and silently cuts its graph (torch warns); use "
        "value.detach().to(dtype=torch.float, copy=True).requires_grad_(False) for a tensor")
    (by_test,) = findings(FLAGGED["tested after"])
    assert "(the function tests isinstance(value, torch.Tensor) on line 10)" in by_test.message
    assert by_test.message.endswith("use value.detach().clone() for a tensor")


def test_a_proven_tensor_keeps_its_fix_and_message():
    (found,) = findings("def f(value: Union[float, Tensor]):\n    value = torch.ones(2)\n"
                        "    return torch.tensor(value)\n")
    assert found.fix is not None and found.message.startswith("torch.tensor() on tensor 'value' copies")


# A legacy constructor's alias in a lesson that then only shows both sides gets no fix (a class of harmful
# fixes the review of `fix --unsafe-fixes` on unseen repositories found, docs/fix-review.md).
LEGACY_LESSON = "import torch\nt = torch.rand(2, 3)\nr = torch.Tensor(t)\nr.zero_()\nprint(t)\n"


def test_a_lesson_showing_a_legacy_constructor_alias_is_not_reported():
    assert analyse(LEGACY_LESSON, "t.py", [BY_CODE["TEN204"]]).findings == []


def test_a_legacy_constructor_alias_whose_source_is_computed_with_is_still_fixed():
    source = LEGACY_LESSON.replace("print(t)\n", "u = t * 2\nprint(t)\n")
    (finding,) = [f for f in analyse(source, "t.py", [BY_CODE["TEN204"]]).findings]
    assert finding.fix is not None and finding.fix.edits[0].text == "t.detach().clone()"


# The safety of each fix form.
def test_tensor_from_tensor_has_a_safe_and_an_unsafe_fix():
    source = "import torch\nx = torch.zeros(3)\na = torch.tensor(x)\nb = torch.FloatTensor(x)\nb.add_(1)\ny = x + b\n"
    fixes = [f.fix for f in analyse(source, "t.py", select_rules()).findings if f.code == "TEN204"]
    assert [(f.safety, f.edits[0].text) for f in fixes] == [(FixSafety.SAFE, "x.detach().clone()"),
                                                            (FixSafety.UNSAFE, "x.detach().clone()")]


@pytest.mark.parametrize("arg, reported", [("torch.zeros(n)", False), ("torch.randn(n, 2).exp()", False),
                                           ("t", True), ("t.view(-1)", True), ("t.t()", True)])
def test_a_legacy_constructor_of_a_fresh_temporary_is_no_alias_anyone_sees(arg, reported):
    """Fix review 5's class F: `torch.Tensor(torch.zeros(n))` (18 fixes in course code) aliases storage that
    nothing else holds; the alias of a named tensor, or of a view of one, is still reported."""
    body = f"def f(n):\n    t = torch.ones(n, n)\n    b = torch.Tensor({arg})\n    b.zero_()\n    return t, b\n"
    assert bool(findings(body)) is reported


@pytest.mark.parametrize("after, reported", [("", False), ("x = torch.Tensor(x).cuda()\n", False),
                                             ("y = x * 2\n", True)])
def test_a_legacy_constructor_of_a_fresh_value_no_one_reads_again_is_no_alias_anyone_sees(after, reported):
    """Fix review 5's class F, its other forms: `res = torch.cat(parts)` the line before and never read again,
    or rebound by the statement itself; once the source is read again, the alias can be seen."""
    body = "import torch\nparts = [torch.ones(2)]\nx = torch.cat(parts)\n" + (after or "b = torch.Tensor(x)\n")
    if after.startswith("y ="):
        body = "import torch\nparts = [torch.ones(2)]\nx = torch.cat(parts)\nb = torch.Tensor(x)\nb.zero_()\n" + after
    assert bool(findings(body.replace(HEAD, ""))) is reported


LEGACY_BATCH = """
import numpy as np
import torch

images = torch.from_numpy(np.random.rand(256, 8).astype(np.float32))
model = torch.nn.Linear(8, 2)
for i in range(0, 256, 64):
    batch = torch.FloatTensor(images[i:i + 64])
    WRITE
    pred = model(batch).argmax(1)
"""


@pytest.mark.parametrize("write, reported", [
    ("pass", False),  # only read: the alias cannot be told from a copy
    ("batch -= 0.5", True),  # a write through the alias changes images too
    ("images[i] = 0", True),  # a write to the source shows in the alias
])
def test_a_legacy_constructor_alias_nothing_writes_through_is_not_reported(write, reported):
    """Fix review 7 (a and b, class C): `torch.FloatTensor(t)` of a float32 tensor used as a no-op conversion,
    with no write through either side and no graph, is an alias no code can see; reported only once a write
    through the alias or the source makes the sharing matter."""
    found = [f.code for f in analyse(LEGACY_BATCH.replace("WRITE", write), "t.py", select_rules()).findings]
    assert found.count("TEN204") == reported


@pytest.mark.parametrize("source", [
    "a = torch.Tensor(torch.Tensor(4, 3))",  # a legacy constructor given sizes allocates
    "a = torch.LongTensor(torch.argmax(q, -1).unsqueeze(-1))",  # a view of a fresh temporary
    "r = torch.zeros([n, 4]).float()\nfor i in range(n):\n    r[i] = q[i]\nr = torch.Tensor(r)",  # rebound by itself
    "d = torch.from_numpy(arr[0])\nd = torch.FloatTensor(d).unsqueeze(0)\nout = d * 2",  # a view of the alias, read
])
def test_a_legacy_constructor_of_what_nobody_else_sees_is_not_reported(source):
    """Fix review 8 (c, classes C and D): a fresh temporary through a view or a conversion that may return it
    (`.unsqueeze`, `.float()`) is still fresh, and a view taken right after the constructor is the alias that
    nobody writes through; the unsafe copy these were given was a false positive each time."""
    head = "import numpy as np\nimport torch\nq = torch.randn(3, 5)\narr = np.ones((2, 3), np.float32)\nn = 3\n"
    text = head + source
    assert [f.code for f in analyse(text, "t.py", select_rules()).findings if f.code == "TEN204"] == []


def test_a_view_of_a_legacy_constructor_written_through_is_reported():
    text = ("import numpy as np\nimport torch\narr = np.ones((2, 3), np.float32)\nd = torch.from_numpy(arr[0])\n"
            "d2 = torch.FloatTensor(d).unsqueeze(0)\nd2 += 1\n")
    assert [f.code for f in analyse(text, "t.py", select_rules()).findings if f.code == "TEN204"] == ["TEN204"]


@pytest.mark.parametrize("body, reported, fixed", [
    # `x.max(0)` and `torch.max(x, 0)` give a (values, indices) tuple: `.detach()` on it would raise
    ("scores = torch.randn(5)\nbest = torch.tensor(scores.max(0))\n", False, False),
    ("scores = torch.randn(5)\nbest = torch.tensor(torch.max(scores, 0))\n", False, False),
    ("scores = torch.randn(5)\nbest = torch.tensor(scores.max())\n", True, True),
    # a class of the file with a `new_tensor` of its own: `pool` is no tensor
    ("class Pool:\n    def new_tensor(self, x):\n        return x\n\n\npool = Pool()\n"
     "kept = pool.new_tensor(torch.randn(3))\n", False, False),
    ("class Pool:\n    def new_tensor(self, x):\n        return x\n\n\nbase = torch.zeros(2)\n"
     "kept = base.new_tensor(torch.randn(3))\n", True, True),
    # an attribute a method turns into a list before it is used
    ("class Noise:\n    def __init__(self, sigma):\n        self.sigma = sigma\n\n    def configure(self):\n"
     "        self.sigma = [float(s) for s in self.sigma]\n\n    def __call__(self, x):\n"
     "        return torch.tensor(self.sigma)\n\n\nNoise(torch.ones(2))\n", False, False),
])
def test_what_the_review_of_unseen_programs_found(body, reported, fixed):
    """Written programs run before and after the fix (docs/fix-review.md, review 14): a tuple-valued result,
    a method of the file named `new_tensor`, an attribute rebound by another method."""
    found = findings(body)
    assert bool(found) is reported
    assert all((f.fix is not None) is fixed for f in found)


MADE = "prob = torch.zeros(n).scatter_(0, torch.tensor([0]), 1.0)"  # not a fresh temporary to the analysis
LEGACY_APPENDED = """
def make_targets(n):
    out = []
    {outside}
    for c in range(n):
        {inside}
        prob.add_(0.01)
        out.append(torch.FloatTensor(prob).unsqueeze(0))
        {after}
    return torch.cat(out)
"""


@pytest.mark.parametrize("outside, inside, after, reported", [
    # review 15: a value made in the pass, written before the alias is made, the alias only appended
    ("pass", MADE, "pass", False),
    ("pass", MADE, "prob.mul_(2)", True),          # written after: the entry changes
    ("pass", MADE, "out[-1].mul_(2)", True),       # the list's entry written: the source changes
    (MADE, "pass", "pass", True),                  # one object: the next pass's add_ reaches the entry
])
def test_a_legacy_constructors_alias_appended_is_seen_only_through_later_writes(outside, inside, after, reported):
    source = LEGACY_APPENDED.format(outside=outside, inside=inside, after=after)
    assert bool(findings(source)) is reported
