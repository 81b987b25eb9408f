"""Fix verification drops a fix that calls a method a value the analysis knows is not a tensor lacks."""
from __future__ import annotations

import pytest

from tests.support.fix_rules import APPEND
from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE

# (setup lines in the function, the appended call, what the reason says it is)
NOT_TENSORS = [
    ("v = 3", "as_detach(v)", "a Python number or string"),
    ("v = 2.5", "as_clone(v)", "a Python number or string"),
    ("v = True", "as_item(v)", "a Python number or string"),
    ("v = 'text'", "as_detach(v)", "a Python number or string"),
    ("v = x.item()", "as_detach(v)", "a Python number or string"),
    ("d = {'a': x}", "as_detach(d)", "a dict, list, tuple or set"),
    ("d = [x, x]", "as_clone(d)", "a dict, list, tuple or set"),
    ("d = (x, x)", "as_item(d)", "a dict, list, tuple or set"),
    ("d = {x}", "as_detach(d)", "a dict, list, tuple or set"),
    ("m = torch.nn.Linear(2, 2)", "as_detach(m)", "a module"),
    ("o = torch.optim.SGD(params, lr=0.1)", "as_clone(o)", "an optimizer"),
    ("a = x.numpy()", "as_detach(a)", "a NumPy array"),
    ("a = np.zeros(3)", "as_clone(a)", "a NumPy array"),
    ("sd = net.state_dict()", "as_detach(sd)", "a state_dict (a dict)"),
    ("pass", "as_detach(x.storage_offset())", "the result of .storage_offset() (a Python int)"),
    ("pass", "as_clone(x.numel())", "the result of .numel() (a Python int)"),
    ("n = x.numel()", "as_detach(n)", "a Python number or string"),  # review case numel.py, through a name
    ("pass", "as_detach(len(x))", "the result of len()"),
    ("pass", "as_detach(list(x))", "the result of list()"),
]
# method calls that work on such values, or values that may be tensors
FINE = [
    ("d = {'a': x}", "as_copy(d)"),  # dict.copy()
    ("a = x.numpy()", "as_copy(a)"),  # ndarray.copy()
    ("a = x.numpy()", "as_item(a)"),
    ("m = torch.nn.Linear(2, 2)", "as_cpu(m)"),  # Module.cpu()
    ("t = torch.zeros(3)", "as_detach(t)"),
    ("pass", "as_detach(x)"),  # a parameter: unknown, may be a tensor
    ("len = torch.zeros", "as_detach(len(x))"),  # not the builtin
    ("pass", "as_detach(x.sum())"),
]


def _program(setup: str, call: str) -> str:
    return f"import numpy as np\nimport torch\n\n\ndef f(x, params, net):\n    {setup}\n    return {call}\n"


@pytest.mark.parametrize("setup, call, what", NOT_TENSORS, ids=[f"{s} -> {c}" for s, c, _ in NOT_TENSORS])
def test_a_method_on_a_known_non_tensor_is_dropped_with_the_reason(setup, call, what):
    source = _program(setup, call)
    outcome = fix_source(source, "t.py", [APPEND])
    assert outcome.fixed == source and outcome.applied == []
    (left,) = outcome.remaining
    method = call[3:call.index("(")]
    receiver = call[call.index("(") + 1:-1]
    assert outcome.dropped[id(left)] == f"the fix would call .{method}() on '{receiver}', {what}"


@pytest.mark.parametrize("setup, call", FINE, ids=[f"{s} -> {c}" for s, c in FINE])
def test_a_method_the_value_may_have_is_applied(setup, call):
    source = _program(setup, call)
    outcome = fix_source(source, "t.py", [APPEND])
    method = call[3:call.index("(")]
    receiver = call[call.index("(") + 1:-1]
    assert outcome.fixed == source.replace(call, f"{receiver}.{method}()")
    assert outcome.dropped == {}


def test_a_call_that_was_there_before_does_not_count():
    source = _program("d = {'a': x}\n    d.detach()", "as_detach(x)")  # a broken line of the user's own
    outcome = fix_source(source, "t.py", [APPEND])
    assert outcome.fixed == source.replace("as_detach(x)", "x.detach()")


def test_a_fix_that_removes_the_last_use_of_copy_removes_its_import():
    source = ("import copy\nimport os  # kept\n\nimport torch\n\n\ndef f():\n    t = torch.ones(2, requires_grad=True)"
              " * 2\n    return copy.deepcopy(t[0])\n")
    outcome = fix_source(source, "t.py", [BY_CODE["TEN201"]], unsafe=True)
    assert outcome.fixed == source.replace("import copy\n", "").replace("copy.deepcopy(t[0])", "t[0].detach().clone()")


def test_an_import_of_copy_that_was_unused_before_stays():
    source = ("import copy\n\nimport torch\n\n\ndef f():\n    t = torch.ones(2, requires_grad=True) * 2\n"
              "    return copy.deepcopy(t[0]), copy\n")
    outcome = fix_source(source, "t.py", [BY_CODE["TEN201"]], unsafe=True)
    assert outcome.fixed.startswith("import copy\n")


@pytest.mark.parametrize("imports, left", [
    ("from copy import copy, deepcopy\n", "from copy import copy\n"),
    ("from copy import deepcopy as dc, copy\n", "from copy import copy\n"),
    ("# copying\nimport copy as c\nimport os\n", "# copying\nimport os\n"),
])
def test_remove_copy_imports_keeps_the_rest(imports, left):
    from flake8_tensorcopy.fix.imports import remove_copy_imports

    spelled = {"copy.deepcopy", "copy.deepcopy as dc", "copy as c"}
    assert remove_copy_imports(imports + "x = 1\n", spelled) == left + "x = 1\n"


def test_removing_the_first_import_leaves_no_blank_first_line():
    from flake8_tensorcopy.fix.imports import remove_copy_imports

    assert remove_copy_imports("import copy\n\nimport torch\n", {"copy"}) == "import torch\n"
    assert remove_copy_imports('"""Doc."""\nimport copy\n\nimport torch\n', {"copy"}) == '"""Doc."""\n\nimport torch\n'
