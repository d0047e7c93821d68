"""VectorEnv (many games per engine call) and its stable-baselines3 adapter."""

from __future__ import annotations

import numpy as np
import pytest
from experiment_scripts import experiment
from gymnasium.vector import AutoresetMode

import midnight_env
from midnight_env import ActionError, ConfigError, VectorEnv
from midnight_env.envs.vector import rank_rewards


def random_actions(mask, rng):
    """One uniformly random legal action per row of ``mask``."""
    return np.array([int(np.flatnonzero(row)[rng.integers(row.sum())]) for row in mask], np.int64)


def lockstep_ended(left, right, steps, rng):
    """Step two vector envs with the same random legal actions, asserting after every step that
    they return the same observations, masks, rewards, flags and info; returns how many games
    ended (and restarted) on the way."""
    (obs_l, _), (obs_r, _) = left.reset(), right.reset()
    ended = 0
    for _ in range(steps):
        for key in obs_l:
            np.testing.assert_array_equal(obs_l[key], obs_r[key])
        actions = random_actions(obs_l["action_mask"], rng)
        (obs_l, *out_l, info_l), (obs_r, *out_r, info_r) = left.step(actions), right.step(actions)
        for a, b in zip(out_l, out_r):
            np.testing.assert_array_equal(a, b)
        assert info_l.keys() == info_r.keys()
        for key in info_l:
            np.testing.assert_array_equal(info_l[key], info_r[key])
        ended += len(info_l.get("final_games", ()))
    for key in obs_l:
        np.testing.assert_array_equal(obs_l[key], obs_r[key])
    return ended


@pytest.mark.parametrize("variant,num_players,options", [
    ("hidden_castle", 3, {}),
    ("midnight_party", 2, {"reward": "rank"}),
    ("midnight_party", 4, {"max_turns": 40}),  # truncations too
])
def test_vector_env_equals_single_envs(variant, num_players, options):
    """Same seeds, same actions: the vector env and B single envs show the same games."""
    b, seed = 4, 100
    venv = VectorEnv(b, variant, num_players, seed=seed, **options)
    singles = [midnight_env.env(variant, num_players, **options) for _ in range(b)]
    obs, info = venv.reset()
    for i, env in enumerate(singles):
        env.reset(seed=seed + i)
    rng = np.random.default_rng(0)
    episodes = np.zeros(b, np.int64)
    ends = {"terminated": 0, "truncated": 0}
    for _ in range(250):
        for i, env in enumerate(singles):
            agent = env.agent_selection
            single = env.observe(agent)
            assert info["agent"][i] == env.agent_name_mapping[agent]
            np.testing.assert_array_equal(obs["observation"][i], single["observation"])
            np.testing.assert_array_equal(obs["action_mask"][i], single["action_mask"])
        actions = random_actions(obs["action_mask"], rng)
        obs, rewards, terminations, truncations, info = venv.step(actions)
        for i, env in enumerate(singles):
            env.step(int(actions[i]))
            np.testing.assert_array_equal(rewards[i], [env.rewards[a] for a in env.possible_agents])
            assert terminations[i] == any(env.terminations.values())
            assert truncations[i] == any(env.truncations.values())
            if not (terminations[i] or truncations[i]):
                continue
            ends["truncated" if truncations[i] else "terminated"] += 1
            k = list(info["final_games"]).index(i)
            for p, agent in enumerate(env.possible_agents):
                np.testing.assert_array_equal(info["final_observation"][k, p], env.observe(agent)["observation"])
                assert info["final_points"][k, p] == env.infos[agent]["spooky_points"]
                assert info["final_ranks"][k, p] == env.infos[agent]["rank"]
            episodes[i] += 1
            assert info["seed"][i] == seed + i + episodes[i] * b  # the next seed of the slot
            env.reset(seed=seed + i + episodes[i] * b)
    assert episodes.min() >= 1
    if "max_turns" in options:
        assert ends["truncated"] > 0


def test_spaces_dtypes_and_autoreset_mode():
    venv = VectorEnv(6, "midnight_party", 3, seed=1)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(150):
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        assert obs["observation"].shape == (6, venv.obs_size) and obs["action_mask"].shape == (6, 509)
        assert venv.observation_space.contains(obs)
        assert obs["action_mask"].any(axis=1).all()  # every game has a decision to make
        obs, rewards, term, trunc, info = venv.step(random_actions(obs["action_mask"], rng))
        assert rewards.shape == (6, 3) and rewards.dtype == np.float32
        if "final_observation" in info:
            for row in info["final_observation"].reshape(-1, venv.obs_size):
                assert venv.single_observation_space["observation"].contains(row)


