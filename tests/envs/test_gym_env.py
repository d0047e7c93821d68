"""The Gymnasium single-agent env: one learner against agents given by spec or instance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from midnight_agents.simple import RandomAgent
from midnight_env import ActionError, ConfigError, SingleAgentEnv
from midnight_env.arena.registry import AgentError
from midnight_env.core.observation import encode_observations, observation_names
from midnight_env.envs.vector import rank_rewards


def run_episode(env, seed, policy_seed=0):
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    rewards, observations, masks = [], [obs], [env.action_masks()]
    while True:
        legal = np.flatnonzero(env.action_masks())
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.integers(len(legal))]))
        rewards.append(reward)
        observations.append(obs)
        masks.append(env.action_masks())
        if terminated or truncated:
            return rewards, observations, masks, info


@pytest.mark.parametrize("variant,num_players", [("midnight_party", 4), ("hidden_castle", 2)])
def test_gymnasium_check_env(variant, num_players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no spec": the env is not registered with gymnasium.make
        check_env(SingleAgentEnv(variant, num_players, opponents=["random"]), skip_render_check=False)


@pytest.mark.parametrize("variant,num_players", [("midnight_party", 3), ("hidden_castle", 4)])
def test_sb3_check_env(variant, num_players):
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")  # the "train" extra
    sb3_check_env = sb3_checker.check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_check_env(SingleAgentEnv(variant, num_players, opponents=["random"]), warn=True)


@pytest.mark.parametrize("variant,seat", [("midnight_party", 2), ("hidden_castle", 0)])
def test_returns_the_learners_own_reward(variant, seat):
    env = SingleAgentEnv(variant, 4, opponents="random", seat=seat)
    start = 10 if variant == "hidden_castle" else 0
    for seed in range(3):
        rewards, observations, _, info = run_episode(env, seed)
        assert info["seat"] == seat
        assert sum(rewards) == -(info["spooky_points"] - start) == -(env.game_state.spooky[0, seat] - start)
        # every observation is the learner's own view
        names = observation_names(env.engine)
        assert all(o[names.index(f"seat={seat}")] == 1 for o in observations)


def test_rank_reward_at_the_end_only():
    env = SingleAgentEnv("hidden_castle", 3, opponents=["random"], seat=1, reward="rank")
    rewards, _, _, info = run_episode(env, seed=4)
    assert all(r == 0 for r in rewards[:-1])
    assert rewards[-1] == pytest.approx(rank_rewards(env.game_state.spooky)[0, 1])
    assert info["rank"] in (1, 2, 3) and info["winner"] == (info["rank"] == 1)


def test_masks_are_the_learners_legal_actions():
    env = SingleAgentEnv("midnight_party", 2, opponents=["random"], seat=1)
    obs, info = env.reset(seed=0)
    assert env.game_state.player[0] == 1  # seat 0 placed first; the learner is asked now
    np.testing.assert_array_equal(env.action_masks(), env.game_state.legal[0].astype(bool))
    np.testing.assert_array_equal(info["action_mask"], env.game_state.legal[0])
    assert env.action_masks().dtype == bool
    *_, masks, _ = run_episode(env, seed=1)
    assert not masks[-1].any()  # over: nothing is legal
    assert all(m.any() for m in masks[:-1])


@pytest.mark.parametrize("variant,num_players", [("midnight_party", 4), ("hidden_castle", 3)])
def test_the_learners_observation_is_the_encoders_view_of_the_game(variant, num_players):
    """The env observes through the game's handle (``core.one_game``); the batch encoder on the same
    state, from the learner's seat, must give the same floats at every step of every game."""
    env = SingleAgentEnv(variant, num_players, opponents=["random"], seat="random")
    rng = np.random.default_rng(5)
    for seed in (3, 4):  # a second game: a new state and its handle
        obs, info = env.reset(seed=seed)
        while True:
            want = encode_observations(env.engine, env.game_state, seats=env.seat)[0]
            np.testing.assert_array_equal(obs, want)
            legal = np.flatnonzero(env.action_masks())
            if not len(legal):
                break
            obs, _, terminated, truncated, _ = env.step(int(legal[rng.integers(len(legal))]))


def test_seeding_replays_and_random_seat():
    env = SingleAgentEnv("hidden_castle", 4, opponents=["random"], seat="random")
    a = run_episode(env, seed=9)
    seat_a = env.seat
    b = run_episode(env, seed=9)
    assert env.seat == seat_a and a[0] == b[0]
    assert all(np.array_equal(x, y) for x, y in zip(a[1], b[1]))
    seats = set()
    for seed in range(12):
        env.reset(seed=seed)
        seats.add(env.seat)
    assert len(seats) > 1


def test_opponents_by_instance_per_seat():
    mine = RandomAgent()
    env = SingleAgentEnv("midnight_party", 3, opponents=[mine, "random"])
    assert env.opponents[0] is mine and isinstance(env.opponents[1], RandomAgent)
    with pytest.raises(ConfigError, match="got 3 opponents for 2 other seats"):
        SingleAgentEnv("midnight_party", 3, opponents=["random"] * 3)
    with pytest.raises(AgentError, match="unknown agent 'genius'"):
        SingleAgentEnv("midnight_party", 3, opponents=["genius"])
    with pytest.raises(ConfigError, match="seat=5"):
        SingleAgentEnv("midnight_party", 3, seat=5)
    with pytest.raises(ConfigError, match="reward='fame'"):
        SingleAgentEnv("midnight_party", 3, reward="fame")
    with pytest.raises(ConfigError, match="unknown option 'colour'"):
        SingleAgentEnv("midnight_party", 3, colour="red")


def test_illegal_actions():
    env = SingleAgentEnv("midnight_party", 2, illegal="raise")
    env.reset(seed=0)
    with pytest.raises(ActionError, match="out of range"):
        env.step(509)
    with pytest.raises(ActionError, match="is not legal"):
        env.step(100)  # a move while placing
    env = SingleAgentEnv("midnight_party", 2)  # default: penalize, as gymnasium's contract asks
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(100)
    assert terminated and not truncated and reward == env.illegal_reward < -100
    assert info["illegal_action"] == 100 and "legal" in info["message"]
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)


def test_auto_forced_learner_never_sees_a_single_choice():
    # 2 x 14 guests fill the gallery: seat 1's last placement has a single free square
    options = dict(opponents=["random"], seat=1, guests_per_player=14, max_turns=60)
    _, _, masks, _ = run_episode(SingleAgentEnv("midnight_party", 2, **options), seed=3)
    assert any(m.sum() == 1 for m in masks[:-1])
    _, _, masks, _ = run_episode(SingleAgentEnv("midnight_party", 2, auto_forced=True, **options), seed=3)
    assert all(m.sum() >= 2 for m in masks[:-1])
