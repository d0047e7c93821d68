"""PPO on RLlib: the PettingZoo env, every seat one shared policy, frozen snapshots as opponents.

For users who train with RLlib at scale. The env is RLlib's ``PettingZooEnv`` of the AEC env
(:mod:`midnight_env.envs.rllib`): one agent decides at a time, its observation
``{"observations", "action_mask"}``, read by an action-masking module
(:mod:`midnight_env.training.rllib_module`: illegal actions get no probability). Multi-agent self-play:
every seat maps to the module ``shared``, the one RLlib trains; in a ``1 - self_play`` share of
the games one seat is ``shared`` and the others are frozen snapshots of it (``frozen_0`` ..,
``pool_size`` of them, refreshed in turn every ``snapshot_every`` iterations), so that the policy
also meets its own past. Sampling runs in ``num_env_runners`` Ray actors (0: in this process),
on this machine's Ray or the cluster at ``address``.

RLlib's default network for it is an actor MLP and a critic MLP (``hidden_sizes``, one
activation) with a linear policy head and a linear value head (or one shared MLP,
``vf_share_layers``): exactly what the project's model format holds. Every evaluation and the
end of the run export the ``shared`` module to that format (:func:`export_shared`, checked
against RLlib's own forward pass), so that the model plays as ``ppo:path=RUN/model.npz`` in
``midnight tournament`` and is evaluated as any other model is.

    midnight train --algo rllib --config configs/rllib-midnight_party-4p.yaml
    python experiments/train_rllib.py --config configs/rllib-midnight_party-4p.yaml --total-timesteps 20000

Writes ``runs/<exp_name>-s<seed>/`` as the other trainers do: config.yaml, metrics.csv,
checkpoints/ (models), model.npz/.json, learning_curve.png. Needs the ``rllib`` extra.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from midnight_env.infra import checks
from midnight_env.training.args import ConfigFileError, Settings, check_counts, check_numbers, check_widths, parse_args
from midnight_env.training.evaluate import EVAL_OPPONENTS
from midnight_env.training.runs import RunFolder
from midnight_env.training.trainer import TrainResult

ENV_NAME = "midnight"  # the name the env creator is registered under with RLlib
LEARNER = "shared"  # the module RLlib trains; the frozen snapshots are frozen_0, frozen_1, ...

# this trainer's seeds: below the limit (check_seed_below), and why
SEEDS = (2**31, "RLlib seeds numpy's legacy generator (32 bits) with it plus its env runners' numbers")


@dataclass
class Args(Settings):
    SEEDS: ClassVar[tuple[int, str]] = SEEDS
    RUN_NAME: ClassVar[str] = "rllib_ppo"

    seed: int = 1
    """RLlib's seed (its env runners, modules and the seat mapping)"""
    reward: str = "points"
    """'points' (minus each change of a seat's spooky points) or 'rank' (+1..-1 at the end)"""
    total_timesteps: int = 200_000
    """env steps to train for (one step = one decision of one seat), checked after each iteration"""
    max_seconds: float = 0.0
    """stop after this many seconds of training (0: no limit)"""
    address: str = ""
    """Ray cluster to run on ('': Ray of this process, else RAY_ADDRESS, else an instance started here)"""
    num_cpus: int = 0
    """CPUs of a Ray instance started here (0: every core)"""
    num_env_runners: int = 0
    """RLlib env runners (Ray actors, one CPU each) that sample; 0 samples in this process"""
    num_envs_per_env_runner: int = 1
    """games each env runner steps"""
    train_batch_size: int = 4000
    """env steps per iteration (RLlib's train_batch_size_per_learner)"""
    minibatch_size: int = 256
    """SGD minibatch"""
    num_epochs: int = 4
    """passes over an iteration's batch"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 1.0
    """discount per decision of a seat"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_coef: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value-loss weight"""
    max_grad_norm: float = 0.5
    """gradient-norm clipping"""
    hidden_sizes: list[int] = field(default_factory=lambda: [256, 128])
    """widths of the actor MLP and of the critic MLP (RLlib's fcnet_hiddens)"""
    activation: str = "tanh"
    """tanh or relu"""
    vf_share_layers: bool = False
    """one MLP for the policy and the value heads instead of two"""
    self_play: float = 0.8
    """share of the games where every seat is the learner; in the others one seat is, the rest frozen snapshots"""
    pool_size: int = 4
    """frozen snapshots of the learner (0: none, then self_play must be 1)"""
    snapshot_every: int = 5
    """iterations between refreshing the next frozen snapshot with the learner's weights"""
    eval_every: int = 10
    """iterations between evaluations against fixed heuristics, each writing a checkpoint (0: only at the end)"""
    eval_games: int = 300
    """games per evaluation"""
    eval_opponents: list[str] = field(default_factory=lambda: list(EVAL_OPPONENTS))
    """heuristic agents of the evaluation games"""
    save_model: str = ""
    """also write the final model to this path (NAME -> NAME.npz + NAME.json)"""
    progress: bool = True
    """show a progress bar"""

    def check(self) -> None:
        checks.choice("reward=", self.reward, ("points", "rank"), error=ConfigFileError)
        checks.choice("activation=", self.activation, ("tanh", "relu"), error=ConfigFileError)
        super().check()
        check_counts(self, 1, "total_timesteps", "train_batch_size", "minibatch_size", "num_epochs",
                     "num_envs_per_env_runner", "snapshot_every", "eval_games")
        check_counts(self, 0, "num_env_runners", "num_cpus", "pool_size", "eval_every")
        check_numbers(self, 0.0, 1.0, "self_play", "gamma", "gae_lambda")
        check_numbers(self, 0.0, None, "max_seconds", "learning_rate", "ent_coef", "vf_coef")
        check_numbers(self, 0.0, None, "clip_coef", "max_grad_norm", low_open=True)
        if self.self_play < 1.0 and self.pool_size == 0:
            raise ConfigFileError(f"self_play={self.self_play!r} needs frozen snapshots to play against: allowed "
                                  "with pool_size=0 is self_play=1")
        check_widths(self, "hidden_sizes", least_layers=1)


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Args:
    """:class:`Args` from a YAML file (or the defaults) with ``overrides`` applied; ``config`` names the file."""
    return Args.load(path, overrides)


