"""The exact solver (``midnight solve``): hand-checked values, transitions and values checked
against the engine, saved solutions, the ``optimal`` agent, policy evaluation and regret.

Set-ups are small (tiny custom boards, few guests) so that every test runs in seconds; the big
solves are benchmarks (experiments/bench_solve.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from experiment_scripts import experiment

from midnight_env.arena.agent import Decisions
from midnight_env.arena.registry import make_agent
from midnight_env.cli import main
from midnight_env.core.board import board_from_dict
from midnight_env.core.config import make_config
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.positions import make_position, play
from midnight_env.core.state import OVER
from midnight_env.solve import SolveError, load_solution, solve
from midnight_env.solve.check import CheckError, check_bellman, check_games, check_transitions
from midnight_env.solve.keys import decode_games, encode_games
from midnight_env.solve.policy import agent_policy, evaluate_policy, play_values, regret_table, solution_agent
from midnight_env.solve.setups import TINY_CASTLE, TINY_PARTY, TINY_PLAIN_CASTLE
from midnight_env.tournament.config import default_agents, fit_error


def tiny(variant="midnight_party", players=1, board=TINY_PARTY, **options):
    return make_config(variant, players, board=board_from_dict(board), **options)


@pytest.fixture(scope="module")
def solo():
    """Solo midnight_party, 2 guests, one round (the real board)."""
    return solve("midnight_party", 1, guests_per_player=2, rounds=1)


@pytest.fixture(scope="module")
def saved(solo, tmp_path_factory):
    return solo.save(tmp_path_factory.mktemp("solution") / "mp1")


def test_every_named_set_up_makes_its_game():
    from midnight_env.solve.setups import SET_UPS

    for name, setup in SET_UPS.items():
        config = setup.config()
        assert (config.variant, config.num_players) == (setup.variant, setup.players), name
        rules = {k: v for k, v in setup.options.items() if k != "board"}
        assert {k: config.options[k] for k in rules} == rules, name
        board = setup.options.get("board")
        assert config.custom_board == (board is not None), name
        assert config.board.name == (board["name"] if board else setup.variant), name
        assert config.board.num_squares == (board["gallery_squares"] if board else 28), name


# ------------------------------------------------------------------------------------------------
# values checked by hand


def test_a_tiny_board_has_the_value_worked_out_by_hand():
    sol = solve(tiny(guests_per_player=1, rounds=1))
    assert sol.value == pytest.approx(5 / 3, abs=1e-9)
    start = sol.positions([sol.start])
    assert sol.best_actions(start)[0] == 3  # squares 3, 4, 5 tie: the lowest action index
    # placed on square 0, 1 or 2, the guest must escape before Hugo's first move: worse
    placements = sol.action_values(start)[0]
    assert placements[3:6] == pytest.approx([5 / 3] * 3, abs=1e-9) and (placements[:3] > 5 / 3 + 0.1).all()
    assert np.isnan(placements[6:]).all()  # moves and pass: not legal at a placement
    assert sol.values_of(play(sol.engine, start.copy(), "g0"))[0] == placements[0]


def test_a_position_one_roll_from_the_end():
    """A guest in front of Hugo, rooms open: a number takes it into a room, Hugo catches it."""
    cfg = tiny(guests_per_player=1, rounds=1)
    start = make_position(Engine(cfg), gallery={3: [0]}, hugo="g2", phase="roll")
    sol = solve(cfg, start=start)
    assert sol.value == pytest.approx(5 / 3, abs=1e-12)  # 1/3 * 5
    for roll, best in ((1, "g3>r3"), (2, "g3>r3"), (4, "g3>r0"), (5, "g3>r0")):  # into a room at once: the
        move = make_position(sol.engine, gallery={3: [0]}, hugo="g2", roll=roll)  # lowest index of the tied
        assert sol.engine.layout.to_notation(int(sol.best_actions(move)[0]), roll) == best


def test_solving_from_a_position_agrees_with_the_whole_solution(solo):
    ids = np.flatnonzero(solo.phases != OVER)[[5, 500, 5000, 50000]]
    for x in ids:
        position = solo.positions([x])
        part = solve(solo.config, start=position)
        assert part.value == pytest.approx(solo.values[x] + position.spooky[0, 0], abs=1e-9)
        assert part.num_states <= solo.num_states


# ------------------------------------------------------------------------------------------------
# transitions, keys and values against the engine


def test_solo_transitions_keys_and_values_agree_with_the_engine(solo):
    assert check_transitions(solo, sample=20_000)["transitions"] > 60_000
    assert check_games(solo, games=100)["positions"] > 1000
    assert check_bellman(solo, sample=20_000)["residual"] < 1e-9
    assert solo.meta["residual"] < 1e-9


@pytest.mark.parametrize("objective", ["win", "points"])
def test_two_players_over_rounds_agree_with_the_engine(objective):
    # two rounds keep the points of the first in the key (the rules order re-placement by them)
    sol = solve(tiny(players=2, guests_per_player=1, rounds=2), objective=objective)
    assert sol.layout.off_carried >= 0
    check_transitions(sol, sample=5000)
    assert check_games(sol, games=100)["positions"] > 500
    check_bellman(sol, sample=5000)
    assert (sol.players[(sol.phases == 0) | (sol.phases == 2)] == 1).any()  # seat 1 decides too


@pytest.mark.parametrize("players,objective", [(1, "points"), (2, "win"), (2, "points")])
def test_hidden_castle_agrees_with_the_engine(players, objective):
    # two players keep both seats' points in the key: with red or green rooms they wander over
    # 0..45 each and the states are many; plain rooms keep them to the sums of captures
    board = TINY_CASTLE if players == 1 else TINY_PLAIN_CASTLE
    sol = solve(tiny("hidden_castle", players, board, guests_per_player=1), objective=objective)
    check_transitions(sol, sample=4000)
    assert check_games(sol, games=60)["positions"] > 1000
    check_bellman(sol, sample=4000)


def test_keys_survive_a_round_trip_and_leave_out_the_turn_counter(solo):
    state = solo.positions(np.arange(0, solo.num_states, 97))
    keys = solo.encode(state)
    again = state.copy()
    decode_games(keys, again, solo.engine.rules, solo.layout)
    out = np.empty(len(keys), np.uint64)
    encode_games(again, solo.engine.rules, solo.layout, out)
    assert (out == keys).all() and (keys == solo.keys[np.arange(0, solo.num_states, 97)]).all()
    later = state.copy()
    later.rolls[:] = 1234
    later.rng[:] = 99
    assert (solo.encode(later) == keys).all()


def test_a_corrupted_value_fails_the_bellman_check(solo):
    broken = solve(tiny(guests_per_player=1, rounds=1))
    broken.values[broken.start] += 1e-6
    with pytest.raises(CheckError, match="Bellman backup through the engine"):
        check_bellman(broken, sample=10**6)


# ------------------------------------------------------------------------------------------------
# saving, the optimal agent, the command


def test_a_saved_solution_loads_with_the_same_values_and_actions(solo, saved):
    loaded = load_solution(saved)
    assert loaded.num_states == solo.num_states and loaded.value == solo.value
    assert (np.diff(loaded.keys.astype(np.float64)) > 0).all()  # ascending keys
    ids = np.arange(0, solo.num_states, 31)
    state = solo.positions(ids)
    assert (loaded.values_of(state) == solo.values[ids]).all()
    deciding = np.flatnonzero(solo.best[ids] >= 0)
    assert (loaded.best_actions(state, deciding) == solo.best[ids][deciding]).all()
    assert check_bellman(loaded, sample=5000)["residual"] < 1e-9
    meta = json.loads((saved / "solution.json").read_text())
    assert meta["format"] == "midnight-solution/1" and meta["states"] == solo.num_states


def test_the_optimal_agent_plays_the_solution_within_the_interval(solo, saved):
    agent = make_agent(f"optimal:path={saved}")
    mean, half = play_values(solo, [agent], games=4000, seed=11)
    assert abs(mean - solo.value) <= half, (mean, half, solo.value)


def test_the_optimal_agent_plays_both_seats_of_a_two_player_solution(tmp_path):
    sol = solve(tiny(players=2, guests_per_player=1, rounds=2), objective="win")
    agent = make_agent(f"optimal:path={sol.save(tmp_path / 'duo')}")
    mean, half = play_values(sol, [agent, agent], games=3000, seed=21)  # seat 0's wins, a tie 1/2
    assert abs(mean - sol.value) <= half, (mean, half, sol.value)
    beaten, _ = play_values(sol, [make_agent("random"), agent], games=1000, seed=21)
    assert beaten < sol.value - 0.1  # seat 1's optimal play punishes a random seat 0


def test_the_optimal_agent_refuses_other_set_ups(saved, tmp_path, monkeypatch):
    agent = make_agent(f"optimal:path={saved}")
    other = Engine("midnight_party", 1, guests_per_player=3, rounds=1)
    with pytest.raises(ValueError, match="guests_per_player=2 \\(the game has 3\\)"):
        agent.check_engine(other)
    state = other.new_games([0])
    with pytest.raises(ValueError, match="does not fit this game"):
        agent.act(Decisions(other, state, np.array([0]), agent_streams([0])))
    assert "does not fit" in fit_error(agent, other)
    assert fit_error(agent, Engine("midnight_party", 1, guests_per_player=2, rounds=1, max_turns=50)) is None
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))
    assert "optimal" not in default_agents()  # no solution of the default game: left out
    with pytest.raises(ValueError, match="no solution of midnight_party with 4 player"):
        make_agent("optimal").check_engine(Engine("midnight_party", 4))


def test_the_optimal_agent_finds_saved_solutions_in_the_solution_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))
    assert main(["solve", "--set", "guests_per_player=1", "--set", "rounds=1", "--save", "--no-progress"]) == 0
    assert str(tmp_path) in capsys.readouterr().out
    agent = make_agent("optimal")
    engine = Engine("midnight_party", 1, guests_per_player=1, rounds=1)
    agent.check_engine(engine)
    assert "optimal" in default_agents("midnight_party", 1, {"guests_per_player": 1, "rounds": 1})


def test_the_optimal_agent_in_simulate_and_tournament(saved, tmp_path, capsys):
    game = ["--players", "1", "--set", "guests_per_player=2", "--set", "rounds=1"]
    assert main(["simulate", *game, "--agents", f"optimal:path={saved}", "--games", "200", "--no-progress"]) == 0
    assert "optimal" in capsys.readouterr().out
    assert main(["tournament", *game, "--agents", f"optimal:path={saved},runner", "--games", "8",
                 "--db", str(tmp_path / "t.sqlite"), "--out", str(tmp_path), "--no-progress"]) == 0
    assert "optimal" in capsys.readouterr().out
    code = main(["tournament", "--agents", f"optimal:path={saved},runner,random,expert", "--games", "4",
                 "--db", str(tmp_path / "u.sqlite"), "--out", str(tmp_path), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2 and "cannot play midnight_party with 4 players" in err


def test_solve_json_names_the_set_up_and_the_value(capsys, tmp_path):
    assert main(["solve", "--variant", "hidden_castle", "--set", "guests_per_player=1", "--json",
                 "--out", str(tmp_path / "hc")]) == 0
    out = json.loads(capsys.readouterr().out)
    for field in ("variant", "players", "options", "objective", "value", "states", "seconds", "residual",
                  "sweeps", "memory_bytes", "max_turns"):
        assert field in out
    assert out["variant"] == "hidden_castle" and out["players"] == 1 and out["objective"] == "points"
    assert out["value"] > 10  # hidden_castle starts at 10 points, and one guest is caught again and again
    assert "ignored" in out["max_turns"] and out["residual"] < 1e-9
    assert load_solution(tmp_path / "hc").value == out["value"]


def test_solve_prints_a_table_with_checks_and_regret(capsys):
    assert main(["solve", "--set", "guests_per_player=1", "--set", "rounds=1", "--check", "--regret",
                 "random,runner", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "value" in out and "agree with the engine" in out and "max_turns" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("random ", "runner "))]
    assert len(rows) == 2 and all(float(r[2]) > 0 for r in rows)


@pytest.mark.parametrize("argv,words", [
    (["--players", "3"], ["takes 1 or 2 players"]),
    (["--objective", "win"], ["objective win needs 2 players"]),
    (["--objective", "best"], ["--objective 'best' is not allowed", "allowed are points, win"]),
    (["--set", "guests_per_player=4", "--max-states", "1000"], ["more than 1,000 states"]),
    (["--set", "bogus=1"], ["unknown option 'bogus'"]),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code = main(["solve", "--no-progress", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    for word in words:
        assert word in err


def test_loading_something_else_is_refused(tmp_path):
    with pytest.raises(ValueError, match="solution.json is missing"):
        load_solution(tmp_path)
    (tmp_path / "solution.json").write_text('{"format": "other"}')
    (tmp_path / "solution.npz").write_bytes(b"")
    with pytest.raises(ValueError, match="not a solution"):
        load_solution(tmp_path)


def test_unsupported_set_ups_are_refused():
    with pytest.raises(SolveError, match="1 or 2 players"):
        solve("midnight_party", 4)
    with pytest.raises(SolveError, match="start must be one game"):
        solve("midnight_party", 1, guests_per_player=1, start=Engine("midnight_party", 1).new_games(2))


# ------------------------------------------------------------------------------------------------
# policies on the graph


def test_the_optimal_policy_evaluates_to_the_optimum(solo):
    sol_agent = solution_agent(solo)
    policy = agent_policy(solo, sol_agent)
    assert policy.deterministic
    assert evaluate_policy(solo, policy).value == pytest.approx(solo.value, abs=1e-9)


def test_regret_of_the_built_in_agents_is_positive_and_matches_play():
    sol = solve("midnight_party", 1, guests_per_player=1, rounds=1)
    rows = {r.agent: r for r in regret_table(sol, ["random", "runner", "coward"], games=6000, seed=10_000)}
    for r in rows.values():
        assert r.regret > 0.5  # none of them waits for a green room as the optimum does
        mean, half = r.played
        # four standard errors: three agents' 95 % intervals would miss one time in seven
        assert abs(mean - r.value) <= half / 1.96 * 4, (r.agent, r.value, mean, half)
    assert rows["random"].tied > 0 and rows["runner"].tied == 1  # runner: only its first placement ties


def test_a_best_response_to_a_fixed_seat_is_at_least_the_optimum():
    sol = solve(tiny(players=2, guests_per_player=1, rounds=1), objective="win")
    random_seat1 = agent_policy(sol, make_agent("random"), seats=[1])
    best_response = evaluate_policy(sol, random_seat1)  # seat 0 optimal against random
    assert best_response.value >= sol.value - 1e-12
    both = evaluate_policy(sol, [agent_policy(sol, make_agent("random"), seats=[0]), random_seat1])
    assert 0.0 < both.value < best_response.value


def test_benchmark_script_runs(capsys):
    """Smoke test of experiments/bench_solve.py on its two tiny set-ups (it measures, never asserts speed)."""

    with experiment("bench_solve") as module:
        module.main(["--quick"])
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [r[0] for r in rows] == ["solo-mp-r1-g1", "solo-mp-r1-g2"]
    assert rows[1][1] == "104,400" and float(rows[1][3]) == pytest.approx(-3.5321, abs=1e-4)
