"""Engine throughput: decisions per second with random legal play (legal masks included).

Used by ``midnight bench`` and ``experiments/bench.py``. Compilation is done before timing; each
figure is the median of several timed runs, since these machines are noisy.
"""

from __future__ import annotations

import os
import platform
import statistics
import time

import numpy as np

from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.infra.threads import PARALLEL_FROM


def decisions_per_second(engine: Engine, batch: int, decisions: int, repeats: int = 5,
                         seed: int = 0) -> tuple[float, float]:
    """Median decisions per wall-clock second and per CPU-second of this process over ``repeats``
    runs: random legal play on ``batch`` games, finished games restarted, until about
    ``decisions`` decisions have been made. The CPU-second figure is what a core gives when the
    machine is shared; on an idle machine the two agree for the serial kernel."""
    rates, cpu_rates = [], []
    for r in range(repeats):
        seeds = np.arange(batch) + seed + r * batch
        state = engine.new_games(seeds)
        rng = agent_streams(seeds)
        actions = np.empty(batch, np.int64)
        made = 0
        next_seed = seed + (r + 1) * 10_000_000
        start, cpu_start = time.perf_counter(), time.process_time()
        while made < decisions:
            actions = engine.random_actions(state, rng)
            engine.step(state, actions, check=False)
            made += batch
            done = np.flatnonzero(state.phase == 3)
            if len(done):  # keep the batch full: restart finished games with fresh seeds
                engine.reset_games(state, done, np.arange(next_seed, next_seed + len(done)))
                next_seed += len(done)
        rates.append(made / (time.perf_counter() - start))
        cpu_rates.append(made / max(time.process_time() - cpu_start, 1e-9))
    return statistics.median(rates), statistics.median(cpu_rates)


def numba_threads() -> int:
    import numba

    return numba.get_num_threads()


def machine_description() -> str:
    import numba

    return (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, "
            f"numpy {np.__version__}, numba {numba.__version__}")


def run_engine_bench(batches=(1, 256, 4096), variants=("midnight_party", "hidden_castle"), num_players: int = 4,
                     decisions: int = 400_000, repeats: int = 5, echo=print) -> list[tuple[str, int, float, float]]:
    rows = []
    echo(f"machine: {machine_description()}; load average {os.getloadavg()[0]:.1f}")
    echo(f"threaded kernels from batch {PARALLEL_FROM:,} (MIDNIGHT_PARALLEL_FROM); "
         f"numba threads: {numba_threads()}")
    echo(f"{'variant':<16}{'players':>8}{'batch':>8}{'decisions/s':>16}{'per CPU-s':>16}")
    for variant in variants:
        engine = Engine(variant, num_players)
        for batch in batches:
            decisions_per_second(engine, batch, 4 * batch, repeats=1)  # compile and warm up
            n = max(decisions // (20 if batch == 1 else 1), 4 * batch)
            rate, cpu_rate = decisions_per_second(engine, batch, n, repeats=repeats)
            rows.append((variant, batch, rate, cpu_rate))
            echo(f"{variant:<16}{num_players:>8}{batch:>8}{rate:>16,.0f}{cpu_rate:>16,.0f}")
    return rows
