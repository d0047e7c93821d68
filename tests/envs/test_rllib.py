"""The RLlib adapter: the observation form of RLlib's action-masking module, RLlib's env check,
and what an unmasked action does (ends the game with a penalty, never replaced by a legal one)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from midnight_env.envs.rllib import RLlibObservations, rllib_aec_env


def test_observations_in_the_form_of_rllibs_action_masking_module():
    from pettingzoo.test import api_test

    env = rllib_aec_env("hidden_castle", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "observation is not a NumPy array": a dict, as RLlib wants
        api_test(env, num_cycles=50)
    space = env.observation_space("player_1")
    assert sorted(space) == ["action_mask", "observations"]
    assert space["action_mask"].dtype == np.int8 and space["observations"].shape == (199,)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    assert space.contains(obs)
    np.testing.assert_array_equal(obs["action_mask"], env.unwrapped.game_state.legal[0])
    assert not env.observe("player_2" if env.agent_selection != "player_2" else "player_0")["action_mask"].any()


def test_an_unmasked_action_ends_the_game_with_the_offenders_penalty(require):
    require("ray.rllib")
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    from midnight_env.envs.rllib import rllib_env

    env = rllib_env({"variant": "midnight_party", "num_players": 3})
    check_multiagent_environments(env)  # steps an action sampled without the mask
    obs, _ = env.reset(seed=0)
    (agent, first), = obs.items()
    illegal = int(np.flatnonzero(first["action_mask"] == 0)[0])
    obs, rewards, terminated, truncated, infos = env.step({agent: illegal})
    assert terminated["__all__"] and rewards[agent] == env.env.unwrapped.illegal_reward < 0
    assert infos[agent]["illegal_action"] == illegal
    assert all(r == 0 for a, r in rewards.items() if a != agent)

    strict = rllib_env({"variant": "midnight_party", "num_players": 3}, illegal="raise")
    obs, _ = strict.reset(seed=0)
    with pytest.raises(Exception, match="not legal"):
        strict.step({agent: illegal})


def test_the_wrapper_passes_the_env_through():
    env = RLlibObservations(rllib_aec_env("midnight_party", 2).unwrapped)
    env.reset(seed=1)
    assert env.agent_selection == "player_0" and env.unwrapped.engine.num_players == 2