# slow: batches past PARALLEL_FROM run the threaded kernels: seconds on idle cores, a minute on busy ones
@pytest.mark.slow
def test_game_does_not_depend_on_the_batch():
    """1100 games run the threaded kernels; their first three equal a batch of three (until one
    ends: restart seeds are ``seed + i + k*B``, which differ between the batch sizes)."""
    big, small = VectorEnv(1100, "hidden_castle", 4, seed=50), VectorEnv(3, "hidden_castle", 4, seed=50)
    obs_big, _ = big.reset()
    obs_small, _ = small.reset()
    rng = np.random.default_rng(2)
    for _ in range(60):
        np.testing.assert_array_equal(obs_big["observation"][:3], obs_small["observation"])
        np.testing.assert_array_equal(obs_big["action_mask"][:3], obs_small["action_mask"])
        actions = random_actions(obs_big["action_mask"], rng)
        obs_big, r_big, term, trunc, _ = big.step(actions)
        obs_small, r_small, *_ = small.step(actions[:3])
        np.testing.assert_array_equal(r_big[:3], r_small)
        if (term | trunc)[:3].any():
            break
    else:
        raise AssertionError("no game ended")


@pytest.mark.parametrize("variant, players, options", [
    ("midnight_party", 3, dict(guests_per_player=3)),
    ("midnight_party", 3, dict(guests_per_player=3, auto_forced=True)),
    ("hidden_castle", 4, {}),
])
# slow: batches past PARALLEL_FROM run the threaded kernels: seconds on idle cores, a minute on busy ones
@pytest.mark.slow
def test_threaded_step_equals_the_serial_one_with_restarts(monkeypatch, variant, players, options):
    """The threaded step kernel (batches >= PARALLEL_FROM), compiled for the env's rules with
    their numbers as constants (``midnight_env.core.specialize``), returns what the generic serial one
    does, game ends, final observations and restarts included."""
    import midnight_env.infra.threads as threads

    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "1")  # the copy for every rule set, not only where it pays
    b = max(threads.PARALLEL_FROM, 130)
    threaded = VectorEnv(b, variant, players, seed=11, **options)
    threaded.reset()
    with monkeypatch.context() as patch:  # compiled serial, it stays serial
        patch.setattr(threads, "PARALLEL_FROM", 10**9)
        serial = VectorEnv(b, variant, players, seed=11, **options)
        serial.reset()
    ended = lockstep_ended(threaded, serial, 120 if variant == "midnight_party" else 200, np.random.default_rng(5))
    assert ended > b // 2, "games ended and restarted"
    assert threaded._step_module.__name__.startswith("midnight_kernels_"), "the specialized copy ran"


# slow: batches past PARALLEL_FROM run the threaded kernels: seconds on idle cores, a minute on busy ones
@pytest.mark.slow
def test_a_bad_action_in_a_threaded_batch_is_named_and_changes_nothing():
    import midnight_env.infra.threads as threads

    b = max(threads.PARALLEL_FROM, 130)
    venv = VectorEnv(b, "hidden_castle", 3, seed=4)
    obs, _ = venv.reset()
    actions = random_actions(obs["action_mask"], np.random.default_rng(1))
    bad = b - 7  # in the last chunk of the threaded kernel
    actions[bad] = int(np.flatnonzero(obs["action_mask"][bad] == 0)[0])
    before = venv.state.copy()
    with pytest.raises(ActionError, match=rf"game {bad}: action {actions[bad]} \(.*\) is not legal"):
        venv.step(actions)
    assert venv.state.equal(before)


