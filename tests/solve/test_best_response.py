"""The exact best response to an agent on a solved two-player set-up (``midnight solve
--best-response``, ``midnight_env.solve.best_response``): the minimax solution gains nothing, the
gain against ``random`` agrees with the regret table and with play, the saved best response plays
its value, the command's JSON and its bad input.

The API tests solve the tiny board of tests/solve/test_solve.py (two players, one guest each, two
rounds: 10,243 states); the command's tests the smallest real-board set-up, duo-mp-r1-g1 (336,534
states, about a second to solve)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from midnight_env.arena.registry import make_agent
from midnight_env.cli import main
from midnight_env.core.board import board_from_dict
from midnight_env.core.config import make_config
from midnight_env.solve import load_solution, solve
from midnight_env.solve.best_response import best_response
from midnight_env.solve.policy import agent_policy, evaluate_policy, play_values, regret_table, solution_agent
from midnight_env.solve.setups import TINY_PARTY

DUO = ["solve", "--players", "2", "--set", "rounds=1", "--set", "guests_per_player=1", "--no-progress"]


def tiny(players=2, rounds=2, **options):
    return make_config("midnight_party", players, board=board_from_dict(TINY_PARTY), guests_per_player=1,
                       rounds=rounds, **options)


@pytest.fixture(scope="module")
def duo():
    """The tiny board, two players, one guest each, two rounds; by objective."""
    return {objective: solve(tiny(), objective=objective) for objective in ("win", "points")}


@pytest.mark.parametrize("objective", ["win", "points"])
@pytest.mark.parametrize("seat", [0, 1])
def test_the_minimax_solution_cannot_be_exploited(duo, objective, seat):
    """A zero-sum game's optimum is unexploitable: the best response to it gets the game's value."""
    sol = duo[objective]
    br = best_response(sol, solution_agent(sol), seat)
    assert br.gain == pytest.approx(0.0, abs=1e-9)
    assert br.value == pytest.approx(sol.value, abs=1e-9) and br.agent_value == pytest.approx(sol.value, abs=1e-9)
    assert br.optimum == sol.value and br.deterministic and br.residual < 1e-9


def test_the_saved_optimal_agent_cannot_be_exploited_either(duo, tmp_path):
    sol = duo["points"]
    br = best_response(sol, f"optimal:path={sol.save(tmp_path / 'duo')}", seat=1)
    assert br.agent == f"optimal:path={tmp_path / 'duo'}"
    assert br.gain == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("objective", ["win", "points"])
def test_the_gain_against_random_agrees_with_the_regret_table_and_with_play(duo, objective):
    sol = duo[objective]
    random = make_agent("random")
    self_play, half = play_values(sol, [random, random], games=4000, seed=7)
    for seat in (0, 1):
        br = best_response(sol, "random", seat)
        assert br.gain > 0.3  # random leaves both seats much to take
        # the regret table's other-seat row: the same best response, computed on its own
        row = regret_table(sol, ["random"], seat=1 - seat)[0]
        assert br.value == pytest.approx(row.value, abs=1e-12)
        assert abs(br.agent_value - self_play) <= half, (br.agent_value, self_play, half)
        # signs: seat 0 minimises the points and maximises the chance to win, seat 1 the opposite
        lower = (seat == 0) == (objective == "points")
        assert br.gain == pytest.approx(br.agent_value - br.value if lower else br.value - br.agent_value, abs=0)
        # the responder does no worse than the game's value
        assert (br.value <= sol.value + 1e-12) if lower else (br.value >= sol.value - 1e-12)
        assert br.tied == br.decisions  # random: every decision a draw among its legal choices


@pytest.mark.parametrize("objective,seat", [("win", 0), ("points", 1)])
def test_the_saved_best_response_plays_its_value(duo, tmp_path, objective, seat):
    sol = duo[objective]
    br = best_response(sol, "random", seat)
    folder = br.solution.save(tmp_path / "br")
    meta = json.loads((folder / "solution.json").read_text())
    assert meta["value"] == br.value and meta["best_response"]["seat"] == seat
    assert meta["best_response"]["agent"] == "random" and meta["best_response"]["gain"] == br.gain
    assert load_solution(folder).value == br.value
    responder, random = make_agent(f"optimal:path={folder}"), make_agent("random")
    # exactly: the saved actions against random are worth the best response's value, and more to
    # the responder than the minimax solution's own (a little: random is far from both)
    theirs = agent_policy(sol, random, seats=[1 - seat])
    saved = evaluate_policy(sol, [theirs, agent_policy(sol, responder, seats=[seat])]).value
    minimax = evaluate_policy(sol, [theirs, agent_policy(sol, solution_agent(sol), seats=[seat])]).value
    assert saved == pytest.approx(br.value, abs=1e-9)
    assert (minimax - saved if (seat == 0) == (objective == "points") else saved - minimax) > 1e-4
    # by play, 4,000 games
    lineup = [responder, random] if seat == 0 else [random, responder]
    mean, half = play_values(sol, lineup, games=4000, seed=31)
    assert abs(mean - br.value) <= half, (mean, half, br.value)


@pytest.mark.parametrize("objective,seat", [("points", 0), ("win", 1)])
def test_other_responders_gain_exactly_what_they_take_from_the_agent(duo, tmp_path, objective, seat):
    """A responder's exact gain: the best response itself takes all of it, the agent itself none,
    random (a poor responder) less, and what play against the agent gives it agrees."""
    sol = duo[objective]
    folder = best_response(sol, "expert", seat).solution.save(tmp_path / "br")
    br = best_response(sol, "expert", seat, responders=[f"optimal:path={folder}", "expert", make_agent("random")])
    saved, itself, random = br.responders
    assert [r.agent for r in br.responders] == [f"optimal:path={folder}", "expert", "random"]
    assert saved.gain == pytest.approx(br.gain, abs=1e-9) and saved.value == pytest.approx(br.value, abs=1e-9)
    assert itself.gain == pytest.approx(0.0, abs=1e-9) and itself.value == pytest.approx(br.agent_value, abs=1e-9)
    assert random.gain < br.gain and random.tied == random.decisions > 0
    expert = make_agent("expert")
    mean, half = play_values(sol, [make_agent("random"), expert] if seat == 0 else [expert, make_agent("random")],
                             games=4000, seed=11)
    assert abs(mean - random.value) <= half, (mean, half, random.value)
    # the best response itself is unchanged by asking others
    assert (br.value, br.gain) == (best_response(sol, "expert", seat).value, best_response(sol, "expert", seat).gain)


def test_a_responder_that_cannot_play_the_set_up_is_named(duo):
    with pytest.raises(ValueError, match="responder 'value-midnight_party-2p' cannot play midnight_party"):
        best_response(duo["points"], "random", responders=["value-midnight_party-2p"])


def test_the_best_response_solution_plays_the_agent_at_the_other_seat(duo):
    sol = duo["points"]
    br = best_response(sol, "expert", seat=0)
    policy = agent_policy(sol, make_agent("expert"), seats=[1])
    g = sol.graph
    sure = np.flatnonzero(policy.weight == 1.0)  # seat 1's decisions where the expert is deterministic
    source = np.searchsorted(g.edge_start, sure, side="right") - 1
    assert len(sure) > 1000 and (br.solution.best[source] == g.edge_label[sure]).all()
    seat0 = np.flatnonzero(((sol.phases == 0) | (sol.phases == 2)) & (sol.players == 0))
    assert (br.solution.best[seat0] >= 0).all()  # the responder's decisions: its best actions


def test_bad_input_of_the_api(duo):
    solo = solve(tiny(players=1, rounds=1))
    with pytest.raises(ValueError, match="needs another seat to respond to.*1 player"):
        best_response(solo, "random")
    with pytest.raises(ValueError, match="seat 2 is out of range: allowed are 0 to 1"):
        best_response(duo["win"], "random", seat=2)
    with pytest.raises(ValueError, match="cannot play midnight_party, 2 player.*does not fit this game"):
        best_response(duo["win"], "value-midnight_party-2p")


# ------------------------------------------------------------------------------------------------
# the command


def test_the_command_prints_the_responders_exact_gains(capsys):
    assert main([*DUO, "--best-response", "expert", "--responder", "expert", "--responder", "random",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    itself, random = out["responders"]
    assert (itself["agent"], random["agent"]) == ("expert", "random")
    assert itself["gain"] == pytest.approx(0.0, abs=1e-9) and random["gain"] < out["gain"]
    assert random["tied"] == random["decisions"] > 0
    assert main([*DUO, "--best-response", "expert", "--responder", "random"]) == 0
    table = capsys.readouterr().out
    assert f"random: value {random['value']:.6f}, gain {random['gain']:.6f}" in table


def test_the_command_saves_the_solution_then_responds_to_plain_optimal(tmp_path, monkeypatch, capsys):
    """--save comes first, so that the optimal agent of the solution folder is there to respond to."""
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path / "solutions"))
    assert main([*DUO, "--save", "--best-response", "optimal:objective=points", "--seat", "1", "--json",
                 "--out", str(tmp_path / "br")]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("best_response_value", "agent_value", "gain", "seat", "agent", "objective", "value",
                "agent_decisions", "agent_tied", "best_response_saved", "saved"):
        assert key in out, key
    assert out["gain"] == pytest.approx(0.0, abs=1e-9) and out["seat"] == 1 and out["objective"] == "points"
    assert out["best_response_value"] == pytest.approx(out["value"], abs=1e-9)
    assert out["agent"] == "optimal:objective=points" and out["agent_tied"] == 0
    assert out["best_response_saved"] == str(tmp_path / "br") and len(out["saved"]) == 1  # --out: the response
    assert load_solution(tmp_path / "br").meta["best_response"]["seat"] == 1


@pytest.mark.parametrize("argv,words", [
    (["--players", "1", "--best-response", "random"], ["--best-response needs another seat", "--players 2"]),
    (["--best-response", "bogus"], ["unknown agent 'bogus'", "known agents are"]),
    (["--best-response", "value-midnight_party-2p"], ["--best-response 'value-midnight_party-2p' cannot play",
                                                      "does not fit this game"]),
    (["--best-response", "random", "--seat", "2"], ["--seat 2 is out of range", "allowed are 0 to 1"]),
    (["--best-response", "random", "--seat", "-1"], ["--seat -1 is out of range"]),
    (["--seat", "1"], ["--seat is for --best-response"]),
    (["--responder", "random"], ["--responder is for --best-response"]),
    (["--best-response", "random", "--responder", "bogus"], ["unknown agent 'bogus'"]),
    (["--best-response", "random", "--responder", "value-midnight_party-2p"],
     ["--responder 'value-midnight_party-2p' cannot play", "does not fit this game"]),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code = main([*DUO, *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err
