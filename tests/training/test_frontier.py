"""Restarts from rarely met positions (midnight_env.training.frontier, the value trainer's
``restarts``): what the frontier keeps and counts, how it draws, and games played on from it."""

from __future__ import annotations

import numpy as np
import pytest

from midnight_env.arena.registry import make_agent
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, PLACE
from midnight_env.training.frontier import Frontier

torch = pytest.importorskip("torch")
from midnight_env.training import value as training  # noqa: E402  (needs torch)


def duo() -> Engine:
    return Engine("midnight_party", 2, guests_per_player=1, rounds=1)


def test_the_frontier_keeps_each_position_once_and_counts_its_meetings():
    engine = duo()
    state = engine.new_games([1, 2, 3])  # three deals at set-up: one and the same position
    frontier = Frontier(capacity=10)
    frontier.meet(state, np.array([0, 1, 2]))
    assert len(frontier) == 1 and frontier.counts == [3]  # the dice are not part of a position
    engine.apply_action(state, np.array([5, 6, 5]), check=False)  # two placements: two new positions
    engine.roll_on(state)
    frontier.meet(state, np.array([0, 1, 2]))
    assert len(frontier) == 3 and sorted(frontier.counts) == [1, 2, 3]
    small = Frontier(capacity=1)
    small.meet(state, np.array([0, 1, 2]))
    assert len(small) == 1 and small.counts == [2]  # full: the later positions are not kept
    with pytest.raises(ValueError, match="frontier capacity 0 is out of range: allowed are 1 or more"):
        Frontier(capacity=0)
    with pytest.raises(ValueError, match="the frontier is empty"):
        Frontier(capacity=1).draw(np.random.default_rng(0), np.array([1]))


def test_the_frontier_draws_rare_positions_more_often_with_fresh_dice():
    engine = duo()
    state = engine.new_games([1, 2])
    engine.apply_action(state, np.array([5, 6]), check=False)
    engine.roll_on(state)
    frontier = Frontier(capacity=10)
    frontier.meet(state, np.array([0]))
    for _ in range(9):  # game 1's position met nine times: drawn 1/9 as often as game 0's
        frontier.meet(state, np.array([1]))
    seeds = np.arange(100, 4100)
    drawn = frontier.draw(np.random.default_rng(0), seeds)
    first = np.array([drawn.key(i) == state.key(0) for i in range(len(seeds))])
    assert first.mean() == pytest.approx(0.9, abs=0.02)
    assert np.array_equal(drawn.rng, engine.new_games(seeds).rng)  # the dice of new games with these seeds
    assert np.array_equal(drawn.phase, np.full(len(seeds), state.phase[0]))


def test_a_game_restarted_from_a_position_plays_on_from_there_and_reports_the_learners_decisions():
    engine = duo()
    agents = [make_agent("expert"), make_agent("runner")]
    lineups, seeds = np.array([[0, 1]]), np.array([7])
    state = engine.new_games(seeds)
    for _ in range(3):  # a few decisions in, then on to seat 0's next decision
        engine.apply_action(state, agents[0].act(_decisions(engine, state, seeds)), check=False)
        engine.roll_on(state)
    while state.player[0] != 0:
        engine.apply_action(state, agents[1].act(_decisions(engine, state, seeds)), check=False)
        engine.roll_on(state)
    assert state.phase[0] in (PLACE, MOVE)
    met = []
    obs, targets, steps = training.play_and_record(engine, agents, lineups, seeds, 10.0, start=state.copy(),
                                                   meet=lambda s, games: met.extend(s.key(int(g)) for g in games))
    full, _, full_steps = training.play_and_record(engine, agents, lineups, seeds, 10.0)
    assert steps < full_steps and len(obs) == steps  # only the decisions after the restart
    assert met[0] == state.key(0)  # met first where it starts
    # met at every decision of agents[0] and no other: as many as its rows
    mine, _, _ = training.play_and_record(engine, agents, lineups, seeds, 10.0, record_agents=[0], start=state.copy())
    assert len(met) == len(mine) < steps
    # the same restart twice is the same game
    again, again_targets, _ = training.play_and_record(engine, agents, lineups, seeds, 10.0, start=state.copy())
    assert np.array_equal(again, obs) and np.array_equal(again_targets, targets)


def _decisions(engine, state, seeds):
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams

    return Decisions(engine, state, np.array([0]), agent_streams(seeds), seeds)


@pytest.mark.parametrize(("name", "bad", "allowed"), [("restarts", 1.0, r"numbers in \[0, 1\)"),
                                                     ("restarts", -0.5, r"numbers in \[0, 1\)"),
                                                     ("frontier_size", 0, "1 or more positions")])
def test_restarts_out_of_range_are_refused(name, bad, allowed):
    with pytest.raises(ValueError, match=rf"{name}={bad} is out of range: allowed are {allowed}"):
        training.train(training.load_config(overrides={name: bad}))


@pytest.mark.slow
def test_training_with_restarts_meets_positions_and_restarts_from_them(tmp_path):
    from midnight_env.training.logger import read_metrics

    args = training.load_config(overrides={
        "num_players": 2, "options": {"guests_per_player": 1, "rounds": 1}, "league": ["expert"], "self_play": 0.0,
        "learner_seat": 1, "learner_records": True, "total_timesteps": 6000, "games_per_iteration": 100,
        "batch_games": 40, "hidden_sizes": [8], "eval_every": 0, "eval_deals": 2, "eval_field": ["expert"],
        "run_dir": str(tmp_path), "progress": False, "restarts": 0.3})
    run = training.train(args)
    series = read_metrics(run.run_dir / "metrics.csv")
    _, restarted = series["charts/restarted"]
    _, kept = series["charts/frontier"]
    assert restarted[0] == 0 and all(r == 30 for r in restarted[1:])  # none until positions were met
    assert np.all(np.diff(kept) >= 0) and kept[-1] > kept[0] > 0