def seat_mapping(num_players: int, self_play: float, pool_size: int, seed: int):
    """RLlib's ``policy_mapping_fn``: agent -> module, drawn per game from the episode's id.

    Every seat of a self-play game is the learner; in the other games the seat drawn as the
    learner's is, and every other seat one of the frozen snapshots.
    """
    import random

    def mapping(agent_id, episode, **kwargs) -> str:
        game = random.Random(f"{seed}/{episode.id_}")
        if pool_size == 0 or game.random() < self_play:
            return LEARNER
        seat = int(str(agent_id).rsplit("_", 1)[1])
        if seat == game.randrange(num_players):
            return LEARNER
        return f"frozen_{random.Random(f'{seed}/{episode.id_}/{seat}').randrange(pool_size)}"

    return mapping


def build_config(config: Args):
    """RLlib's ``PPOConfig`` of :class:`Args` (new API stack, action masking, self-play)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from midnight_env.envs.rllib import rllib_env
    from midnight_env.training.rllib_module import MaskedPPOModule

    register_env(ENV_NAME, rllib_env)
    model = DefaultModelConfig(fcnet_hiddens=list(config.hidden_sizes), fcnet_activation=config.activation,
                               vf_share_layers=config.vf_share_layers, head_fcnet_hiddens=[])
    modules = [LEARNER] + [f"frozen_{k}" for k in range(config.pool_size)]
    env_config = {"variant": config.variant, "num_players": config.num_players, "reward": config.reward,
                  **config.options}
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=env_config)
        .env_runners(num_env_runners=config.num_env_runners, num_envs_per_env_runner=config.num_envs_per_env_runner)
        .training(train_batch_size_per_learner=config.train_batch_size, minibatch_size=config.minibatch_size,
                  num_epochs=config.num_epochs, lr=config.learning_rate, gamma=config.gamma,
                  lambda_=config.gae_lambda, clip_param=config.clip_coef, entropy_coeff=config.ent_coef,
                  vf_loss_coeff=config.vf_coef, grad_clip=config.max_grad_norm, use_kl_loss=False)
        .multi_agent(policies=set(modules), policies_to_train=[LEARNER],
                     policy_mapping_fn=seat_mapping(config.num_players, config.self_play, config.pool_size,
                                                    config.seed))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            m: RLModuleSpec(module_class=MaskedPPOModule, model_config=model) for m in modules}))
        .debugging(seed=config.seed)
    )


def _forward(module, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RLlib's own logits (before masking: every action open) and values of ``module``."""
    import torch
    from ray.rllib.core.columns import Columns

    def batch():
        x = torch.from_numpy(obs)
        return {Columns.OBS: {"observations": x, "action_mask": torch.ones((len(obs), module.action_space.n))}}

    with torch.no_grad():
        logits = module.forward_inference(batch())[Columns.ACTION_DIST_INPUTS]
        values = module.compute_values(batch())
    return logits.numpy(), values.numpy()


