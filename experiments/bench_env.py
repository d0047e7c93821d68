"""BENCHMARKS.md, "Environments": PettingZoo `env()` and VectorEnv steps/s, the plot docs/bench_vector.png.

Environment throughput: the PettingZoo env and VectorEnv, random legal play, observations built.

    PYTHONPATH=. python experiments/bench_env.py                 # full run (about 5 minutes)
    PYTHONPATH=. python experiments/bench_env.py --quick         # smoke test (seconds)

1. ``env()`` (with its order and bounds checks) in one process: every decision calls ``last()``
   (observation and mask of the deciding agent) and ``step()`` with a uniformly random legal
   action. Steps/s counts decisions (the final ``step(None)`` of each agent is not counted).
2. ``VectorEnv`` against the batch size: decisions/s of ``step()`` with observation and mask and
   checked actions, random legal actions drawn in numba, both with ``copy=True`` (fresh arrays
   every step, the default) and ``copy=False`` (the env's own buffers, what a training loop that
   copies into its rollout storage uses); next to it the bare engine (``Engine.step``, no
   observation) for reference. Before timing, the games of a
   batch start at staggered steps, so that the timed steps see every phase of a game (placements
   are much cheaper than moves) as a long training run does.

Every figure is the median of ``--repeats`` timed runs after a warm-up (numba compilation is
excluded). Beside wall-clock rates the script prints rates per CPU-second of this process (all
its threads): on a shared, loaded machine they show what an idle one would do (for one thread,
wall = CPU time when nothing else runs). Writes the tables to stdout and the plot to
``docs/bench_vector.png``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import midnight_env
from midnight_env import Engine, VectorEnv, agent_streams
from midnight_env.core.random_choice import random_legal_choices
from midnight_env.core.state import OVER

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Args:
    quick: bool = False
    """tiny budgets: checks that the script runs"""
    seconds: float = 2.0
    """length of one timed run of the single env"""
    repeats: int = 3
    """timed runs per figure; the median is reported"""
    decisions: int = 400_000
    """decisions per timed run of VectorEnv or the engine (at least 20 steps)"""
    plot: str = str(ROOT / "docs" / "bench_vector.png")
    """where the throughput plot is written ('' for none)"""


def machine_description() -> str:
    import numba

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
            f"numba {numba.__version__} ({numba.config.NUMBA_NUM_THREADS} threads); load average {load:.1f}")


# -- the PettingZoo env ----------------------------------------------------------------------------


def env_steps_per_second(make, seconds: float, seed: int) -> tuple[float, float]:
    """(per wall second, per CPU second) decisions of one env: last() then step(random legal
    action), games restarted, for ``seconds``."""
    env = make()
    pick = random.Random(seed).random
    steps = 0
    game = seed * 1_000_000
    cpu = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        env.reset(seed=game)
        game += 1
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[int(pick() * len(legal))]))
            steps += 1
    return steps / (time.perf_counter() - start), steps / (time.process_time() - cpu)


def bench_single(args: Args) -> list[tuple[str, str, float, float]]:
    rows = []
    print(f"{'variant':<16}{'env':<11}{'steps/s':>10}{'per CPU-s':>11}   runs (steps/s)")
    for variant in ("midnight_party", "hidden_castle"):
        for name, make in (("env()", lambda v=variant: midnight_env.env(v, 4)),
                           ("raw_env()", lambda v=variant: midnight_env.raw_env(v, 4))):
            env_steps_per_second(make, min(0.3, args.seconds), seed=99)  # compile and warm up
            runs = [env_steps_per_second(make, args.seconds, seed=r) for r in range(args.repeats)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rows.append((variant, name, wall, cpu))
            print(f"{variant:<16}{name:<11}{wall:>10,.0f}{cpu:>11,.0f}   {', '.join(f'{r[0]:,.0f}' for r in runs)}",
                  flush=True)
    return rows


# -- VectorEnv ------------------------------------------------------------------------------------------


STAGGER = 120  # warm-up steps; game i joins at a random one of them, so phases are mixed when timing starts


def staggered_start(step, batch: int, legal_of, rng: np.ndarray, actions: np.ndarray, seed: int):
    """Play ``STAGGER`` steps in which game i waits (action -1) until its random start step:
    afterwards the batch holds games in every phase, as in a long run, not all at placement."""
    delay = np.random.default_rng(seed).integers(0, STAGGER, batch)
    result = None
    for k in range(STAGGER):
        random_legal_choices(legal_of(result), rng, actions)
        actions[delay > k] = -1
        result = step(actions)
    return result


def vector_decisions_per_second(venv: VectorEnv, steps: int, rng: np.ndarray, actions: np.ndarray,
                                obs: dict) -> tuple[float, float, dict]:
    cpu = time.process_time()
    start = time.perf_counter()
    for _ in range(steps):
        random_legal_choices(obs["action_mask"], rng, actions)
        obs, rewards, terminations, truncations, info = venv.step(actions)
    made = steps * venv.num_envs
    return made / (time.perf_counter() - start), made / (time.process_time() - cpu), obs


class EngineLoop:
    """The bare engine for reference: random legal play, no observation, finished games restarted."""

    def __init__(self, engine: Engine, batch: int, seed: int):
        self.engine, self.batch = engine, batch
        seeds = np.arange(batch) + seed
        self.state = engine.new_games(seeds)
        self.next_seed = seed + batch

    def step(self, actions: np.ndarray) -> None:
        engine, state = self.engine, self.state
        engine.step(state, actions, check=False)
        done = np.flatnonzero(state.phase == OVER)
        if len(done):
            engine.reset_games(state, done, np.arange(self.next_seed, self.next_seed + len(done)))
            self.next_seed += len(done)

    def rate(self, steps: int, rng: np.ndarray, actions: np.ndarray) -> tuple[float, float]:
        cpu = time.process_time()
        start = time.perf_counter()
        for _ in range(steps):
            random_legal_choices(self.state.legal, rng, actions)
            self.step(actions)
        made = steps * self.batch
        return made / (time.perf_counter() - start), made / (time.process_time() - cpu)


def vector_runs(variant: str, batch: int, copy: bool, args: Args, steps: int) -> tuple[float, float]:
    """(wall, CPU) median decisions/s of ``VectorEnv.step`` after a staggered start."""
    rng = agent_streams(np.arange(batch))
    actions = np.empty(batch, np.int64)
    venv = VectorEnv(batch, variant, 4, seed=0, copy=copy)
    obs, _ = venv.reset()
    obs = staggered_start(lambda a: venv.step(a)[0], batch, lambda r: (obs if r is None else r)["action_mask"],
                          rng, actions, seed=batch)
    runs = []
    for _ in range(args.repeats):
        wall, cpu, obs = vector_decisions_per_second(venv, steps, rng, actions, obs)
        runs.append((wall, cpu))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def bench_vector(args: Args, batches: list[int]) -> list[tuple]:
    """Rows (variant, batch, VectorEnv copy=True, engine, their CPU rates, VectorEnv copy=False and
    its CPU rate), decisions per second."""
    rows = []
    print(f"\n{'variant':<16}{'batch':>7}{'copy=True':>12}{'per CPU-s':>12}{'copy=False':>12}{'per CPU-s':>12}"
          f"{'engine':>12}{'per CPU-s':>12}")
    for variant in ("midnight_party", "hidden_castle"):
        engine = Engine(variant, 4)
        for copy in (True, False):  # load every kernel (game ends included) before timing
            warm = VectorEnv(2, variant, 4, seed=0, copy=copy)
            obs, _ = warm.reset()
            vector_decisions_per_second(warm, 400, agent_streams([0, 1]), np.empty(2, np.int64), obs)
        for batch in batches:
            steps = max(20, args.decisions // batch)
            vec, vec_cpu = vector_runs(variant, batch, True, args, steps)
            fast, fast_cpu = vector_runs(variant, batch, False, args, steps)
            rng = agent_streams(np.arange(batch))
            actions = np.empty(batch, np.int64)
            loop = EngineLoop(engine, batch, seed=0)
            staggered_start(loop.step, batch, lambda _, loop=loop: loop.state.legal, rng, actions, seed=batch)
            eng_runs = [loop.rate(steps, rng, actions) for _ in range(args.repeats)]
            eng, eng_cpu = (statistics.median(r[k] for r in eng_runs) for k in (0, 1))
            rows.append((variant, batch, vec, eng, vec_cpu, eng_cpu, fast, fast_cpu))
            print(f"{variant:<16}{batch:>7}{vec:>12,.0f}{vec_cpu:>12,.0f}{fast:>12,.0f}{fast_cpu:>12,.0f}"
                  f"{eng:>12,.0f}{eng_cpu:>12,.0f}", flush=True)
    return rows


def plot(rows: list[tuple], path: str, machine: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    colours = {"midnight_party": "#6a3d9a", "hidden_castle": "#e08214"}
    for variant, colour in colours.items():
        mine = [r for r in rows if r[0] == variant]
        batch = [r[1] for r in mine]
        ax.plot(batch, [r[6] for r in mine], "o-", color=colour, label=f"VectorEnv copy=False, {variant} (obs + mask)")
        ax.plot(batch, [r[2] for r in mine], "^-", color=colour, alpha=0.7, lw=1,
                label=f"VectorEnv copy=True, {variant}")
        ax.plot(batch, [r[3] for r in mine], "s--", color=colour, alpha=0.5, label=f"engine only, {variant}")
    ax.axhline(5e6, color="grey", lw=0.8, ls=":")
    ax.text(1, 5.3e6, "target 5M at 4096", color="grey", fontsize=8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("games per batch")
    ax.set_ylabel("decisions per second")
    ax.set_title("midnight-env VectorEnv throughput, 4 players, random legal play\n"
                 "(wall clock)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.text(0.01, 0.005, machine, fontsize=6, color="grey")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    print(f"\nplot written to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny budgets: checks that the script runs")
    parser.add_argument("--seconds", type=float, default=Args.seconds)
    parser.add_argument("--repeats", type=int, default=Args.repeats)
    parser.add_argument("--decisions", type=int, default=Args.decisions)
    parser.add_argument("--plot", default=Args.plot)
    parser.add_argument("--batches", default="1,4,16,64,256,1024,4096,16384")
    parser.add_argument("--only", choices=("single", "vector"), help="run one of the two parts")
    ns = parser.parse_args(argv)
    args = Args(quick=ns.quick, seconds=ns.seconds, repeats=ns.repeats, decisions=ns.decisions, plot=ns.plot)
    batches = [int(b) for b in ns.batches.split(",")]
    if args.quick:
        args.seconds, args.repeats, args.decisions = min(args.seconds, 0.1), 1, 2_000
        batches = [b for b in batches if b <= 256]
    machine = machine_description()
    print(f"machine: {machine}\n")
    if ns.only != "vector":
        bench_single(args)
    if ns.only != "single":
        rows = bench_vector(args, batches)
        if args.plot:
            plot(rows, args.plot, machine)
    print(f"\nmachine at the end: {machine_description()}")


if __name__ == "__main__":
    main()
