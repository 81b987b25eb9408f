"""scripts/ecosystem.py: triage keys survive moved lines, --check sees new and stale findings, the file is sound.

The run over the real corpus is a CI step (.ci/run), not a test: it needs the downloaded corpus.
"""
from __future__ import annotations


import pytest

from tests.support.cli_tools import load_script

from flake8_tensorcopy.rules import BY_CODE

eco = load_script("ecosystem")

BUGGY = """import copy
import torch


def snapshot(x):
    h = torch.relu(x)[1:]
    return copy.deepcopy(h)
"""


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setattr(eco, "TRIAGE", tmp_path / "triage.toml")
    monkeypatch.setattr(eco, "LAST_RUN", tmp_path / "last-run.json")
    pkg = tmp_path / "corpus" / "demo" / "demo"
    pkg.mkdir(parents=True)
    (pkg / "snap.py").write_text(BUGGY)
    (pkg / "broken.py").write_text("def f(:\n    y = x.detach()\n")  # passes the pre-filter, error where it looks
    (pkg / "clean.py").write_text("x = 1\n")
    return tmp_path / "corpus"


def run(corpus):
    return eco.run(corpus, ["demo"], jobs=1)


def triage():
    return eco.load_triage(eco.TRIAGE)


def test_run_records_findings_and_unparsable_files(corpus):
    data = run(corpus)
    files = {f["path"]: f for f in data["files"]}
    assert [x["code"] for x in files["demo/snap.py"]["findings"]] == ["TEN201"]
    assert files["demo/snap.py"]["findings"][0]["text"] == "return copy.deepcopy(h)"
    assert files["demo/broken.py"]["error"].startswith("cannot parse")
    assert files["demo/clean.py"]["error"] == "" and not files["demo/clean.py"]["parsed"]


def test_check_fails_until_triaged_then_survives_moved_lines(corpus, capsys):
    assert eco.check(run(corpus), triage()) == 1
    assert "untriaged" in capsys.readouterr().out
    data = run(corpus)
    eco.triage_todo(data, triage(), corpus, add=True)
    assert [e["verdict"] for e in triage().values()] == ["todo"]
    assert eco.check(data, triage()) == 1  # a todo verdict is not a verdict
    (key,) = triage()
    assert eco.record_verdict(eco.key_id(key), "true-bug", "h is not a leaf", data, triage()) == 0
    assert eco.check(data, triage()) == 0
    path = corpus / "demo" / "demo" / "snap.py"
    path.write_text("# a comment\n\n" + BUGGY)  # the finding moves down two lines: still the same key
    assert eco.check(run(corpus), triage()) == 0


def test_check_reports_stale_entries_and_changed_counts(corpus, capsys):
    data = run(corpus)
    eco.triage_todo(data, triage(), corpus, add=True)
    (key,) = triage()
    eco.record_verdict(eco.key_id(key), "true-bug", "h is not a leaf", data, triage())
    path = corpus / "demo" / "demo" / "snap.py"
    path.write_text(BUGGY + "\n\ndef again(x):\n    h = torch.relu(x)[1:]\n    return copy.deepcopy(h)\n")
    assert eco.check(run(corpus), triage()) == 1  # same key twice: the count changed
    path.write_text("x = 2\n")
    capsys.readouterr()
    data = run(corpus)
    assert eco.check(data, triage()) == 1
    assert "stale triage entry" in capsys.readouterr().out
    eco.triage_todo(data, triage(), corpus, add=False, drop_stale=True)
    assert triage() == {} and eco.check(data, triage()) == 0


def test_precision_counts_true_bugs_and_defensible_warnings():
    a, b, c = ("p", "f.py", "TEN201", "a"), ("p", "f.py", "TEN201", "b"), ("p", "g.py", "TEN201", "c")
    found = {a: 2, b: 1, c: 1}
    verdicts = {a: {"verdict": "true-bug"}, b: {"verdict": "defensible"}, c: {"verdict": "false-positive"}}
    per = eco.precision(found, verdicts)["TEN201"]
    assert (per["true-bug"], per["defensible"], per["false-positive"]) == (2, 1, 1)


def test_triage_file_round_trips_awkward_text(tmp_path):
    key = ("p", "a/b.py", "TEN203", 'x = "q\\\\" + \'é\' # tab\there')
    entries = {key: dict(zip(("package", "path", "code", "text"), key), verdict="intended", reason="r", count=3)}
    eco.save_triage(entries, tmp_path / "t.toml")
    loaded = eco.load_triage(tmp_path / "t.toml")
    assert list(loaded) == [key] and loaded[key]["count"] == 3


def test_committed_triage_file_is_complete_and_well_formed():
    entries = eco.load_triage()
    for key, entry in entries.items():
        assert entry["verdict"] in eco.VERDICTS and entry["verdict"] != "todo", key
        assert entry["reason"].strip(), key
        assert key[2] in BY_CODE and BY_CODE[key[2]].default_on, key
