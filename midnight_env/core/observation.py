"""Observation encoding: the position of a game as a float32 vector seen by one seat.

Everything is relative to the observing seat ``v``: relative player ``j`` is seat ``(v + j) % N``,
so ``me`` (j = 0) comes first and the others follow clockwise (``opp1`` is the next seat to roll
after me). Counts of guests are divided by the guests per player G, spooky points by a per-variant
scale, so values lie in about [0, 1]. The layout, section by section (N players, S gallery squares,
R rooms, L stair places, T positions of Hugo's track before the gallery; see ``observation_names``
for the name of every index)::

    section     size            value
    gallery     N*S             guests of relative player j on gallery square s, / G
    supply      N               guests of j waiting to be placed, / G
    room        R*N             1 where room q holds a guest of relative player j (one-hot per room)
    stairs      N*(L+W)         guests of j on stair place l (landing 10 / step +10 first), / G;
                                W = 1 adds the wine cellar (midnight_party), 0 on hidden_castle
    hugo        T+S             one-hot: Hugo on his track (stairs positions, then gallery squares)
    rooms_open  1               1 once Hugo has stepped onto the gallery (rooms unlocked)
    clock       7               hidden_castle only: one-hot 23:45, 24:00, 1:00, 2:00, 3:00, 4:00, 5:00
    speed       1               Hugo's steps per move / 7
    spooky      N               spooky points of j / scale (scale: 5*G*rounds on midnight_party,
                                46 on hidden_castle; midnight_party totals may go below 0)
    round       1               midnight_party only: current round / rounds
    phase       2               one-hot: placing a guest, choosing a move (both 0 once the game is over)
    roll        4               one-hot: the number being decided, 1, 2, 4, 5 (0 while placing)
    to_move     N               one-hot: relative player who decides now (0 once the game is over)
    seat        N               one-hot: the observer's own seat number (seat 0 places first)

Sizes: ``midnight_party`` with 4 players D = 253, ``hidden_castle`` with 4 players D = 248.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from midnight_env.core.config import CASTLE_POINTS_LIMIT, CLOCK_TIMES, Rules
from midnight_env.core.dice import NUMBERS
from midnight_env.core.state import MOVE, OVER, PLACE, GameState
from midnight_env.infra import checks
from midnight_env.infra.threads import Site  # one rule for every kernel

MAX_SPEED = 7  # hidden_castle's fastest clock; scales the speed entry
ROLL_SLOT = np.zeros(max(NUMBERS) + 1, np.int64)  # roll 1, 2, 4, 5 -> its one-hot slot 0..3
ROLL_SLOT[list(NUMBERS)] = np.arange(len(NUMBERS))

# offsets vector indices (``ObservationLayout.offsets``)
_GALLERY, _SUPPLY, _ROOM, _STAIRS, _HUGO, _OPEN, _CLOCK, _SPEED, _SPOOKY, _ROUND, _PHASE, _ROLL, \
    _TO_MOVE, _SEAT, _STAIR_COLS, _SIZE = range(16)


@dataclass(frozen=True)
class ObservationLayout:
    """Where each section of the observation vector starts, its bounds and its index names."""

    sections: tuple[tuple[str, int, int], ...]  # (name, start, size)
    offsets: np.ndarray  # int64 starts in the order of the _GALLERY.. constants, then stair columns, size
    inv_guests: float  # 1 / G
    inv_points: float  # 1 / spooky scale
    points_scale: float
    low: np.ndarray  # (D,) float32 lowest value of each index
    high: np.ndarray  # (D,) float32 highest value of each index
    names: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.names)

    def section(self, name: str) -> slice:
        for sec, start, size in self.sections:
            if sec == name:
                return slice(start, start + size)
        raise KeyError(f"no observation section {name!r}: sections are {', '.join(s for s, _, _ in self.sections)}")


_LAYOUTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def relative_name(j: int) -> str:
    return "me" if j == 0 else f"opp{j}"


def _stair_place_names(board) -> list[str]:
    if board.stairs_kind == "landings":
        return [f"landing {v}" for v in board.stair_values]
    return [f"step +{v}" for v in board.stair_values]


def observation_layout(engine) -> ObservationLayout:
    """The layout of ``engine``'s observations (built once per engine)."""
    layout = _LAYOUTS.get(engine)
    if layout is None:
        layout = _build_layout(engine)
        _LAYOUTS[engine] = layout
    return layout


