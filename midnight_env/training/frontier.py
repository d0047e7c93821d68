"""Restarts from the positions a learner's play seldom reaches (the value trainer's ``restarts``).

A best response to a near-optimal target misses most of what it misses in rare positions, and
there the better move often pays only once the play after it is better too (docs/RESEARCH.md,
"Where the rest lies": *locked in*). Exploration one random move at a time meets such a line about
as seldom as the position itself. Go-Explore's answer (Ecoffet et al., "First return, then
explore", Nature 2021) is to remember the positions met, return to the rarely met ones and play
on from there: :class:`Frontier` keeps every position where the learner decided (up to a
capacity), with how often training met it, and draws restarts with weight 1 / that count, each
with fresh dice. Positions repeat only where the game is small (a solved set-up); at real size
nearly every one is met once and the draw is close to uniform over the kept ones.
"""

from __future__ import annotations

import numpy as np

from midnight_env.core.dice import seed_streams
from midnight_env.core.state import GameState
from midnight_env.infra import checks


class Frontier:
    """Positions where the learner decided, each kept once (the first ``capacity`` met), with how
    often training games met it."""

    def __init__(self, capacity: int):
        checks.integer("frontier capacity", capacity, 1, allowed="1 or more positions")
        self.capacity = capacity
        self.index: dict[bytes, int] = {}  # position key (GameState.key: the dice excluded) -> row
        self.counts: list[int] = []
        self.kept: GameState | None = None  # row k: the k-th position met (room for ``capacity``)

    def __len__(self) -> int:
        return len(self.counts)

    def meet(self, state: GameState, games: np.ndarray) -> None:
        """Count games ``games`` of ``state`` (each at a decision of the learner) as met once more;
        keep the ones not met before while there is room."""
        fresh = []
        for g in np.asarray(games, np.int64):
            key = state.key(int(g))
            row = self.index.get(key)
            if row is not None:
                self.counts[row] += 1
            elif len(self.counts) < self.capacity:
                self.index[key] = len(self.counts)
                self.counts.append(1)
                fresh.append(int(g))
        if fresh:
            if self.kept is None:  # zeros are not written to memory until a position is kept there
                self.kept = GameState(*(np.zeros((self.capacity, *a.shape[1:]), a.dtype) for a in state))
            self.kept.put(slice(len(self.counts) - len(fresh), len(self.counts)), state.take(np.array(fresh)))

    def draw(self, rng: np.random.Generator, seeds: np.ndarray) -> GameState:
        """``len(seeds)`` kept positions drawn with weight 1 / count (with replacement), as a batch
        whose dice streams start from ``seeds`` (as ``Engine.new_games(seeds)`` would): the same
        position met again plays on with other dice."""
        if not self.counts:
            raise ValueError("the frontier is empty: nothing met yet to restart from")
        weight = 1.0 / np.asarray(self.counts, np.float64)
        rows = rng.choice(len(weight), size=len(seeds), p=weight / weight.sum())
        start = self.kept.take(rows)
        seed_streams(np.asarray(seeds, np.int64), start.rng)
        return start


__all__ = ["Frontier"]
