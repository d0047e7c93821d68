"""``midnight train``: native batched PPO (the shipped PPO models' algorithm), MaskablePPO, RLlib's PPO
or afterstate values (the shipped value models'), from a YAML config.

``--algo native`` runs :mod:`midnight_env.training.native`, ``--algo maskable_ppo``
:mod:`midnight_env.training.sb3`, ``--algo rllib`` :mod:`midnight_env.training.rllib_ppo`, ``--algo value``
:mod:`midnight_env.training.value`; all take the same flags and write the same kind of run folder.
"""

from __future__ import annotations

import argparse
import importlib

from midnight_env.commands.common import UsageError, check_count, parse_overrides
from midnight_env.infra import checks
from midnight_env.training.args import check_seed_below
from midnight_env.training.trainer import Trainer

# --algo name -> the module that trains it (a Trainer: its load_config(path, overrides) and train(args))
ALGORITHMS = {"native": "midnight_env.training.native", "maskable_ppo": "midnight_env.training.sb3",
              "rllib": "midnight_env.training.rllib_ppo", "value": "midnight_env.training.value"}
DEFAULT_ALGORITHM = "native"  # the algorithm that trained the shipped PPO models
# what total_timesteps counts
STEPS = {"native": "env steps", "maskable_ppo": "learner decisions", "rllib": "env steps", "value": "env steps"}


def add_train_arguments(p: argparse.ArgumentParser, algo: str = DEFAULT_ALGORITHM) -> None:
    p.add_argument("--algo", choices=list(ALGORITHMS), default=algo,
                   help="native: PPO on the batched VectorEnv, in self-play and against an opponent pool "
                        "(midnight_env.training.native; it trained the shipped models, configs/native-*.yaml); "
                         "maskable_ppo: sb3-contrib's MaskablePPO holding one seat (configs/sb3-*.yaml); "
                         "rllib: RLlib's PPO on Ray, every seat one shared policy, frozen snapshots as opponents "
                         "(configs/rllib-*.yaml; the rllib extra); "
                         "value: an afterstate value network by policy iteration in a league (it trained the "
                         f"shipped value models, configs/value-*.yaml) (default: {algo})")
    p.add_argument("--config", metavar="FILE.yaml", help="training config (configs/*.yaml); defaults when omitted")
    p.add_argument("--override", action="append", metavar="KEY=VALUE",
                   help="set one config key, e.g. --override total_timesteps=200000 (repeatable; lists "
                        "comma-separated or in YAML: --override opponents=self,expert, "
                        "--override 'hidden_sizes=[512, 256]')")
    p.add_argument("--seed", type=int, help="seed (overrides the config's)")
    p.add_argument("--total-timesteps", type=int,
                   help="steps to train for, overriding the config's: env steps (every seat's decisions) for "
                        "native and rllib, the learner's decisions for maskable_ppo")
    p.add_argument("--run-dir", help="folder that receives the run folder (default runs/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def trainer(algo: str) -> Trainer:
    """The training module of ``--algo``; UsageError when the train extra is not installed."""
    checks.choice("--algo", algo, ALGORITHMS, error=UsageError)
    try:
        return importlib.import_module(ALGORITHMS[algo])
    except ImportError as err:  # pragma: no cover - depends on the installed extras
        raise UsageError(f"training needs the train extra (pip install 'midnight-env[train]'): {err}") from None


def config_from_args(args: argparse.Namespace):
    """The ``--algo`` module's config: ``--config`` file, then ``--override`` pairs, then the flags."""
    overrides = parse_overrides(args.override)
    if args.seed is not None:  # the trainer's own range of seeds, named as the flag
        check_seed_below(args.seed, *trainer(args.algo).SEEDS, what="--seed")
    if args.total_timesteps is not None:
        check_count("--total-timesteps", args.total_timesteps)
    for key in ("seed", "total_timesteps", "run_dir"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    if args.no_progress:
        overrides["progress"] = False
    return trainer(args.algo).load_config(args.config, overrides)


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a policy (native PPO, MaskablePPO, RLlib's PPO) or a value network "
                                     "from a YAML config",
                       description="Train a policy network against an opponent pool (heuristics and frozen "
                                   "snapshots of itself), or an afterstate value network in a league (--algo "
                                   "value). --algo native (default) is the batched PPO that trained the shipped "
                                   "PPO models; configs/native-*.yaml and configs/value-*.yaml reproduce the "
                                   "shipped models' settings. "
                                   "Writes runs/<name>/: config.yaml, metrics.csv, evaluations, checkpoints/, "
                                   "model.npz/.json (play it with --agents ppo:path=... or value:path=...), "
                                   "learning_curve.png. "
                                   "Needs the train extra (torch; maskable_ppo also stable-baselines3, "
                                   "sb3-contrib; rllib the rllib extra: Ray's RLlib).")
    add_train_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    result = trainer(args.algo).train(config)
    ev = result.eval
    against = getattr(config, "eval_field", None) or getattr(config, "eval_opponents", None) or []
    print(f"{result.run_dir}: {result.steps} {STEPS[args.algo]} in {result.seconds:.0f} s; "
          f"eval {ev['eval/points']:.2f} ± {ev['eval/points_ci']:.2f} spooky points, "
          f"win rate {ev['eval/win_rate']:.3f}" + (f" against {', '.join(map(str, against))}" if against else "")
          + f" (model: {result.run_dir / 'model.npz'})")
    return 0