def _build_layout(engine) -> ObservationLayout:
    cfg, r = engine.config, engine.rules
    board = cfg.board
    n, s, q, g = r.num_players, r.num_squares, r.num_rooms, r.guests
    wine = 1 if board.overflow == "wine_cellar" else 0
    places = _stair_place_names(board) + (["wine cellar"] if wine else [])
    track = (["cellar door"] if board.hugo_start == "cellar_door" else []) + _stair_place_names(board)
    rel = [relative_name(j) for j in range(n)]

    if r.castle:
        points_scale = float(CASTLE_POINTS_LIMIT)
        # a booking that reaches 46 ends the game at once: at most 45 plus one capture of all
        # of a player's guests on the top step, or one red room
        low_pts, high_pts = 0.0, 45.0 + float(r.place_value.max()) * g
    else:
        points_scale = 5.0 * g * r.rounds
        greens = int((r.kind == 2).sum())
        reds = int((r.kind == 1).sum())
        # each room is entered at most once a round (guests never leave rooms on this variant)
        low_pts = -3.0 * greens * r.rounds
        high_pts = (float(r.place_value.max()) * g + reds) * r.rounds

    sections: list[tuple[str, list[str]]] = [
        ("gallery", [f"gallery[{rel[j]},g{sq}]" for j in range(n) for sq in range(s)]),
        ("supply", [f"supply[{rel[j]}]" for j in range(n)]),
        ("room", [f"room[r{k}]={rel[j]}" for k in range(q) for j in range(n)]),
        ("stairs", [f"stairs[{rel[j]},{place}]" for j in range(n) for place in places]),
        ("hugo", [f"hugo@{name}" for name in track] + [f"hugo@g{sq}" for sq in range(s)]),
        ("rooms_open", ["rooms_open"]),
        ("clock", [f"clock={t}" for t in CLOCK_TIMES] if r.castle else []),
        ("speed", ["speed"]),
        ("spooky", [f"spooky[{rel[j]}]" for j in range(n)]),
        ("round", [] if r.castle else ["round"]),
        ("phase", ["phase=place", "phase=move"]),
        ("roll", [f"roll={k}" for k in NUMBERS]),
        ("to_move", [f"to_move={rel[j]}" for j in range(n)]),
        ("seat", [f"seat={p}" for p in range(n)]),
    ]
    assert len(sections[4][1]) == r.hugo_stairs + s
    starts, names, table = [], [], []
    for name, entries in sections:
        starts.append(len(names))
        table.append((name, len(names), len(entries)))
        names.extend(entries)
    d = len(names)
    offsets = np.array(starts + [len(places), d], dtype=np.int64)
    low = np.zeros(d, np.float32)
    high = np.ones(d, np.float32)
    spooky = slice(starts[_SPOOKY], starts[_SPOOKY] + n)
    low[spooky] = np.float32(low_pts / points_scale)
    high[spooky] = np.float32(high_pts / points_scale)
    return ObservationLayout(
        sections=tuple(table), offsets=offsets, inv_guests=1.0 / g, inv_points=1.0 / points_scale,
        points_scale=points_scale, low=low, high=high, names=tuple(names))


@njit(cache=True, _nrt=False)
def _float32_scaling_exact(guests, inv_guests):
    """Whether float32(c) * float32(inv_guests) equals float32(c * inv_guests) for c = 0..guests."""
    g32 = np.float32(inv_guests)
    for c in range(guests + 1):
        if np.float32(c) * g32 != np.float32(c * inv_guests):
            return False
    return True


