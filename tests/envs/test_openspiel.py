"""The OpenSpiel bridge: both variants pass pyspiel's own checks, replay the golden records, and
OpenSpiel's bots play them, in OpenSpiel and in the package's tournaments (the openspiel extra)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from midnight_env import Engine
from midnight_env.arena.registry import AgentError, make_agent
from midnight_env.core.observation import encode_observations, observation_layout
from midnight_env.core.scoring import rank_rewards

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.fixture
def pyspiel(require):
    module = require("pyspiel", extra="openspiel")
    require("midnight_env.envs.openspiel", extra="openspiel")  # registers the games
    return module


@pytest.mark.parametrize("name", ["midnight_party", "midnight_party(players=3,rounds=0,pass_rule=always)",
                                  "midnight_party(players=1)", "hidden_castle", "hidden_castle(players=2)",
                                  "hidden_castle(players=8,guests_per_player=3,max_turns=200)"])
def test_random_sim_test_passes(pyspiel, name):
    """OpenSpiel's own battery over random games: legal actions, chance outcomes summing to one,
    clones, observation tensors and strings, returns within bounds, serialisation round trips."""
    game = pyspiel.load_game(name)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)


def test_parameters_are_the_players_and_the_variants_rule_options(pyspiel):
    party = pyspiel.load_game("midnight_party(players=3,rounds=0,max_turns=500)")
    assert party.num_players() == 3 and party.num_distinct_actions() == 509
    assert party.engine.config.options == {"guests_per_player": 5, "hugo_slow_from_players": 5,
                                           "pass_rule": "last_guest", "rounds": "players", "max_turns": 500}
    assert party.max_chance_outcomes() == 5 and (party.min_utility(), party.max_utility()) == (-1.0, 1.0)
    castle = pyspiel.load_game("hidden_castle", {"players": 2})
    assert castle.num_distinct_actions() == 409 and sorted(castle.get_parameters()) == [
        "guests_per_player", "max_turns", "players"]
    with pytest.raises(pyspiel.SpielError, match="rounds"):
        pyspiel.load_game("hidden_castle(rounds=2)")  # a midnight_party option
    from midnight_env.envs.openspiel import openspiel_game

    engine = Engine("midnight_party", 5, rounds="players", pass_rule="always")
    game = openspiel_game(engine)
    assert (game.num_players(), game.engine.config.options) == (5, engine.config.options)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.jsonl")), ids=lambda p: p.stem)
def test_the_golden_records_replay_through_openspiel(pyspiel, path):
    """Every roll as a chance outcome, every decision by its record notation among the legal
    actions' strings (which must be the record's legal set), the end's returns the ranks'."""
    record = json.loads(path.read_text().splitlines()[0])
    options = {**record["options"]}
    if options.get("rounds") == "players":
        options["rounds"] = 0
    game = pyspiel.load_game(record["variant"], {"players": record["num_players"], **options})
    state = game.new_initial_state()
    faces = {"hugo": "roll Hugo", 1: "roll 1", 2: "roll 2", 4: "roll 4", 5: "roll 5"}
    for event in record["events"]:
        if event["e"] == "round_end":
            continue
        player = state.current_player()
        if event["e"] == "roll":
            assert state.is_chance_node()
            outcomes = {state.action_to_string(player, a): a for a, _ in state.chance_outcomes()}
            state.apply_action(outcomes[faces[event["face"]]])
            continue
        assert player == event["p"]
        legal = {state.action_to_string(player, a): a for a in state.legal_actions()}
        assert set(legal) == set(event["legal"])
        state.apply_action(legal[event["a"]])
    assert state.is_terminal()
    expected = rank_rewards(np.array([record["final_points"]]))[0]
    np.testing.assert_allclose(state.returns(), expected)
    assert [p for p, r in enumerate(state.returns()) if r == 1.0] == sorted(record["winners"])


def test_observation_tensors_are_the_envs_observations(pyspiel):
    game = pyspiel.load_game("hidden_castle(players=3)")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    for _ in range(30):  # into the moves (3 players place 15 guests), not to the end
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    for player in range(3):
        expected = encode_observations(game.engine, state.game_state, [0], player)[0]
        np.testing.assert_array_equal(np.array(state.observation_tensor(player), np.float32), expected)
    observer = game.make_py_observer()
    observer.set_from(state, 1)
    lay = observation_layout(game.engine)
    np.testing.assert_array_equal(observer.dict["spooky"], observer.tensor[lay.section("spooky")])
    assert state.observation_string(1).startswith("seat 1\nhidden_castle, 3 players")


def test_openspiels_mcts_bot_plays_a_game(pyspiel):
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("midnight_party(players=3,max_turns=40,rounds=1)")
    rng = np.random.RandomState(0)
    bots = [mcts.MCTSBot(game, 2.0, 10, mcts.RandomRolloutEvaluator(1, rng), random_state=rng) for _ in range(3)]
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
            continue
        action = bots[state.current_player()].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        decisions += 1
    assert decisions >= 3 * 5  # every guest placed, then moves
    assert sorted(state.returns())[-1] == 1.0


def test_openspiel_mcts_plays_in_a_tournament_like_any_agent(pyspiel, tmp_path):
    """Through the registry (``openspiel_mcts:...``); a game plays the same whatever batch it runs
    in, since each bot's random state comes from the game's own stream."""
    from midnight_env.arena.play import play_batch

    engine = Engine("hidden_castle", 2, max_turns=40)
    agents = [make_agent("openspiel_mcts:simulations=6"), make_agent("random")]
    lineups = np.array([[0, 1], [1, 0], [0, 1]])
    together = play_batch(engine, agents, lineups, [5, 6, 7])
    alone = play_batch(engine, agents, lineups[1:2], [6])
    assert (together.state.phase == 3).all()
    np.testing.assert_array_equal(together.state.spooky[1], alone.state.spooky[0])

    from midnight_env import cli

    code = cli.main(["tournament", "--variant", "hidden_castle", "--players", "2", "--agents",
                     "openspiel_mcts:simulations=4,random", "--games", "2", "--set", "max_turns=30",
                     "--db", str(tmp_path / "t.sqlite"), "--no-progress"])
    assert code == 0
    board = (tmp_path / "t_leaderboard.md").read_text()
    assert "openspiel_mcts:simulations=4" in board


def test_openspiel_agent_options_are_checked(pyspiel):
    with pytest.raises(ValueError, match="simulations=0 is out of range"):
        make_agent("openspiel_mcts:simulations=0")
    with pytest.raises(AgentError, match="unknown option 'depth'"):
        make_agent("openspiel_mcts:depth=2")
