"""TEN301's fix calls deepcopy only through a name that means it at run time (issue 13)."""
from __future__ import annotations

import pytest

from flake8_tensorcopy.fix.fixer import fix_source
from flake8_tensorcopy.rules import BY_CODE

TRAIN = """
def fit(model, loader, opt{param}):
    best = model.state_dict()
    for x in loader:
        model(x).sum().backward()
        opt.step()
    model.load_state_dict(best)
"""


def fixed(head: str, param: str = "") -> str:
    source = head + "\n" + TRAIN.format(param=param)
    return fix_source(source, "t.py", [BY_CODE["TEN301"]], unsafe=True).fixed


@pytest.mark.parametrize("head, param, expected", [
    ("import copy", "", "best = copy.deepcopy(model.state_dict())"),
    ("from copy import copy, deepcopy", "", "best = deepcopy(model.state_dict())"),
    ("from copy import deepcopy as dc", ", copy=None", "best = dc(model.state_dict())"),
])
def test_the_fix_uses_a_name_that_means_deepcopy(head, param, expected):
    assert expected in fixed(head, param)


@pytest.mark.parametrize("head, param", [
    ("from copy import copy", ""),               # `copy` is the function
    ("import copy", ", copy=None"),              # a parameter shadows the module
    ("import copy\n\ndef copy(x):\n    return x\n", ""),  # a def shadows it
])
def test_no_fix_where_copy_is_something_else(head, param):
    source = head + "\n" + TRAIN.format(param=param)
    assert fixed(head, param) == source


def test_an_import_only_for_type_checkers_is_not_an_import():
    text = fixed("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import copy\n")
    assert "best = copy.deepcopy(model.state_dict())" in text
    assert text.index("import copy\n") < text.index("if TYPE_CHECKING")  # a real import, at run time
