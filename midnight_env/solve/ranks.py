"""A position's layer, read off its key alone: what the layered solver (``midnight_env.solve.layered``)
solves one at a time and a solution on disk (``midnight_env.solve.layer_store``) keeps apart.

A position's **layer** is its :func:`key_rank`, a quantity the game never takes back: Hugo's
progress in hidden_castle, the round and the guests settled in midnight_party; the guests placed
within them (``layered``'s docstring says why). A finished game is in a last layer of its own
(:data:`TERMINAL_RANK`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from midnight_env.core.config import Rules
from midnight_env.core.state import OVER
from midnight_env.solve.keys import ONE_GAME, KeyLayout, key_field, terminal_outcomes

TERMINAL_RANK = np.iinfo(np.int64).max  # the layer of the finished games


def rank_name(rank: int) -> str:
    """A layer's folder name in a work directory's ``layers/``."""
    return "RT" if rank == TERMINAL_RANK else f"R{rank:012d}"


@njit(**ONE_GAME)
def key_rank(key, K, hugo_stairs, arrow):
    """The layer of a position: never lower after any transition (``midnight_env.solve.layered``'s
    docstring says why)."""
    if np.int64(key & np.uint64(3)) == OVER:
        return TERMINAL_RANK
    ng = K.num_players * K.guests
    S = K.num_squares
    supply = 0
    settled = 0
    for j in range(ng):
        code = key_field(key, K.off_guests + j * K.code_bits, K.code_bits)
        if code == K.supply_code:
            supply += 1
        elif code >= S:
            settled += 1
    placed = ng - supply
    if K.castle:
        hugo = key_field(key, K.off_hugo, K.hugo_bits)
        clock = key_field(key, K.off_clock, 3)
        u = hugo - hugo_stairs  # his gallery square, negative on the stairs
        if u < 0:  # on the stairs: the steps before the first gallery square
            progress = S - arrow + u
        else:  # a lap of S squares per clock step, counted from the arrow square
            progress = clock * S + (u - arrow) % S
        return (progress + hugo_stairs) * (ng + 1) + placed
    rnd = key_field(key, K.off_round, K.round_bits) if K.off_round >= 0 else 0
    return (rnd * (ng + 1) + settled) * (ng + 1) + placed


@njit(cache=True)
def _key_ranks(keys, K, hugo_stairs, arrow, out):
    for i in range(keys.shape[0]):
        out[i] = key_rank(keys[i], K, hugo_stairs, arrow)


def key_ranks(keys: np.ndarray, K: KeyLayout, rules: Rules) -> np.ndarray:
    """The layer (:func:`key_rank`) of every key; :data:`TERMINAL_RANK` for a finished game."""
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    out = np.empty(len(keys), np.int64)
    _key_ranks(keys, K, int(rules.hugo_stairs), int(rules.arrow), out)
    return out


def over_values(keys: np.ndarray, objective: str) -> np.ndarray:
    """The value of finished games' keys: nothing more to book (points), or seat 0's result (win)."""
    if objective == "win":
        return terminal_outcomes(keys).astype(np.float64) / 2.0
    return np.zeros(len(keys))


__all__ = ["TERMINAL_RANK", "key_rank", "key_ranks", "rank_name", "over_values"]
