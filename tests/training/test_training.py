"""Training entry points with tiny budgets, the ppo agent's model files, and the shipped models.

Real training runs are not tests: every run here is a few hundred env steps, enough to check
that losses are finite, no illegal action is ever chosen, a seed decides a run exactly and the
model's metadata says how it was made. That the learners learn is checked where it shows within
seconds: an update raises the probability of the actions with positive advantage (native PPO on
a batch made for it, MaskablePPO on its last rollout), imitation learns the imitated choices.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from midnight_agents.model import model_meta
from midnight_agents.ppo import MODELS_DIR, ModelError, PolicyModel, PPOAgent, masked_choice, save_model
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import list_agents, make_agent
from midnight_env.core.engine import Engine
from midnight_env.training.args import ConfigFileError, parse_args, to_mapping
from midnight_env.training.logger import read_metrics

ROOT = Path(__file__).resolve().parents[2]
torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")
from midnight_env.training import native  # noqa: E402  (needs torch)

SHIPPED = ["ppo-midnight_party-4p", "ppo-hidden_castle-4p"]


def losses_finite(run_dir: Path) -> dict:
    series = read_metrics(run_dir / "metrics.csv")
    losses = {k: v for k, (_, v) in series.items() if k.startswith("losses/")}
    assert losses, "no loss was logged"
    for name, values in losses.items():
        assert all(math.isfinite(x) for x in values), f"{name} is not finite: {values}"
    return series


def model_weights(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def same_weights(a: Path, b: Path) -> bool:
    wa, wb = model_weights(a), model_weights(b)
    return wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa)


def random_model(engine: Engine, tmp_path: Path, name: str = "m", seed: int = 0) -> Path:
    from midnight_agents.ppo import engine_description

    d, a = engine_description(engine)["observation_size"], engine.num_actions
    rng = np.random.default_rng(seed)
    weights = {"shared.0.weight": rng.normal(0, 0.1, (16, d)), "shared.0.bias": np.zeros(16),
               "policy.0.weight": rng.normal(0, 1, (a, 16)), "policy.0.bias": np.zeros(a),
               "value.0.weight": rng.normal(0, 1, (1, 16)), "value.0.bias": np.zeros(1)}
    save_model(tmp_path / name, weights, model_meta(engine, "tanh", {"seed": seed}))
    return tmp_path / name


# -- native batched PPO --------------------------------------------------------------------------

NATIVE_TINY = ["--total-timesteps", "512", "--num-envs", "16", "--num-steps", "16", "--hidden-sizes", "32",
               "--self-play", "0.5", "--opponents", "self,runner", "--snapshot-every", "1", "--eval-every", "0",
               "--eval-games", "8", "--eval-opponents", "runner", "--check-actions", "true", "--progress", "false"]


TRAINING_KEYS = ("algorithm", "command", "config", "seed", "training_time_s", "cpu_time_s", "env_steps",
                 "engine_version", "git_commit", "uncommitted_changes")


def assert_training_metadata(meta: dict, seed: int, steps: int) -> dict:
    """The model names how it was made: every setting, command, seed, wall and CPU time, code version."""
    training = meta["training"]
    missing = [k for k in TRAINING_KEYS if k not in training]
    assert not missing, f"training metadata lacks {missing}"
    assert training["seed"] == training["config"]["seed"] == seed and training["env_steps"] == steps
    assert training["training_time_s"] >= 0 and training["cpu_time_s"] > 0 and training["command"]
    assert training["git_commit"]  # the tests run in a git checkout
    return training


@pytest.mark.slow
def test_native_ppo_trains_legally_and_a_seed_decides_the_run(tmp_path):
    runs = [native.main(NATIVE_TINY + ["--run-dir", str(tmp_path / k), "--seed", "3"]) for k in ("a", "b")]
    for run in runs:
        series = losses_finite(run.run_dir)
        assert series["charts/illegal_actions"][1] == [0.0] * len(series["charts/illegal_actions"][1])
        assert run.steps == 512
    a, b = (r.run_dir for r in runs)
    assert same_weights(a / "model.npz", b / "model.npz")
    assert runs[0].eval == runs[1].eval
    other = native.main(NATIVE_TINY + ["--run-dir", str(tmp_path / "c"), "--seed", "4"])
    assert not same_weights(a / "model.npz", other.run_dir / "model.npz")
    for name in ("config.yaml", "metrics.csv", "learning_curve.png", "model.json"):
        assert (a / name).is_file(), name
    training = assert_training_metadata(json.loads((a / "model.json").read_text()), seed=3, steps=512)
    assert training["algorithm"] == "ppo_native" and training["config"]["hidden_sizes"] == [32]


@pytest.mark.slow
def test_native_imitation_warm_start_learns_the_agents_choices(tmp_path):
    run = native.main(["--variant", "hidden_castle", "--total-timesteps", "256", "--num-envs", "16",
                       "--num-steps", "16", "--hidden-sizes", "64", "--imitate", "coward", "--imitate-games", "24",
                       "--imitate-epochs", "6", "--learning-rate", "0.003", "--eval-games", "4", "--eval-opponents",
                       "runner", "--progress", "false", "--run-dir", str(tmp_path)])
    accuracy = read_metrics(run.run_dir / "metrics.csv")["imitation/accuracy"][1]
    assert accuracy[-1] > accuracy[0] + 0.1  # coward's choices are learned (accuracy[0]: the untrained net)


def test_ppo_update_raises_the_better_actions_probability_and_moves_the_value_to_the_returns():
    # one observation decided 64 times: slot 0 was worth more than its value said, slot 1 less, slot 2 never
    # chosen; the returns lie 1 above the values on average
    torch.manual_seed(0)
    net = native.Network(6, 5, [16])
    args = native.Args(learning_rate=0.01, update_epochs=4, num_minibatches=2)
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    n = 64
    obs = torch.randn(1, 6).repeat(n, 1)
    slots, open_ = native.legal_slots(np.tile(np.array([[1, 0, 1, 1, 0]], np.int8), (n, 1)), 4)
    actions = torch.arange(n) % 2
    advantages = torch.where(actions == 0, 2.0, 0.0)

    def policy():
        with torch.no_grad():
            logits, value = net(obs[:1], slots[:1], open_[:1])
        return torch.softmax(logits, 1)[0], float(value[0])

    probs, value = policy()
    logp = torch.log(probs[actions])
    values = torch.full((n,), value)
    losses = native.ppo_update(net, optimizer, args, torch.Generator().manual_seed(0), obs, slots, open_, actions,
                               logp, advantages, values, advantages + values)
    after, value_after = policy()
    assert all(math.isfinite(v) for v in losses.values()) and losses["losses/clipfrac"] > 0
    assert after[0] > probs[0] + 0.05 and after[1] < probs[1] - 0.05, (probs, after)
    assert after[3] == 0  # a closed slot (no legal action) gets no probability
    assert value + 0.05 < value_after < value + 1  # towards the mean return, value + 1


def test_chain_advantages_follow_each_seat_and_stop_at_the_game_end():
    # two seats alternate; the game ends at step 3 and restarts
    seats = np.array([[0], [1], [0], [1], [0], [1]])
    rewards = np.zeros((6, 1, 2), np.float32)
    rewards[1, 0, 0] = -1  # seat 1's move costs seat 0 a point: seat 0's decision at step 0 pays
    rewards[3, 0, 0], rewards[3, 0, 1] = -5, -2  # the last step: both seats book
    dones = np.zeros((6, 1), bool)
    dones[3] = True
    values = np.zeros((6, 1), np.float32)
    adv, trainable = native.chain_advantages(values, rewards, dones, seats, np.ones((6, 1), bool), 1.0, 1.0)
    assert adv[:, 0].tolist() == [-6, -2, -5, -2, 0, 0]
    assert trainable[:, 0].tolist() == [True, True, True, True, False, False]  # the new game's outcome is unknown


def test_native_rule_options_from_a_flag_reach_the_engine():
    # a bare `dict` field (options) used to pass the flag's text through, and the trainer failed on it
    args = parse_args(native.Args, ["--num-players", "1", "--options", "rounds=1,guests_per_player=2"])
    assert args.options == {"rounds": "1", "guests_per_player": "2"}
    engine = Engine(args.variant, args.num_players, **args.options)
    assert engine.config.options["rounds"] == 1 and engine.config.options["guests_per_player"] == 2
    with pytest.raises(ConfigFileError, match="options"):
        parse_args(native.Args, ["--options", "rounds"])


def test_list_and_mapping_settings_take_yaml_forms_on_the_command_line_and_bad_ones_name_the_allowed():
    args = parse_args(native.Args, ["--hidden-sizes", "[512, 256]", "--options", "{rounds: 1}"])
    assert (args.hidden_sizes, args.options) == ([512, 256], {"rounds": 1})
    assert parse_args(native.Args, ["--hidden-sizes", "512,256"]).hidden_sizes == [512, 256]
    with pytest.raises(ConfigFileError, match=r"hidden_sizes='\[512, x\]' is not a valid list: allowed are int "
                                              r"values, comma-separated \(256,128\) or as a YAML list"):
        parse_args(native.Args, ["--hidden-sizes", "[512, x]"])
    with pytest.raises(ConfigFileError, match=r"hidden_sizes='\[1,' is not a valid list"):
        parse_args(native.Args, ["--hidden-sizes", "[1,"])  # broken YAML
    with pytest.raises(ConfigFileError, match=r"options='\[1, 2\]' is not a valid dict: allowed are KEY=VALUE pairs"):
        parse_args(native.Args, ["--options", "[1, 2]"])
    with pytest.raises(ConfigFileError, match="num_envs='many' is not a valid int: allowed are whole numbers"):
        parse_args(native.Args, ["--num-envs", "many"])


def test_native_args_from_yaml_with_flags_winning(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("num_envs: 8\nhidden_sizes: [16, 8]\nopponents: [expert]\nlearning_rate: 0.01\n")
    args = parse_args(native.Args, ["--config", str(cfg), "--learning-rate", "0.5"])
    assert (args.num_envs, args.hidden_sizes, args.opponents, args.learning_rate) == (8, [16, 8], ["expert"], 0.5)
    args = native.load_config(cfg, {"learning_rate": "0.5"})  # as `midnight train` reads it
    assert (args.config, args.num_envs, args.hidden_sizes, args.learning_rate) == (str(cfg), 8, [16, 8], 0.5)
    cfg.write_text("num_envz: 8\n")
    with pytest.raises(ValueError, match="num_envz"):
        parse_args(native.Args, ["--config", str(cfg)])
    with pytest.raises(ValueError, match="num_envs='many'"):
        parse_args(native.Args, ["--num-envs", "many"])


# settings added to Args after the shipped models were trained, at the value that keeps the old behaviour
# (max_legal: the softmax over a decision's legal actions only, the same distribution; configs/native-*.yaml)
NEWER_THAN_SHIPPED = {"max_legal": 32}


@pytest.mark.parametrize("name", SHIPPED)
def test_native_configs_hold_every_setting_the_shipped_models_were_trained_with(name):
    shipped = json.loads((MODELS_DIR / f"{name}.json").read_text())["training"]["config"]
    path = ROOT / "configs" / f"native-{name.removeprefix('ppo-')}.yaml"
    config = to_mapping(native.load_config(path))
    assert shipped["config"] == str(path.relative_to(ROOT))
    assert {k: config[k] for k in NEWER_THAN_SHIPPED} == NEWER_THAN_SHIPPED
    mine = {k: v for k, v in config.items() if k != "config" and k not in NEWER_THAN_SHIPPED}
    assert mine == {k: v for k, v in shipped.items() if k != "config"}


@pytest.mark.slow
def test_midnight_train_runs_native_by_default_from_its_config(tmp_path, capsys):
    from midnight_env.cli import main

    config = ROOT / "configs" / "native-midnight_party-4p.yaml"
    argv = ["train", "--config", str(config), "--total-timesteps", "128", "--seed", "4", "--run-dir", str(tmp_path),
            "--no-progress"]
    for pair in ("num_envs=16", "num_steps=8", "hidden_sizes=32", "eval_games=8", "save_model="):
        argv += ["--override", pair]
    assert main(argv) == 0
    run_dir = tmp_path / "ppo-midnight_party-4p-s4"
    assert f"{run_dir}: 128 env steps" in capsys.readouterr().out
    losses_finite(run_dir)
    training = assert_training_metadata(json.loads((run_dir / "model.json").read_text()), seed=4, steps=128)
    assert training["algorithm"] == "ppo_native" and training["config"]["config"] == str(config)
    assert training["config"]["opponents"] == yaml.safe_load(config.read_text())["opponents"]
    assert (training["config"]["num_envs"], training["config"]["progress"]) == (16, False)


@pytest.mark.slow  # a fresh interpreter that imports torch
def test_the_native_trainer_makes_openmp_threads_wait_passively_when_torch_loads():
    # torch's spinning OpenMP threads fight numba's for the cores (see midnight_env.training.native):
    # `midnight train` must have set OMP_WAIT_POLICY by the time torch is imported
    probe = """
