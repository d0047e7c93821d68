"""The game state: a fixed-shape struct of numpy arrays with a leading game axis ``B``.

A single game is a batch of one. Shapes use N players, S gallery squares, R rooms, L stair
places (landings or steps), G guests per player and A actions (see ``actions.py``). The state
holds the per-game dice stream, so copying a state copies its future dice too, and a state is
plain data: it can be copied, sliced, compared, hashed (``key``) and enumerated.

Being plain data, a state can also be built, loaded or edited into something no game reaches,
and the compiled rules trust every index they read. Below, ``check_layout`` checks the dtypes
and shapes, ``fault_message`` names the first value out of range or fields that disagree (a
seat, square, room, roll, clock, count...), and ``fits_checker`` is the quick compiled check of
just what the rules index with; the engine calls them where a state enters
(``Engine.check_state`` says what is checked when), so that a bad state is refused with the
field, the game and what is allowed.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from midnight_env.core.config import CLOCK_END
from midnight_env.core.dice import NUMBERS

# phase: what happens next in a game
PLACE = 0  # `player` places a guest (decision)
ROLL = 1  # `player` rolls the die (chance)
MOVE = 2  # `player` chooses a move for `roll` (decision)
OVER = 3  # the game has ended
PHASE_NAMES = ("place", "roll", "move", "over")  # indexed by phase


class GameState(NamedTuple):
    phase: np.ndarray  # (B,) int8 PLACE / ROLL / MOVE / OVER
    player: np.ndarray  # (B,) int8 seat to place, roll or move
    roll: np.ndarray  # (B,) int8 number being decided in MOVE (1, 2, 4, 5), else 0
    gallery: np.ndarray  # (B, N, S) int8 guests of seat p on gallery square s
    room: np.ndarray  # (B, R) int8 seat of the guest in room q, -1 empty
    stairs: np.ndarray  # (B, N, L+1) int8 guests of seat p on stair place l: l=0 highest value
    #                       (landing 10 / step +10) ... l=L-1 lowest; l=L the wine cellar
    supply: np.ndarray  # (B, N) int8 guests of seat p waiting to be placed
    hugo: np.ndarray  # (B,) int16 Hugo's track: 0..T-1 the stairs (midnight_party landing 10..3;
    #                    hidden_castle cellar door, step +10..+3), T+s gallery square s
    clock: np.ndarray  # (B,) int8 hidden_castle clock 0=23:45 1=24:00 2=1:00 ... 5=4:00 6=5:00
    spooky: np.ndarray  # (B, N) int32 spooky points
    round: np.ndarray  # (B,) int8 current round, from 1
    rounds_done: np.ndarray  # (B,) int8 rounds finished (round_end events so far)
    rolls: np.ndarray  # (B,) int32 rolls made so far (max_turns counts these)
    queue: np.ndarray  # (B, N*G) int8 seats in placing order (set-up or re-placement)
    queue_pos: np.ndarray  # (B,) int16 next entry of `queue`
    queue_len: np.ndarray  # (B,) int16 entries in `queue`
    first_roller: np.ndarray  # (B,) int8 seat that rolls first once placement is done
    truncated: np.ndarray  # (B,) bool game stopped at max_turns
    rng: np.ndarray  # (B,) uint64 dice stream (splitmix64 state) of each game
    legal: np.ndarray  # (B, A) int8 legal choices of `player` (all 0 in ROLL and OVER)

    @property
    def batch_size(self) -> int:
        return self.phase.shape[0]

    @property
    def num_players(self) -> int:
        return self.gallery.shape[1]

    @property
    def done(self) -> np.ndarray:
        return self.phase == OVER

    def copy(self) -> GameState:
        return GameState(*(a.copy() for a in self))

    def take(self, index) -> GameState:
        """The games at ``index`` (an int, a slice or an index array) as a new batch (copied)."""
        if isinstance(index, (int, np.integer)):
            index = slice(int(index), int(index) + 1)
        return GameState(*(np.array(a[index]) for a in self))

    def put(self, index, other: GameState) -> None:
        """Write the games of ``other`` into positions ``index`` of this batch."""
        for mine, theirs in zip(self, other):
            mine[index] = theirs

    @staticmethod
    def concatenate(states: list[GameState]) -> GameState:
        return GameState(*(np.concatenate(parts) for parts in zip(*states)))

    def key(self, i: int = 0) -> bytes:
        """Bytes identifying game ``i``'s position (dice stream excluded): for tables and tests."""
        return b"".join(a[i].tobytes() for name, a in zip(self._fields, self) if name not in ("rng", "legal"))

    def equal(self, other: GameState) -> bool:
        return all(np.array_equal(a, b) for a, b in zip(self, other))


