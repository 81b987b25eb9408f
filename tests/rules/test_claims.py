"""Every rule's claim, checked against real torch: the cases of fixtures/TENxxx/bad.py show the hazard,
the same cases in fixed.py do not, and each case counts (swapped for its counterpart, it fails the check).

The rule-specific checks live next to the fixtures, in fixtures/TENxxx/claim.py: `assert_hazard(bad)` and
`assert_fixed(fixed)` take the `case_*` functions by name, and any `claim_*()` function is one more claim
about torch that the rule relies on."""
from __future__ import annotations

import functools

import pytest

from tests.support.fixture_tools import cases, load
from flake8_tensorcopy.rules import RULES

CODES = [r.code for r in RULES]
CHECKS = {"bad": "assert_hazard", "fixed": "assert_fixed"}
OTHER = {"bad": "fixed", "fixed": "bad"}
# What a check raises when it rejects a case: its own assertion, a pytest.raises / pytest.warns that saw
# nothing, or torch itself raising (or, under an "error" filter, warning) the hazard the check rules out.
REJECTED = (AssertionError, pytest.fail.Exception, RuntimeError, UserWarning)


def claim(code: str):
    return load(code, "claim")


def counted(funcs: dict) -> tuple[dict, set]:
    """The functions, each recording its name in the returned set when called."""
    called = set()

    def wrap(name, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            called.add(name)
            return fn(*args, **kwargs)
        return run

    return {name: wrap(name, fn) for name, fn in funcs.items()}, called


def both(code: str) -> dict:
    found = {variant: cases(load(code, variant)) for variant in CHECKS}
    assert found["bad"] and sorted(found["bad"]) == sorted(found["fixed"]), code
    return found


@pytest.mark.parametrize("variant", list(CHECKS))
@pytest.mark.parametrize("code", CODES)
def test_claim_holds_for_every_case(code, variant):
    """bad: every case shows the hazard; fixed: every case is free of it. No case is left out."""
    funcs, called = counted(both(code)[variant])
    getattr(claim(code), CHECKS[variant])(funcs)
    assert called == set(funcs), f"cases the check never ran: {sorted(set(funcs) - called)}"


SWAPS = [(code, variant, name) for code in CODES for variant in CHECKS for name in sorted(cases(load(code, variant)))]


@pytest.mark.parametrize("code,variant,name", SWAPS)
def test_each_case_can_fail_its_claim(code, variant, name):
    """The check rejects the set where this one case is its counterpart (the fixed case run as the bad
    one, or the bad case as the fixed one): it tests the case, not only that it runs."""
    found = both(code)
    swapped = {**found[variant], name: found[OTHER[variant]][name]}
    with pytest.raises(REJECTED):
        getattr(claim(code), CHECKS[variant])(swapped)


EXTRA = [(code, name) for code in CODES for name in vars(claim(code)) if name.startswith("claim_")]


@pytest.mark.parametrize("code,name", EXTRA)
def test_rule_specific_claim(code, name):
    getattr(claim(code), name)()
