"""Placement networks (issue 41, item 1): a second network judges the opening placement's
positions (no die rolled yet) for a value agent and `midnight analyze`; everything after the
opening is judged by the champion's own network. experiments/placement_values.py fits them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from midnight_agents.model import ModelError, ValueModel
from midnight_agents.value import PLACEMENT_DIR, ValueAgent, shipped_placements
from midnight_env.arena.registry import make_agent
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, PLACE

ROOT = Path(__file__).resolve().parents[1]
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
    spec = importlib.util.spec_from_file_location("placement_values", ROOT / "experiments" / "placement_values.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["placement_values"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["placement_values"]
    return module


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


def test_analyze_judges_the_opening_by_the_placement_network_and_says_how_accurate_it_is(tmp_path):
    from midnight_env.analysis.judge import evaluator_for

    two = evaluator_for(Engine("midnight_party", 2))
    assert two.spec == "value-midnight_party-2p:budget=1500,placement=shipped"
    assert two.accuracy.startswith("measured against 64 champion rollouts")
    four = evaluator_for(Engine("midnight_party", 4))
    assert "placement" not in four.spec and four.accuracy.startswith("not measured")
