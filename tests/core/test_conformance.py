"""The engine replays every conformance record (tests/conformance/records.jsonl, a copy of
shared/conformance/records.jsonl written by an independent implementation of docs/RULES.md), and a
corrupted record is rejected with a RecordError naming the line and the event.

The records travel with the repository, so a clone without ``../shared`` runs every test here;
tests/core/test_shared_copies.py checks the copy against ``../shared`` where that folder exists."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from midnight_env.records import RecordError, replay_file, replay_record

RECORDS = Path(__file__).parents[1] / "conformance" / "records.jsonl"


def _lines() -> list[tuple[int, str]]:
    return [(n, text) for n, text in enumerate(RECORDS.read_text("utf-8").splitlines(), start=1) if text.strip()]


LINES = _lines()


def _id(line: tuple[int, str]) -> str:
    rec = json.loads(line[1])
    return f"line{line[0]}-{rec['variant']}-{rec['num_players']}p"


@pytest.mark.parametrize("line", LINES, ids=[_id(x) for x in LINES])
def test_engine_replays_conformance_record(line):
    number, text = line
    rec = json.loads(text)
    result = replay_record(rec, number)
    assert [int(x) for x in result.state.spooky[0]] == rec["final_points"]
    assert result.decisions == sum(ev["e"] in ("place", "move") for ev in rec["events"])
    assert result.rolls == sum(ev["e"] == "roll" for ev in rec["events"])


# ------------------------------------------------------------------------------------------------
# corrupted records


@pytest.fixture(scope="module")
def classic_record() -> tuple[int, dict]:
    """The first midnight_party record with a round end (line number, record)."""
    for number, text in LINES:
        rec = json.loads(text)
        if rec["variant"] == "midnight_party" and any(ev["e"] == "round_end" for ev in rec["events"]):
            return number, rec
    pytest.fail("no midnight_party record with a round end in the conformance file")


def _first(rec: dict, test) -> int:
    return next(k for k, ev in enumerate(rec["events"]) if test(k, ev))


def _rejected(rec: dict, number: int, event: int | None, words: str) -> RecordError:
    with pytest.raises(RecordError) as info:
        replay_record(rec, number)
    err = info.value
    where = f"line {number}" + (f", event {event}" if event is not None else "")
    assert str(err).startswith(where + ":"), f"{err} does not start with {where!r}"
    assert (err.line, err.event) == (number, event)
    assert words in str(err)
    return err


def test_a_changed_legal_set_is_rejected(classic_record):
    number, rec = classic_record
    rec = copy.deepcopy(rec)
    k = _first(rec, lambda k, ev: ev["e"] == "move" and len(ev["legal"]) > 1)
    dropped = rec["events"][k]["legal"].pop()
    err = _rejected(rec, number, k, "legal set differs")
    assert dropped in str(err)


def test_an_extra_legal_choice_is_rejected(classic_record):
    number, rec = classic_record
    rec = copy.deepcopy(rec)
    k = _first(rec, lambda k, ev: ev["e"] == "place")
    rec["events"][k]["legal"].append("g99")
    _rejected(rec, number, k, "legal set differs")


def test_a_face_that_is_no_face_is_rejected(classic_record):
    number, rec = classic_record
    rec = copy.deepcopy(rec)
    k = _first(rec, lambda k, ev: ev["e"] == "roll")
    rec["events"][k]["face"] = 3
    _rejected(rec, number, k, "face 3 is not a die face")


def test_a_wrong_face_is_caught_at_the_next_decision(classic_record):
    """A number roll followed by a move, changed to Hugo: the move is then out of turn."""
    number, rec = classic_record
    rec = copy.deepcopy(rec)
    events = rec["events"]
    k = _first(rec, lambda k, ev: ev["e"] == "roll" and ev["face"] != "hugo" and events[k + 1]["e"] == "move")
    events[k]["face"] = "hugo"
    _rejected(rec, number, k + 1, "move")


def test_a_wrong_number_changes_the_legal_set(classic_record):
    number, rec = classic_record
    events = rec["events"]
    k = _first(rec, lambda k, ev: ev["e"] == "roll" and ev["face"] != "hugo" and events[k + 1]["e"] == "move")
    for face in (1, 2, 4, 5):
        if face == events[k]["face"]:
            continue
        bad = copy.deepcopy(rec)
        bad["events"][k]["face"] = face
        with pytest.raises(RecordError) as info:
            replay_record(bad, number)
        assert info.value.line == number and info.value.event is not None and info.value.event > k


def test_wrong_final_points_winners_or_truncation_are_rejected(classic_record):
    number, rec = classic_record
    bad = copy.deepcopy(rec)
    bad["final_points"][0] += 1
    _rejected(bad, number, None, "final_points")
    bad = copy.deepcopy(rec)
    bad["winners"] = [p for p in range(rec["num_players"]) if p not in rec["winners"]] or [99]
    _rejected(bad, number, None, "winners")
    bad = copy.deepcopy(rec)
    bad["truncated"] = not rec["truncated"]
    _rejected(bad, number, None, "truncated")


def test_an_unknown_event_is_rejected(classic_record):
    number, rec = classic_record
    rec = copy.deepcopy(rec)
    rec["events"].insert(5, {"e": "dance", "p": 0})
    _rejected(rec, number, 5, "unknown event kind 'dance'")


def test_a_wrong_round_end_is_rejected(classic_record):
    number, rec = classic_record
    k = _first(rec, lambda k, ev: ev["e"] == "round_end")
    bad = copy.deepcopy(rec)
    bad["events"][k]["points"][0] += 2
    _rejected(bad, number, k, "round 1 points")
    bad = copy.deepcopy(rec)
    del bad["events"][k]
    _rejected(bad, number, k, "expected round_end for round 1")


def test_a_choice_by_the_wrong_player_is_rejected(classic_record):
    number, rec = classic_record
    rec = copy.deepcopy(rec)
    k = _first(rec, lambda k, ev: ev["e"] == "move")
    rec["events"][k]["p"] = (rec["events"][k]["p"] + 1) % rec["num_players"] if rec["num_players"] > 1 else 7
    _rejected(rec, number, k, "move by player")


def test_a_bad_json_line_names_its_line(tmp_path, classic_record):
    _, rec = classic_record
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(rec) + "\n" + '{"format": "midnight-record/1", "events": [\n', "utf-8")
    with pytest.raises(RecordError, match=r"^line 2: not valid JSON") as info:
        replay_file(path)
    assert info.value.line == 2


def test_replay_file_names_the_line_of_a_bad_record(tmp_path, classic_record):
    _, rec = classic_record
    bad = copy.deepcopy(rec)
    k = _first(bad, lambda k, ev: ev["e"] == "move" and len(ev["legal"]) > 1)
    bad["events"][k]["legal"].pop()
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (rec, rec, bad)) + "\n", "utf-8")
    with pytest.raises(RecordError, match=rf"^line 3, event {k}: legal set differs"):
        replay_file(path)
