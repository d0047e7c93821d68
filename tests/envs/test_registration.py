"""The Gymnasium ids: ``gymnasium.make`` builds the single-agent env of the id's variant,
``gymnasium.make_vec`` the vector env, options passed through as they are."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from midnight_env import ConfigError, SingleAgentEnv, VectorEnv
from midnight_env.envs.registration import IDS

ID_VARIANTS = list(IDS.items())


def masked_random_steps(env, obs, info, steps, seed=0):
    """A few random legal steps through any wrapper (the mask comes in ``info``); the observations."""
    rng = np.random.default_rng(seed)
    seen = [obs]
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        seen.append(obs)
        assert not (terminated or truncated)
    return seen


def test_the_ids_are_in_gymnasiums_registry():
    assert set(IDS) == {"midnight_env/MidnightParty-v0", "midnight_env/HiddenCastle-v0"}
    for env_id in IDS:
        spec = gymnasium.spec(env_id)
        assert (spec.namespace, spec.version, spec.max_episode_steps) == ("midnight_env", 0, None)
        assert spec.entry_point.startswith("midnight_env.envs.registration:")
        assert spec.vector_entry_point.startswith("midnight_env.envs.registration:")
    listing = gymnasium.pprint_registry(disable_print=True)
    assert "===== midnight_env =====" in listing
    assert all(env_id in listing for env_id in IDS)


@pytest.mark.parametrize("env_id,variant", ID_VARIANTS)
def test_make_builds_the_single_agent_env_of_the_variant(env_id, variant):
    env = gymnasium.make(env_id, num_players=3, opponents="random", reward="rank")
    own = SingleAgentEnv(variant, 3, opponents="random", reward="rank")
    assert isinstance(env.unwrapped, SingleAgentEnv)
    assert env.unwrapped.engine.variant == variant and env.unwrapped.reward_mode == "rank"
    assert env.spec.id == env_id
    obs, info = env.reset(seed=7)
    own_obs, own_info = own.reset(seed=7)
    # the same game as the env built by hand, step for step
    for made, by_hand in zip(masked_random_steps(env, obs, info, 6), masked_random_steps(own, own_obs, own_info, 6)):
        np.testing.assert_array_equal(made, by_hand)


@pytest.mark.parametrize("env_id", IDS)
def test_the_made_env_passes_gymnasiums_checker(env_id):
    env = gymnasium.make(env_id, num_players=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    # gymnasium's own note that it checked a wrapped env (make adds OrderEnforcing and
    # PassiveEnvChecker); nothing about the env
    others = [str(w.message) for w in caught if "different from the unwrapped version" not in str(w.message)]
    assert others == []


@pytest.mark.parametrize("env_id,variant", ID_VARIANTS)
def test_make_vec_builds_the_vector_env_of_the_variant(env_id, variant):
    envs = gymnasium.make_vec(env_id, num_envs=5, num_players=2, seed=11, max_turns=300)
    own = VectorEnv(5, variant, 2, seed=11, max_turns=300)
    assert isinstance(envs, VectorEnv) and envs.num_envs == 5
    assert envs.engine.variant == variant and envs.engine.config.options["max_turns"] == 300
    assert envs.spec.id == env_id and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    (obs, info), (own_obs, own_info) = envs.reset(), own.reset()
    assert list(info["seed"]) == list(own_info["seed"]) == list(range(11, 16))
    rng = np.random.default_rng(0)
    for _ in range(8):
        np.testing.assert_array_equal(obs["observation"], own_obs["observation"])
        np.testing.assert_array_equal(obs["action_mask"], own_obs["action_mask"])
        legal = obs["action_mask"].astype(bool)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in legal])
        obs, rewards, *_ = envs.step(actions)
        own_obs, own_rewards, *_ = own.step(actions)
        np.testing.assert_array_equal(rewards, own_rewards)


def test_make_vec_sync_mode_wraps_single_agent_envs():
    envs = gymnasium.make_vec("midnight_env/HiddenCastle-v0", num_envs=2, vectorization_mode="sync", num_players=2)
    assert isinstance(envs, gymnasium.vector.SyncVectorEnv)
    assert all(isinstance(e.unwrapped, SingleAgentEnv) for e in envs.envs)
    obs, info = envs.reset(seed=3)
    assert obs.shape == (2, envs.single_observation_space.shape[0]) and info["action_mask"].shape == (2, 409)


@pytest.mark.parametrize("make", [gymnasium.make, gymnasium.make_vec])
def test_the_variant_is_the_ids(make):
    with pytest.raises(ConfigError, match=r"variant='midnight_party' is not allowed: the id "
                                          r"midnight_env/HiddenCastle-v0 plays hidden_castle"):
        make("midnight_env/HiddenCastle-v0", variant="midnight_party")


@pytest.mark.parametrize("code", [
    # the usual order: gymnasium first, then the package (which registers where gymnasium is loaded)
    "import gymnasium, midnight_env; env = gymnasium.make('midnight_env/MidnightParty-v0'); ",
    # a module prefix: gymnasium imports the registration itself, whatever was imported before
    "import midnight_env, gymnasium; "
    "env = gymnasium.make('midnight_env.envs.registration:midnight_env/HiddenCastle-v0'); ",
    # the module's name of before the layers (midnight_env/_old_paths.py), as the README gave it
    "import gymnasium; env = gymnasium.make('midnight_env.registration:midnight_env/HiddenCastle-v0'); ",
])
def test_a_fresh_process_makes_the_ids(code):
    code += "env.reset(seed=0); print(type(env.unwrapped).__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "SingleAgentEnv"
