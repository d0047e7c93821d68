"""Who won: finishing ranks, winners and rank rewards from spooky points (fewest points win).

One definition of the ranking (RULES.md section 8) for the engine, the environments, the compiled
VectorEnv step and the tournaments: a seat's rank is one more than the number of seats with fewer
points, so tied seats share the better rank and every seat with the fewest points is a winner.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def seat_rank(points, i, p):
    """Rank of seat ``p`` in game ``i`` of the (B, N) ``points``: 1 + seats with fewer points."""
    better = 0
    for q in range(points.shape[1]):
        better += points[i, q] < points[i, p]
    return 1 + better


@njit(cache=True)
def _ranks_into(points, out):
    for i in range(points.shape[0]):
        for p in range(points.shape[1]):
            out[i, p] = seat_rank(points, i, p)


def ranks(points: np.ndarray) -> np.ndarray:
    """(B, N) int64 finishing rank of every seat from (B, N) spooky points; 1 = fewest points."""
    points = np.ascontiguousarray(points)
    out = np.empty(points.shape, np.int64)
    _ranks_into(points, out)
    return out


def winners(points: np.ndarray) -> list[int]:
    """Seats with the fewest points of one game's (N,) spooky points (a shared win lists several)."""
    row = np.asarray(points).reshape(1, -1)
    return [int(p) for p in np.flatnonzero(ranks(row)[0] == 1)]


def rank_rewards(points: np.ndarray) -> np.ndarray:
    """(B, N) float32 end-of-game rewards from final spooky points (B, N).

    Winners (fewest points) get +1, the last (most points) -1, the others linearly in between by
    their rank, ties sharing the better rank: ``1 - 2*(rank-1)/(N-1)``. Tied last players all get
    -1; when everybody ties, everybody wins (+1). A solo game pays +1.
    """
    points = np.asarray(points)
    n = points.shape[1]
    if n == 1:
        return np.ones(points.shape, np.float32)
    rank = ranks(points)
    out = (1.0 - 2.0 * (rank - 1) / (n - 1)).astype(np.float32)
    best = rank == 1
    out[(points == points.max(axis=1, keepdims=True)) & ~best] = -1.0
    out[best] = 1.0
    return out
