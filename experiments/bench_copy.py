"""BENCHMARKS.md, "VectorEnv `copy=True` against `copy=False` ...": decisions/s of both, a policy touching memory.

What ``VectorEnv(copy=True)`` costs a training loop whose policy touches memory.

    python experiments/bench_copy.py                # 4096 games, policies touching 0 and 8 MB a step
    python experiments/bench_copy.py --quick        # smoke test

With ``copy=True`` (the default) every step returns fresh arrays: about 7 MB at 4096 games (the
observations, the mask, rewards and flags). A policy that allocates and touches memory of its
own between steps, as a network's forward pass does, makes the allocator hand those arrays fresh
pages from the system, and each page faults in on first touch. ``copy=False`` returns the env's
own buffers (valid until the next step), which a loop copies into its rollout storage. The
script steps the same games with both, and with a policy that touches ``--touch-mb`` MB per step
(the work a network would do is left out, so the figures are the env's), in interleaved rounds;
it prints the median decisions per second of each and their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from midnight_env import VectorEnv, agent_streams
from midnight_env.core.random_choice import random_legal_choices


def decisions_per_second(venv: VectorEnv, steps: int, touch_mb: float, rng: np.ndarray) -> float:
    obs, _ = venv.reset(seed=1)
    actions = np.empty(venv.num_envs, np.int64)  # the random choice writes here: the policy allocates nothing
    floats = int(touch_mb * 2**20 / 8)
    start = time.perf_counter()
    for _ in range(steps):
        if floats:  # the policy's own memory: fresh, and touched, as a forward pass touches its activations
            activations = np.ones(floats)
            activations.sum()
        random_legal_choices(obs["action_mask"], rng, actions)
        obs, *_ = venv.step(actions)
    return steps * venv.num_envs / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--steps", type=int, default=300, help="steps per timed run")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds; medians are reported")
    parser.add_argument("--touch-mb", default="0,8", help="MB the policy allocates and touches per step")
    parser.add_argument("--quick", action="store_true", help="tiny budgets: checks that the script runs")
    args = parser.parse_args(argv)
    if args.quick:
        args.batch, args.steps, args.rounds = 64, 5, 1
    touches = [float(t) for t in args.touch_mb.split(",")]
    envs = {copy: VectorEnv(args.batch, "midnight_party", 4, seed=1, copy=copy) for copy in (True, False)}
    rng = agent_streams(range(args.batch))
    for venv in envs.values():  # compile and warm up
        decisions_per_second(venv, 3, 0, rng)
    rates = {(copy, t): [] for copy in envs for t in touches}
    for _ in range(args.rounds):
        for t in touches:
            for copy, venv in envs.items():
                rates[copy, t].append(decisions_per_second(venv, args.steps, t, rng))
    print(f"VectorEnv, midnight_party, 4 players, {args.batch} games, {args.steps} steps x {args.rounds} rounds; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'policy touches':>15}{'copy=True':>14}{'copy=False':>14}{'ratio':>8}   decisions/s (median)")
    for t in touches:
        on, off = statistics.median(rates[True, t]), statistics.median(rates[False, t])
        print(f"{t:>12.0f} MB{on:>14,.0f}{off:>14,.0f}{off / on:>8.2f}")


if __name__ == "__main__":
    main()
