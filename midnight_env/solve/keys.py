"""Canonical state keys: a game position as one 64-bit integer, and back.

The solver's states are the engine's positions without what does not change the rest of the
game: the turn counter ``rolls`` (``max_turns`` is ignored), the dice stream ``rng``,
``truncated`` and the legal mask (both follow from the position), and which guest of a player is
which (guests of one player are counts per place already). What is kept, from the lowest bit up:

=============  ===============================================================================
phase          2 bits: PLACE, ROLL, MOVE, OVER
player         seat to place, roll or move (no bits with one player)
roll           3 bits: the number being decided in MOVE as an index of 0, 1, 2, 4, 5
hugo           Hugo's place on his track (``GameState.hugo``)
clock          hidden_castle: 3 bits, 23:45 .. 4:00
round          midnight_party with more than one round: the round, from 0
guests         per seat, its G guests as sorted place codes: gallery square s (0..S-1), room q
               (S+q), stair place l (S+R+l, the wine cellar last), not yet placed (S+R+L+1)
queue          two players, placing: the owners of the placements still to come, in order
first roller   two players, placing: the seat that rolls first once placement is done
points         hidden_castle: every seat's spooky points (6 bits each; a game at 46 is over)
carried        midnight_party, two players, more than one round: seat 0's points minus seat 1's
               booked in earlier rounds (the rules compare points between rounds)
=============  ===============================================================================

A finished game is one key per result: ``OVER`` alone for the points objective (its points
are booked on the transitions into it), or ``OVER | outcome << 2`` for the win objective
(outcome 0 seat 0 loses, 1 tie, 2 seat 0 wins).

midnight_party keeps no points in solo games: nothing in the rules reads them with one player,
and the solver books them on transitions. When a position is decoded for the engine (or an
agent), every seat gets the points its guests booked this round (captures by stair place, red
and green rooms, the wine cellar): in a one-round game these are its points exactly, and
``carried`` adds the difference of earlier rounds where it is kept.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from midnight_env.core.board import GREEN, RED
from midnight_env.core.config import CASTLE_POINTS_LIMIT
from midnight_env.core.rules import _lowest_bit, _occupied_squares
from midnight_env.core.state import OVER, PLACE

ROLL_FACES = np.array([0, 1, 2, 4, 5], dtype=np.int64)  # roll index -> number (0: none)
ROLL_INDEX = np.array([0, 1, 2, 0, 3, 4], dtype=np.int64)  # number -> roll index
POINTS_BITS = 6  # hidden_castle points 0..45 in a game that goes on
OUTCOME_LOSS, OUTCOME_TIE, OUTCOME_WIN = 0, 1, 2  # seat 0's result, in the key of a finished game
# compile options of the functions on one game (here and in the other solve modules): no reference
# counting, as the rule functions (``midnight_env.core.rules``): they never allocate, and counting
# references to the state's arrays at every call costs more than the keys themselves
ONE_GAME = dict(cache=True, _nrt=False)


def bits_for(count: int) -> int:
    """Bits that hold the values 0..count-1."""
    return max(0, int(count - 1).bit_length())


class KeyLayout(NamedTuple):
    """Where each part of a position sits in a key (bit offsets; -1: not kept)."""

    num_players: int
    guests: int
    num_squares: int
    num_rooms: int
    num_places: int  # stair places including the overflow place (the engine's L+1)
    code_bits: int  # bits of one guest's place code
    supply_code: int  # place code of a guest not yet placed
    off_player: int
    player_bits: int
    off_roll: int
    off_hugo: int
    hugo_bits: int
    off_clock: int
    off_round: int
    round_bits: int
    off_guests: int
    off_queue: int
    off_first: int
    off_points: int
    off_carried: int
    carried_bits: int
    carried_zero: int  # the key holds carried + carried_zero
    win: bool  # finished games keep seat 0's result
    castle: bool
    total_bits: int


def key_layout(rules, rounds: int, win: bool) -> KeyLayout:
    """The layout of the keys of a rule set (``config.Rules``) for an objective; ValueError when
    a key would need more than 64 bits or more than two players."""
    n, g = rules.num_players, rules.guests
    if n > 2:
        raise ValueError(f"the solver takes 1 or 2 players, got {n}")
    places = rules.num_places + 1
    codes = rules.num_squares + rules.num_rooms + places + 1
    code_bits = bits_for(codes)
    player_bits = bits_for(n)
    off = 2
    off_player = off
    off += player_bits
    off_roll = off
    off += 3
    hugo_bits = bits_for(rules.hugo_stairs + rules.num_squares)
    off_hugo = off
    off += hugo_bits
    off_clock = -1
    if rules.castle:
        off_clock = off
        off += 3
    off_round, round_bits = -1, 0
    if not rules.castle and rounds > 1:
        round_bits = bits_for(rounds)
        off_round = off
        off += round_bits
    off_guests = off
    off += n * g * code_bits
    off_queue = off_first = -1
    if n > 1:
        off_queue = off
        off += n * g * player_bits
        off_first = off
        off += player_bits
    off_points = -1
    if rules.castle:
        off_points = off
        off += n * POINTS_BITS
    off_carried, carried_bits, carried_zero = -1, 0, 0
    if not rules.castle and n == 2 and rounds > 1:
        # a guest books between -3 (green room) and the highest stair value in a round
        per_round = g * (int(np.max(rules.place_value)) + 3)
        carried_zero = (rounds - 1) * per_round
        carried_bits = bits_for(2 * carried_zero + 1)
        off_carried = off
        off += carried_bits
    if off > 64:
        raise ValueError(f"a position of this set-up needs a {off}-bit key: the solver's keys hold 64 bits "
                         "(fewer guests or rounds)")
    return KeyLayout(n, g, rules.num_squares, rules.num_rooms, places, code_bits, codes - 1, off_player, player_bits,
                     off_roll, off_hugo, hugo_bits, off_clock, off_round, round_bits, off_guests, off_queue, off_first,
                     off_points, off_carried, carried_bits, carried_zero, bool(win), bool(rules.castle), off)


@njit(**ONE_GAME)
def _put(key, value, off):
    return key | (np.uint64(value) << np.uint64(off))


@njit(**ONE_GAME)
def key_field(key, off, bits):
    """The ``bits`` bits of ``key`` from bit ``off`` (a field of the layout)."""
    return np.int64((key >> np.uint64(off)) & np.uint64((1 << bits) - 1))


@njit(**ONE_GAME)
def booked_this_round(s, R, i, p):
    """midnight_party: the points seat ``p``'s guests booked this round, read off the position
    (guests stay in their rooms and on the stairs until the round ends)."""
    total = 0
    for place in range(R.num_places + 1):
        total += s.stairs[i, p, place] * R.place_value[place]
    for q in range(R.num_rooms):
        if s.room[i, q] == p:
            if R.kind[q] == RED:
                total += 1
            elif R.kind[q] == GREEN:
                total -= 3
    return total


@njit(**ONE_GAME)
def outcome(s, i):
    """Seat 0's result in game ``i``: fewer points win, equal points tie (two players)."""
    d = s.spooky[i, 0] - s.spooky[i, 1]
    return OUTCOME_WIN if d < 0 else (OUTCOME_TIE if d == 0 else OUTCOME_LOSS)


