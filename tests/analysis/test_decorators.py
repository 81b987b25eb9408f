"""analysis/decorators.py: a decorator that hands its def the callers' arguments unchanged (a wrapper
calling `fn(*args, **kwargs)`, torch's grad-mode decorators) lets the callers say what a parameter is."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis.decorators import wrapper_of_argument
from tests.support.rule_tools import codes

TIMED = """
def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        print(time.perf_counter() - start)
        return out
    return wrapper
"""


@pytest.mark.parametrize("source, passes", [
    (TIMED, True),
    ("def listed(fn):\n    def w(*args, **kwargs):\n        return fn(*[list(a) for a in args], **kwargs)\n"
     "    return w\n", False),  # the arguments are converted
    ("def cached(fn):\n    def w(*args, **kwargs):\n        return fn(*args, **kwargs)\n    return fn\n", False),
    ("def two(fn, other):\n    def w(*args, **kwargs):\n        return fn(*args, **kwargs)\n    return w\n", False),
    # the wrapper changes what it forwards: rebinds `args`, or changes `kwargs`
    ("def numpy_io(fn):\n    def w(*args, **kwargs):\n        args = [a.numpy() for a in args]\n"
     "        return fn(*args, **kwargs)\n    return w\n", False),
    ("def strip(fn):\n    def w(*args, **kwargs):\n        kwargs.pop('device', None)\n"
     "        return fn(*args, **kwargs)\n    return w\n", False),
    ("def tag(fn):\n    def w(*args, **kwargs):\n        kwargs['tag'] = 1\n"
     "        return fn(*args, **kwargs)\n    return w\n", False),
])
def test_a_wrapper_that_forwards_its_arguments(source, passes):
    assert wrapper_of_argument(ast.parse(textwrap.dedent(source)).body[0]) is passes


CALLER = """
import functools
import time
import torch
{wrapper}

{decorator}
def to_tensor(values):
    return torch.tensor(values)


to_tensor(torch.ones(3))
"""


@pytest.mark.parametrize("wrapper, decorator, expected", [
    ("", "", [(9, "TEN204")]),
    (TIMED, "@timed", [(18, "TEN204")]),
    ("", "@torch.no_grad()", [(9, "TEN204")]),
    ("def listed(fn):\n    def w(*args, **kwargs):\n        return fn(*[list(a) for a in args], **kwargs)\n"
     "    return w\n", "@listed", []),  # what the def gets is not what the caller passes
])
def test_callers_of_a_decorated_def_say_what_its_parameter_is(wrapper, decorator, expected):
    assert codes(CALLER.format(wrapper=wrapper, decorator=decorator)) == expected
