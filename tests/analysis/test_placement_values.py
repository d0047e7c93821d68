"""Placement networks (issue 41, item 1): a second network judges the opening placement's
positions (no die rolled yet) for a value agent and `midnight analyze`; everything after the
opening is judged by the champion's own network. experiments/placement_values.py fits them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from experiment_scripts import load_script

from midnight_agents.model import ModelError, ValueModel
from midnight_agents.value import PLACEMENT_DIR, ValueAgent, shipped_placements
from midnight_env.arena.registry import make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, PLACE

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "agents" / "models"


def _move_position(engine: Engine, seed: int):
    """A game played at random from set-up to its first move decision."""
    state = engine.new_games([seed])
    rng = agent_streams([seed])
    while state.phase[0] != MOVE:
        engine.step(state, engine.random_actions(state, rng))
    return state


def test_a_placement_network_judges_the_opening_and_only_the_opening():
    engine = Engine("midnight_party", 2)
    other = ValueModel.load(MODELS / "value-midnight_party-2p-v1.npz")
    mixed = ValueAgent(MODELS / "value-midnight_party-2p.npz", placement=other)
    main = ValueAgent(MODELS / "value-midnight_party-2p.npz")
    alone = ValueAgent(MODELS / "value-midnight_party-2p-v1.npz")
    games = np.zeros(1, np.int64)
    opening = engine.new_games([5])
    assert opening.phase[0] == PLACE
    np.testing.assert_array_equal(mixed.judged_afterstates(engine, opening, games),
                                  alone.judged_afterstates(engine, opening, games))
    assert not np.allclose(main.judged_afterstates(engine, opening, games),
                           alone.judged_afterstates(engine, opening, games), equal_nan=True)
    moving = _move_position(engine, 5)
    np.testing.assert_array_equal(mixed.judged_afterstates(engine, moving, games),
                                  main.judged_afterstates(engine, moving, games))


def test_shipped_placement_networks_are_named_and_others_refused():
    assert {"value-midnight_party-2p", "value-hidden_castle-2p"} <= set(shipped_placements())
    agent = make_agent("value-midnight_party-2p:placement=shipped")
    assert agent.placement is not None and Path(agent.placement.source) == PLACEMENT_DIR / "value-midnight_party-2p.npz"
    with pytest.raises(ModelError, match=r"no placement network is shipped for value-midnight_party-4p: allowed are "
                                         r"value-hidden_castle-2p, value-midnight_party-2p"):
        make_agent("value-midnight_party-4p:placement=shipped")
    with pytest.raises(ModelError, match="reads another observation"):
        ValueAgent(MODELS / "value-midnight_party-4p.npz", placement=MODELS / "value-midnight_party-2p.npz")


def _script():
    return load_script("placement_values")


def test_the_opening_games_hand_over_to_the_champion_and_keep_only_what_it_plays_on():
    script = _script()
    engine = Engine("midnight_party", 2)
    champion = make_agent("value-midnight_party-2p")
    mixers = [make_agent("random")]
    obs, games, seats, points, booked = script.opening_games(engine, champion, mixers, np.arange(6),
                                                             np.random.default_rng(0))
    assert booked.shape == (obs.shape[0], 2) and (booked == 0).all()  # midnight_party starts at 0
    assert obs.shape[0] == games.shape[0] == seats.shape[0] and obs.shape[0] > 0
    assert points.shape == (6, 2) and (points >= 0).all()
    targets = script.relative(points, games, seats)  # the placer's final points first
    np.testing.assert_array_equal(targets[:, 0], points[games, seats])


def test_rollout_values_share_their_dice_across_choices():
    script = _script()
    engine = Engine("midnight_party", 2)
    champion = make_agent("value-midnight_party-2p")
    position = _move_position(engine, 3)
    means, halves = script.rollout_values(engine, champion, position, 8, seed=11)
    legal = position.legal[0].astype(bool)
    assert np.isfinite(means[legal]).all() and np.isnan(means[~legal]).all() and (halves[legal] >= 0).all()
    again, _ = script.rollout_values(engine, champion, position, 8, seed=11)
    np.testing.assert_array_equal(means, again)  # a seed fixes the rollouts
    # the truth in an evaluator's own units: a champion that weighs only its own points is measured by them
    legal, margin = script.rollout_margins(engine, champion, position, 8, 11)
    _, own = script.rollout_margins(engine, champion, position, 8, 11, others=0.0)
    np.testing.assert_array_equal(legal, np.flatnonzero(position.legal[0]))
    assert (own <= 0).all() and (margin >= own).all()  # minus its own points; the margin adds the others' mean


def test_analyze_judges_the_opening_by_the_placement_network_and_says_how_accurate_it_is(tmp_path):
    from midnight_env.analysis.judge import evaluator_for

    two = evaluator_for(Engine("midnight_party", 2))
    assert two.spec == "value-midnight_party-2p:budget=1500,placement=shipped"
    assert two.accuracy.startswith("measured against") and two.measured is not None
    three = evaluator_for(Engine("midnight_party", 3))
    assert "placement" not in three.spec and three.accuracy.startswith("not measured") and three.measured is None


def test_a_loss_is_judged_against_the_rollouts_difference_of_the_same_two_choices():
    script = _script()
    rng = np.random.default_rng(0)
    margin = rng.normal(0, 3, (4, 50)) + np.array([[2.0], [0.0], [-1.0], [0.5]])
    legal = np.array([3, 5, 8, 9])
    values = np.full(12, np.nan)
    values[legal] = margin.mean(axis=1)  # the rollouts' own means: no error at all
    row = script.judged_row(values, legal, margin)
    assert np.allclose(row["loss_error"], 0) and np.allclose(row["error"], 0) and len(row["loss"]) == 3
    values[legal[1:]] -= 1.0  # every choice but the best one point worse: each loss one point too big
    row = script.judged_row(values, legal, margin)
    assert np.allclose(row["loss_error"], 1.0) and all(n > 0 for n in row["loss_noise"])
    acc = script.loss_accuracy([{"e": row}, {"e": row}], "e")
    assert acc["positions"] == 2 and acc["pairs"] == 6 and acc["bias"] == pytest.approx(1.0)
    noise = float(np.mean(row["loss_noise"]))
    assert acc["rmse_without_noise"] == pytest.approx(np.sqrt(1.0 - noise))  # the rollouts' noise taken out
    assert acc["rmse_upper95"] == pytest.approx(acc["rmse_without_noise"])  # two equal positions: no spread


def test_truth_measures_a_four_player_set_up_by_stage(tmp_path):
    import argparse
    import json

    script = _script()
    args = argparse.Namespace(command="truth", variant="midnight_party", players=4, placement=None, budget=0,
                              positions=1, rollouts=4, source_games=2, seed=3, max_cpu_seconds=None,
                              out=str(tmp_path / "truth.json"))
    out = script.truth(args)
    assert json.loads((tmp_path / "truth.json").read_text())["summary"] == out["summary"]
    default = "analyze default (value-midnight_party-4p:budget=1500)"
    assert {r["phase"] for r in out["rows"]} == {"placement", "early", "middle", "late"}
    for phase in ("placement", "early", "middle", "late", "all"):
        loss = out["summary"][f"{default}/{phase}"]["loss"]
        assert loss["positions"] >= 1 and loss["pairs"] >= 1 and loss["rmse_upper95"] >= loss["rmse_without_noise"]