def _export_on_learner(learner, probe: np.ndarray):
    from midnight_env.training.export import rllib_weights

    module = learner.module[LEARNER]
    module = getattr(module, "module", module)  # unwrapped from torch's DistributedDataParallel
    weights, activation = rllib_weights(module)
    return weights, activation, _forward(module, probe)


def export_shared(algo, engine, training: dict | None = None):
    """The learner module as a :class:`~midnight_agents.model.PolicyModel` of the model format.

    Its numpy forward pass is checked against RLlib's on random observations: a network the
    format cannot express (another RLlib default, a layer norm) fails here, not in a tournament.
    """
    from midnight_agents.model import ModelError, PolicyModel, model_meta
    from midnight_env.core.observation import observation_size

    probe = np.random.default_rng(0).random((16, observation_size(engine)), dtype=np.float32)
    results = algo.learner_group.foreach_learner(_export_on_learner, probe=probe)
    weights, activation, (logits, values) = next(iter(results)).get()
    model = PolicyModel(weights, model_meta(engine, activation, training), source="rllib:shared")
    ours_logits, ours_values = model.forward(probe)
    if not (np.allclose(ours_logits, logits, rtol=1e-4, atol=1e-4) and np.allclose(ours_values, values, rtol=1e-4,
                                                                                    atol=1e-4)):
        raise ModelError("the RLlib module's forward pass differs from its export to the model format: its network "
                         "has a part the format cannot hold (hidden_sizes, activation and vf_share_layers are)")
    return model, weights, activation


def refresh_snapshot(algo, slot: str) -> None:
    """Copy the learner's weights into the frozen module ``slot``, on the learners and the env runners."""
    def copy(learner):
        learner.module[slot].load_state_dict(learner.module[LEARNER].state_dict())

    algo.learner_group.foreach_learner(copy)
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, policies=[slot],
                                       inference_only=True)


class League:
    """The frozen snapshots ``frozen_0`` .. of the learner that hold the other seats of a ``1 -
    self_play`` share of the games: all the learner's first weights at the start, then one
    refreshed in turn every ``snapshot_every`` iterations."""

    def __init__(self, algo, args: Args):
        self.algo, self.args = algo, args
        for k in range(args.pool_size):  # the snapshots start as the learner's first weights
            refresh_snapshot(algo, f"frozen_{k}")

    def update(self, iteration: int) -> None:
        every, size = self.args.snapshot_every, self.args.pool_size
        if size and iteration % every == 0:
            refresh_snapshot(self.algo, f"frozen_{(iteration // every - 1) % size}")


def _number(result: dict, *path: str) -> float | None:
    for key in path:
        if not isinstance(result, dict) or key not in result:
            return None
        result = result[key]
    return float(result) if isinstance(result, (int, float, np.floating, np.integer)) else None


# our metric <- the path of RLlib's in an iteration's result
RESULT_METRICS = {
    "charts/episodic_return": ("env_runners", "module_episode_returns_mean", LEARNER),
    "charts/episodic_length": ("env_runners", "episode_len_mean"),
    "charts/sampling_seconds": ("timers", "env_runner_sampling_timer"),
    "charts/learning_seconds": ("timers", "learner_update_timer"),
    "losses/policy_loss": ("learners", LEARNER, "policy_loss"),
    "losses/value_loss": ("learners", LEARNER, "vf_loss"),
    "losses/entropy": ("learners", LEARNER, "entropy"),
}


