"""``midnight compile``: compile the engine's kernels ahead, for a CI image or before a talk.

Every feature's first use otherwise compiles its kernels when it is first run (a minute or two on
two cores, said on stderr). This plays a few tiny games through each feature, so that numba's
on-disk cache holds every kernel they use; afterwards each starts at once. The kernels are the
same for every rule set and player count; ``--vector-threads`` also compiles the vector env's
threaded kernels, which are specialised per rule set (``--variant``, ``--players``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from midnight_env.core.config import VARIANTS

DEFAULT_VARIANT = VARIANTS[0]


def add_parser(sub) -> None:
    p = sub.add_parser("compile", help="compile every feature's kernels ahead (a CI image, before a talk)",
                       description="Compile the engine's numba kernels ahead, into numba's on-disk cache: "
                                   "the engine and the built-in agents, the environments, the solver and the "
                                   "analysis. Each feature's first use otherwise compiles what it needs then. "
                                   "A feature whose kernels are cached already takes a second or less.")
    p.add_argument("--variant", default=DEFAULT_VARIANT, help=f"rule set for --vector-threads: {', '.join(VARIANTS)}")
    p.add_argument("--players", type=int, default=4, help="players for --vector-threads (default 4)")
    p.add_argument("--vector-threads", action="store_true",
                   help="also the vector env's threaded kernels (batches of MIDNIGHT_PARALLEL_FROM games or more), "
                        "specialised for --variant and --players")
    p.set_defaults(run=run)


def _engine_and_agents(folder: Path) -> None:
    """A tiny tournament of the default field in both variants (the engine's serial and threaded
    steps, every built-in agent's kernels, the records)."""
    from midnight_env.cli import main as midnight

    for variant in VARIANTS:
        code = midnight(["tournament", "--variant", variant, "--players", "2", "--games", "2", "--batch-size", "2",
                         "--db", str(folder / f"{variant}.sqlite"), "--out", str(folder), "--no-progress",
                         "--records", str(folder / f"{variant}.jsonl")])
        if code:
            raise RuntimeError(f"the tiny {variant} tournament failed (exit {code})")


def _environments(folder: Path) -> None:
    from midnight_env.envs import midnight_v0
    from midnight_env.envs.gym_env import SingleAgentEnv
    from midnight_env.envs.vector import VectorEnv

    env = midnight_v0.env(variant=DEFAULT_VARIANT, num_players=2)
    env.reset(seed=0)
    for _agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        env.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
    single = SingleAgentEnv(DEFAULT_VARIANT, num_players=2, opponents="random")
    obs, _ = single.reset(seed=0)
    single.step(int(np.flatnonzero(single.action_masks())[0]))
    envs = VectorEnv(4, DEFAULT_VARIANT, num_players=2, seed=0)
    obs, _ = envs.reset()
    for _ in range(3):
        obs, *_ = envs.step(np.argmax(obs["action_mask"], axis=1))


def _vector_threads(variant: str, players: int):
    def compile_them(folder: Path) -> None:
        from midnight_env.envs.vector import VectorEnv
        from midnight_env.infra.threads import PARALLEL_FROM

        envs = VectorEnv(PARALLEL_FROM, variant, num_players=players, seed=0)
        obs, _ = envs.reset()
        obs, *_ = envs.step(np.argmax(obs["action_mask"], axis=1))
    return compile_them


def _solver_and_analysis(folder: Path) -> None:
    """A tiny set-up solved and checked, and a record of each variant analysed."""
    from midnight_env.cli import main as midnight

    steps = [["solve", "--set", "guests_per_player=1", "--set", "rounds=1", "--regret", "random", "--no-progress"],
             *(["analyze", str(folder / f"{variant}.jsonl"), "--line", "1"] for variant in VARIANTS)]
    for args in steps:
        code = midnight(args)
        if code:
            raise RuntimeError(f"midnight {' '.join(args)} failed (exit {code})")


def run(args: argparse.Namespace) -> int:
    import contextlib
    import io

    features = [("engine and agents", _engine_and_agents), ("environments", _environments),
                ("solver and analysis", _solver_and_analysis)]
    if args.vector_threads:
        features.append((f"vector env threads, {args.variant} {args.players}p",
                         _vector_threads(args.variant, args.players)))
    from midnight_env.infra.compile_notice import compile_notice

    with tempfile.TemporaryDirectory(prefix="midnight-compile-") as tmp, compile_notice("", announce=False):
        total = time.perf_counter()
        for name, compile_feature in features:
            start = time.perf_counter()
            print(f"{name:<40}", end="", flush=True)
            with contextlib.redirect_stdout(io.StringIO()):  # the tiny games' tables are of no interest
                compile_feature(Path(tmp))
            print(f" {time.perf_counter() - start:6.1f} s", flush=True)
        print(f"{'every kernel compiled and cached':<40} {time.perf_counter() - total:6.1f} s")
    return 0