@njit(**ONE_GAME)
def encode(s, R, K, i):
    """Key of game ``i`` of the batch ``s``; 0xFFFF... when the position cannot be keyed (a
    count out of its field: never for a position of the set-up the layout was made for)."""
    bad = np.uint64(0xFFFFFFFFFFFFFFFF)
    phase = np.int64(s.phase[i])
    if phase == OVER:
        key = np.uint64(OVER)
        if K.win:
            key = _put(key, outcome(s, i), 2)
        return key
    key = np.uint64(phase)
    key = _put(key, s.player[i], K.off_player)
    key = _put(key, ROLL_INDEX[s.roll[i]], K.off_roll)
    key = _put(key, s.hugo[i], K.off_hugo)
    if K.off_clock >= 0:
        key = _put(key, s.clock[i], K.off_clock)
    if K.off_round >= 0:
        key = _put(key, s.round[i] - 1, K.off_round)
    S, Q, P = K.num_squares, K.num_rooms, K.num_places
    for p in range(K.num_players):
        off = K.off_guests + p * K.guests * K.code_bits
        end = off + K.guests * K.code_bits
        occupied = _occupied_squares(s.gallery, R, i, p)
        while occupied:  # codes in increasing order: the guests come out sorted
            sq = _lowest_bit(occupied)
            occupied &= occupied - np.uint64(1)
            for _ in range(s.gallery[i, p, sq]):
                key = _put(key, sq, off)
                off += K.code_bits
        for q in range(Q):
            if s.room[i, q] == p:
                key = _put(key, S + q, off)
                off += K.code_bits
        for place in range(P):
            for _ in range(s.stairs[i, p, place]):
                key = _put(key, S + Q + place, off)
                off += K.code_bits
        for _ in range(s.supply[i, p]):
            key = _put(key, K.supply_code, off)
            off += K.code_bits
        if off != end:
            return bad
    if K.off_queue >= 0 and phase == PLACE:
        for k in range(s.queue_pos[i], s.queue_len[i]):
            key = _put(key, s.queue[i, k], K.off_queue + (k - s.queue_pos[i]) * K.player_bits)
        key = _put(key, s.first_roller[i], K.off_first)
    if K.off_points >= 0:
        for p in range(K.num_players):
            points = s.spooky[i, p]
            if points < 0 or points >= CASTLE_POINTS_LIMIT:
                return bad
            key = _put(key, points, K.off_points + p * POINTS_BITS)
    if K.off_carried >= 0:
        carried = (s.spooky[i, 0] - booked_this_round(s, R, i, 0)) - (s.spooky[i, 1] - booked_this_round(s, R, i, 1))
        if abs(carried) > K.carried_zero:
            return bad
        key = _put(key, carried + K.carried_zero, K.off_carried)
    return key