def test_seeds_reset_and_determinism():
    a, b = VectorEnv(3, "midnight_party", 2, seed=7), VectorEnv(3, "midnight_party", 2)
    obs_a, info_a = a.reset()
    obs_b, info_b = b.reset(seed=7)
    np.testing.assert_array_equal(info_a["seed"], [7, 8, 9])
    np.testing.assert_array_equal(obs_a["observation"], obs_b["observation"])
    obs_c, info_c = a.reset()  # a later reset starts every slot's next game
    np.testing.assert_array_equal(info_c["seed"], [10, 11, 12])
    _, info_d = a.reset(seed=[3, 1, 4])
    np.testing.assert_array_equal(info_d["seed"], [3, 1, 4])
    with pytest.raises(ValueError, match="got 2 seeds for 3 games"):
        a.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="seed -1 is out of range"):
        a.reset(seed=-1)


def test_rank_rewards_at_the_end_only():
    venv = VectorEnv(8, "hidden_castle", 4, seed=0, reward="rank")
    obs, _ = venv.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(80):
        obs, rewards, term, trunc, info = venv.step(random_actions(obs["action_mask"], rng))
        done = term | trunc
        assert not rewards[~done].any()
        if done.any():
            np.testing.assert_allclose(rewards[info["final_games"]], rank_rewards(info["final_points"]))
            finished += done.sum()
    assert finished > 8


def test_minus_one_leaves_a_game_and_bad_actions_are_named():
    venv = VectorEnv(3, "midnight_party", 4, seed=0)
    obs, _ = venv.reset()
    before = venv.state.take(1)
    obs2, rewards, *_ = venv.step([0, -1, 2])
    assert venv.state.take(1).equal(before) and not rewards[1].any()
    np.testing.assert_array_equal(obs2["observation"][1], obs["observation"][1])
    with pytest.raises(ActionError, match=r"game 0: action 0 \(place a guest on gallery square 0\) is not legal"):
        venv.step([0, 5, 5])  # square 0 of game 0 is taken
    with pytest.raises(ValueError, match="game 2: action -3 is out of range"):
        venv.step([1, 1, -3])
    with pytest.raises(ActionError, match="out of range"):
        venv.step([1, 1, 509])
    with pytest.raises(ValueError, match="must be integers"):
        venv.step([1.0, 1.0, 1.0])
    with pytest.raises(ConfigError, match="num_envs=0"):
        VectorEnv(0)
    with pytest.raises(ConfigError, match="reward='gold'"):
        VectorEnv(2, reward="gold")


def test_copy_false_returns_the_envs_buffers():
    venv = VectorEnv(2, "hidden_castle", 2, seed=0, copy=False)
    obs, _ = venv.reset()
    assert obs["action_mask"] is venv.state.legal
    obs2, rewards, terminations, _, info = venv.step(random_actions(obs["action_mask"], np.random.default_rng(0)))
    assert obs2["observation"] is obs["observation"]
    obs3, rewards3, terminations3, _, info3 = venv.step(random_actions(obs2["action_mask"], np.random.default_rng(1)))
    assert rewards3 is rewards and terminations3 is terminations and info3["agent"] is info["agent"]


@pytest.mark.parametrize("reward,auto_forced", [("points", False), ("rank", True)])
def test_copy_false_gives_what_copy_true_does(reward, auto_forced):
    """The env's own buffers hold, step by step, the values of the fresh arrays of copy=True:
    rewards, flags, info and the finished games' results included."""
    options = dict(seed=7, reward=reward, auto_forced=auto_forced, guests_per_player=2)
    fresh, own = VectorEnv(6, "midnight_party", 3, **options), VectorEnv(6, "midnight_party", 3, copy=False, **options)
    ended = lockstep_ended(fresh, own, 200, np.random.default_rng(3))
    assert ended >= 6, "games ended and restarted"


def test_auto_forced_vector():
    venv = VectorEnv(4, "midnight_party", 2, seed=3, guests_per_player=14, auto_forced=True, max_turns=30)
    obs, info = venv.reset()
    rng = np.random.default_rng(0)
    forced = 0
    for _ in range(60):
        assert (obs["action_mask"].sum(axis=1) >= 2).all()
        obs, _, _, _, info = venv.step(random_actions(obs["action_mask"], rng))
        forced += info["forced"].sum()
    assert forced >= 4  # at least the last placement of every game


def test_notation_helpers():
    venv = VectorEnv(2, "midnight_party", 2, seed=0)
    venv.reset()
    assert venv.action_to_notation(14, game=1) == "g14" and venv.notation_to_action("pass") == 508


# -- stable-baselines3 adapter ----------------------------------------------------------------------


