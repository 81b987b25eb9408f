import os

import pytest
from hypothesis import HealthCheck, settings

# Property tests run a bounded number of examples. Locally ("dev") they are random and hypothesis keeps its
# example database (a failure found once is tried first next time); under CI (the CI environment variable
# set, as CI services and .ci/run set it) they are derandomised with no database, so a run repeats exactly.
# HYPOTHESIS_PROFILE names a profile outright: long (examples: HYPOTHESIS_EXAMPLES, default 5000) runs longer.
SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("dev", settings.get_profile("default"), max_examples=30, deadline=None,
                          suppress_health_check=SLOW_IS_FINE)  # hypothesis's own default turns derandomised under CI
settings.register_profile("ci", settings.get_profile("dev"), derandomize=True, database=None)
settings.register_profile("long", settings.get_profile("dev"),
                          max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "5000")))


def hypothesis_profile(environ) -> str:
    """The profile for a run: HYPOTHESIS_PROFILE if set, else "ci" under CI, else "dev"."""
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    return "ci" if environ.get("CI", "").lower() not in ("", "0", "false") else "dev"


settings.load_profile(hypothesis_profile(os.environ))


@pytest.fixture(scope="session", autouse=True)
def check_cache(tmp_path_factory):
    """`check` keeps its cache in one folder of the session, not beside each test's files (tests/cli/test_cache.py
    tests the default place)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLAKE8_TENSORCOPY_CACHE_DIR", str(tmp_path_factory.mktemp("check-cache")))
        yield


# Shared by the pre-commit tests: one hook environment cache and one committed copy of this repository.
@pytest.fixture(scope="session")
def precommit_home(tmp_path_factory):
    from tests.support.precommit_tools import shared_home

    return shared_home(tmp_path_factory)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory):
    from tests.support.precommit_tools import shared_hook_repo

    return shared_hook_repo(tmp_path_factory)


@pytest.fixture
def every_fix_offered(monkeypatch, tmp_path_factory):
    """The fix forms the rules withhold (rules/model.FixForm.withheld) lifted: tests of what a fix writes and
    what it means run its code whether or not it is offered yet (tests/rules/test_fix_record.py holds the
    gate itself). `check` gets a cache folder of its own, so no answer crosses between lifted and gated runs."""
    from flake8_tensorcopy.rules.model import Rule

    monkeypatch.setattr(Rule, "withholds", lambda self, fix: False)
    monkeypatch.setenv("FLAKE8_TENSORCOPY_CACHE_DIR", str(tmp_path_factory.mktemp("lifted-cache")))
