"""MaskablePPO (sb3-contrib) on the batched SB3 env, against an opponent pool with self-play.

The learner holds one seat per game (``seat: random`` by default) of an
:class:`~midnight_env.envs.sb3_vec.SB3VecEnv`; every other seat of a game is taken by a member of the
opponent pool, drawn per game and seat from the game's seed: heuristic agents by spec and
``self``, frozen snapshots of the policy (numpy copies taken every ``snapshot_every`` steps, the
oldest replaced once ``pool_size`` are kept). The run folder gets the resolved config, metrics
(CSV, TensorBoard when installed), evaluations against fixed heuristics, checkpoints in the
``midnight_agents.model`` format, the final model and a learning-curve PNG.

    midnight train --algo maskable_ppo --config configs/sb3-midnight_party-4p.yaml
    python experiments/train_ppo.py --config configs/sb3-midnight_party-4p.yaml --override total_timesteps=200000
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from midnight_agents.model import PolicyModel, model_meta, save_model
from midnight_agents.ppo import PPOAgent
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.core.config import make_config
from midnight_env.core.dice import GOLDEN, mix64
from midnight_env.training.args import (
    ConfigFileError,
    check_counts,
    check_numbers,
    check_seed_below,
    check_widths,
    from_mapping,
    load_yaml,
    to_mapping,
)
from midnight_env.training.evaluate import EVAL_OPPONENTS, evaluate_policy

# this trainer's seeds: below the limit (check_seed_below), and why
SEEDS = (2**32, "stable-baselines3 seeds numpy's legacy generator, which takes 32 bits")


@dataclass
class TrainConfig:
    exp_name: str = "maskable_ppo"
    """name of the run; its folder is <run_dir>/<exp_name>-s<seed>"""
    run_dir: str = "runs"
    """folder that receives the run folders"""
    seed: int = 1
    """seed of torch, numpy and the games (game i starts with seed + i)"""
    threads: int = 1
    """torch CPU threads (torch.set_num_threads): one by default, as the small networks here gain
    little from more and a machine busy with other work trains them 5-10x slower with two"""
    variant: str = "midnight_party"
    """rule set: midnight_party or hidden_castle"""
    num_players: int = 4
    """players per game"""
    options: dict = field(default_factory=dict)
    """rule options passed to the engine"""
    reward: str = "points"
    """'points' (minus each change of the learner's spooky points) or 'rank' (+1..-1 at the end)"""
    reward_scale: float = 0.1
    """rewards are multiplied by this before learning"""
    total_timesteps: int = 1_000_000
    """learner decisions to train for"""
    max_seconds: float = 0.0
    """stop after this many seconds of training (0: no limit)"""
    num_envs: int = 64
    """games played at once"""
    n_steps: int = 128
    """learner decisions per game per rollout"""
    batch_size: int = 1024
    """minibatch size"""
    n_epochs: int = 4
    """passes over a rollout"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over total_timesteps"""
    gamma: float = 1.0
    """discount per learner decision"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clipping of the probability ratio"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value-loss weight"""
    max_grad_norm: float = 0.5
    """gradient-norm clipping"""
    net_arch: list[int] = field(default_factory=lambda: [256, 128])
    """hidden widths of the policy and of the value network (separate, as SB3 builds them)"""
    activation: str = "tanh"
    """tanh or relu"""
    seat: str = "random"
    """the learner's seat: 'random' (drawn per game) or a seat number"""
    opponents: list[str] = field(default_factory=lambda: ["self", "expert", "coward", "green_hunter", "runner"])
    """opponent pool, drawn per game and seat: agent specs, 'self' = a frozen snapshot of the policy"""
    snapshot_every: int = 50_000
    """learner decisions between snapshots added to the 'self' pool"""
    pool_size: int = 4
    """snapshots kept (the oldest is replaced)"""
    eval_every: int = 100_000
    """learner decisions between evaluations against fixed heuristics (0: only at the end)"""
    eval_games: int = 300
    """games per evaluation"""
    eval_opponents: list[str] = field(default_factory=lambda: list(EVAL_OPPONENTS))
    """heuristic agents of the evaluation games"""
    checkpoint_every: int = 100_000
    """learner decisions between checkpoints (0: none but the final model)"""
    save_model: str = ""
    """also write the final model to this path (NAME -> NAME.npz + NAME.json)"""
    progress: bool = True
    """show a progress bar"""

    def __post_init__(self):
        self.check()

    def check(self) -> None:
        """ConfigFileError (one line naming the setting, its value and what is allowed) for a setting
        out of range: checked when the settings are made, before anything is written."""
        if self.reward not in ("points", "rank"):
            raise ConfigFileError(f"reward={self.reward!r} is not allowed: allowed are points, rank")
        if self.activation not in ("tanh", "relu"):
            raise ConfigFileError(f"activation={self.activation!r} is not allowed: allowed are tanh, relu")
        check_seed_below(self.seed, *SEEDS)
        config = make_config(self.variant, self.num_players, **self.options)
        if self.seat != "random" and not (str(self.seat).isdigit() and int(self.seat) < config.num_players):
            raise ConfigFileError(f"seat={self.seat!r} is not allowed: allowed are 'random' or a seat number 0 to "
                                  f"{config.num_players - 1} (num_players {config.num_players})")
        check_counts(self, 1, "total_timesteps", "num_envs", "n_steps", "batch_size", "n_epochs", "pool_size",
                     "threads", "snapshot_every", "eval_games")
        check_counts(self, 0, "eval_every", "checkpoint_every")
        check_numbers(self, 0.0, None, "max_seconds", "learning_rate", "ent_coef", "vf_coef")
        check_numbers(self, 0.0, None, "clip_range", "max_grad_norm", "reward_scale", low_open=True)
        check_numbers(self, 0.0, 1.0, "gamma", "gae_lambda")
        check_widths(self, "net_arch")
        if not self.opponents:
            raise ConfigFileError("opponents is empty: name at least one agent spec or 'self'")


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> TrainConfig:
    """A :class:`TrainConfig` from a YAML file (or the defaults) with ``overrides`` applied."""
    data = load_yaml(path) if path else {}
    data.update(overrides or {})
    return from_mapping(TrainConfig, data, where=str(path) if path else "overrides")


class OpponentPool(Agent):
    """One opponent seat-taker that hands each game to a pool member drawn from the game's seed.

    ``members`` are agents; a member that is ``None`` stands for a snapshot not taken yet and is
    played by the first snapshot slot (the initial policy). ``seeds_of`` gives the seed of each
    game of the batch, so a game keeps its opponents until it is restarted.
    """

    name = "pool"

    def __init__(self, members: list[Agent], seeds_of, salt: int = 0):
        self.members = members
        self.seeds_of = seeds_of
        self.salt = np.uint64(salt)
        self.decisions = 0  # opponent decisions made (for env steps per second)

    def draw(self, games: np.ndarray, seats: np.ndarray) -> np.ndarray:
        seeds = np.asarray(self.seeds_of()[games], np.uint64)
        with np.errstate(over="ignore"):  # the sums wrap around 2**64, as splitmix64 means them to
            code = mix64(seeds * np.uint64(16) + seats.astype(np.uint64) + self.salt + GOLDEN)
        return (code % np.uint64(len(self.members))).astype(np.int64)

    def act(self, decisions: Decisions) -> np.ndarray:
        games = decisions.games
        self.decisions += len(games)
        member = self.draw(games, decisions.players.astype(np.int64))
        out = np.empty(len(games), np.int64)
        for k in np.unique(member):
            part = member == k
            sub = Decisions(decisions.engine, decisions.state, games[part], decisions.rng)
            out[part] = self.members[k].act(sub)
        return out


def train(config: TrainConfig, command: str | None = None) -> dict[str, Any]:
    """Run one training; returns the run folder, the final metrics and the model (see module doc)."""
    config.check()  # (again: settings changed since they were made)
    try:  # numpy's BLAS threads (the snapshots' numpy inference) spin beside torch's: 3x slower self-play
        from threadpoolctl import threadpool_limits
    except ImportError:
        return _train(config, command)
    with threadpool_limits(limits=1, user_api="blas"):
        return _train(config, command)


def _train(config: TrainConfig, command: str | None = None) -> dict[str, Any]:
    import os
    import sys

    if "torch" not in sys.modules:  # spinning OpenMP threads fight numba's for the cores (see training.native)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import KVWriter, Logger
    from stable_baselines3.common.vec_env import VecEnvWrapper, VecMonitor

    from midnight_env.envs.sb3_vec import SB3VecEnv
    from midnight_env.training.export import sb3_weights
    from midnight_env.training.logger import MetricLogger, plot_learning_curve
    from midnight_env.training.runs import code_version, make_run_dir, training_metadata, write_config

    torch.set_num_threads(config.threads)
    run_dir = make_run_dir(config.run_dir, f"{config.exp_name}-s{config.seed}")
    resolved = to_mapping(config)
    write_config(run_dir, resolved)
    metrics = MetricLogger(run_dir)
    code = code_version()
    start, cpu_start = time.perf_counter(), time.process_time()

    # -- env with its opponent pool ----------------------------------------------------------------
    from midnight_env.arena.registry import make_agent

    specs = list(config.opponents)
    n_self = config.pool_size if "self" in specs else 0
    holder: dict[str, Any] = {}
    heuristics = {s: make_agent(s) for s in specs if s != "self"}
    members: list[Agent] = []
    self_slots: list[int] = []
    for s in specs:  # 'self' gets pool_size slots, filled as snapshots are taken
        if s == "self":
            self_slots = list(range(len(members), len(members) + n_self))
            members.extend([None] * n_self)
        else:
            members.append(heuristics[s])
    pool = OpponentPool(members, lambda: holder["vec"].venv.seeds, salt=config.seed)
    seat = config.seat if config.seat == "random" else int(config.seat)
    vec = SB3VecEnv(config.num_envs, config.variant, config.num_players, opponents=[pool], seat=seat,
                    seed=config.seed, reward=config.reward, **config.options)
    holder["vec"] = vec
    engine = vec.engine

    class ScaleReward(VecEnvWrapper):
        def reset(self):
            return self.venv.reset()

        def step_wait(self):
            obs, rewards, dones, infos = self.venv.step_wait()
            return obs, rewards * config.reward_scale, dones, infos

    env = VecMonitor(ScaleReward(vec))

    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[config.activation]
    lr = config.learning_rate
    model = MaskablePPO(
        "MlpPolicy", env, learning_rate=(lambda f: lr * f) if config.anneal_lr else lr, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma, gae_lambda=config.gae_lambda,
        clip_range=config.clip_range, ent_coef=config.ent_coef, vf_coef=config.vf_coef,
        max_grad_norm=config.max_grad_norm, seed=config.seed, device="cpu", verbose=0,
        policy_kwargs={"net_arch": {"pi": list(config.net_arch), "vf": list(config.net_arch)},
                       "activation_fn": activation})

    def current_model(name: str = "policy"):
        weights, act = sb3_weights(model.policy)
        return weights, act, PolicyModel(weights, model_meta(engine, act), source=name)

    def take_snapshot(k: int) -> None:
        if not self_slots:
            return
        _, _, snap = current_model(f"self@{model.num_timesteps}")
        slot = self_slots[k % len(self_slots)]
        members[slot] = PPOAgent(model=snap, sample=True)
        for other in self_slots:  # untaken slots play the first snapshot
            if members[other] is None:
                members[other] = members[slot]

    take_snapshot(0)

    # SB3's logger -> our metrics: rollout/ -> charts/, train/ -> losses/
    class Forward(KVWriter):
        RENAME = {"rollout/ep_rew_mean": "charts/episodic_return", "rollout/ep_len_mean": "charts/episodic_length",
                  "time/fps": "charts/SPS"}

        def write(self, key_values, key_excluded, step=0):
            out = {}
            for key, value in key_values.items():
                if not isinstance(value, (int, float, np.floating, np.integer)):
                    continue
                if key in self.RENAME:
                    out[self.RENAME[key]] = value
                elif key.startswith("train/"):
                    out["losses/" + key.split("/", 1)[1]] = value
            if out:
                metrics.log(step, out)

        def close(self):
            pass

    model.set_logger(Logger(folder=None, output_formats=[Forward()]))

    class Hooks(BaseCallback):
        def __init__(self):
            super().__init__()
            self.next_eval = config.eval_every or None
            self.next_ckpt = config.checkpoint_every or None
            self.next_snap = config.snapshot_every
            self.snaps = 1
            self.points: list[float] = []
            self.ranks: list[int] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "spooky_points" in info:
                    self.points.append(info["spooky_points"])
                    self.ranks.append(info["rank"])
            t = self.num_timesteps
            if len(self.points) >= 64:
                elapsed = time.perf_counter() - start
                # env steps: the learner's decisions and the opponents' (every decision is one step)
                metrics.log(t, {"charts/episodic_points": float(np.mean(self.points)),
                                "charts/win_rate": float(np.mean(np.array(self.ranks) == 1)),
                                "charts/env_SPS": (t + pool.decisions) / elapsed,
                                "charts/cpu_env_SPS": (t + pool.decisions) / (time.process_time() - cpu_start)})
                self.points, self.ranks = [], []
            if t >= self.next_snap:
                take_snapshot(self.snaps)
                self.snaps += 1
                self.next_snap += config.snapshot_every
            if self.next_eval and t >= self.next_eval:
                evaluate(t)
                self.next_eval += config.eval_every
            if self.next_ckpt and t >= self.next_ckpt:
                weights, act, _ = current_model()
                save_model(run_dir / "checkpoints" / f"step{t}", weights, model_meta(engine, act))
                self.next_ckpt += config.checkpoint_every
            return not (config.max_seconds and time.perf_counter() - start > config.max_seconds)

    def evaluate(step: int) -> dict[str, float]:
        _, _, policy = current_model()
        result = evaluate_policy(PPOAgent(model=policy), engine, config.eval_opponents, config.eval_games,
                                 seed=10**9 + config.seed)
        metrics.log(step, result)
        return result

    model.learn(total_timesteps=config.total_timesteps, callback=Hooks(), progress_bar=config.progress,
                log_interval=1)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    final = evaluate(model.num_timesteps)
    training = training_metadata("maskable_ppo (sb3-contrib)", resolved, config.seed, seconds, model.num_timesteps,
                                 cpu_seconds=cpu_seconds, command=command, code=code)
    weights, act, _ = current_model()
    save_model(run_dir / "model", weights, model_meta(engine, act, training))
    if config.save_model:
        save_model(config.save_model, weights, model_meta(engine, act, training))
    model.save(run_dir / "checkpoints" / "final_sb3.zip")
    metrics.close()
    plot_learning_curve(run_dir / "metrics.csv", run_dir / "learning_curve.png",
                        f"MaskablePPO {config.variant} {config.num_players}p seed {config.seed}")
    env.close()
    return {"run_dir": run_dir, "eval": final, "model": model, "steps": model.num_timesteps, "seconds": seconds}


__all__ = ["TrainConfig", "load_config", "train", "OpponentPool"]
