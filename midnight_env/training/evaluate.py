"""A policy against fixed heuristic agents: mean spooky points with 95 % intervals.

Game ``g`` seats the policy at seat ``g % N`` (every seat equally often) and fills the other seats
with opponents drawn without replacement (when there are enough) from a generator seeded by
``seed``, so an evaluation is the same games for every policy compared with the same seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from midnight_env.arena.agent import Agent
from midnight_env.arena.play import play_batch
from midnight_env.core.engine import Engine

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


def seat_lineups(num_players: int, field_size: int, deals: int) -> np.ndarray:
    """(deals * N, N) lineups in which one agent (0) takes every seat in turn: game ``d * N + r``
    seats it in seat ``r`` and field agents (1..``field_size``) in the other seats, in the same
    order for every seat of a deal. A field no larger than the seats left fills them in order,
    cycled; a larger one gives each deal the next N - 1 of its agents, so that over
    ``field_size`` deals every field agent plays equally often."""
    others = num_players - 1
    if others and field_size < 1:
        raise ValueError(f"{num_players} players need a field of at least one agent for the other seats")
    lineups = np.empty((deals * num_players, num_players), np.int64)
    for d in range(deals):
        start = (d * others) % field_size if field_size > others else 0
        opponents = [1 + (start + k) % field_size for k in range(others)]
        for r in range(num_players):
            lineups[d * num_players + r] = opponents[:r] + [0] + opponents[r:]
    return lineups


class SeatGames(NamedTuple):
    """The games of :func:`play_every_seat`, one row per game, deal ``d`` seat ``r`` at ``d * N + r``."""

    lineups: np.ndarray  # (deals * N, N): 0 the agent, k the field's k-th agent
    points: np.ndarray  # (deals * N, N) final spooky points per seat
    ranks: np.ndarray  # (deals * N, N) finishing ranks per seat (1: a winner)

    def agent_points(self) -> np.ndarray:
        """(deals, N): the agent's points in seat ``r`` of deal ``d``."""
        n = self.lineups.shape[1]
        return self.points[self.lineups == 0].reshape(-1, n)


def play_every_seat(engine: Engine, agent: Agent, field: Sequence[Agent], seeds: Sequence[int],
                    batch: int = 256) -> SeatGames:
    """Duplicate deals: ``agent`` plays every seat of every deal (one game seed each, so the same
    dice) against ``field`` in the other seats (:func:`seat_lineups`). Two agents played over the
    same seeds and field meet the same dice and opponents seat by seat: their difference is a
    paired measurement with most of the luck taken out."""
    n = engine.num_players
    lineups = seat_lineups(n, len(field), len(seeds))
    game_seeds = np.repeat(np.asarray(seeds, np.int64), n)
    points, ranks = [], []
    for lo in range(0, len(game_seeds), batch):
        res = play_batch(engine, [agent, *field], lineups[lo:lo + batch], game_seeds[lo:lo + batch])
        points.append(res.points)
        ranks.append(res.ranks)
    return SeatGames(lineups, np.concatenate(points), np.concatenate(ranks))


def evaluate_policy(agent: Agent, engine: Engine, opponents: Sequence[str | Agent] = EVAL_OPPONENTS,
                    games: int = 400, seed: int = 1_000_000, batch_size: int = 1024) -> dict[str, float]:
    """Metrics ``eval/points``, ``eval/points_ci``, ``eval/win_rate``, ``eval/rank`` and
    ``eval/points/<opponent>`` (each opponent's mean points in the same games)."""
    from midnight_env.arena.registry import make_agent

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
