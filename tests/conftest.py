import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Property tests run a bounded number of examples by default so CI stays fast;
# HYPOTHESIS_PROFILE=long (examples: HYPOTHESIS_EXAMPLES, default 5000) runs them for longer.
SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("ci", max_examples=30, deadline=None, derandomize=False, suppress_health_check=SLOW_IS_FINE)
settings.register_profile("long", max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "5000")), deadline=None,
                          suppress_health_check=SLOW_IS_FINE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session", autouse=True)
def check_cache(tmp_path_factory):
    """`check` keeps its cache in one folder of the session, not beside each test's files (tests/test_cache.py
    tests the default place)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FLAKE8_TENSORCOPY_CACHE_DIR", str(tmp_path_factory.mktemp("check-cache")))
        yield


# Shared by the pre-commit tests: one hook environment cache and one committed copy of this repository.
@pytest.fixture(scope="session")
def precommit_home(tmp_path_factory):
    from precommit_tools import shared_home

    return shared_home(tmp_path_factory)


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory):
    from precommit_tools import shared_hook_repo

    return shared_hook_repo(tmp_path_factory)