def iteration_metrics(result: dict, steps: int, run) -> dict[str, float | None]:
    """An iteration's ``charts/…`` and ``losses/…`` from RLlib's result (None: not in it)."""
    last = {"charts/SPS": steps / run.seconds(), "charts/cpu_SPS": steps / run.cpu_seconds(),
            "charts/iteration_seconds": _number(result, "time_this_iter_s")}
    for ours, path in RESULT_METRICS.items():
        value = _number(result, *path)
        if value is not None:
            last[ours] = value
    return last


def evaluate(algo, engine, args: Args, run, step: int) -> dict[str, float]:
    """The learner module's greedy policy against ``eval_opponents`` (``eval_games`` games), logged at
    ``step``; a checkpoint, its export, written beside."""
    from midnight_agents.ppo import PPOAgent
    from midnight_env.training.evaluate import evaluate_policy

    model, weights, activation = export_shared(algo, engine)
    metrics = evaluate_policy(PPOAgent(model=model), engine, args.eval_opponents, args.eval_games,
                              seed=10**9 + args.seed)
    run.log(step, metrics)
    run.checkpoint(step, weights, model.meta)
    return metrics


def train(args: Args, command: str | None = None) -> TrainResult:
    """One training run (see the module doc): RLlib iterations (play and fit), then league, log and
    checkpoint, on a Ray of this process, of ``address`` or started here."""
    import torch
    from tqdm import tqdm

    from midnight_env.core.engine import Engine
    from midnight_env.infra.ray_cluster import ray_session, require_ray

    args.check()  # (again: settings changed since they were made)
    require_ray("--algo rllib", "ray.rllib", "rllib")
    with ray_session(args.address or None, args.num_cpus or None):
        torch.set_num_threads(args.threads)
        engine = Engine(args.variant, args.num_players, **args.options)
        run = RunFolder.new(args)
        algo = build_config(args).build_algo()
        try:
            league = League(algo, args)
            steps, iteration, last = 0, 0, {}
            bar = tqdm(total=args.total_timesteps, unit="step", unit_scale=True, disable=not args.progress,
                       desc=f"rllib ppo {args.variant} {args.num_players}p")
            while steps < args.total_timesteps:
                if args.max_seconds and run.seconds() > args.max_seconds:
                    break
                # -- play and fit: RLlib's iteration ----------------------------------------------------
                result = algo.train()
                iteration += 1
                before, steps = steps, int(_number(result, "num_env_steps_sampled_lifetime") or steps)
                # -- log -------------------------------------------------------------------------------
                last = iteration_metrics(result, steps, run)
                run.log(steps, {k: v for k, v in last.items() if v is not None})
                bar.update(steps - before)
                # -- league ----------------------------------------------------------------------------
                league.update(iteration)
                # -- checkpoint ------------------------------------------------------------------------
                if args.eval_every and iteration % args.eval_every == 0:
                    evaluate(algo, engine, args, run, steps)
            bar.close()
            seconds, cpu_seconds = run.seconds(), run.cpu_seconds()
            final = evaluate(algo, engine, args, run, steps)
            training = run.training("ppo (RLlib)", args.seed, steps, command, seconds=seconds, cpu_seconds=cpu_seconds)
            model, weights, _ = export_shared(algo, engine, training)
        finally:
            algo.stop()
    run.save(weights, model.meta, also=args.save_model)
    run.close(f"RLlib PPO {args.variant} {args.num_players}p seed {args.seed}")
    return TrainResult(run.run_dir, steps, seconds, final, last, cpu_seconds)


def main(argv: list[str] | None = None) -> TrainResult:
    """Every :class:`Args` field as a flag (``--config FILE.yaml`` first, flags win); trains and prints."""
    args = parse_args(Args, argv, description=__doc__.split("\n")[0])
    result = train(args)
    steps, seconds, final = result.steps, result.seconds, result.eval
    print(f"{result.run_dir}: {steps} env steps in {seconds:.0f} s ({steps / seconds:.0f} steps/s); "
          f"eval {final['eval/points']:.2f} ± {final['eval/points_ci']:.2f} points, "
          f"win rate {final['eval/win_rate']:.3f}")
    return result


__all__ = ["Args", "League", "build_config", "export_shared", "load_config", "main", "refresh_snapshot",
           "seat_mapping", "train"]
