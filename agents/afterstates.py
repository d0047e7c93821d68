"""Afterstates: every legal choice of a batch of decisions applied to copies of the games.

``expand`` turns n deciding games into one batch holding, for each game, one copy per legal
choice with that choice applied (the copies stop at the next roll or decision); ``pick_best``
chooses one child per game by value, breaking ties with the game's own random draw so that a
game plays the same whatever batch it is in.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from midnight_env.core.engine import Engine
from midnight_env.core.state import GameState


class Children(NamedTuple):
    state: GameState  # one copy per (game, legal choice), the choice applied
    parent: np.ndarray  # (M,) index of the deciding game (0..n-1) of each copy, ascending
    action: np.ndarray  # (M,) the choice applied
    start: np.ndarray  # (n+1,) copies of game g are start[g]:start[g+1]


def expand(engine: Engine, state: GameState, games: np.ndarray) -> Children:
    """Apply every legal choice of ``state``'s games ``games`` (at PLACE or MOVE) to copies."""
    games = np.asarray(games, dtype=np.int64)
    legal = state.legal[games]
    parent, action = np.nonzero(legal)  # row-major: grouped by game, actions ascending
    counts = legal.sum(axis=1, dtype=np.int64)
    start = np.zeros(len(games) + 1, np.int64)
    np.cumsum(counts, out=start[1:])
    child = state.take(games[parent])
    engine.apply_action(child, action.astype(np.int64), check=False)
    return Children(child, parent.astype(np.int64), action.astype(np.int64), start)


def pick_best(values: np.ndarray, start: np.ndarray, draws: np.ndarray, tolerance: float = 1e-9) -> np.ndarray:
    """Index (into ``values``) of the best child of each segment ``start[g]:start[g+1]``;
    among children within ``tolerance`` of the best, the ``floor(draws[g] * ties)``-th."""
    n = len(start) - 1
    counts = np.diff(start)
    if (counts == 0).any():
        raise ValueError("a game to decide has no legal choice")
    seg = np.repeat(np.arange(n), counts)
    best = np.maximum.reduceat(values, start[:-1])
    tie = values >= best[seg] - tolerance
    ties = np.add.reduceat(tie.astype(np.int64), start[:-1])
    want = np.minimum((draws * ties).astype(np.int64), ties - 1)  # which tie, 0-based
    rank = np.cumsum(tie) - 1  # running count of ties, global
    first_rank = rank[start[:-1]] - tie[start[:-1]] + 1  # rank of a segment's first tie
    chosen = tie & (rank - first_rank[seg] == want[seg])
    return np.flatnonzero(chosen)
