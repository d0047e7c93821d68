"""A policy against fixed heuristic agents: mean spooky points with 95 % intervals; and two agents
compared on the same deals (:func:`paired_games`).

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
from midnight_env.infra import checks

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


def seat_lineups(num_players: int, field_size: int, deals: int, seats: Sequence[int] | None = None) -> np.ndarray:
    """(deals * N, N) lineups in which one agent (0) takes every seat in turn: game ``d * N + r``
    seats it in seat ``r`` and field agents (1..``field_size``) in the other seats, in the same
    order for every seat of a deal. A field no larger than the seats left fills them in order,
    cycled; a larger one gives each deal the next N - 1 of its agents, so that over
    ``field_size`` deals every field agent plays equally often. ``seats``: only these seats of
    each deal (deals * len(seats) games, deal ``d``'s ``j``-th seat at ``d * len(seats) + j``)."""
    others = num_players - 1
    if others and field_size < 1:
        raise ValueError(f"{num_players} players need a field of at least one agent for the other seats")
    seats = list(range(num_players)) if seats is None else [int(r) for r in seats]
    if not seats:
        raise ValueError(f"seats [] names no seat: allowed are one or more seats 0 to {num_players - 1} "
                         f"({num_players} players)")
    checks.integers("seat", seats, 0, num_players - 1, allowed=f"0 to {num_players - 1} ({num_players} players)")
    lineups = np.empty((deals * len(seats), num_players), np.int64)
    for d in range(deals):
        start = (d * others) % field_size if field_size > others else 0
        opponents = [1 + (start + k) % field_size for k in range(others)]
        for j, r in enumerate(seats):
            lineups[d * len(seats) + j] = opponents[:r] + [0] + opponents[r:]
    return lineups


class SeatGames(NamedTuple):
    """The games of :func:`play_every_seat`, one row per game, deal ``d`` seat ``r`` at ``d * N + r``
    (with ``seats``: its ``j``-th seat at ``d * len(seats) + j``)."""

    lineups: np.ndarray  # (games, N): 0 the agent, k the field's k-th agent
    points: np.ndarray  # (games, N) final spooky points per seat
    ranks: np.ndarray  # (games, N) finishing ranks per seat (1: a winner)
    seats: tuple[int, ...] = ()  # the agent's seats in each deal (empty: every seat)

    def _per_deal(self, values: np.ndarray) -> np.ndarray:
        return values.reshape(-1, len(self.seats) or self.lineups.shape[1])

    def agent_points(self) -> np.ndarray:
        """(deals, seats): the agent's points in seat ``r`` of deal ``d``."""
        return self._per_deal(self.points[self.lineups == 0])

    def agent_margins(self) -> np.ndarray:
        """(deals, seats): the agent's points minus the mean of the others' in its game (fewer is
        better; two players: its points minus its opponent's). Its own points alone where it plays alone."""
        n = self.lineups.shape[1]
        mine = self.points[self.lineups == 0].astype(np.float64)
        if n == 1:
            return self._per_deal(mine)
        others = (self.points.sum(axis=1) - mine) / (n - 1)
        return self._per_deal(mine - others)


def play_every_seat(engine: Engine, agent: Agent, field: Sequence[Agent], seeds: Sequence[int],
                    batch: int = 256, seats: Sequence[int] | None = None) -> SeatGames:
    """Duplicate deals: ``agent`` plays every seat (or those of ``seats``) of every deal (one game
    seed each, so the same dice) against ``field`` in the other seats (:func:`seat_lineups`). Two
    agents played over the same seeds and field meet the same dice and opponents seat by seat:
    their difference is a paired measurement with most of the luck taken out (:func:`paired_games`)."""
    n = engine.num_players
    lineups = seat_lineups(n, len(field), len(seeds), seats)
    game_seeds = np.repeat(np.asarray(seeds, np.int64), len(lineups) // max(len(seeds), 1))
    points, ranks = [], []
    for lo in range(0, len(game_seeds), batch):
        res = play_batch(engine, [agent, *field], lineups[lo:lo + batch], game_seeds[lo:lo + batch])
        points.append(res.points)
        ranks.append(res.ranks)
    if not points:
        return SeatGames(lineups, np.zeros((0, n), np.int64), np.zeros((0, n), np.int64),
                         tuple(seats) if seats is not None else ())
    return SeatGames(lineups, np.concatenate(points), np.concatenate(ranks),
                     tuple(int(r) for r in seats) if seats is not None else ())


class PairedGames(NamedTuple):
    """A candidate and a reference agent on the same deals, seat by seat (:func:`paired_games`)."""

    candidate: SeatGames
    reference: SeatGames

    def points_difference(self) -> np.ndarray:
        """(deals,): the candidate's points minus the reference's in the same seats of each deal,
        averaged over the seats (negative: the candidate books fewer points, better)."""
        return (self.candidate.agent_points() - self.reference.agent_points()).mean(axis=1)

    def gain(self) -> np.ndarray:
        """(deals,): how much better the candidate's margin (its points minus the others' mean) is
        than the reference's in the same seats of each deal, averaged over the seats: positive
        where the candidate does better. Two players: the points-of-difference gain of
        ``midnight solve --best-response``."""
        return (self.reference.agent_margins() - self.candidate.agent_margins()).mean(axis=1)


def paired_games(engine: Engine, candidate: Agent, reference: Agent | SeatGames, field: Sequence[Agent],
                 seeds: Sequence[int], seats: Sequence[int] | None = None, batch: int = 256) -> PairedGames:
    """Duplicate deals, paired: for every deal (one game seed) and every seat r (of ``seats``, default
    all), the candidate plays seat r against ``field`` in the other seats, and so does the reference
    agent: the same dice (the engine's die faces depend on the game seed alone) and the same
    opponents, so their difference in seat r is a paired measurement with most of the luck taken
    out. ``reference`` may be its games already played (:func:`play_every_seat` over the same
    seeds, field and seats), to compare several candidates with one reference."""
    games = play_every_seat(engine, candidate, field, seeds, batch, seats)
    if not isinstance(reference, SeatGames):
        reference = play_every_seat(engine, reference, field, seeds, batch, seats)
    if reference.lineups.shape != games.lineups.shape or not np.array_equal(reference.lineups, games.lineups):
        raise ValueError("the reference's games are not over the same deals and seats as the candidate's")
    return PairedGames(games, reference)


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
