"""SeatVectorEnv: one learning seat per game in Gymnasium's vector form, as its wrappers take it."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import DictInfoToList, NormalizeReward, RecordEpisodeStatistics

from midnight_env import ActionError, ConfigError, SeatVectorEnv, SingleAgentEnv


def masked_random(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniform legal action per game; 0 where a game shows no decision (ended, NEXT_STEP)."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks], np.int64)


def assert_same(reference, got, games, path="info"):
    """``reference`` and ``got`` (arrays, object arrays or dicts of them) agree in ``games``."""
    if isinstance(reference, dict):
        assert sorted(reference) == sorted(got), path
        for key in reference:
            assert_same(reference[key], got[key], games, f"{path}[{key!r}]")
        return
    reference, got = np.asarray(reference), np.asarray(got)
    if reference.dtype == object:
        for i in np.flatnonzero(games):
            assert (reference[i] is None) == (got[i] is None), (path, i)
            if reference[i] is not None:
                np.testing.assert_array_equal(reference[i], got[i], err_msg=f"{path} game {i}")
    else:
        np.testing.assert_array_equal(reference[games], got[games], err_msg=path)
        if reference.dtype.kind != "f":
            assert reference.dtype == got.dtype, path


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("variant,num_players,seat", [("midnight_party", 3, 1), ("hidden_castle", 4, 0)])
def test_the_same_as_gymnasiums_sync_vector_env_of_single_agent_envs(mode, variant, num_players, seat):
    """Returns, infos (keys, masks, dtypes) and final observations are those of SyncVectorEnv over
    SingleAgentEnv, up to each game's first end (later games are seeded differently there)."""
    b = 5
    options = dict(variant=variant, num_players=num_players, opponents="random", seat=seat, max_turns=70)
    reference = SyncVectorEnv([lambda: SingleAgentEnv(illegal="raise", **options) for _ in range(b)],
                              autoreset_mode=mode)
    env = SeatVectorEnv(b, autoreset_mode=mode, **options)
    ref_obs, ref_info = reference.reset(seed=11)
    obs, info = env.reset(seed=11)
    np.testing.assert_array_equal(ref_obs, obs)
    assert_same(ref_info, info, np.ones(b, bool))
    rng = np.random.default_rng(0)
    first_done = np.zeros(b, bool)
    steps = 0
    while not first_done.all():
        actions = masked_random(info["action_mask"], rng)
        ref_actions = np.where(first_done, masked_random(ref_info["action_mask"], rng), actions)
        ref_obs, ref_rewards, ref_terms, ref_truncs, ref_info = reference.step(ref_actions)
        obs, rewards, terms, truncs, info = env.step(actions)
        steps += 1
        live = ~first_done
        ended = ref_terms | ref_truncs
        for ref_value, value in ((ref_rewards, rewards), (ref_terms, terms), (ref_truncs, truncs)):
            np.testing.assert_array_equal(ref_value[live], value[live])
        assert rewards.shape == (b,) and terms.dtype == truncs.dtype == np.bool_
        # SAME_STEP shows a new game at once, seeded differently by SingleAgentEnv
        shown = live & ~ended if mode == AutoresetMode.SAME_STEP else live
        np.testing.assert_array_equal(ref_obs[shown], obs[shown])
        assert sorted(ref_info) == sorted(info)
        if mode == AutoresetMode.SAME_STEP and (live & ended).any():
            final = ("final_obs", "final_info", "_final_obs", "_final_info")
            assert_same({k: ref_info[k] for k in final}, {k: info[k] for k in final}, live & ended)
        assert_same({k: v for k, v in ref_info.items() if "final" not in k},
                    {k: v for k, v in info.items() if "final" not in k}, shown)
        first_done |= ended
    assert steps > 10


