"""The shipped pre-commit hooks and the flake8 route, run with the real `pre-commit`.

`pre-commit try-repo` installs the hook from a committed copy of this repository (the files under test,
committed or not) into its own virtualenv and runs it in a temporary project repository.
"""
from __future__ import annotations

import re

import pytest
import yaml
from tests.support.fixture_tools import expectations
from tests.support.precommit_tools import (FIXTURES, ROOT, committed_repo, fixture_text, output,
                                           pre_commit, write)

BAD = FIXTURES / "TEN101" / "bad.py"


def reported(stdout: str, name: str) -> set[tuple[int, int, str]]:
    """(line, col, code) of every `name:line:col: CODE` line in a hook's output."""
    found = set()
    for line in stdout.splitlines():
        if line.startswith(f"{name}:"):
            _, lineno, col, rest = line.split(":", 3)
            found.add((int(lineno), int(col), rest.split()[0]))
    return found


def test_manifest_is_valid_and_declares_both_hooks(tmp_path):
    proc = pre_commit(ROOT, tmp_path, "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml"))
    assert proc.returncode == 0, output(proc)
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {k: h["entry"] for k, h in hooks.items()} == {
        "tensorcopy": "flake8-tensorcopy check --force-exclude",  # pre-commit names every file
        "tensorcopy-fix": "flake8-tensorcopy fix --force-exclude",
    }
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["require_serial"] is True
        assert set(hook["types_or"]) == {"python", "pyi", "jupyter"}


@pytest.mark.slow
def test_check_hook_fails_on_the_bug_then_passes_once_fixed(tmp_path, hook_repo, precommit_home):
    bad = fixture_text("TEN101", "bad")
    project = committed_repo(tmp_path / "project", {"train.py": bad, "notes.txt": bad})
    failed = pre_commit(project, precommit_home, "try-repo", str(hook_repo), "tensorcopy", "--all-files")
    assert failed.returncode == 1, output(failed)
    assert reported(failed.stdout, "train.py") == expectations(BAD), output(failed)
    assert "notes.txt" not in failed.stdout  # only Python files are handed to the hook

    write(project, "train.py", fixture_text("TEN101", "fixed"))
    passed = pre_commit(project, precommit_home, "try-repo", str(hook_repo), "tensorcopy", "--all-files")
    assert passed.returncode == 0, output(passed)
    assert "TEN101" not in passed.stdout and "Passed" in passed.stdout, output(passed)


def flake8_route_config(package: str) -> str:
    """The upstream flake8 hook's definition, as a local hook with this package as extra dependency."""
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [{
        "id": "flake8", "name": "flake8", "entry": "flake8", "language": "python", "types": ["python"],
        "require_serial": True, "args": ["--select=TEN"], "additional_dependencies": [package],
    }]}]})


@pytest.mark.slow
def test_flake8_route_with_additional_dependencies(tmp_path, hook_repo, precommit_home):
    project = committed_repo(tmp_path / "project", {
        ".pre-commit-config.yaml": flake8_route_config(str(hook_repo)),
        "train.py": fixture_text("TEN101", "bad"),
    })
    failed = pre_commit(project, precommit_home, "run", "flake8", "--all-files")
    assert failed.returncode == 1, output(failed)
    assert reported(failed.stdout, "train.py") == expectations(BAD), output(failed)

    write(project, "train.py", fixture_text("TEN101", "fixed"))
    passed = pre_commit(project, precommit_home, "run", "flake8", "--all-files")
    assert passed.returncode == 0 and "Passed" in passed.stdout, output(passed)


def test_readme_pre_commit_snippets_are_valid_configs(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Integrations", 1)[1].split("\n## ", 1)[0]
    snippets = [block for block in re.findall(r"```yaml\n(.*?)```", section, re.S) if "repos:" in block]
    assert len(snippets) == 2  # the shipped hooks and the flake8 route
    for number, snippet in enumerate(snippets):
        config = tmp_path / f"config{number}.yaml"
        config.write_text(snippet)
        proc = pre_commit(ROOT, tmp_path / "home", "validate-config", str(config))
        assert proc.returncode == 0, output(proc) + snippet
    hook_ids = {hook["id"] for hook in yaml.safe_load(snippets[0])["repos"][0]["hooks"]}
    assert hook_ids <= {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