def empty_state(batch: int, num_players: int, num_squares: int, num_rooms: int, num_places: int,
                guests: int, num_actions: int) -> GameState:
    n = num_players
    return GameState(
        phase=np.zeros(batch, np.int8),
        player=np.zeros(batch, np.int8),
        roll=np.zeros(batch, np.int8),
        gallery=np.zeros((batch, n, num_squares), np.int8),
        room=np.full((batch, num_rooms), -1, np.int8),
        stairs=np.zeros((batch, n, num_places + 1), np.int8),
        supply=np.zeros((batch, n), np.int8),
        hugo=np.zeros(batch, np.int16),
        clock=np.zeros(batch, np.int8),
        spooky=np.zeros((batch, n), np.int32),
        round=np.ones(batch, np.int8),
        rounds_done=np.zeros(batch, np.int8),
        rolls=np.zeros(batch, np.int32),
        queue=np.zeros((batch, n * guests), np.int8),
        queue_pos=np.zeros(batch, np.int16),
        queue_len=np.zeros(batch, np.int16),
        first_roller=np.zeros(batch, np.int8),
        truncated=np.zeros(batch, np.bool_),
        rng=np.zeros(batch, np.uint64),
        legal=np.zeros((batch, num_actions), np.int8),
    )


# ---------------------------------------------------------------------------------------------
# checking a state that did not come from the engine


class StateError(ValueError):
    """A state no game of this engine reaches: a field of the wrong dtype or shape, a value out of
    range or fields that disagree. The message names the field, the game and what is allowed."""


def state_limits(rules) -> np.ndarray:
    """The numbers a state of ``rules`` (a :class:`~midnight_env.core.config.Rules`) is checked
    against, in the order of ``_LIMIT_NAMES``: for ``check_layout``, ``fits_checker`` and ``fault_message``."""
    return np.array([rules.num_players, rules.guests, rules.num_squares, rules.num_rooms, rules.num_places,
                     rules.hugo_stairs, int(rules.castle), rules.rounds, rules.max_turns, rules.num_actions,
                     CLOCK_END], np.int64)


_LIMIT_NAMES = ("players", "guests", "squares", "rooms", "places", "hugo_stairs", "castle", "rounds", "max_turns",
                "actions", "clock_end")
_DIMS = {"gallery": ("players", "squares"), "room": ("rooms",), "stairs": ("players", "places+1"),
         "supply": ("players",), "spooky": ("players",), "queue": ("players*guests",), "legal": ("actions",)}
_DIM_WORDS = {"players": "players", "squares": "gallery squares", "rooms": "rooms", "places+1": "stair places + 1",
              "players*guests": "players * guests", "actions": "actions"}
_TEMPLATE = empty_state(0, 1, 1, 1, 1, 1, 1)  # the dtype and dimensions of every field


def _limits_by_name(limits: np.ndarray) -> dict[str, int]:
    return dict(zip(_LIMIT_NAMES, (int(x) for x in limits)))


def check_layout(state, limits: np.ndarray) -> None:
    """StateError unless ``state`` is a GameState whose every field is a numpy array of the
    engine's dtype and of the shape of its batch (the game axis taken from ``state.phase``)."""
    if not isinstance(state, GameState):
        raise StateError(f"state must be a GameState (as Engine.new_games makes), got {type(state).__name__}")
    for name, a, like in zip(GameState._fields, state, _TEMPLATE):
        if not isinstance(a, np.ndarray):
            raise StateError(f"state.{name} is a {type(a).__name__}: allowed is a numpy array of {like.dtype}")
        if a.dtype != like.dtype:
            raise StateError(f"state.{name} has dtype {a.dtype}: allowed is {like.dtype}")
    lim = _limits_by_name(limits)
    sizes = {"players": lim["players"], "squares": lim["squares"], "rooms": lim["rooms"],
             "places+1": lim["places"] + 1, "players*guests": lim["players"] * lim["guests"],
             "actions": lim["actions"]}
    batch = state.phase.shape[0] if state.phase.ndim == 1 else "games"
    for name, a in zip(GameState._fields, state):
        want = (batch, *(sizes[d] for d in _DIMS.get(name, ())))
        if a.shape != want:
            dims = ", ".join(["games", *(_DIM_WORDS[d] for d in _DIMS.get(name, ()))])
            shown = str(want).replace("'", "")
            raise StateError(f"state.{name} has shape {a.shape}: allowed is {shown} ({dims})")


