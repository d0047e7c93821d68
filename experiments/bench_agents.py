"""BENCHMARKS.md, "The value agents' cost per decision": each agent's decisions/s at batch 256.

Each agent holds one seat of 256 games (seat-rotated, so every seat equally often) against the
expert in the other seats, as in a tournament batch; only its own ``act`` calls are timed (wall
clock and CPU time of this process), placements included. An agent stops after ``--decisions``
of its decisions (slow searches), so each figure covers the opening and middle game alike only
when the games are played out: the games-played column says how far they got.

    MIDNIGHT_PARALLEL_FROM=1000000000 python experiments/bench_agents.py --variant midnight_party --players 4
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from midnight_env.arena.agent import Decisions
from midnight_env.arena.registry import make_agent, split_specs
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, PLACE
from midnight_env.tournament import default_agents


def bench(engine: Engine, spec: str, batch: int, most: int, seed: int) -> tuple[float, float, int, float]:
    """(decisions per wall second, per CPU second, decisions, share of games finished)."""
    agent, expert = make_agent(spec), make_agent("expert")
    n = engine.num_players
    seeds = seed + np.arange(batch)
    seat_of = np.arange(batch) % n
    state = engine.new_games(seeds)
    rng = agent_streams(seeds)
    wall = cpu = 0.0
    done = 0
    while done < most:
        deciding = (state.phase == PLACE) | (state.phase == MOVE)
        if not deciding.any():
            break
        mine = deciding & (state.player == seat_of)
        actions = np.full(batch, -1, np.int64)
        if mine.any():
            games = np.flatnonzero(mine)
            w, c = time.perf_counter(), time.process_time()
            actions[games] = agent.act(Decisions(engine, state, games, rng, seeds))
            wall += time.perf_counter() - w
            cpu += time.process_time() - c
            done += len(games)
        others = np.flatnonzero(deciding & ~mine)
        if len(others):
            actions[others] = expert.act(Decisions(engine, state, others, rng, seeds))
        engine.step(state, actions, check=False)
    return done / max(wall, 1e-9), done / max(cpu, 1e-9), done, float(state.done.mean())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="midnight_party")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--agents", default="", help="specs (default: every agent of the default tournament)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--decisions", type=int, default=3000, help="stop an agent after this many of its decisions")
    p.add_argument("--seed", type=int, default=11)
    a = p.parse_args()
    engine = Engine(a.variant, a.players)
    specs = split_specs(a.agents) if a.agents else default_agents(a.variant, a.players)
    print(f"{a.variant}, {a.players} players, batch {a.batch}")
    print(f"{'agent':40s} {'dec/s':>9s} {'dec/CPU-s':>10s} {'decisions':>9s} {'finished':>8s}")
    for spec in specs:
        bench(engine, spec, 8, 50, a.seed)  # warm-up: numba caches, model files
        wall, cpu, done, finished = bench(engine, spec, a.batch, a.decisions, a.seed)
        print(f"{spec:40s} {wall:9.0f} {cpu:10.0f} {done:9d} {finished:8.2f}", flush=True)


if __name__ == "__main__":
    main()