def test_sb3_vec_env_learner_rewards_and_masks():
    pytest.importorskip("stable_baselines3")  # the "train" extra
    from midnight_env.envs.sb3_vec import SB3VecEnv

    env = SB3VecEnv(6, "midnight_party", 3, opponents=["random"], seat=1, seed=0)
    obs = env.reset()
    assert obs.shape == (6, env.observation_space.shape[0])
    rng = np.random.default_rng(0)
    totals = np.zeros(6)
    episodes = 0
    for _ in range(150):
        masks = np.stack(env.env_method("action_masks"))
        np.testing.assert_array_equal(masks, env.venv.state.legal.astype(bool))
        assert (env.venv.state.player == 1).all()  # every game waits for the learner
        obs, rewards, dones, infos = env.step(random_actions(masks, rng))
        totals += rewards
        for i in np.flatnonzero(dones):
            assert totals[i] == -infos[i]["spooky_points"]  # the learner's own points, nobody else's
            assert infos[i]["terminal_observation"].shape == obs.shape[1:]
            totals[i] = 0
            episodes += 1
    assert episodes >= 6
    assert env.has_attr("action_masks")


def test_sb3_vec_env_random_seats():
    pytest.importorskip("stable_baselines3")
    from midnight_env.envs.sb3_vec import SB3VecEnv

    env = SB3VecEnv(16, "hidden_castle", 4, seat="random", seed=0)
    env.reset()
    assert len(set(env.seats.tolist())) > 1
    assert (env.venv.state.player == env.seats).all()


def test_maskable_ppo_trains_on_the_sb3_vec_env_legally_and_reproducibly():
    """MaskablePPO steps the SB3 adapter with its masks (an illegal action would raise in the env's
    checks), updates its network, and a seed decides the run. Whether the update improves the policy
    is tested in test_training.py."""
    import torch

    MaskablePPO = pytest.importorskip("sb3_contrib").MaskablePPO

    from midnight_env.envs.sb3_vec import SB3VecEnv

    def train():
        env = SB3VecEnv(4, "hidden_castle", 2, opponents=["random"], seed=0)
        model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
        before = [p.detach().clone() for p in model.policy.parameters()]
        model.learn(total_timesteps=128)
        return model, before

    torch.set_num_threads(1)
    model, before = train()
    assert model.num_timesteps >= 128
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before)), "the update changed nothing"
    again, _ = train()
    assert all(torch.equal(a, b) for a, b in zip(after, again.policy.parameters())), "same seed, other run"


def test_benchmark_script_runs(tmp_path, capsys):
    """Smoke test of experiments/bench_env.py with a tiny budget (it measures, never asserts speed)."""

    with experiment("bench_env") as module:
        module.main(["--quick", "--seconds", "0.05", "--batches", "1,4", "--plot", str(tmp_path / "plot.png")])
    out = capsys.readouterr().out
    assert "midnight_party  env()" in out and "hidden_castle         4" in out
    assert (tmp_path / "plot.png").stat().st_size > 10_000


def _step_in_forked_child(venv, actions, queue):
    obs, rewards, *_ = venv.step(actions)
    queue.put((obs["observation"].sum(), rewards.sum()))


@pytest.mark.slow
def test_threaded_envs_keep_working_in_a_forked_child():
    """numba's OpenMP threads abort a child forked after the parent used them: there the engine
    and the env fall back to the serial kernels (same results)."""
    import multiprocessing

    import midnight_env.infra.threads as threads

    b = max(threads.PARALLEL_FROM, 130)
    venv = VectorEnv(b, "midnight_party", 4, seed=3)
    obs, _ = venv.reset()
    actions = random_actions(obs["action_mask"], np.random.default_rng(0))
    venv.step(actions)  # the parent has run the threaded kernels
    actions = random_actions(venv.state.legal, np.random.default_rng(1))
    twin = VectorEnv(b, "midnight_party", 4, seed=3)
    twin.reset()
    twin.step(random_actions(twin.state.legal, np.random.default_rng(0)))
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_step_in_forked_child, args=(venv, actions, queue))
    child.start()
    child.join(120)
    assert child.exitcode == 0, "the forked child died"
    obs_sum, reward_sum = queue.get(timeout=10)
    obs, rewards, *_ = twin.step(actions)  # the same step in the parent, threaded
    assert obs_sum == obs["observation"].sum() and reward_sum == rewards.sum()