def check_writable(state: GameState) -> None:
    """StateError naming the first read-only field: the engine changes games in place."""
    for name, a in zip(GameState._fields, state):
        if not a.flags.writeable:
            raise StateError(f"state.{name} is read-only: the engine changes games in place (use state.copy())")


def kernel_fields(state: GameState) -> tuple:
    """The fields of ``state`` as writable contiguous arrays (copies where they are not), for
    kernels that only read them."""
    return tuple(a if a.flags.writeable and a.flags.c_contiguous else np.array(a) for a in state)


_IS_NUMBER = np.zeros(256, np.bool_)  # by roll + 128: the numbers a player moves by (1, 2, 4, 5)
_IS_NUMBER[[128 + x for x in NUMBERS]] = True


@njit(cache=True, inline="always")
def _shapes_fit(s, n, g, ns, nr, nl, na):
    """Whether every field of ``s`` has the shape of its batch (``check_layout`` in words)."""
    (phase, player, roll, gallery, room, stairs, supply, hugo, clock, spooky, rnd, rounds_done, rolls,
     queue, queue_pos, queue_len, first_roller, truncated, rng, legal) = s
    b = phase.shape[0]
    return (player.shape[0] == b and roll.shape[0] == b and gallery.shape == (b, n, ns) and room.shape == (b, nr)
            and stairs.shape == (b, n, nl + 1) and supply.shape == (b, n) and hugo.shape[0] == b
            and clock.shape[0] == b and spooky.shape == (b, n) and rnd.shape[0] == b and rounds_done.shape[0] == b
            and rolls.shape[0] == b and queue.shape == (b, n * g) and queue_pos.shape[0] == b
            and queue_len.shape[0] == b and first_roller.shape[0] == b and truncated.shape[0] == b
            and rng.shape[0] == b and legal.shape == (b, na))


@njit(cache=True, inline="always")
def _games_fit(s, lim, lo, hi):
    """Whether the compiled rules can play games ``lo..hi-1`` of ``s`` (a GameState as a tuple, of
    the right shapes) without an index out of range: seats, roll, Hugo, clock, rounds, rolls,
    placing order and rooms in range, no count below 0, at most ``players * guests`` guests on
    each game's gallery and stairs (a round end queues them all). The facts of ``_scan_faults``
    the kernels need, in branch-free passes (a game that does not fit has a fault there, which
    names it)."""
    (phase, player, roll, gallery, room, stairs, supply, hugo, clock, spooky, rnd, rounds_done, rolls,
     queue, queue_pos, queue_len, first_roller, truncated, rng, legal) = s
    n, g, ns, nr, nl, nt, castle, rounds, max_turns, clock_end = (
        lim[0], lim[1], lim[2], lim[3], lim[4], lim[5], lim[6], lim[7], lim[8], lim[10])
    nq = n * g
    low = 0  # or-ed values, each negative where a value is out of range
    for i in range(lo, hi):
        ph, r, c, qp, ql = phase[i], roll[i], clock[i], queue_pos[i], queue_len[i]
        low |= ph | (OVER - ph)
        low |= player[i] | (n - 1 - player[i]) | first_roller[i] | (n - 1 - first_roller[i])
        low |= -np.int64(not _IS_NUMBER[r + 128]) if ph == MOVE else r | -r
        low |= hugo[i] | (nt + ns - 1 - hugo[i])
        if castle:
            low |= c | (clock_end - c) | -np.int64(c == clock_end and ph != OVER)
        else:
            low |= c | -c
        low |= (rnd[i] - 1) | (rounds - rnd[i]) | rounds_done[i] | (rounds - rounds_done[i])
        low |= rolls[i] | (max_turns - rolls[i]) | -np.int64(truncated[i] and ph != OVER)
        low |= ql | (nq - ql) | qp | (ql - qp - np.int64(ph == PLACE))
    flat_queue = queue.reshape(-1)
    for x in range(lo * nq, hi * nq):
        low |= flat_queue[x] | (n - 1 - flat_queue[x])
    flat_room = room.reshape(-1)
    for x in range(lo * nr, hi * nr):
        low |= (flat_room[x] + 1) | (n - 1 - flat_room[x])
    if low < 0:
        return False
    b = phase.shape[0]
    flat_gallery = gallery.reshape((b, n * ns))
    flat_stairs = stairs.reshape((b, n * (nl + 1)))
    for i in range(lo, hi):
        if phase[i] == PLACE and queue[i, queue_pos[i]] != player[i]:
            return False
        total = 0
        for x in range(n * ns):
            low |= flat_gallery[i, x]
            total += flat_gallery[i, x]
        for x in range(n * (nl + 1)):
            low |= flat_stairs[i, x]
            total += flat_stairs[i, x]
        low |= nq - total
    return low >= 0


