"""tests/conftest.py: property tests repeat exactly under CI and keep their example database locally."""
from __future__ import annotations

import pytest
from hypothesis import settings

from tests.conftest import hypothesis_profile


@pytest.mark.parametrize("environ, profile", [
    ({}, "dev"),
    ({"CI": "true"}, "ci"),
    ({"CI": "1"}, "ci"),
    ({"CI": "false"}, "dev"),
    ({"CI": ""}, "dev"),
    ({"CI": "true", "HYPOTHESIS_PROFILE": "long"}, "long"),
    ({"HYPOTHESIS_PROFILE": "ci"}, "ci"),
])
def test_the_profile_follows_the_environment(environ, profile):
    assert hypothesis_profile(environ) == profile


def test_ci_is_derandomised_without_a_database_and_dev_keeps_one():
    ci, dev = settings.get_profile("ci"), settings.get_profile("dev")
    assert ci.derandomize and ci.database is None
    assert not dev.derandomize and dev.database is not None
    assert ci.max_examples == dev.max_examples and ci.deadline is dev.deadline is None