def test_gymnasiums_statistics_and_reward_wrappers_take_it():
    """RecordEpisodeStatistics counts each game's own return and length; NormalizeReward scales
    one reward per game."""
    b = 6
    env = SeatVectorEnv(b, "hidden_castle", 3, opponents="random", seat=2, seed=3)
    stats = RecordEpisodeStatistics(env)
    wrapped = NormalizeReward(stats)
    obs, info = wrapped.reset(seed=3)
    assert obs.shape == (b, env.single_observation_space.shape[0])
    rng = np.random.default_rng(1)
    episodes = 0
    for _ in range(200):
        obs, rewards, terms, truncs, info = wrapped.step(masked_random(info["action_mask"], rng))
        assert rewards.shape == (b,) and np.isfinite(rewards).all()
        ended = terms | truncs
        if ended.any():
            np.testing.assert_array_equal(info["_spooky_points"], ended)
            np.testing.assert_array_equal(info["_episode"], ended)
            # before NormalizeReward: the learner's own points (hidden_castle starts at 10)
            np.testing.assert_array_equal(info["episode"]["r"][ended], -(info["spooky_points"][ended] - 10))
            assert (info["episode"]["l"][ended] > 0).all() and (info["seat"][ended] == 2).all()
            assert not info["action_mask"][ended].any()
            episodes += int(ended.sum())
    assert episodes >= b and stats.episode_count == episodes


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_dict_info_to_list_hands_every_game_its_own_info(mode):
    b = 4
    env = DictInfoToList(SeatVectorEnv(b, "hidden_castle", 2, seat=1, seed=0, autoreset_mode=mode))
    obs, infos = env.reset()
    assert [sorted(i) for i in infos] == [["action_mask", "seat"]] * b
    rng = np.random.default_rng(2)
    ended_games = 0
    for _ in range(60):
        masks = np.stack([i["action_mask"] for i in infos])
        obs, rewards, terms, truncs, infos = env.step(masked_random(masks, rng))
        for i in np.flatnonzero(terms | truncs):
            final = infos[i] if mode == AutoresetMode.NEXT_STEP else infos[i]["final_info"]
            assert final["seat"] == 1 and final["rank"] in (1, 2) and final["winner"] == (final["rank"] == 1)
            if mode == AutoresetMode.SAME_STEP:
                np.testing.assert_array_equal(infos[i]["final_obs"].shape, obs[i].shape)
            ended_games += 1
    assert ended_games >= b


def test_next_step_ignores_the_action_of_a_game_shown_anew():
    env = SeatVectorEnv(3, "hidden_castle", 2, seed=0, max_turns=6)
    obs, info = env.reset()
    rng = np.random.default_rng(0)
    while True:
        obs, rewards, terms, truncs, info = env.step(masked_random(info["action_mask"], rng))
        ended = terms | truncs
        if ended.any():
            break
    assert truncs[ended].all()  # max_turns
    assert not env.action_masks()[ended].any() and env.action_masks()[~ended].any(axis=1).all()
    actions = masked_random(info["action_mask"], rng)
    actions[ended] = env.engine.num_actions + 7  # ignored: nothing is decided in those games
    obs, rewards, terms, truncs, info = env.step(actions)
    assert (rewards[ended] == 0).all() and not (terms | truncs)[ended].any()
    assert info["action_mask"][ended].any(axis=1).all()  # the next game's decision


def test_random_seats_and_every_game_waits_for_the_learner():
    env = SeatVectorEnv(16, "midnight_party", 4, seat="random", seed=0)
    _, info = env.reset()
    assert len(set(env.seats.tolist())) > 1
    np.testing.assert_array_equal(info["seat"], env.seats)
    assert (env.state.player == env.seats).all()


def test_bad_arguments_are_named():
    with pytest.raises(ConfigError, match="autoreset_mode='sometimes' is not allowed: allowed are"):
        SeatVectorEnv(2, autoreset_mode="sometimes")
    with pytest.raises(ConfigError, match="autoreset_mode"):
        SeatVectorEnv(2, autoreset_mode=AutoresetMode.DISABLED)
    env = SeatVectorEnv(2, "midnight_party", 2, seed=0)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros(2, np.int64))
    env.reset()
    with pytest.raises(ValueError, match=r"shape \(3,\) for 2 games"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="game 1: action -1 is out of range"):
        env.step(np.array([int(np.flatnonzero(env.action_masks()[0])[0]), -1]))
    illegal = int(np.flatnonzero(~env.action_masks()[0])[0])
    with pytest.raises(ActionError, match="not legal"):
        env.step(np.array([illegal, illegal]))
