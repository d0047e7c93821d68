"""``midnight play`` driven through piped stdin (bad input included) and ``midnight agents``."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from midnight_env import cli
from midnight_env.arena.registry import list_agents
from midnight_env.core.records import replay_record

ROOT = Path(__file__).resolve().parents[2]


def play(monkeypatch, capsys, stdin: str, *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = cli.main(["play", "--no-color", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_whole_game_with_bad_input_along_the_way(monkeypatch, capsys):
    answers = "zebra\n0\n99\ng99>r1\n?\nb\n" + "1\n" * 400  # nonsense first, then always choice 1
    code, out, err = play(monkeypatch, capsys, answers, "--variant", "hidden_castle", "--players", "2",
                          "--seat", "1", "--opponents", "runner", "--seed", "3")
    assert code == 0 and err == ""
    assert "'zebra' is not a legal choice here" in out
    assert "0 is not one of the choices" in out and "99 is not one of the choices" in out
    assert "'g99>r1' is not a legal choice here" in out
    assert "answer with the number of a choice" in out  # the help
    assert "player 0 (runner) places on g" in out  # the opponent's placements are shown
    assert "game over: points" in out and ("you win" in out or "you lose" in out)


def test_a_recorded_game_replays_and_is_analysed(monkeypatch, capsys, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text("{}", encoding="utf-8")  # a file edited by hand, without its last newline
    code, out, _ = play(monkeypatch, capsys, "1\n" * 400, "--players", "2", "--opponents", "random", "--seed", "5",
                        "--record", str(path))
    assert code == 0 and f"recorded as {path} line 2: midnight analyze {path} --line 2" in out
    rec = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    assert rec["agents"] == ["human", "random"] and rec["seed"] == 5
    replay_record(rec)
    assert cli.main(["analyze", str(path), "--line", "2", "--evaluator", "search:budget=100", "--json"]) == 0
    analysis = json.loads(capsys.readouterr().out)
    human = [d for d in analysis["decisions"] if d["seat"] == 0]
    assert human and analysis["seats"][0]["agent"] == "human"
    assert analysis["seats"][0]["loss"] == pytest.approx(sum(d["loss"] for d in human), abs=1e-3)
    code, out, _ = play(monkeypatch, capsys, "q\n", "--players", "2", "--seed", "5", "--record", str(path))
    assert "nothing recorded" in out and len(path.read_text(encoding="utf-8").splitlines()) == 2


def test_choices_by_notation_and_quit(monkeypatch, capsys):
    code, out, _ = play(monkeypatch, capsys, "g27\nq\n", "--players", "3", "--seat", "0",
                        "--opponents", "random,coward", "--seed", "1")
    assert code == 0
    assert "you (player 0) place a guest" in out
    assert "game left unfinished" in out
    assert out.count("you (player 0) place a guest") == 2  # g27 was taken, then asked again


def test_end_of_input_ends_cleanly(monkeypatch, capsys):
    code, out, err = play(monkeypatch, capsys, "", "--players", "2", "--seed", "0")
    assert code == 0 and "game left unfinished" in out and err == ""


@pytest.mark.parametrize("args,message", [
    (["--players", "3", "--seat", "3"], "--seat 3 is out of range: allowed are 0..2"),
    (["--players", "4", "--opponents", "random,coward"], "names 2 agents: give one for every other seat or exactly 3"),
    (["--players", "2", "--opponents", "nobody"], "unknown agent 'nobody'"),
    (["--variant", "chess"], "unknown variant 'chess'"),
])
def test_bad_arguments_are_one_line_errors(monkeypatch, capsys, args, message):
    code, out, err = play(monkeypatch, capsys, "", *args)
    assert code == 2 and message in err and "Traceback" not in err


# slow: a whole game through a pseudo-terminal, the command started afresh (5-12 s)
@pytest.mark.slow
def test_piped_through_a_real_terminal_process():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = subprocess.run([sys.executable, "-m", "midnight_env.cli", "play", "--players", "2", "--seed", "5",
                          "--opponents", "coward"], input="hello\n3\n", capture_output=True, text=True, env=env,
                         timeout=120)
    assert run.returncode == 0
    assert "'hello' is not a legal choice here" in run.stdout
    assert "\x1b[" not in run.stdout  # no colours when the output is not a terminal
    assert "game left unfinished" in run.stdout and run.stderr == ""


def test_agents_lists_one_agent_per_line(capsys):
    assert cli.main(["agents"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    names = [name for name, _ in list_agents()]
    assert [line.split("  ", 1)[0] for line in lines] == names
    assert all(len(line.split("  ", 1)[1]) > 10 for line in lines)
    assert {"random", "runner", "coward", "green_hunter", "placer", "expert", "search"} <= set(names)