import os, sys
seen = []
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            seen.append(os.environ.get("OMP_WAIT_POLICY"))
sys.meta_path.insert(0, Spy())
from midnight_env.cli import build_parser
from midnight_env.commands.train import trainer
build_parser()
assert "torch" not in sys.modules
trainer("native")
print(seen[:1])
"""
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['PASSIVE']"


# -- MaskablePPO (sb3-contrib) and `midnight train` ------------------------------------------------

# anneal_lr off: annealed to the end, the last rollout's update runs at learning rate 0 (the check below needs one)
SB3_TINY = {"total_timesteps": 256, "num_envs": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 2,
            "net_arch": [32], "opponents": ["self", "runner"], "snapshot_every": 64, "eval_every": 128,
            "eval_games": 8, "eval_opponents": ["runner"], "checkpoint_every": 128, "progress": False,
            "learning_rate": 0.003, "anneal_lr": False}


@pytest.mark.slow
def test_sb3_maskable_ppo_learns_legally_and_a_seed_decides_the_run(tmp_path):
    from midnight_env.training.sb3 import load_config, train

    runs = [train(load_config(None, {**SB3_TINY, "seed": 5, "run_dir": str(tmp_path / k)})) for k in ("a", "b")]
    for run in runs:
        losses_finite(run.run_dir)
        assert run.steps == 256
        assert sorted(p.name for p in (run.run_dir / "checkpoints").glob("*.npz")) == ["step128.npz",
                                                                                         "step256.npz"]
    a, b = (r.run_dir for r in runs)
    assert same_weights(a / "model.npz", b / "model.npz")
    assert runs[0].eval == runs[1].eval
    assert_training_metadata(json.loads((a / "model.json").read_text()), seed=5, steps=256)
    # the last update made the last rollout's decisions with positive advantage more likely, the others less
    policy, rollout = runs[0].model.policy, runs[0].model.rollout_buffer
    obs = torch.as_tensor(rollout.observations.reshape(-1, rollout.observations.shape[-1]))
    actions = torch.as_tensor(rollout.actions.reshape(-1)).long()
    with torch.no_grad():
        _, logp, _ = policy.evaluate_actions(obs, actions, action_masks=rollout.action_masks.reshape(len(obs), -1))
        logits = policy.action_net(policy.mlp_extractor.forward_actor(policy.extract_features(obs)))
    change, advantages = logp.numpy() - rollout.log_probs.reshape(-1), rollout.advantages.reshape(-1)
    assert change[advantages > 0].mean() > 0.01 and change[advantages < 0].mean() < -0.005
    # the model file is that policy: the same logits from numpy
    assert np.allclose(PolicyModel.load(a / "model").logits(obs.numpy()), logits.numpy(), atol=1e-5)
    # the masked policy never picks an illegal action: play it with the engine checking every action
    engine = Engine("midnight_party", 4)
    agent = make_agent(f"ppo:path={a / 'model.npz'},sample=true")
    play_batch(engine, [agent], np.zeros((16, 4), int), range(16))


@pytest.mark.slow
def test_midnight_train_runs_maskable_ppo_from_a_config(tmp_path, capsys):
    from midnight_env.cli import main

    overrides = [f"{k}={','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in SB3_TINY.items()]
    argv = ["train", "--algo", "maskable_ppo", "--config", str(ROOT / "configs" / "sb3-hidden_castle-4p.yaml"),
            "--run-dir", str(tmp_path), "--seed", "2"]
    for o in overrides:
        argv += ["--override", o]
    assert main(argv) == 0
    out = capsys.readouterr().out
    run_dir = tmp_path / "sb3-hidden_castle-4p-s2"
    assert str(run_dir) in out and "win rate" in out
    assert f"against {', '.join(SB3_TINY['eval_opponents'])} (model:" in out  # it says whom it evaluated against
    losses_finite(run_dir)
    meta = json.loads((run_dir / "model.json").read_text())
    assert meta["variant"] == "hidden_castle" and meta["training"]["config"]["seed"] == 2
    assert main(["train", "--config", str(tmp_path / "nowhere.yaml")]) == 2
    assert "nowhere.yaml does not exist" in capsys.readouterr().err
    assert main(["train", "--algo", "maskable_ppo", "--override", "reward=speed", "--run-dir", str(tmp_path)]) == 2
    assert "reward='speed' is not allowed: allowed are points, rank" in capsys.readouterr().err
    assert main(["train", "--override", "reward=speed", "--run-dir", str(tmp_path)]) == 2  # native has no reward
    assert "unknown setting 'reward'" in capsys.readouterr().err


# -- what `midnight train` asks of every trainer ------------------------------------------------------


@pytest.mark.parametrize("algo", ["native", "maskable_ppo", "rllib", "value"])
def test_every_trainer_is_a_trainer_of_the_protocol_midnight_train_calls(algo):
    import inspect

    from midnight_env.commands.train import trainer
    from midnight_env.training.args import Settings
    from midnight_env.training.trainer import Trainer, TrainResult

    module = trainer(algo)
    assert isinstance(module, Trainer)
    assert issubclass(module.Args, Settings) and module.SEEDS == module.Args.SEEDS
    assert list(inspect.signature(module.load_config).parameters)[:2] == ["path", "overrides"]
    assert list(inspect.signature(module.train).parameters)[:2] == ["args", "command"]
    assert inspect.signature(module.train).return_annotation in (TrainResult, "TrainResult")
    args = module.load_config(None, {"seed": 3})
    assert isinstance(args, module.Args) and args.seed == 3 and args.config == ""
    with pytest.raises(ConfigFileError, match="threads=0 is out of range: allowed are 1 or more"):
        module.load_config(None, {"threads": 0})  # the base's checks, in every trainer


# -- the ppo agent and its model files ----------------------------------------------------------------


def test_ppo_agent_plays_legal_moves_batched_and_greedy_is_its_best_choice(tmp_path):
    engine = Engine("midnight_party", 4)
    path = random_model(engine, tmp_path)
    agent = make_agent(f"ppo:path={path}.npz")
    assert isinstance(agent, PPOAgent) and PPOAgent(path).name == "m"
    res = play_batch(engine, [agent, make_agent("runner")], np.tile([0, 1, 0, 1], (24, 1)), range(24))
    assert (res.decisions > 0).all()  # the engine checks every action: all were legal
    from midnight_env.arena.agent import Decisions
    from midnight_env.core.dice import agent_streams

    state = engine.new_games(range(8))
    games = np.arange(8)
    d = Decisions(engine, state, games, agent_streams(range(8)))
    logits = agent.model.logits(d.observations())
    best = np.where(d.legal == 1, logits, -np.inf).argmax(1)
    assert agent.act(d).tolist() == best.tolist()


def test_masked_choice_samples_only_legal_actions_by_their_probabilities():
    logits = np.array([[0.0, np.log(3.0), 5.0, 0.0]] * 20000, np.float32)
    legal = np.array([[1, 1, 0, 0]] * 20000, np.int8)
    u = np.random.default_rng(0).random(20000)
    picks = masked_choice(logits, legal, u)
    assert set(picks.tolist()) == {0, 1}
    assert abs((picks == 1).mean() - 0.75) < 0.02
    assert masked_choice(logits[:1], legal[:1]).tolist() == [1]
    edge = masked_choice(logits[:1], legal[:1], np.array([1.0 - 1e-16]))  # never past the last legal action
    assert edge.tolist() == [1]


def test_a_missing_model_file_is_refused_by_name(tmp_path):
    with pytest.raises(ModelError, match=r"nothere\.json does not exist|nothere\.npz does not exist"):
        make_agent(f"ppo:path={tmp_path / 'nothere.npz'}")
    engine = Engine("midnight_party", 4)
    path = random_model(engine, tmp_path)
    Path(f"{path}.npz").unlink()
    with pytest.raises(ModelError, match=r"m\.npz does not exist"):
        PolicyModel.load(path)
    with pytest.raises(ModelError, match="needs its model file"):
        make_agent("ppo")


@pytest.mark.parametrize("variant, players, field", [("hidden_castle", 4, "variant 'midnight_party'"),
                                                     ("midnight_party", 3, "num_players 4")])
def test_a_model_for_another_game_is_refused_naming_file_and_mismatch(tmp_path, variant, players, field):
    path = random_model(Engine("midnight_party", 4), tmp_path)
    agent = make_agent(f"ppo:path={path}")
    other = Engine(variant, players)
    with pytest.raises(ModelError, match="does not fit this game") as err:
        play_batch(other, [agent], np.zeros((2, players), int), range(2))
    assert str(path) + ".npz" in str(err.value) and field in str(err.value)


def test_a_model_of_another_observation_layout_is_refused(tmp_path):
    engine = Engine("midnight_party", 4)
    path = random_model(engine, tmp_path)
    js = Path(f"{path}.json")
    meta = json.loads(js.read_text())
    meta["observation_layout"] = "0123456789ab"  # saved by an older observation encoding
    js.write_text(json.dumps(meta))
    agent = make_agent(f"ppo:path={path}")
    with pytest.raises(ModelError, match="observation_layout '0123456789ab'"):
        play_batch(engine, [agent], np.zeros((2, 4), int), range(2))
    meta["observation_size"] = 17
    js.write_text(json.dumps(meta))
    with pytest.raises(ModelError, match="reads 253 inputs .* metadata says 17"):
        make_agent(f"ppo:path={path}")
    js.write_text("{not json")
    with pytest.raises(ModelError, match="is not readable JSON"):
        make_agent(f"ppo:path={path}")


# -- the shipped models --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_is_listed_small_documented_and_plays_legal_moves(name):
    assert name in dict(list_agents())
    npz, js = MODELS_DIR / f"{name}.npz", MODELS_DIR / f"{name}.json"
    assert npz.stat().st_size < 5_000_000
    meta = json.loads(js.read_text())
    training = meta["training"]
    for key in ("command", "config", "seed", "training_time_s", "env_steps"):
        assert training.get(key) not in (None, ""), key
    assert training["config"]["seed"] == training["seed"]
    variant = meta["variant"]
    assert name == f"ppo-{variant}-{meta['num_players']}p"
    engine = Engine(variant, meta["num_players"])
    agent = make_agent(name)
    res = play_batch(engine, [agent, make_agent("random")], np.tile([0, 1, 1, 0], (32, 1)), range(32))
    assert (res.decisions > 0).all() and not res.truncated.any()
    with pytest.raises(ModelError, match="does not fit this game"):
        play_batch(Engine(variant, 3), [agent], np.zeros((1, 3), int), [0])
