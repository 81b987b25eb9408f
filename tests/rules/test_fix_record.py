"""A fix is as precise as its finding: each fix form is offered only on the evidence of its fixes judged on
code the rules were not tuned on (ecosystem/fix-record.toml, from the fix reviews of docs/fix-review.md);
the others are withheld, and say why."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from flake8_tensorcopy.rules import BY_CODE, RULES

RECORD = tomllib.loads((Path(__file__).resolve().parents[2] / "ecosystem" / "fix-record.toml").read_text())
FORMS = RECORD["form"]


def counted(entry: dict) -> tuple[int, int]:
    """(judged, correct) over the latest review and the `earlier` ones whose wrong fixes no change has
    addressed since (a form is judged by every review since it last changed)."""
    reviews = [entry, *entry.get("earlier", ())]
    return sum(r["judged"] for r in reviews), sum(r["correct"] for r in reviews)


def earned(entry: dict) -> bool:
    """Its reviews since it last changed judged enough of its fixes and found every one correct (or it
    edits only a comment)."""
    judged, correct = counted(entry)
    return entry.get("edits") == "comment" or RECORD["min_judged"] <= judged == correct


def reason(entry: dict) -> str:
    judged, correct = counted(entry)
    if judged == 0:
        return "no fix of it judged on code the rules were not tuned on yet"
    where = " and ".join(f"{r['review']} at {r['commit']}" for r in [entry, *entry.get("earlier", ())])
    return f"{correct} of {judged} fixes correct in {where}, on code the rules were not tuned on: {entry['why']}"


def test_every_fix_form_has_one_record():
    forms = {(r.code, f.safety.value) for r in RULES for f in r.fix_forms}
    recorded = [(e["code"], e["safety"]) for e in FORMS]
    assert sorted(recorded) == sorted(forms) and len(set(recorded)) == len(recorded)


@pytest.mark.parametrize("entry", FORMS, ids=lambda e: f"{e['code']}-{e['safety']}")
def test_a_form_is_offered_exactly_when_its_record_earns_it(entry):
    forms = [f for f in BY_CODE[entry["code"]].fix_forms if f.safety.value == entry["safety"]]
    expected = "" if earned(entry) else reason(entry)
    assert [f.withheld for f in forms] == [expected] * len(forms)


def test_the_bar_withholds_what_it_should():
    """The rule of the record itself: a wrong fix, or too few judged, withholds; a comment edit does not."""
    low = RECORD["min_judged"]
    assert earned({"judged": low, "correct": low}) and not earned({"judged": 0, "correct": 0})
    assert not earned({"judged": 80, "correct": 79}) and earned({"judged": 0, "correct": 0, "edits": "comment"})
    assert not earned({"judged": 2, "correct": 2, "earlier": [{"judged": 8, "correct": 0}]})