@njit(cache=True, _nrt=False)
def encode_rows(gallery, supply, room, stairs, spooky, hugo, clock, rnd, phase, roll, player, R, off, inv_guests,
                inv_points, games, seats, seat, out, lo, hi, exact32):
    """Rows ``lo..hi-1`` of ``out``: row k is game ``games[k]`` seen by seat ``seats[k]`` (the
    layout of ``ObservationLayout``). ``games=None``: row k is game k; ``seats=None``: every game
    seen by ``seat``, or by its deciding seat when ``seat`` is -1 (None is resolved when numba
    compiles, not per row).

    Every entry is written once: the counts and points directly, the one-hot sections cleared
    first. A count c is written as float32(c * inv_guests) with the product in float64; where
    float32 arithmetic gives the same for every count 0..G (``_float32_scaling_exact``: G = 4
    for one), the gallery and stair counts are scaled in float32, which vector code does twice as
    many of per instruction (the encoder's gain: BENCHMARKS.md). ``exact32`` is that test's answer
    where the caller keeps it (a game's handle, which encodes one row a call), -1 to work it out here.
    Compiled without reference counting (like the rules, see ``rules.py``): the per-row views cost
    nothing then.
    """
    n = R.num_players
    ns = R.num_squares
    cols = off[_STAIR_COLS]
    g = inv_guests
    g32 = np.float32(inv_guests)
    if exact32 < 0:
        exact32 = 1 if _float32_scaling_exact(R.guests, inv_guests) else 0
    width = out.shape[1]
    for k in range(lo, hi):
        i = k if games is None else games[k]
        if seats is not None:
            v = np.int64(seats[k])
        else:
            v = np.int64(player[i]) if seat < 0 else np.int64(seat)
        row = out[k]
        row[off[_ROOM]: off[_STAIRS]] = 0.0  # one-hot sections (rooms; Hugo to the end)
        row[off[_HUGO]: width] = 0.0
        for p in range(n):
            j = p - v  # relative player: me first, then clockwise
            if j < 0:
                j += n
            square_counts = gallery[i, p]
            place_counts = stairs[i, p]
            squares = row[off[_GALLERY] + j * ns: off[_GALLERY] + (j + 1) * ns]
            places = row[off[_STAIRS] + j * cols: off[_STAIRS] + (j + 1) * cols]
            if exact32:
                for sq in range(ns):
                    squares[sq] = np.float32(square_counts[sq]) * g32
                for place in range(cols):
                    places[place] = np.float32(place_counts[place]) * g32
            else:
                for sq in range(ns):
                    squares[sq] = square_counts[sq] * g
                for place in range(cols):
                    places[place] = place_counts[place] * g
            row[off[_SUPPLY] + j] = supply[i, p] * g
            row[off[_SPOOKY] + j] = spooky[i, p] * inv_points
        for q in range(R.num_rooms):
            occupant = np.int64(room[i, q])
            if occupant >= 0:
                j = occupant - v
                if j < 0:
                    j += n
                row[off[_ROOM] + q * n + j] = 1.0
        h = np.int64(hugo[i])
        row[off[_HUGO] + h] = 1.0
        row[off[_OPEN]] = np.float32(h >= R.hugo_stairs)
        if R.castle:
            c = np.int64(clock[i])
            row[off[_CLOCK] + c] = 1.0
            row[off[_SPEED]] = R.clock_speed[c] * (1.0 / MAX_SPEED)
        else:
            row[off[_SPEED]] = R.speed * (1.0 / MAX_SPEED)
            row[off[_ROUND]] = rnd[i] * (1.0 / R.rounds)
        ph = np.int64(phase[i])
        row[off[_PHASE]] = np.float32(ph == PLACE)
        row[off[_PHASE] + 1] = np.float32(ph == MOVE)
        r = np.int64(roll[i])  # 0 while placing: no entry
        if r > 0:
            row[off[_ROLL] + ROLL_SLOT[r]] = 1.0
        if ph != OVER:
            j = np.int64(player[i]) - v
            if j < 0:
                j += n
            row[off[_TO_MOVE] + j] = 1.0
        row[off[_SEAT] + v] = 1.0


@njit(cache=True, inline="always")
def encode_chunk(s, R, games, seats, seat, off, inv_guests, inv_points, out, lo, hi, exact32=-1):
    """``encode_rows`` for a ``GameState`` ``s``."""
    encode_rows(s.gallery, s.supply, s.room, s.stairs, s.spooky, s.hugo, s.clock, s.round, s.phase, s.roll,
                s.player, R, off, inv_guests, inv_points, games, seats, seat, out, lo, hi, exact32)