def _shapes_fit_all(s, lim):
    """``_shapes_fit`` for the compiled check of ``layout_checker``."""
    return _shapes_fit(s, lim[0], lim[1], lim[2], lim[3], lim[4], lim[9])


def _fits(s, lim):
    """Whether the compiled rules can play every game of ``s``: the shapes, and ``_games_fit``.
    The quick check of ``Engine.step`` (see ``Engine.check_state``)."""
    if not _shapes_fit(s, lim[0], lim[1], lim[2], lim[3], lim[4], lim[9]):
        return False
    return _games_fit(s, lim, 0, s[0].shape[0])


def _fits_threaded(s, lim, size):
    """``_fits`` in tasks of ``size`` games spread over threads (the batches the kernels thread)."""
    if not _shapes_fit(s, lim[0], lim[1], lim[2], lim[3], lim[4], lim[9]):
        return False
    b = s[0].shape[0]
    tasks = (b + size - 1) // size
    fit = np.empty(tasks, np.bool_)
    for c in prange(tasks):
        fit[c] = _games_fit(s, lim, c * size, min(b, (c + 1) * size))
    return fit.all()


# fault codes of ``_scan_faults``; ``fault_message`` words them
(F_SHAPE, F_PHASE, F_PLAYER, F_FIRST_ROLLER, F_ROLL_MOVE, F_ROLL_NONE, F_HUGO, F_CLOCK, F_NO_CLOCK, F_ROUND,
 F_ROUNDS_DONE, F_ROLLS, F_TRUNCATED, F_QUEUE_LEN, F_QUEUE_POS, F_QUEUE, F_PLACER, F_ROOM, F_GALLERY, F_STAIRS,
 F_SUPPLY, F_GUESTS, F_SPOOKY, F_QUEUE_SUPPLY) = range(1, 25)


