"""The `tensorcopy-fix` pre-commit hook, run with the real `pre-commit`.

The hook runs `flake8-tensorcopy fix`: it rewrites files in place (pre-commit then fails because files
changed), a second run passes, and a finding it may not fix keeps the hook failing. The project configs
name the committed copy of this repository by path and commit, so `--unsafe-fixes` can be passed as the
hook's args and one hook environment serves every test (`try-repo` would build a new one per run).
"""
from __future__ import annotations

import re

import pytest
import yaml
from tests.support.precommit_tools import committed_repo, fixture_text, git, output, pre_commit

pytestmark = pytest.mark.slow  # every test builds or runs a hook environment


def fix_hook_config(hook_repo, args) -> str:
    rev = git(hook_repo, "rev-parse", "HEAD")
    hook = {"id": "tensorcopy-fix", "args": args}
    return yaml.safe_dump({"repos": [{"repo": str(hook_repo), "rev": rev, "hooks": [hook]}]})


def test_fix_hook_rewrites_the_file_then_passes(tmp_path, hook_repo, precommit_home):
    bad = fixture_text("TEN202", "bad")
    project = committed_repo(tmp_path / "project", {
        ".pre-commit-config.yaml": fix_hook_config(hook_repo, ["--unsafe-fixes"]),  # TEN202's fix is unsafe
        "train.py": bad,
    })
    first = pre_commit(project, precommit_home, "run", "tensorcopy-fix", "--all-files")
    assert first.returncode == 1 and "files were modified by this hook" in first.stdout, output(first)
    # every shallow copy of the fixture (`copy.copy(x)`, `shallow(x)` of `from copy import copy as shallow`)
    # becomes `x.detach().clone()` and the imports it leaves unused go; nothing else changes (comments kept)
    expected = re.sub(r"(?:copy\.copy|shallow)\(([\w.]+)\)", r"\1.detach().clone()", bad)
    expected = expected.replace("import copy\nfrom copy import copy as shallow\n\n", "")
    assert (project / "train.py").read_text() == expected

    git(project, "add", "train.py")
    second = pre_commit(project, precommit_home, "run", "tensorcopy-fix", "--all-files")
    assert second.returncode == 0 and "Passed" in second.stdout, output(second)
    assert (project / "train.py").read_text() == expected


def test_finding_left_unfixed_keeps_the_hook_failing(tmp_path, hook_repo, precommit_home):
    """By default only safe fixes apply; TEN101 offers none (its form is withheld): its findings remain."""
    bad = fixture_text("TEN101", "bad")
    project = committed_repo(tmp_path / "project", {
        ".pre-commit-config.yaml": fix_hook_config(hook_repo, []),  # the hook as shipped
        "train.py": bad,
    })
    for _ in range(2):
        proc = pre_commit(project, precommit_home, "run", "tensorcopy-fix", "--all-files")
        assert proc.returncode == 1, output(proc)
        assert "files were modified by this hook" not in proc.stdout, output(proc)
        assert "train.py:9:5" in proc.stdout and "TEN101" in proc.stdout, output(proc)
        assert (project / "train.py").read_text() == bad
