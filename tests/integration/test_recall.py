"""scripts/recall.py: cases match findings by statement, both tiers are read, the CI gate fails as it should.

The run over the real labelled corpus is a CI step (.ci/run), not a test: it downloads releases.
"""
from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.cli_tools import load_script

recall = load_script("recall")

TRAIN = """import torch


def fit(model, loader, opt):
    best = model.state_dict()
    total = 0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss
    model.load_state_dict(best)
    return total


def move(batch, device):
    x = torch.zeros(3)
    x.to(
        device)
    return x
"""

NOTEBOOK = {"cells": [{"cell_type": "markdown", "source": "# title", "metadata": {}},
                      {"cell_type": "code", "source": "import torch\nx = torch.zeros(2)\n", "metadata": {},
                       "outputs": [], "execution_count": None},
                      {"cell_type": "code", "source": "x.to('cpu')\nprint(x)\n", "metadata": {}, "outputs": [],
                       "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def labels(tmp_path, floor, cases):
    lines = [f"recall_floor = {floor}", ""]
    for case in cases:
        lines.append("[[case]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in case.items()]
        lines.append("")
    path = tmp_path / "recall.toml"
    path.write_text("\n".join(lines))
    return path


def pypi(path, line, code, label, **extra):
    return {"package": "demo", "version": "1.0", "path": path, "line": line, "code": code, "label": label,
            "why": "w", "fix": "https://example.org/fix" if label == "bug" else "", **extra}


@pytest.fixture
def releases(tmp_path):
    pkg = tmp_path / "releases" / "demo==1.0" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "train.py").write_text(TRAIN)
    (pkg / "nb.ipynb").write_text(json.dumps(NOTEBOOK))
    return tmp_path / "releases"


def run(tmp_path, releases, cases, floor=0.0, *mode):
    path = labels(tmp_path, floor, cases)
    return recall.main(["--labels", str(path), "--releases", str(releases), "--mirrors", str(tmp_path / "m"),
                        *mode])


def test_a_case_matches_any_line_of_its_statement_and_only_its_code(tmp_path, releases):
    floor, cases = recall.load_labels(labels(tmp_path, 0, [
        pypi("demo/train.py", 5, "TEN301", "bug"),
        pypi("demo/train.py", 12, "TEN401", "bug"),
        pypi("demo/train.py", 20, "TEN104", "bug"),      # second line of the reported statement
        pypi("demo/train.py", 12, "TEN203", "benign"),  # same line, another code: not flagged
    ]))
    scored = recall.score(cases, (1,), releases, tmp_path, fetch=False)
    assert [scored.found[c] for c in cases] == [True, True, True, False]
    assert scored.unlabelled == [] and scored.missing == {}
    fig = recall.figures(scored)
    assert (fig["bugs"], fig["found"], fig["recall"], fig["precision"]) == (3, 3, 1.0, 1.0)


def test_notebook_cases_are_cell_and_line(tmp_path, releases):
    _, cases = recall.load_labels(labels(tmp_path, 0, [pypi("demo/nb.ipynb", 1, "TEN104", "bug", cell=3),
                                                       pypi("demo/nb.ipynb", 2, "TEN104", "benign", cell=2)]))
    scored = recall.score(cases, (1,), releases, tmp_path, fetch=False)
    assert [scored.found[c] for c in cases] == [True, False]


def test_gate_fails_on_unlabelled_findings_low_recall_low_precision_and_a_stale_floor(tmp_path, releases, capsys):
    bugs = [pypi("demo/train.py", 5, "TEN301", "bug"), pypi("demo/train.py", 12, "TEN401", "bug")]
    assert run(tmp_path, releases, bugs, 0.0, "--check") == 1  # the TEN104 finding has no label
    assert "no label for demo==1.0 demo/train.py:19: TEN104" in capsys.readouterr().err
    bugs.append(pypi("demo/train.py", 19, "TEN104", "benign"))
    assert run(tmp_path, releases, bugs, 0.0, "--check") == 1  # precision 2/3, and recall above the floor
    err = capsys.readouterr().err
    assert "precision 0.667 is below 0.95" in err and "raise recall_floor" in err
    bugs[-1] = pypi("demo/train.py", 19, "TEN104", "bug")
    assert run(tmp_path, releases, bugs, 1.0, "--check") == 0
    bugs.append(pypi("demo/train.py", 18, "TEN204", "bug"))  # a bug the engine misses: recall 3/4
    assert run(tmp_path, releases, bugs, 1.0, "--check") == 1
    assert "recall 0.750 is below the floor 1.000" in capsys.readouterr().err


def test_a_labelled_line_outside_the_file_or_a_missing_release_is_not_scored(tmp_path, releases):
    _, cases = recall.load_labels(labels(tmp_path, 0, [
        pypi("demo/train.py", 500, "TEN104", "bug"), {**pypi("x.py", 1, "TEN104", "bug"), "package": "gone"}]))
    scored = recall.score(cases, (1,), releases, tmp_path, fetch=False)
    assert scored.found == {}
    assert scored.missing == {"demo==1.0 demo/train.py": "labelled line not in the file: demo==1.0 demo/train.py:500",
                              "gone==1.0 x.py": "release gone==1.0 not fetched"}
    assert recall.check(0.0, scored) == 1


def test_git_tier_reads_the_labelled_commit_and_names_missing_snapshots(tmp_path):
    work = tmp_path / "m" / "owner+proj" / "repo"
    subprocess.run(["git", "init", "-q", str(tmp_path / "w")], check=True)
    (tmp_path / "w" / "train.py").write_text(TRAIN)
    git = ["git", "-C", str(tmp_path / "w"), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "c"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    work.parent.mkdir(parents=True)
    (tmp_path / "w" / ".git").rename(work)
    case = {"repo": "owner/proj", "commit": sha, "path": "train.py", "line": 5, "code": "TEN301",
            "label": "bug", "why": "w", "fix": "f"}
    _, cases = recall.load_labels(labels(tmp_path, 0, [case, {**case, "repo": "other/proj"}]))
    scored = recall.score(cases, (2,), tmp_path / "r", tmp_path / "m", fetch=False)
    assert scored.found == {cases[0]: True}
    assert list(scored.missing.values()) == [f"no snapshot of other/proj under {tmp_path / 'm'}"]


def test_a_bug_needs_its_fix_reference(tmp_path):
    with pytest.raises(ValueError, match="label must be bug"):
        recall.load_labels(labels(tmp_path, 0, [{**pypi("a.py", 1, "TEN104", "bug"), "fix": ""}]))


def test_an_unconfirmed_hazard_counts_as_right_for_precision_but_not_for_recall(tmp_path, releases):
    _, cases = recall.load_labels(labels(tmp_path, 0, [pypi("demo/train.py", 5, "TEN301", "bug"),
                                                       pypi("demo/train.py", 19, "TEN104", "unconfirmed"),
                                                       pypi("demo/train.py", 12, "TEN401", "benign")]))
    fig = recall.figures(recall.score(cases, (1,), releases, tmp_path, fetch=False))
    assert (fig["bugs"], fig["found"], fig["unconfirmed"], fig["flagged"]) == (1, 1, 1, 1)
    assert (fig["recall"], fig["precision"]) == (1.0, 2 / 3)
