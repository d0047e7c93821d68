"""Fuzzing the two doors bad input comes through: command-line arguments and record lines.

Whatever arrives, the answer is the result or one clear refusal: a command exits 0 or 2 (argparse's
own usage errors exit 2 too), never with a traceback; a record replays or raises RecordError."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from midnight_env.cli import main
from midnight_env.core.records import RecordError, replay_record

WEIRD = ["0", "-1", "1", "2", "3", "99999999999999999999", "1e3", "nan", "inf", "-inf", "", " ", "abc", "²",
         "random", "expert", "search:budget=abc", "search:budget=2,turns=2", "ppo", "x:y", "a,,b", "=", "rounds=1",
         "guests_per_player=99", "pass_rule=always", "variant=x", "hidden_castle", "midnight_party", "/dev/null",
         "/nonexistent/x.jsonl", "%41#?.sqlite", "\x00", "🎲"]
FLAGS = {
    "simulate": ["--variant", "--players", "--games", "--seed", "--agents", "--batch-size", "--set"],
    "render": ["--variant", "--players", "--seed", "--agents", "--line", "--delay", "--set", "--record"],
    "replay": [],
    "tournament": ["--variant", "--players", "--agents", "--games", "--seed", "--batch-size", "--set"],
    "play": ["--variant", "--players", "--seat", "--opponents", "--seed"],
}


def small(value: str, flag: str) -> str:
    """Keep runs short: counts of games and batch sizes stay small numbers when they are numbers."""
    if flag in ("--games", "--batch-size") and value.isascii() and value.lstrip("-").isdigit() and int(value) > 3:
        return "3"
    return value


@st.composite
def command_lines(draw):
    command = draw(st.sampled_from(sorted(FLAGS)))
    args = [command]
    for flag in draw(st.lists(st.sampled_from(FLAGS[command]), max_size=4, unique=True)) if FLAGS[command] else []:
        args += [flag, small(draw(st.sampled_from(WEIRD)), flag)]
    if command == "replay":
        args.append(draw(st.sampled_from(WEIRD)))
    return args


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=command_lines())
def test_the_command_answers_any_arguments_with_a_result_or_one_line(args, tmp_path, monkeypatch, capsys):
    import io
    import sys

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("q\n"))
    if args[0] == "tournament":
        args = [*args, "--db", str(tmp_path / "fuzz.sqlite"), "--resume", "--no-progress"]
    if args[0] in ("simulate",):
        args = [*args, "--no-progress"]
    try:
        code = main(args)
    except SystemExit as exit_:  # argparse refuses a malformed flag value itself
        code = exit_.code
    out, err = capsys.readouterr()
    assert code in (0, 2), (args, err)
    assert "Traceback" not in err
    if code == 2 and not err.startswith("usage:"):
        assert len([line for line in err.splitlines() if line.strip()]) == 1, (args, err)


@pytest.fixture(scope="module")
def a_record(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "r.jsonl"
    assert main(["simulate", "--variant", "hidden_castle", "--players", "2", "--games", "1", "--record", str(path),
                 "--no-progress"]) == 0
    return json.loads(path.read_text())


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 40) | st.floats(allow_nan=False) |
                    st.text(max_size=6), lambda inner: st.lists(inner, max_size=3) |
                    st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_mangled_record_replays_or_is_refused_by_line_and_event(a_record, data):
    rec = copy.deepcopy(a_record)
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(["top", "event", "field"]))
        if where == "top":
            key = data.draw(st.sampled_from(sorted(rec)))
            if data.draw(st.booleans()):
                del rec[key]
            else:
                rec[key] = data.draw(JSON)
        elif isinstance(rec.get("events"), list) and rec["events"]:
            k = data.draw(st.integers(0, len(rec["events"]) - 1))
            event = rec["events"][k]
            if where == "event" or not isinstance(event, dict) or not event:
                rec["events"][k] = data.draw(JSON)
            else:
                event[data.draw(st.sampled_from(sorted(event)))] = data.draw(JSON)
    try:
        replay_record(rec, 7)
    except RecordError as err:
        assert str(err).startswith("line 7")