@njit(cache=True)
def encode_serial(s, R, games, seats, off, inv_guests, inv_points, out):
    encode_chunk(GameState(*s), Rules(*R), games, seats, -1, off, inv_guests, inv_points, out, 0, out.shape[0])


@njit(cache=True, parallel=True)
def encode_parallel(s, R, games, seats, off, inv_guests, inv_points, out, size):
    """``encode_serial`` in tasks of ``size`` rows spread over threads."""
    s = GameState(*s)
    R = Rules(*R)
    b = out.shape[0]
    for c in prange((b + size - 1) // size):
        encode_chunk(s, R, games, seats, -1, off, inv_guests, inv_points, out, c * size, min(b, (c + 1) * size))


@njit(cache=True)
def encode_deciding_serial(s, R, off, inv_guests, inv_points, out):
    """Every game of the batch seen by its deciding seat (``out`` is (B, D))."""
    encode_serial(s, R, None, None, off, inv_guests, inv_points, out)


@njit(cache=True)
def encode_deciding_parallel(s, R, off, inv_guests, inv_points, out, size):
    encode_parallel(s, R, None, None, off, inv_guests, inv_points, out, size)


_ENCODE = Site("observation.encode_deciding")  # serial or threaded, whichever is measured faster
_ENCODE_SOME = Site("observation.encode")


def encode_deciding(engine, state: GameState, out: np.ndarray) -> np.ndarray:
    """Every game of ``state`` seen by its deciding seat, written into ``out`` (B, D) float32."""
    lay = observation_layout(engine)
    args = (state, engine.rules, lay.offsets, lay.inv_guests, lay.inv_points, out)
    _ENCODE.run(state.batch_size, encode_deciding_serial, encode_deciding_parallel, *args)
    return out


def encode_observations(engine, state: GameState, games=None, seats=None, out: np.ndarray | None = None) -> np.ndarray:
    """(n, D) float32 observations of ``games`` (default: the whole batch) seen by ``seats``.

    ``seats`` is one seat for all games or one per game; by default each game's deciding player
    (``state.player``; the last one to move once a game is over).
    """
    lay = observation_layout(engine)
    b = state.batch_size
    games = np.arange(b, dtype=np.int64) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
    checks.integers("game index", games, 0, b - 1, allowed=f"0..{b - 1}")
    if seats is None:
        seats = state.player[games].astype(np.int64)
    else:
        seats = np.broadcast_to(np.asarray(seats, dtype=np.int64), games.shape)
        n = engine.num_players
        checks.integers("seat", seats, 0, n - 1, allowed=f"0..{n - 1}")
        seats = np.array(seats)  # writable: a read-only view (broadcast_to's) is another signature to compile
    if out is None:
        out = np.empty((games.shape[0], lay.size), np.float32)
    elif out.shape != (games.shape[0], lay.size) or out.dtype != np.float32:
        raise ValueError(f"out must be a float32 array of shape {(games.shape[0], lay.size)}, "
                         f"got {out.dtype} {out.shape}")
    args = (state, engine.rules, games, seats, lay.offsets, lay.inv_guests, lay.inv_points, out)
    _ENCODE_SOME.run(games.shape[0], encode_serial, encode_parallel, *args)
    return out


def observation_size(engine) -> int:
    """D, the length of ``engine``'s observation vector."""
    return observation_layout(engine).size


def observation_names(engine) -> list[str]:
    """The name of every observation index, e.g. ``gallery[me,g14]``, ``room[r3]=opp2``, ``hugo@landing 9``."""
    return list(observation_layout(engine).names)


def observation_bounds(engine) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 vectors bounding every index (for the observation space)."""
    lay = observation_layout(engine)
    return lay.low.copy(), lay.high.copy()


__all__ = ["encode_observations", "encode_deciding", "observation_size", "observation_names",
           "observation_bounds", "observation_layout", "ObservationLayout"]
