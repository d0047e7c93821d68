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

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

if "torch" not in sys.modules:  # spinning OpenMP threads fight numba's for the cores (see training.native)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import KVWriter, Logger
from stable_baselines3.common.vec_env import VecEnvWrapper, VecMonitor

from midnight_agents.model import PolicyModel, model_meta
from midnight_agents.ppo import PPOAgent
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.arena.registry import make_agent
from midnight_env.core.dice import GOLDEN, mix64
from midnight_env.envs.sb3_vec import SB3VecEnv
from midnight_env.infra import checks
from midnight_env.training.args import ConfigFileError, Settings, check_counts, check_numbers, check_widths
from midnight_env.training.evaluate import EVAL_OPPONENTS, evaluate_policy
from midnight_env.training.export import sb3_weights
from midnight_env.training.runs import RunFolder
from midnight_env.training.trainer import TrainResult

# this trainer's seeds: below the limit (check_seed_below), and why
SEEDS = (2**32, "stable-baselines3 seeds numpy's legacy generator, which takes 32 bits")


@dataclass
class Args(Settings):
    SEEDS: ClassVar[tuple[int, str]] = SEEDS
    RUN_NAME: ClassVar[str] = "maskable_ppo"

    exp_name: str = "maskable_ppo"
    """name of the run; its folder is <run_dir>/<exp_name>-s<seed>"""
    seed: int = 1
    """seed of torch, numpy and the games (game i starts with seed + i)"""
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

    def check(self) -> None:
        checks.choice("reward=", self.reward, ("points", "rank"), error=ConfigFileError)
        checks.choice("activation=", self.activation, ("tanh", "relu"), error=ConfigFileError)
        super().check()
        if self.seat != "random":
            seat = int(self.seat) if str(self.seat).removeprefix("-").isdigit() else self.seat  # a setting's text: "2"
            checks.integer("seat=", seat, 0, self.num_players - 1, error=ConfigFileError,
                           allowed=f"'random' or a seat number 0 to {self.num_players - 1} "
                                   f"(num_players {self.num_players})")
        check_counts(self, 1, "total_timesteps", "num_envs", "n_steps", "batch_size", "n_epochs", "pool_size",
                     "snapshot_every", "eval_games")
        check_counts(self, 0, "eval_every", "checkpoint_every")
        check_numbers(self, 0.0, None, "max_seconds", "learning_rate", "ent_coef", "vf_coef")
        check_numbers(self, 0.0, None, "clip_range", "max_grad_norm", "reward_scale", low_open=True)
        check_numbers(self, 0.0, 1.0, "gamma", "gae_lambda")
        check_widths(self, "net_arch")
        if not self.opponents:
            raise ConfigFileError("opponents is empty: name at least one agent spec or 'self'")


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Args:
    """:class:`Args` from a YAML file (or the defaults) with ``overrides`` applied; ``config`` names the file."""
    return Args.load(path, overrides)


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


class League:
    """The opponent pool's members: heuristic agents by spec, and for ``self`` ``pool_size`` slots of
    frozen snapshots of the policy (numpy copies, one taken every ``snapshot_every`` learner
    decisions into the slots in turn; a slot not taken yet plays the first snapshot)."""

    def __init__(self, args: Args):
        specs = list(args.opponents)
        heuristics = {s: make_agent(s) for s in specs if s != "self"}
        self.members: list[Agent | None] = []
        self.self_slots: list[int] = []
        for s in specs:  # 'self' gets pool_size slots, filled as snapshots are taken
            if s == "self":
                n_self = args.pool_size
                self.self_slots = list(range(len(self.members), len(self.members) + n_self))
                self.members.extend([None] * n_self)
            else:
                self.members.append(heuristics[s])
        self.pool = OpponentPool(self.members, None, salt=args.seed)  # seeds_of: the env's, once it is made
        self.taken = 0

    def snapshot(self, policy: PolicyModel) -> None:
        """``policy`` into the next snapshot slot."""
        if self.self_slots:
            slot = self.self_slots[self.taken % len(self.self_slots)]
            self.members[slot] = PPOAgent(model=policy, sample=True)
            for other in self.self_slots:  # untaken slots play the first snapshot
                if self.members[other] is None:
                    self.members[other] = self.members[slot]
        self.taken += 1


def policy_model(model: MaskablePPO, engine, name: str = "policy") -> tuple[dict, str, PolicyModel]:
    """The policy as the model format's weights, its activation, and a :class:`PolicyModel` of them."""
    weights, act = sb3_weights(model.policy)
    return weights, act, PolicyModel(weights, model_meta(engine, act), source=name)


def evaluate(model: MaskablePPO, engine, args: Args, run: RunFolder, step: int) -> dict[str, float]:
    """The greedy policy against ``eval_opponents`` (``eval_games`` games), logged at ``step``."""
    _, _, policy = policy_model(model, engine)
    result = evaluate_policy(PPOAgent(model=policy), engine, args.eval_opponents, args.eval_games,
                             seed=10**9 + args.seed)
    run.log(step, result)
    return result


class Forward(KVWriter):
    """SB3's logger into the run's metrics: rollout/ -> charts/, train/ -> losses/."""

    RENAME = {"rollout/ep_rew_mean": "charts/episodic_return", "rollout/ep_len_mean": "charts/episodic_length",
              "time/fps": "charts/SPS"}

    def __init__(self, run: RunFolder):
        self.run = run

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
            self.run.log(step, out)

    def close(self):
        pass


