"""RLlib training (midnight_env.training.rllib_ppo): the seat mapping of self-play, a one-iteration
run on a Ray instance of this machine (the conftest's ``ray_instance``) whose exported policy the
tournament rates, and the export of either network shape checked against RLlib's forward pass."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from midnight_env.training.args import ConfigFileError
from midnight_env.training.rllib_ppo import LEARNER, load_config, seat_mapping

ROOT = Path(__file__).resolve().parents[2]
TINY = {"total_timesteps": 150, "train_batch_size": 150, "minibatch_size": 50, "num_epochs": 1,
        "hidden_sizes": "32,16", "num_env_runners": 1, "num_envs_per_env_runner": 1, "pool_size": 1,
        "self_play": 0.5, "snapshot_every": 1, "eval_every": 0, "eval_games": 24, "threads": 1}


def test_every_game_seats_the_learner_and_self_play_seats_it_everywhere():
    mapping = seat_mapping(4, self_play=0.5, pool_size=3, seed=7)
    kinds = set()
    for game in range(200):
        episode = SimpleNamespace(id_=f"episode{game}")
        modules = [mapping(f"player_{s}", episode) for s in range(4)]
        assert modules == [mapping(f"player_{s}", episode) for s in range(4)]  # fixed for the game
        assert LEARNER in modules and set(modules) <= {LEARNER, "frozen_0", "frozen_1", "frozen_2"}
        kinds.add(modules.count(LEARNER))
    assert kinds == {1, 4}  # one learner against snapshots, or self-play
    everyone = seat_mapping(4, self_play=1.0, pool_size=3, seed=7)
    assert {everyone(f"player_{s}", SimpleNamespace(id_=str(g))) for s in range(4) for g in range(50)} == {LEARNER}


def test_settings_that_cannot_train_are_refused():
    with pytest.raises(ConfigFileError, match="needs frozen snapshots"):
        load_config(None, {"self_play": 0.5, "pool_size": 0})
    with pytest.raises(ConfigFileError, match="num_env_runners=-1 is out of range"):
        load_config(None, {"num_env_runners": -1})
    config = load_config(ROOT / "configs" / "rllib-midnight_party-4p.yaml")
    assert config.variant == "midnight_party" and config.num_players == 4 and LEARNER == "shared"


@pytest.mark.slow  # RLlib on Ray: an env runner actor, one PPO iteration, an evaluation, a tournament
def test_one_iteration_trains_a_policy_the_tournament_rates(tmp_path, ray_instance, capsys, monkeypatch):
    from midnight_agents.model import PolicyModel
    from midnight_env.cli import main

    argv = ["train", "--algo", "rllib", "--config", str(ROOT / "configs" / "rllib-midnight_party-4p.yaml"),
            "--run-dir", str(tmp_path), "--no-progress"]
    for key, value in TINY.items():
        argv += ["--override", f"{key}={value}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    run_dir = tmp_path / "rllib-midnight_party-4p-s1"
    assert str(run_dir) in out and "win rate" in out
    meta = json.loads((run_dir / "model.json").read_text())
    assert meta["training"]["algorithm"] == "ppo (RLlib)" and meta["training"]["env_steps"] >= 150
    model = PolicyModel.load(run_dir / "model.npz")
    assert [w.shape for w, _ in model.layers["policy"]] == [(meta["observation_size"], 32), (32, 16),
                                                            (16, meta["num_actions"])]
    assert not model.layers["shared"] and len(model.layers["value"]) == 3
    metrics = (run_dir / "metrics.csv").read_text()
    assert "charts/SPS" in metrics and "losses/policy_loss" in metrics and "eval/points" in metrics
    assert (run_dir / "learning_curve.png").exists()

    monkeypatch.chdir(tmp_path)  # a short spec: the agent's name in the leaderboard and its plot
    spec = "ppo:path=rllib-midnight_party-4p-s1/model.npz"
    assert main(["tournament", "--agents", f"{spec},random,runner,coward", "--games", "8", "--db", "t.sqlite",
                 "--no-progress"]) == 0
    assert spec in capsys.readouterr().out


def test_the_policy_reads_the_observation_the_tournament_gives_it():
    """The env RLlib trains on and the agents of a tournament encode a position alike."""
    from midnight_env.core.observation import encode_observations
    from midnight_env.envs.rllib import rllib_aec_env

    env = rllib_aec_env("midnight_party", 4, illegal="raise")
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(30):
        game = env.unwrapped
        obs = env.observe(env.agent_selection)
        np.testing.assert_array_equal(obs["observations"],
                                      encode_observations(game.engine, game.game_state, np.array([0]))[0])
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.slow  # RLlib builds its learner
def test_a_shared_trunk_exports_as_the_formats_shared_layers(ray_instance):
    from midnight_env.core.engine import Engine
    from midnight_env.training.rllib_ppo import build_config, export_shared

    config = load_config(None, {**TINY, "variant": "hidden_castle", "num_players": 3, "vf_share_layers": True,
                                "activation": "relu", "num_env_runners": 0})
    algo = build_config(config).build_algo()
    try:
        model, weights, activation = export_shared(algo, Engine("hidden_castle", 3))  # checked against RLlib
    finally:
        algo.stop()
    assert activation == "relu" and len(model.layers["shared"]) == 2
    assert len(model.layers["policy"]) == 1 and len(model.layers["value"]) == 1


@pytest.mark.slow  # RLlib builds an env runner
def test_the_masked_module_samples_legal_actions_only():
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    from midnight_env.training.rllib_ppo import build_config

    config = load_config(None, {**TINY, "variant": "hidden_castle", "num_players": 3, "num_env_runners": 0})
    runner = MultiAgentEnvRunner(config=build_config(config))  # RLlib's env check first
    steps = 0
    for episode in runner.sample(num_timesteps=300, random_actions=False):
        for agent_id in episode.agent_ids:
            seat = episode.agent_episodes[agent_id]
            masks, actions = seat.get_observations()["action_mask"], seat.get_actions()
            assert all(masks[k][a] == 1 for k, a in enumerate(actions))
            assert not any("illegal_action" in info for info in seat.get_infos())  # none penalised
            steps += len(actions)
    runner.stop()
    assert steps >= 250  # the actions of 300 env steps, less the episodes cut at the end


def test_without_rllib_the_command_says_which_extra(tmp_path, monkeypatch, capsys):
    from midnight_env.cli import main

    monkeypatch.setitem(sys.modules, "ray.rllib", None)  # RLlib not installed
    assert main(["train", "--algo", "rllib", "--run-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("--algo rllib needs RLlib, which is not installed: pip install 'midnight-env[rllib]'")
    assert len(err.splitlines()) == 1 and not (tmp_path / "runs").exists()
