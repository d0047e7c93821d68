"""``midnight train``: MaskablePPO (sb3-contrib) from a YAML config (``midnight_env.training.sb3``)."""

from __future__ import annotations

import argparse

from midnight_env.commands.common import UsageError


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE.yaml", help="training config (configs/*.yaml); defaults when omitted")
    p.add_argument("--override", action="append", metavar="KEY=VALUE",
                   help="set one config key, e.g. --override total_timesteps=200000 (repeatable; lists "
                        "comma-separated: --override opponents=self,expert)")
    p.add_argument("--seed", type=int, help="seed (overrides the config's)")
    p.add_argument("--total-timesteps", type=int, help="learner decisions to train for (overrides the config's)")
    p.add_argument("--run-dir", help="folder that receives the run folder (default runs/)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def config_from_args(args: argparse.Namespace):
    from midnight_env.training.sb3 import load_config

    overrides = {}
    for pair in args.override or []:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--override {pair!r} must be key=value")
        overrides[key.strip()] = value.strip()
    for key in ("seed", "total_timesteps", "run_dir"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    if args.no_progress:
        overrides["progress"] = False
    return load_config(args.config, overrides)


def add_parser(sub) -> None:
    p = sub.add_parser("train", help="train a MaskablePPO agent from a YAML config",
                       description="MaskablePPO (sb3-contrib) on the batched single-seat env against an opponent "
                                   "pool (heuristics and frozen snapshots of itself). Writes runs/<name>/: "
                                   "config.yaml, metrics.csv, evaluations, checkpoints/, model.npz/.json "
                                   "(play it with --agents ppo:path=...), learning_curve.png. Needs the train "
                                   "extra (torch, stable-baselines3, sb3-contrib).")
    add_train_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    try:
        from midnight_env.training.sb3 import train
    except ImportError as err:  # pragma: no cover - depends on the installed extras
        raise UsageError(f"training needs the train extra (pip install 'midnight-env[train]'): {err}") from None
    result = train(config)
    ev = result["eval"]
    print(f"{result['run_dir']}: {result['steps']} learner decisions in {result['seconds']:.0f} s; "
          f"eval {ev['eval/points']:.2f} ± {ev['eval/points_ci']:.2f} spooky points, "
          f"win rate {ev['eval/win_rate']:.3f} (model: {result['run_dir'] / 'model.npz'})")
    return 0
