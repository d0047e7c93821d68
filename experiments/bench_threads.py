"""Threads on a busy machine (issue 43): the engine step and the VectorEnv step with the default
(each call site measures whether the serial or the threaded kernel is faster and keeps it,
``midnight_env.infra.threads``), forced one thread, and forced threads; idle and under a load this
script makes itself (one process per core spinning Python), in interleaved rounds, medians.

    python experiments/bench_threads.py                    # the table (BENCHMARKS.md)
    python experiments/bench_threads.py --memory           # VectorEnv bytes per game
    python experiments/bench_threads.py --memory --space gymnasium   # ... with batch_space's bounds

"As found" (idle) means without this script's load: on a machine other jobs use it is not idle; the
load averages printed say what the machine had.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import midnight_env.infra.threads as threads
from midnight_env import Engine
from midnight_env.core.dice import agent_streams
from midnight_env.envs.vector import VectorEnv

MODES = ("default", "serial", "threads")
SPIN = "while True: pass"


def set_mode(mode: str) -> None:
    """The default (measure, threads allowed from 1,024 games), forced one thread, forced threads."""
    threads.AUTO = mode == "default"
    threads.PARALLEL_FROM = 10**9 if mode == "serial" else threads.DEFAULT_PARALLEL_FROM


class EngineLoop:
    """Random legal play through ``Engine.step`` (finished games restarted): decisions per second."""

    def __init__(self, variant: str, players: int, batch: int):
        self.engine = Engine(variant, players)
        self.batch = batch
        self.state = self.engine.new_games(np.arange(batch))
        self.rng = agent_streams(np.arange(batch))
        self.next_seed = 10_000_000

    def step(self) -> None:
        engine, state = self.engine, self.state
        engine.step(state, engine.random_actions(state, self.rng), check=False)
        done = np.flatnonzero(state.phase == 3)
        if len(done):
            engine.reset_games(state, done, np.arange(self.next_seed, self.next_seed + len(done)))
            self.next_seed += len(done)


class VectorLoop:
    """``VectorEnv.step`` (copy=False), random legal actions drawn in the loop as a policy would,
    by the same random choice the engine loop uses."""

    def __init__(self, variant: str, players: int, batch: int):
        set_mode("default")  # compiled while threads are allowed: both kernels, for every mode
        self.env = VectorEnv(batch, variant, players, seed=0, copy=False)
        self.obs, _ = self.env.reset()
        self.batch = batch
        self.rng = agent_streams(np.arange(batch))

    def step(self) -> None:
        actions = self.env.engine.random_actions(self.env.state, self.rng)
        self.obs, *_ = self.env.step(actions)


def rate(loop, seconds: float) -> float:
    """Decisions per second of ``loop`` over at least ``seconds`` (and 3 steps)."""
    steps, start = 0, time.perf_counter()
    while True:
        loop.step()
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and steps >= 3:
            return steps * loop.batch / elapsed


def start_load(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def bench(args) -> None:
    batches = [int(b) for b in args.batches.split(",")]
    loads = ("idle", "busy")
    loops = {}
    for kind, cls in (("engine", EngineLoop), ("vector", VectorLoop)):
        for b in batches:
            loops[kind, b] = cls(args.variant, args.players, b)
    results: dict[tuple, list[float]] = {}
    load_avg = {load: [] for load in loads}
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores, numba threads "
          f"{threads._THREADS}; {args.rounds} rounds (+1 warm-up) of {args.seconds} s each", file=sys.stderr)
    for r in range(args.rounds + 1):
        order = loads if r % 2 == 0 else loads[::-1]
        for load in order:
            procs = start_load(args.load_procs or os.cpu_count()) if load == "busy" else []
            try:
                if procs:
                    time.sleep(0.5)  # let the spinners take the cores
                for (kind, b), loop in loops.items():
                    modes = MODES[r % 3:] + MODES[:r % 3]  # rotated: none always first
                    for mode in modes:
                        set_mode(mode)
                        value = rate(loop, args.seconds)
                        if r:  # round 0 warms up (compilation, the first probes)
                            results.setdefault((kind, b, load, mode), []).append(value)
                load_avg[load].append(os.getloadavg()[0])
            finally:
                stop_load(procs)
                set_mode("default")
        print(f"round {r} done, load average {os.getloadavg()}", file=sys.stderr)
    print(f"\nLoad average (1 min) after each block: as found (no load added) "
          f"{', '.join(f'{x:.1f}' for x in load_avg['idle'])}; with the script's spinning processes "
          f"{', '.join(f'{x:.1f}' for x in load_avg['busy'])}\n")
    print("| step | games | added load | default | one thread | threads | default / one thread | default / threads |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for kind in ("engine", "vector"):
        for b in batches:
            for load in loads:
                med = {m: statistics.median(results[kind, b, load, m]) for m in MODES}
                label = "as found" if load == "idle" else f"+{args.load_procs or os.cpu_count()} spinning"
                print(f"| {kind} | {b:,} | {label} | {fmt(med['default'])} | {fmt(med['serial'])} | "
                      f"{fmt(med['threads'])} | {med['default'] / med['serial']:.2f} | "
                      f"{med['default'] / med['threads']:.2f} |")
    print("\ndecisions per second, median of the rounds; 'threads' runs the threaded kernels only from "
          f"{threads.DEFAULT_PARALLEL_FROM:,} games (smaller batches: all three are the serial kernel)")


def fmt(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.0f} k"


MEMORY_CHILD = """
import gc, sys, tracemalloc
import midnight_env.envs.vector as vector
if sys.argv[3] == "gymnasium":
    from gymnasium.vector.utils import batch_space
    vector.batched_space = batch_space
vector.VectorEnv(8, sys.argv[2], 4, seed=0).reset()   # imports and compiles first
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
gc.collect()
before = rss()
tracemalloc.start()
env = vector.VectorEnv(int(sys.argv[1]), sys.argv[2], 4, seed=0)
obs, _ = env.reset()
env.step(env.engine.random_actions(env.state, __import__("midnight_env.core.dice", fromlist=["x"]).agent_streams(
    range(env.num_envs))))
traced = tracemalloc.get_traced_memory()[0]
print(rss() - before, traced)
"""


def memory(args) -> None:
    """Bytes per game of a VectorEnv (reset, one step): the difference between 8,192 and 64 games,
    resident (RSS) and allocated (tracemalloc), each in a fresh process, median of 3."""
    sizes = (64, 8192)
    got = {}
    for n in sizes:
        runs = [subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(n), args.variant, args.space],
                               capture_output=True, text=True, check=True).stdout.split() for _ in range(3)]
        got[n] = [statistics.median(int(run[i]) for run in runs) for i in (0, 1)]
    d = sizes[1] - sizes[0]
    print(f"VectorEnv({args.variant!r}, 4 players), observation space bounds: {args.space}: "
          f"{(got[sizes[1]][0] - got[sizes[0]][0]) / d:,.0f} B/game resident, "
          f"{(got[sizes[1]][1] - got[sizes[0]][1]) / d:,.0f} B/game allocated (tracemalloc)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", default="1,256,4096")
    parser.add_argument("--variant", default="midnight_party")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.4, help="per measurement")
    parser.add_argument("--load-procs", type=int, default=0, help="spinning processes of the load (default: cores)")
    parser.add_argument("--memory", action="store_true", help="VectorEnv bytes per game instead")
    parser.add_argument("--space", choices=("batched", "gymnasium"), default="batched",
                        help="with --memory: the env's bounds held once, or gymnasium's batch_space")
    args = parser.parse_args()
    memory(args) if args.memory else bench(args)


if __name__ == "__main__":
    main()