class ScaleReward(VecEnvWrapper):
    """Rewards times ``scale``."""

    def __init__(self, venv, scale: float):
        super().__init__(venv)
        self.scale = scale

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * self.scale, dones, infos


class Phases(BaseCallback):
    """What runs after each of MaskablePPO's steps (its loop plays and fits): log the ended games'
    points, wins and env steps per second; league, a snapshot every ``snapshot_every`` learner
    decisions; evaluate every ``eval_every``; checkpoint every ``checkpoint_every``; stop at ``max_seconds``."""

    def __init__(self, args: Args, run: RunFolder, league: League, engine):
        super().__init__()
        self.args, self.run, self.league, self.engine = args, run, league, engine
        self.next_eval = args.eval_every or None
        self.next_ckpt = args.checkpoint_every or None
        self.next_snap = args.snapshot_every
        self.points: list[float] = []
        self.ranks: list[int] = []

    def _on_step(self) -> bool:
        args, run, t = self.args, self.run, self.num_timesteps
        # -- log -------------------------------------------------------------------------------------
        for info in self.locals["infos"]:
            if "spooky_points" in info:
                self.points.append(info["spooky_points"])
                self.ranks.append(info["rank"])
        if len(self.points) >= 64:
            steps = t + self.league.pool.decisions  # env steps: the learner's decisions and the opponents'
            run.log(t, {"charts/episodic_points": float(np.mean(self.points)),
                        "charts/win_rate": float(np.mean(np.array(self.ranks) == 1)),
                        "charts/env_SPS": steps / run.seconds(), "charts/cpu_env_SPS": steps / run.cpu_seconds()})
            self.points, self.ranks = [], []
        # -- league ----------------------------------------------------------------------------------
        if t >= self.next_snap:
            self.league.snapshot(policy_model(self.model, self.engine, f"self@{self.model.num_timesteps}")[2])
            self.next_snap += args.snapshot_every
        # -- checkpoint ------------------------------------------------------------------------------
        if self.next_eval and t >= self.next_eval:
            evaluate(self.model, self.engine, args, run, t)
            self.next_eval += args.eval_every
        if self.next_ckpt and t >= self.next_ckpt:
            weights, act, _ = policy_model(self.model, self.engine)
            run.checkpoint(t, weights, model_meta(self.engine, act))
            self.next_ckpt += args.checkpoint_every
        return not (args.max_seconds and run.seconds() > args.max_seconds)


def train(args: Args, command: str | None = None) -> TrainResult:
    """One training run (see the module doc): MaskablePPO's own loop of rollouts and updates, and
    after each step the run's :class:`Phases` (log, league, evaluate, checkpoint)."""
    args.check()  # (again: settings changed since they were made)
    with contextlib.ExitStack() as stack:
        try:  # numpy's BLAS threads (the snapshots' numpy inference) spin beside torch's: 3x slower self-play
            from threadpoolctl import threadpool_limits
            stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
        except ImportError:
            pass
        torch.set_num_threads(args.threads)
        run = RunFolder.new(args)
        league = League(args)
        seat = args.seat if args.seat == "random" else int(args.seat)
        vec = SB3VecEnv(args.num_envs, args.variant, args.num_players, opponents=[league.pool], seat=seat,
                        seed=args.seed, reward=args.reward, **args.options)
        league.pool.seeds_of = lambda: vec.venv.seeds
        env = VecMonitor(ScaleReward(vec, args.reward_scale))
        activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[args.activation]
        lr = args.learning_rate
        model = MaskablePPO(
            "MlpPolicy", env, learning_rate=(lambda f: lr * f) if args.anneal_lr else lr, n_steps=args.n_steps,
            batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda,
            clip_range=args.clip_range, ent_coef=args.ent_coef, vf_coef=args.vf_coef,
            max_grad_norm=args.max_grad_norm, seed=args.seed, device="cpu", verbose=0,
            policy_kwargs={"net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)},
                           "activation_fn": activation})
        league.snapshot(policy_model(model, vec.engine, f"self@{model.num_timesteps}")[2])
        model.set_logger(Logger(folder=None, output_formats=[Forward(run)]))
        model.learn(total_timesteps=args.total_timesteps, callback=Phases(args, run, league, vec.engine),
                    progress_bar=args.progress, log_interval=1)
        return finish(model, vec.engine, args, run, env, command)


def finish(model: MaskablePPO, engine, args: Args, run: RunFolder, env, command: str | None) -> TrainResult:
    """The final evaluation and model (and SB3's own save), the run and the env closed."""
    seconds, cpu_seconds = run.seconds(), run.cpu_seconds()
    final = evaluate(model, engine, args, run, model.num_timesteps)
    training = run.training("maskable_ppo (sb3-contrib)", args.seed, model.num_timesteps, command, seconds=seconds,
                            cpu_seconds=cpu_seconds)
    weights, act, _ = policy_model(model, engine)
    run.save(weights, model_meta(engine, act, training), also=args.save_model)
    model.save(run.run_dir / "checkpoints" / "final_sb3.zip")
    run.close(f"MaskablePPO {args.variant} {args.num_players}p seed {args.seed}")
    env.close()
    return TrainResult(run.run_dir, model.num_timesteps, seconds, final, {}, cpu_seconds, model)


__all__ = ["Args", "League", "OpponentPool", "Phases", "load_config", "train"]