def _scan_faults(s, lim, fault):
    """First game of the batch ``s`` (a GameState as a tuple) with a fault, or -1; ``fault``
    gets (code, j, k, value) of that game's first fault (j, k: indices inside the field). Every
    field but ``rng`` (any stream) and ``legal`` (see ``Engine.check_state``): what ``_fits``
    checks, and each player's own guest count, each count at most guests_per_player, in phase
    place the supply against the placing order, hidden_castle points never below 0."""
    (phase, player, roll, gallery, room, stairs, supply, hugo, clock, spooky, rnd, rounds_done, rolls,
     queue, queue_pos, queue_len, first_roller, truncated, rng, legal) = s
    n, g, ns, nr, nl, nt, castle, rounds, max_turns, na, clock_end = (
        lim[0], lim[1], lim[2], lim[3], lim[4], lim[5], lim[6], lim[7], lim[8], lim[9], lim[10])
    if not _shapes_fit(s, n, g, ns, nr, nl, na):
        fault[0] = F_SHAPE
        return 0
    nq = n * g
    for i in range(phase.shape[0]):
        code, j, k, value = 0, 0, 0, 0
        ph, p, qp, ql = phase[i], player[i], queue_pos[i], queue_len[i]
        if ph < PLACE or ph > OVER:
            code, value = F_PHASE, ph
        elif p < 0 or p >= n:
            code, value = F_PLAYER, p
        elif first_roller[i] < 0 or first_roller[i] >= n:
            code, value = F_FIRST_ROLLER, first_roller[i]
        elif ph == MOVE and not _IS_NUMBER[roll[i] + 128]:
            code, value = F_ROLL_MOVE, roll[i]
        elif ph != MOVE and roll[i] != 0:
            code, value = F_ROLL_NONE, roll[i]
        elif hugo[i] < 0 or hugo[i] >= nt + ns:
            code, value = F_HUGO, hugo[i]
        elif castle and (clock[i] < 0 or clock[i] > clock_end or (clock[i] == clock_end and ph != OVER)):
            code, value = F_CLOCK, clock[i]
        elif not castle and clock[i] != 0:
            code, value = F_NO_CLOCK, clock[i]
        elif rnd[i] < 1 or rnd[i] > rounds:
            code, value = F_ROUND, rnd[i]
        elif rounds_done[i] < 0 or rounds_done[i] > rounds:
            code, value = F_ROUNDS_DONE, rounds_done[i]
        elif rolls[i] < 0 or rolls[i] > max_turns:
            code, value = F_ROLLS, rolls[i]
        elif truncated[i] and ph != OVER:
            code, value = F_TRUNCATED, ph
        elif ql < 0 or ql > nq:
            code, value = F_QUEUE_LEN, ql
        elif qp < 0 or qp > ql or (ph == PLACE and qp == ql):
            code, value = F_QUEUE_POS, qp
        if code == 0:
            for m in range(nq):
                if queue[i, m] < 0 or queue[i, m] >= n:
                    code, j, value = F_QUEUE, m, queue[i, m]
                    break
        if code == 0 and ph == PLACE and queue[i, qp] != p:
            code, j, value = F_PLACER, qp, p
        if code == 0:
            for q in range(nr):
                if room[i, q] < -1 or room[i, q] >= n:
                    code, j, value = F_ROOM, q, room[i, q]
                    break
        for seat in range(n):
            if code != 0:
                break
            for sq in range(ns):
                if gallery[i, seat, sq] < 0 or gallery[i, seat, sq] > g:
                    code, j, k, value = F_GALLERY, seat, sq, gallery[i, seat, sq]
                    break
            if code == 0:
                for place in range(nl + 1):
                    if stairs[i, seat, place] < 0 or stairs[i, seat, place] > g:
                        code, j, k, value = F_STAIRS, seat, place, stairs[i, seat, place]
                        break
            if code == 0 and (supply[i, seat] < 0 or supply[i, seat] > g):
                code, j, value = F_SUPPLY, seat, supply[i, seat]
            if code == 0:
                total = supply[i, seat] + np.sum(gallery[i, seat]) + np.sum(stairs[i, seat])
                for q in range(nr):
                    if room[i, q] == seat:
                        total += 1
                if total > g or (total != g and ph != OVER):
                    code, j, value = F_GUESTS, seat, total
            if code == 0 and castle and spooky[i, seat] < 0:
                code, j, value = F_SPOOKY, seat, spooky[i, seat]
            if code == 0 and ph == PLACE:
                placing = 0
                for m in range(qp, ql):
                    if queue[i, m] == seat:
                        placing += 1
                if placing != supply[i, seat]:
                    code, j, k, value = F_QUEUE_SUPPLY, seat, placing, supply[i, seat]
        if code != 0:
            fault[0], fault[1], fault[2], fault[3] = code, j, k, value
            return i
    return -1


def _compiled(function, result: str, *more: str, parallel: bool = False):
    """``function(s, lim, *more)`` compiled for the engine's dtypes and contiguous arrays only: a
    field of another dtype or dimension, a read-only or a strided one, is a TypeError at the
    call, before any index is read. Compiled on first use: importing the package compiles nothing."""
    from numba import types
    from numba.np.numpy_support import from_dtype

    fields = types.Tuple(tuple(types.Array(from_dtype(a.dtype), a.ndim, "C") for a in _TEMPLATE))
    kinds = {"bool": types.boolean, "int": types.int64, "ints": types.int64[::1]}
    signature = kinds[result](fields, types.int64[::1], *(kinds[k] for k in more))
    return njit(signature, cache=True, parallel=parallel)(function)


@functools.cache
def layout_checker():
    """``_shapes_fit_all(fields, limits)`` compiled: whether a state is the engine's dtypes, shapes
    and writable contiguous arrays (TypeError or False where not), quicker than ``check_layout``."""
    return _compiled(_shapes_fit_all, "bool")


@functools.cache
def fits_checker():
    """``_fits(fields, limits)`` compiled."""
    return _compiled(_fits, "bool")


@functools.cache
def threaded_fits_checker():
    """``_fits_threaded(fields, limits, task_size)`` compiled."""
    return _compiled(_fits_threaded, "bool", "int", parallel=True)


@functools.cache
def fault_scanner():
    """``_scan_faults(fields, limits, fault)`` compiled."""
    return _compiled(_scan_faults, "int", "ints")


