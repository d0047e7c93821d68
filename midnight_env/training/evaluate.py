"""A policy against fixed heuristic agents: mean spooky points with 95 % intervals.

Game ``g`` seats the policy at seat ``g % N`` (every seat equally often) and fills the other seats
with opponents drawn without replacement (when there are enough) from a generator seeded by
``seed``, so an evaluation is the same games for every policy compared with the same seed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from midnight_env.agent import Agent
from midnight_env.engine import Engine
from midnight_env.play import play_batch

EVAL_OPPONENTS = ("expert", "coward", "green_hunter", "runner", "placer", "random")


def mean_ci(values: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its normal 95 % interval."""
    values = np.asarray(values, np.float64)
    if len(values) < 2:
        return float(values.mean()) if len(values) else float("nan"), float("nan")
    return float(values.mean()), float(1.96 * values.std(ddof=1) / np.sqrt(len(values)))


def eval_lineups(num_players: int, num_opponents: int, games: int, seed: int) -> np.ndarray:
    """(games, N) lineups: 0 is the policy, 1.. the opponents."""
    rng = np.random.default_rng(seed)
    lineups = np.zeros((games, num_players), np.int64)
    others = num_players - 1
    for g in range(games):
        pick = rng.choice(num_opponents, others, replace=num_opponents < others) + 1
        seats = [s for s in range(num_players) if s != g % num_players]
        lineups[g, seats] = pick
    return lineups


def evaluate_policy(agent: Agent, engine: Engine, opponents: Sequence[str | Agent] = EVAL_OPPONENTS,
                    games: int = 400, seed: int = 1_000_000, batch_size: int = 1024) -> dict[str, float]:
    """Metrics ``eval/points``, ``eval/points_ci``, ``eval/win_rate``, ``eval/rank`` and
    ``eval/points/<opponent>`` (each opponent's mean points in the same games)."""
    from midnight_env.registry import make_agent

    pool = [make_agent(o) if isinstance(o, str) else o for o in opponents]
    names = [o if isinstance(o, str) else o.name for o in opponents]
    lineups = eval_lineups(engine.num_players, len(pool), games, seed)
    seeds = seed + np.arange(games)
    points, ranks = [], []
    for first in range(0, games, batch_size):
        part = slice(first, first + batch_size)
        res = play_batch(engine, [agent, *pool], lineups[part], seeds[part])
        points.append(res.points)
        ranks.append(res.ranks)
    points, ranks = np.concatenate(points), np.concatenate(ranks)
    mine = lineups == 0
    mean, half = mean_ci(points[mine])
    out = {"eval/points": mean, "eval/points_ci": half, "eval/win_rate": float((ranks[mine] == 1).mean()),
           "eval/rank": float(ranks[mine].mean())}
    for k, name in enumerate(names):
        taken = lineups == k + 1
        if taken.any():
            out[f"eval/points/{name}"] = float(points[taken].mean())
    return out
