"""The state graph of a set-up: every position reachable from the start, and its transitions.

The positions are found breadth-first from the game at set-up. Each one is decoded into a game
of a batch of two (``keys.decode``), and its successors are made by the engine's own turn flow,
``rules.advance_games``, on a copy in the second game: every legal choice at a decision (PLACE,
MOVE), every die face at a roll (ROLL). A successor is the next roll, decision or end, as
``Engine.apply_action`` and ``Engine.apply_roll`` leave it; its key is looked up in an
open-addressing hash table of the keys found so far and added when new. So the transitions are
the engine's by construction; ``midnight_env.solve.check`` compares them with ``Engine`` calls.
The layered solver (``midnight_env.solve.layered``) finds each layer with the same expansion
(:func:`explore` given the layer's rank): a successor of a later layer is kept aside by its key.

The graph is stored as arrays (CSR): state ``x``'s transitions are ``edge_start[x]`` ..
``edge_start[x+1]-1``, each with its target state, its label (the action of a decision, in
increasing order, or the die face of a roll: 1, 2, 4, 5, 0 = Hugo) and its reward (the points it
books: seat 0's, or seat 0's minus seat 1's with two players; nothing for the win objective).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from midnight_env.core.config import Rules
from midnight_env.core.dice import HUGO, mix64
from midnight_env.core.engine import Engine
from midnight_env.core.rules import advance_games, fill_mask
from midnight_env.core.state import OVER, ROLL, GameState, empty_state
from midnight_env.solve.keys import ONE_GAME, KeyedStates, KeyLayout, decode, encode
from midnight_env.solve.ranks import key_rank

FACES = np.array([1, 2, 4, 5, HUGO], dtype=np.int64)  # a roll's transitions, in this order
REWARD_SEAT0, REWARD_DIFFERENCE, REWARD_NONE = 0, 1, 2  # what a transition's reward counts
BAD_KEY = np.uint64(0xFFFFFFFFFFFFFFFF)
WHOLE_GRAPH = -1  # the rank ``explore`` takes for the whole graph: every successor is a state
BAD_SUCCESSOR, BACKWARD_EDGE = 1, 2  # why ``_expand`` stopped at a state


class SolveError(ValueError):
    """A set-up the solver does not take, or one too large for this machine."""


@njit(**ONE_GAME)
def _copy_game(s, src, dst):
    """Game ``src`` of the batch into game ``dst`` (the legal mask excepted: the turn flow
    writes it before it reads it). Element by element: slices would be array objects."""
    s.phase[dst] = s.phase[src]
    s.player[dst] = s.player[src]
    s.roll[dst] = s.roll[src]
    for p in range(s.gallery.shape[1]):
        for sq in range(s.gallery.shape[2]):
            s.gallery[dst, p, sq] = s.gallery[src, p, sq]
        for place in range(s.stairs.shape[2]):
            s.stairs[dst, p, place] = s.stairs[src, p, place]
        s.supply[dst, p] = s.supply[src, p]
        s.spooky[dst, p] = s.spooky[src, p]
    for q in range(s.room.shape[1]):
        s.room[dst, q] = s.room[src, q]
    for k in range(s.queue.shape[1]):
        s.queue[dst, k] = s.queue[src, k]
    s.hugo[dst] = s.hugo[src]
    s.clock[dst] = s.clock[src]
    s.round[dst] = s.round[src]
    s.rounds_done[dst] = s.rounds_done[src]
    s.rolls[dst] = s.rolls[src]
    s.queue_pos[dst] = s.queue_pos[src]
    s.queue_len[dst] = s.queue_len[src]
    s.first_roller[dst] = s.first_roller[src]
    s.truncated[dst] = s.truncated[src]
    s.rng[dst] = s.rng[src]


@njit(**ONE_GAME)
def _reward(s, mode):
    """Points booked between game 0 (the position) and game 1 (its successor)."""
    if mode == REWARD_SEAT0:
        return s.spooky[1, 0] - s.spooky[0, 0]
    if mode == REWARD_DIFFERENCE:
        return (s.spooky[1, 0] - s.spooky[1, 1]) - (s.spooky[0, 0] - s.spooky[0, 1])
    return 0


@njit(**ONE_GAME)
def _find(key, keys, table, mask):
    """Slot of ``key`` in the hash table: where it is, or the empty slot where it belongs."""
    h = np.int64(mix64(key) & np.uint64(mask))
    while True:
        j = table[h]
        if j < 0 or keys[j] == key:
            return h
        h = (h + 1) & mask


@njit(cache=True)
def _rehash(keys, n, table):
    mask = table.shape[0] - 1
    for j in range(n):
        table[_find(keys[j], keys, table, mask)] = j


@njit(**ONE_GAME)
def successors(key, s, R, K, reward_mode, actions, faces, faces_out, out_key, out_label, out_reward):
    """The successors of the position ``key``, the one expansion of both solvers (whole and
    layered): decoded into game 0 of ``s``, each legal choice of a decision (in increasing order)
    or each die face of a roll (``FACES``' order) is played out on a copy in game 1 by the turn
    flow, and its key, label (the action, or the face) and reward written to ``out_*`` (at least
    ``R.num_actions + 5`` long). Returns how many (0 for a finished game), or -1 where a successor
    has no key or books more points than a transition can (a few captures' points at most).
    ``actions``, ``faces``, ``faces_out``: the turn flow's (2,) arguments, all -1."""
    decode(key, s, R, K, 0)
    phase = s.phase[0]
    if phase == OVER:
        return 0
    count = FACES.shape[0]
    if phase != ROLL:
        fill_mask(s.gallery, s.room, s.stairs, s.hugo, s.legal, s.phase, s.player, s.roll, R, 0)
        count = R.num_actions
    m = 0
    for c in range(count):
        if phase == ROLL:
            faces[1] = FACES[c]
            actions[1] = -1
            label = FACES[c]
        else:
            if s.legal[0, c] == 0:
                continue
            faces[1] = -1
            actions[1] = c
            label = c
        _copy_game(s, 0, 1)
        advance_games(s, R, 1, 2, actions, faces, False, faces_out)
        successor = encode(s, R, K, 1)
        reward = _reward(s, reward_mode)
        if successor == BAD_KEY or abs(reward) > 127:
            return -1
        out_key[m] = successor
        out_label[m] = label
        out_reward[m] = reward
        m += 1
    return m


@njit(cache=True)
def _expand(s_fields, rules_fields, K, rank, keys, n, x, table, edge_start, edge_to, edge_label, edge_reward, n_edges,
            ext, n_ext, reward_mode, actions, faces, faces_out):
    """Expand states ``x``, ``x+1``, ... (adding the new successors at ``n``, ``n+1``, ...) until
    every state is expanded or an array could overflow, the one loop of both solvers. With
    ``rank`` WHOLE_GRAPH every successor is found in (or added to) the hash table; inside layer
    ``rank`` only a successor of the same layer is, one of a later layer is kept in ``ext`` and
    its transition points there as ``-1 - j``. Returns (x, n, n_edges, n_ext, bad, why): ``bad``
    the first state with a successor that has no key (``why`` BAD_SUCCESSOR) or lies in an
    earlier layer (BACKWARD_EDGE) (-1: none). ``actions``, ``faces``, ``faces_out``: the turn
    flow's (2,) arguments, all -1."""
    s = GameState(*s_fields)
    R = Rules(*rules_fields)
    mask = table.shape[0] - 1
    room = R.num_actions + FACES.shape[0]  # most successors of one state
    out_key = np.empty(room, np.uint64)
    out_label = np.empty(room, np.int64)
    out_reward = np.empty(room, np.int64)
    while x < n:
        if n + room > keys.shape[0] or n + room > table.shape[0] // 2 or n_edges + room > edge_to.shape[0] \
                or (rank != WHOLE_GRAPH and n_ext + room > ext.shape[0]):
            break
        edge_start[x] = n_edges
        m = successors(keys[x], s, R, K, reward_mode, actions, faces, faces_out, out_key, out_label, out_reward)
        if m < 0:
            return x, n, n_edges, n_ext, x, BAD_SUCCESSOR
        for i in range(m):
            key = out_key[i]
            r = rank if rank == WHOLE_GRAPH else key_rank(key, K, R.hugo_stairs, R.arrow)
            if r == rank:
                h = _find(key, keys, table, mask)
                j = table[h]
                if j < 0:
                    j = n
                    keys[n] = key
                    table[h] = n
                    n += 1
                edge_to[n_edges] = j
            elif r > rank:
                ext[n_ext] = key
                edge_to[n_edges] = -1 - n_ext
                n_ext += 1
            else:
                return x, n, n_edges, n_ext, x, BACKWARD_EDGE
            edge_label[n_edges] = out_label[i]
            edge_reward[n_edges] = out_reward[i]
            n_edges += 1
        x += 1
    edge_start[x] = n_edges
    return x, n, n_edges, n_ext, -1, 0


def _grow(a: np.ndarray, size: int) -> np.ndarray:
    """``a`` grown to ``size`` in place where the system can (no second copy): the growth is
    zero-filled, so it is resident memory at once."""
    a.resize(size, refcheck=False)
    return a


def explore(engine: Engine, K: KeyLayout, reward_mode: int, seeds: np.ndarray, rank: int, max_states: int,
            progress=None) -> dict[str, np.ndarray]:
    """Every position reachable from ``seeds`` (keys, sorted, unique) of ``engine``'s game, with
    their transitions, breadth-first: the whole graph (``rank`` WHOLE_GRAPH) or layer ``rank``
    (``midnight_env.solve.layered``). Returns ``keys`` (seeds first), ``edge_start``, ``edge_to``
    (a state, or in a layer ``-1 - j`` for ``ext[j]``, a key of a later layer), ``edge_label``,
    ``edge_reward``, ``ext`` (empty for the whole graph). ``max_states``: SolveError when there
    are more; ``progress(states, expanded)`` is called now and then."""
    r = engine.rules
    room = r.num_actions + len(FACES)
    cap = max(1 << 16, 2 * len(seeds) + room)
    keys = np.zeros(cap, np.uint64)
    keys[:len(seeds)] = seeds
    edge_start = np.zeros(cap + 1, np.int64)
    table = np.full(1 << int(2 * cap - 1).bit_length(), -1, np.int32)
    _rehash(keys, len(seeds), table)
    edge_cap = 4 * cap
    edge_to = np.zeros(edge_cap, np.int32)
    edge_label = np.zeros(edge_cap, np.int16)
    edge_reward = np.zeros(edge_cap, np.int8)
    ext = np.zeros(0 if rank == WHOLE_GRAPH else cap, np.uint64)
    n, x, n_edges, n_ext = len(seeds), 0, 0, 0
    s = empty_state(2, r.num_players, r.num_squares, r.num_rooms, r.num_places, r.guests, r.num_actions)
    rules_fields = tuple(r)
    scratch = (np.full(2, -1, np.int64), np.full(2, -1, np.int64), np.full(2, -1, np.int8))
    while True:
        x, n, n_edges, n_ext, bad, why = _expand(tuple(s), rules_fields, K, np.int64(rank), keys, n, x, table,
                                                 edge_start, edge_to, edge_label, edge_reward, n_edges, ext, n_ext,
                                                 reward_mode, *scratch)
        if bad >= 0:
            raise SolveError(_expand_error(keys, bad, why, rank))
        if progress is not None:
            progress(n, x)
        if x >= n:
            break
        if n + room > max_states:
            raise SolveError(f"more than {max_states:,} states: this set-up is too large for the memory here "
                             "(fewer guests or rounds; raise max_states where memory allows; or solve it by layers, "
                             "`midnight solve --layered`)" if rank == WHOLE_GRAPH else
                             f"layer {rank} has more than {max_states:,} states: too large for the memory here")
        if n + room > len(keys):
            cap = len(keys) + len(keys) // 4
            keys = _grow(keys, cap)
            edge_start = _grow(edge_start, cap + 1)
        if n + room > len(table) // 2:
            table = np.full(2 * len(table), -1, np.int32)
            _rehash(keys, n, table)
        if n_edges + room > len(edge_to):
            edge_cap = len(edge_to) + len(edge_to) // 4
            edge_to, edge_label, edge_reward = (_grow(a, edge_cap) for a in (edge_to, edge_label, edge_reward))
        if n_ext + room > len(ext) and rank != WHOLE_GRAPH:
            ext = _grow(ext, len(ext) + len(ext) // 4)
    del table
    if n >= 2**31 - 1 or n_ext >= 2**31 - 1:
        where = "" if rank == WHOLE_GRAPH else f"layer {rank}: "
        raise SolveError(f"{where}{n:,} states do not fit the graph's 32-bit state numbers")
    return {"keys": _grow(keys, n), "edge_start": _grow(edge_start, n + 1), "edge_to": _grow(edge_to, n_edges),
            "edge_label": _grow(edge_label, n_edges), "edge_reward": _grow(edge_reward, n_edges),
            "ext": _grow(ext, n_ext)}


def _expand_error(keys: np.ndarray, bad: int, why: int, rank: int) -> str:
    if rank == WHOLE_GRAPH:
        return f"state {bad} (key {int(keys[bad]):#x}) has a successor the key layout or the rewards cannot hold"
    what = "a successor the key layout or the rewards cannot hold" if why == BAD_SUCCESSOR else \
        "a successor in an earlier layer (the layer's quantity went back)"
    return f"state {int(keys[bad]):#x} of layer {rank} has {what}"


@dataclass
class StateGraph(KeyedStates):
    """Every position reachable from the start of a set-up (state 0) and its transitions."""

    engine: Engine  # the set-up's rules, with max_turns out of the way
    layout: KeyLayout
    reward_mode: int
    keys: np.ndarray  # (n,) uint64, in the order found (breadth-first from the start)
    edge_start: np.ndarray  # (n+1,) int64
    edge_to: np.ndarray  # (E,) int32 target state
    edge_label: np.ndarray  # (E,) int16 action of a decision, die face of a roll
    edge_reward: np.ndarray  # (E,) int8 points booked (see the module docstring)

    @property
    def num_edges(self) -> int:
        return len(self.edge_to)

    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.keys, self.edge_start, self.edge_to, self.edge_label, self.edge_reward))

    def edges(self, x: int) -> slice:
        return slice(int(self.edge_start[x]), int(self.edge_start[x + 1]))

    def scratch(self, batch: int) -> GameState:
        """An empty batch of this set-up's games (for decoding keys)."""
        r = self.engine.rules
        return empty_state(batch, r.num_players, r.num_squares, r.num_rooms, r.num_places, r.guests, r.num_actions)


def build_graph(engine: Engine, K: KeyLayout, reward_mode: int, max_states: int, start: np.uint64,
                progress=None) -> StateGraph:
    """Enumerate the positions reachable from the position ``start`` (a key) of ``engine``'s
    game. ``max_states``: SolveError when there are more; ``progress(states, expanded)`` is
    called now and then."""
    found = explore(engine, K, reward_mode, np.array([start], np.uint64), WHOLE_GRAPH, max_states, progress)
    return StateGraph(engine=engine, layout=K, reward_mode=reward_mode, keys=found["keys"],
                      edge_start=found["edge_start"], edge_to=found["edge_to"], edge_label=found["edge_label"],
                      edge_reward=found["edge_reward"])


__all__ = ["StateGraph", "build_graph", "explore", "successors", "SolveError", "FACES", "WHOLE_GRAPH"]