def fault_message(state: GameState, limits: np.ndarray) -> str | None:
    """The first fault of ``state`` in words (the field, the game and what is allowed), or None.
    Call ``check_layout`` first: this one takes every field to have the engine's dtype and shape."""
    fault = np.zeros(4, np.int64)
    i = int(fault_scanner()(kernel_fields(state), limits, fault))
    if i < 0:
        return None
    code, j, k, value = (int(x) for x in fault)
    lim = _limits_by_name(limits)
    n, g = lim["players"], lim["guests"]
    seats = f"seats 0..{n - 1}"
    phase = int(state.phase[i])
    if code == F_PHASE:
        return f"state.phase[{i}] is {value}: allowed are 0..3 ({', '.join(PHASE_NAMES)})"
    if code == F_PLAYER:
        return f"state.player[{i}] is {value}: allowed are {seats}"
    if code == F_FIRST_ROLLER:
        return f"state.first_roller[{i}] is {value}: allowed are {seats}"
    if code == F_ROLL_MOVE:
        return f"state.roll[{i}] is {value}: allowed are {', '.join(map(str, NUMBERS))} in phase move"
    if code == F_ROLL_NONE:
        return f"state.roll[{i}] is {value}: allowed is 0 in phase {PHASE_NAMES[phase]} (only phase move has a roll)"
    if code == F_HUGO:
        stairs, squares = lim["hugo_stairs"], lim["squares"]
        return (f"state.hugo[{i}] is {value}: allowed are 0..{stairs + squares - 1} (Hugo's track: {stairs} places "
                f"before the gallery, then gallery squares 0..{squares - 1})")
    if code == F_CLOCK:
        end = lim["clock_end"]
        return f"state.clock[{i}] is {value}: allowed are 0..{end - 1}, and {end} (5:00) once the game is over"
    if code == F_NO_CLOCK:
        return f"state.clock[{i}] is {value}: allowed is 0 (midnight_party has no clock)"
    if code == F_ROUND:
        return f"state.round[{i}] is {value}: allowed are 1..{lim['rounds']} (rounds)"
    if code == F_ROUNDS_DONE:
        return f"state.rounds_done[{i}] is {value}: allowed are 0..{lim['rounds']} (rounds)"
    if code == F_ROLLS:
        return f"state.rolls[{i}] is {value}: allowed are 0..{lim['max_turns']} (max_turns)"
    if code == F_TRUNCATED:
        return f"state.truncated[{i}] is True in phase {PHASE_NAMES[phase]}: allowed only once the game is over"
    if code == F_QUEUE_LEN:
        return f"state.queue_len[{i}] is {value}: allowed are 0..{n * g} (players * guests)"
    if code == F_QUEUE_POS:
        length = int(state.queue_len[i])
        top = length - 1 if phase == PLACE else length
        return (f"state.queue_pos[{i}] is {value}: allowed are 0..{top} in phase {PHASE_NAMES[phase]} "
                f"(state.queue_len[{i}] is {length})")
    if code == F_QUEUE:
        return f"state.queue[{i}, {j}] is {value}: allowed are {seats}"
    if code == F_PLACER:
        return (f"state.player[{i}] is {value}: allowed is {int(state.queue[i, j])}, the seat the placing order "
                f"names next (state.queue[{i}, {j}])")
    if code == F_ROOM:
        return f"state.room[{i}, {j}] is {value}: allowed are {seats}, or -1 for an empty room"
    if code in (F_GALLERY, F_STAIRS):
        field = "gallery" if code == F_GALLERY else "stairs"
        return f"state.{field}[{i}, {j}, {k}] is {value}: allowed are 0..{g} guests (guests_per_player)"
    if code == F_SUPPLY:
        return f"state.supply[{i}, {j}] is {value}: allowed are 0..{g} guests (guests_per_player)"
    if code == F_GUESTS:
        allowed = f"at most {g}" if phase == OVER else f"{g}"
        return (f"game {i}: player {j} has {value} guests on the gallery, in rooms, on the stairs and in supply: "
                f"allowed are {allowed} (guests_per_player)")
    if code == F_SPOOKY:
        return f"state.spooky[{i}, {j}] is {value}: allowed are 0 and up (hidden_castle points are never below 0)"
    if code == F_QUEUE_SUPPLY:
        return (f"state.supply[{i}, {j}] is {value}: allowed is {k}, the guests of player {j} the placing order "
                f"still places (state.queue[{i}, queue_pos:queue_len])")
    return f"the fields of state do not have the engine's shapes (fault {code} in game {i})"