@njit(**ONE_GAME)
def decode(key, s, R, K, i):
    """Write the position of ``key`` into game ``i`` of the batch ``s`` (not the legal mask and
    the dice stream): a position the engine plays on exactly as on any game with that key."""
    phase = key_field(key, 0, 2)
    s.phase[i] = phase
    s.rolls[i] = 0
    s.truncated[i] = False
    for p in range(s.gallery.shape[1]):  # element by element: slices would be array objects
        for sq in range(s.gallery.shape[2]):
            s.gallery[i, p, sq] = 0
        for place in range(s.stairs.shape[2]):
            s.stairs[i, p, place] = 0
        s.supply[i, p] = 0
        s.spooky[i, p] = 0
    for q in range(s.room.shape[1]):
        s.room[i, q] = -1
    s.queue_pos[i] = 0
    s.queue_len[i] = 0
    s.first_roller[i] = 0
    s.clock[i] = 0
    s.round[i] = 1
    s.rounds_done[i] = 0
    s.roll[i] = 0
    s.player[i] = 0
    s.hugo[i] = 0
    if phase == OVER:
        if K.win:
            result = key_field(key, 2, 2)
            s.spooky[i, 0] = 0 if result == OUTCOME_WIN else 1
            s.spooky[i, 1] = 0 if result == OUTCOME_LOSS else 1
        return
    s.player[i] = key_field(key, K.off_player, K.player_bits)
    s.roll[i] = ROLL_FACES[key_field(key, K.off_roll, 3)]
    s.hugo[i] = key_field(key, K.off_hugo, K.hugo_bits)
    if K.off_clock >= 0:
        s.clock[i] = key_field(key, K.off_clock, 3)
    if K.off_round >= 0:
        s.round[i] = 1 + key_field(key, K.off_round, K.round_bits)
        s.rounds_done[i] = s.round[i] - 1
    S, Q = K.num_squares, K.num_rooms
    placing = 0
    for p in range(K.num_players):
        for g in range(K.guests):
            code = key_field(key, K.off_guests + (p * K.guests + g) * K.code_bits, K.code_bits)
            if code < S:
                s.gallery[i, p, code] += 1
            elif code < S + Q:
                s.room[i, code - S] = p
            elif code < K.supply_code:
                s.stairs[i, p, code - S - Q] += 1
            else:
                s.supply[i, p] += 1
                placing += 1
    if phase == PLACE:
        s.queue_len[i] = placing
        for k in range(placing):
            s.queue[i, k] = key_field(key, K.off_queue + k * K.player_bits, K.player_bits) if K.off_queue >= 0 else 0
        if K.off_first >= 0:
            s.first_roller[i] = key_field(key, K.off_first, K.player_bits)
    if K.off_points >= 0:
        for p in range(K.num_players):
            s.spooky[i, p] = key_field(key, K.off_points + p * POINTS_BITS, POINTS_BITS)
    else:
        for p in range(K.num_players):
            s.spooky[i, p] = booked_this_round(s, R, i, p)
        if K.off_carried >= 0:
            carried = key_field(key, K.off_carried, K.carried_bits) - K.carried_zero
            if carried > 0:
                s.spooky[i, 0] += carried
            else:
                s.spooky[i, 1] -= carried


@njit(cache=True)
def encode_games(s, R, K, out):
    """``out[i]``: the key of every game of the batch."""
    for i in range(out.shape[0]):
        out[i] = encode(s, R, K, i)


@njit(cache=True)
def decode_games(keys, s, R, K):
    """Game ``i`` of the batch ``s`` set to the position of ``keys[i]``."""
    for i in range(keys.shape[0]):
        decode(keys[i], s, R, K, i)


def terminal_outcomes(keys: np.ndarray) -> np.ndarray:
    """Seat 0's result (0 loss, 1 tie, 2 win) kept in the key of a finished game (win objective)."""
    return ((keys >> np.uint64(2)) & np.uint64(3)).astype(np.int8)


def key_phases(keys: np.ndarray) -> np.ndarray:
    """The phase of every key (PLACE, ROLL, MOVE, OVER)."""
    return (keys & np.uint64(3)).astype(np.int8)


def key_players(keys: np.ndarray, K: KeyLayout) -> np.ndarray:
    """The seat to place, roll or move of every key (0 for finished games)."""
    if K.player_bits == 0:
        return np.zeros(len(keys), np.int8)
    players = ((keys >> np.uint64(K.off_player)) & np.uint64((1 << K.player_bits) - 1)).astype(np.int8)
    players[key_phases(keys) == OVER] = 0
    return players


class KeyedStates:
    """The states of a table held by their keys (``keys``, in the layout ``layout``): a base of the
    state graph and of a solution."""

    keys: np.ndarray
    layout: KeyLayout

    @property
    def num_states(self) -> int:
        return len(self.keys)

    @property
    def phases(self) -> np.ndarray:
        return key_phases(self.keys)

    @property
    def players(self) -> np.ndarray:
        return key_players(self.keys, self.layout)
