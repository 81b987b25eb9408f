"""Helpers for running the real `pre-commit` against a committed copy of this repository.

Creating a hook environment (a virtualenv plus `pip install`) is the slow part. `pre-commit run` with a
config keeps it in PRE_COMMIT_HOME, so the tests of a session share one home and one hook repository:
the cache below makes the session fixtures of several test modules (which call `shared_home` /
`shared_hook_repo`) return the same directories. (`try-repo` always builds its environment in a
temporary store of its own.)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".pytest_cache", ".hypothesis", ".venv"
)
_SHARED: dict = {}


def _once(key: str, make: Callable[[], Path]) -> Path:
    if key not in _SHARED:
        _SHARED[key] = make()
    return _SHARED[key]


def clean_env(**extra: str) -> dict:
    """The test's environment without git variables a surrounding hook might have set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(extra)
    return env


def git(cwd: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.name=tests", "-c", "user.email=tests@example.invalid",
           "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=clean_env(), check=True)
    return proc.stdout.strip()


def committed_repo(path: Path, files: dict) -> Path:
    """A new git repository at `path` holding `files` (name -> text), committed."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for name, text in files.items():
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def make_hook_repo(dest: Path) -> Path:
    """This repository's current files (committed or not) as a fresh, committed git repository."""
    shutil.copytree(ROOT, dest, ignore=IGNORED)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot under test")
    return dest


def shared_home(tmp_path_factory) -> Path:
    """One PRE_COMMIT_HOME (hook environments) for the whole test session."""
    return _once("home", lambda: tmp_path_factory.mktemp("pre-commit-home"))


def shared_hook_repo(tmp_path_factory) -> Path:
    """One committed copy of this repository for the whole test session."""
    return _once("repo", lambda: make_hook_repo(tmp_path_factory.mktemp("hook-repo") / "flake8-tensorcopy"))


def pre_commit(project: Path, home: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run `python -m pre_commit ARGS` in `project` with the shared hook cache."""
    cmd = [sys.executable, "-m", "pre_commit", *args]
    env = clean_env(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never")
    return subprocess.run(cmd, cwd=project, capture_output=True, text=True, env=env, timeout=timeout)


def write(project: Path, name: str, text: str) -> None:
    """Change a file of the project and stage it (`--all-files` runs on the files git knows)."""
    (project / name).write_text(text)
    git(project, "add", name)


def fixture_text(code: str, kind: str) -> str:
    return (FIXTURES / code / f"{kind}.py").read_text()


def output(proc: Optional[subprocess.CompletedProcess]) -> str:
    return "" if proc is None else f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
