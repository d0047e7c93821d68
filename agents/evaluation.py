"""Position evaluation shared by the strong agents: every player's expected spooky points.

For each player the evaluation adds to the points already booked an expected cost per guest
still on the gallery:

- **capture risk** from the die's real probabilities: a Hugo face comes with probability 1/3
  per roll, and Hugo's reach after ``k`` moves is simulated exactly (his speed, in
  ``hidden_castle`` the clock speeding him up at every pass of the arrow square and the game
  ending at 5:00). The number of rolls before the guest's owner rolls again follows from the
  seats, so P(captured before the owner can act) is a binomial tail. A capture costs the value
  of the stair place the next captured group would take (10, 9, ... , the wine cellar's 2, or
  the castle's +10 when every step is taken);
- a **residual cost** for still being on the gallery after that (Hugo will come round again,
  the rooms fill up), smaller for guests far ahead of Hugo and, in ``hidden_castle``, smaller
  as the clock runs out;
- the **opportunity** of the owner's next roll: for each number 1, 2, 4, 5 the best room entry
  any of the owner's guests could make (exact rolls for green rooms, red +1, green -3, and in
  ``hidden_castle`` expelling another player's guest or a room or cellar guest re-entering a
  green room). One move per roll, so only the best entry per number counts.

A position's value for player ``p`` is the mean of the other players' expected points minus
``p``'s own (fewest points win). Terminal positions use the booked points alone.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numba import njit

from midnight_env.core.board import GREEN, RED
from midnight_env.core.config import CASTLE_POINTS_LIMIT, CLOCK_END
from midnight_env.core.dice import DIE_FACES, HUGO_PROBABILITY, NUMBER_PROBABILITY, NUMBERS
from midnight_env.core.rules import entry_steps, hugo_square, may_enter, walk_start, walk_target
from midnight_env.core.state import MOVE, OVER, PLACE
from midnight_env.infra import checks

MAX_CYCLES = 6  # turn cycles the capture risk looks ahead, at most
_MAX_ROLLS = (MAX_CYCLES + 1) * 8 + 1  # binomial table size: rolls looked ahead
_NUMBERS = np.array(NUMBERS, dtype=np.int64)
_FACES = float(len(DIE_FACES))


def _tail_table(m_max: int) -> np.ndarray:
    """tail[m, k] = P(at least k Hugo faces in m rolls), P(Hugo) = 1/3 per roll (``dice``)."""
    from math import comb

    tail = np.zeros((m_max + 1, m_max + 2))
    for m in range(m_max + 1):
        pmf = [comb(m, k) * HUGO_PROBABILITY ** k * NUMBER_PROBABILITY ** (m - k) for k in range(m + 1)]
        for k in range(m + 1):
            tail[m, k] = sum(pmf[k:])
    return tail


TAIL = _tail_table(_MAX_ROLLS)


class Weights(NamedTuple):
    """Weights of the evaluation; points are spooky points. The kernels take it as it is and read
    it by name (:func:`kernel_weights`: every weight a float, so that one compiled kernel serves)."""

    residual: float = 1.0  # expected cost of a guest still on the gallery after the next cycles
    scarce: float = 1.0  # classic: ... plus this share of the wine cellar's points times the share
    #                      of guests outside that will find no free room (rooms are raced for)
    residual_far: float = 0.5  # share of the residual saved by standing far ahead of Hugo
    next_cycle: float = 0.85  # weight of the capture risk one cycle later, then its powers (the
    #                          owner may have moved the guest to safety by then)
    entry_rolls: float = 1.5  # classic: rolls per room entry once the rooms are open (round length)
    opportunity: float = 0.8  # weight of the owner's best room entry on its next roll
    locked: float = 0.5  # opportunity weight while the rooms are locked (Hugo on the stairs)
    supply: float = 3.0  # expected cost of a guest still to be placed
    expel: float = 1.0  # hidden_castle: worth of expelling another player's guest
    others: float = 1.0  # weight of the other players' expected points (0: own points only)
    end_rolls: float = 2.0  # hidden_castle: rolls per point the worst player lacks to 46 (game end)
    forced: float = 1.0  # hidden_castle: weight of the cost of being forced out of a room


@lru_cache(maxsize=64)
def kernel_weights(weights: Weights) -> Weights:
    """``weights`` with every weight a float (``Weights(residual=1)`` holds an int)."""
    return Weights(*(float(w) for w in weights))


DEFAULT_WEIGHTS = Weights()


def weights_from(options: dict) -> Weights:
    """The weights an agent's options set (the defaults for the rest); TypeError names an option
    that is not a weight (as Python does for an unknown keyword), ValueError a value that is not a
    number."""
    names = list(Weights._fields)
    for key, value in options.items():
        if key not in names:
            raise TypeError(f"unknown option {key!r}: allowed are the agent's own and the evaluation "
                             f"weights {', '.join(names)}")
        checks.number(f"option {key}=", value)
    return Weights(**{k: float(v) for k, v in options.items()}) if options else DEFAULT_WEIGHTS


@njit(cache=True)
def hugo_distance(s, R, i, square):
    """Steps Hugo needs to step onto ``square`` (a full lap when he stands on it)."""
    h = s.hugo[i]
    if h < R.hugo_stairs:
        return R.hugo_stairs - h + square
    d = (square - (h - R.hugo_stairs)) % R.num_squares
    return R.num_squares if d == 0 else d


@njit(cache=True)
def hugo_reach(s, R, i, reach):
    """reach[k]: steps Hugo makes in his next k moves (the castle clock speeds him up and stops
    him at 5:00). Returns the steps left until the castle clock ends the game (large: classic)."""
    pos = np.int64(s.hugo[i])
    clock = np.int64(s.clock[i])
    last = R.hugo_stairs + R.num_squares - 1
    steps = 0
    ended = False
    reach[0] = 0
    for k in range(1, reach.shape[0]):
        if not ended:
            speed = R.clock_speed[clock] if R.castle else R.speed
            for _ in range(speed):
                pos = R.hugo_stairs if pos == last else pos + 1
                steps += 1
                if R.castle and pos - R.hugo_stairs == R.arrow:
                    clock += 1
                    if clock >= CLOCK_END:
                        ended = True
                        break
        reach[k] = steps
    if not R.castle:
        return 1 << 20
    arrivals = CLOCK_END - np.int64(s.clock[i])
    return hugo_distance(s, R, i, R.arrow) + R.num_squares * (arrivals - 1)


@njit(cache=True)
def capture_risk(reach, tail, rolls, distance):
    """P(Hugo steps onto a square ``distance`` steps ahead within ``rolls`` rolls)."""
    k = 0
    while k <= rolls and reach[k] < distance:
        k += 1
    return tail[rolls, k] if k <= rolls else 0.0


@njit(cache=True)
def next_capture_value(s, R, i):
    """Points the next captured group would book (the free stair place with the highest value)."""
    for place in range(R.num_places):
        free = True
        for p in range(R.num_players):
            if s.stairs[i, p, place] > 0:
                free = False
                break
        if free:
            return R.place_value[place]
    return R.place_value[R.overflow_place]


@njit(cache=True)
def room_points(R, q, points_now):
    if R.kind[q] == RED:
        return 1.0
    if R.kind[q] == GREEN:
        return -3.0 if (not R.castle or points_now >= 3) else -float(points_now)
    return 0.0


@njit(cache=True)
def expected_points(s, R, i, w, tail, reach, guest_cost, out):
    """out[q]: player q's expected final spooky points (booked points plus expected costs); ``w``:
    the :class:`Weights` (:func:`kernel_weights`)."""
    n = R.num_players
    S = R.num_squares
    for q in range(n):
        out[q] = s.spooky[i, q]
    if s.phase[i] == OVER:
        return
    steps_left = hugo_reach(s, R, i, reach)
    roller = s.first_roller[i] if s.phase[i] == PLACE else s.player[i]
    capture = next_capture_value(s, R, i)
    rooms_open = s.hugo[i] >= R.hugo_stairs
    horizon = 1.0
    if R.castle:  # the residual shrinks as the clock runs out (two laps or less left)
        horizon = min(1.0, steps_left / (2.0 * S))
    residual, scarce, far, next_cycle = w.residual, w.scarce, w.residual_far, w.next_cycle
    entry_rolls, opportunity, locked, supply, expel = w.entry_rolls, w.opportunity, w.locked, w.supply, w.expel
    # the race for rooms: guests still outside (or to be placed) against free rooms
    outside = 0
    for q in range(n):
        outside += s.supply[i, q]
        for sq in range(S):
            outside += s.gallery[i, q, sq]
    free_rooms = 0
    for room in range(R.num_rooms):
        if s.room[i, room] < 0:
            free_rooms += 1
    shortage = max(0.0, 1.0 - free_rooms / outside) if outside > 0 else 0.0
    if R.castle:
        # Hugo's reach itself stops at the clock's end; the game mostly ends earlier, when
        # someone reaches 46 points, about ``end_rolls`` rolls per point the leader still lacks
        most = 0
        for q in range(n):
            most = max(most, s.spooky[i, q])
        rolls_left = min(MAX_CYCLES * n, np.int64(w.end_rolls * max(1, CASTLE_POINTS_LIMIT - most)))
        horizon = min(horizon, rolls_left / (MAX_CYCLES * n))
    else:
        # classic: the round ends once the rooms are full (or nobody is outside); until then
        # the rooms stay locked while Hugo climbs (one Hugo move every 3 rolls on average),
        # then they fill at about ``entry_rolls`` rolls a room; a guest left outside then pays
        # the wine cellar, not a capture
        climb = max(0, R.hugo_stairs - np.int64(s.hugo[i]))
        rolls_left = 3 * ((climb + R.speed - 1) // R.speed) + np.int64(entry_rolls * min(free_rooms, outside))
        residual = residual + scarce * shortage * R.place_value[R.num_places]
    for q in range(n):
        # rolls until q decides again: the others' rolls, then q's own (a Hugo face there too)
        m1 = (q - roller) % n + 1
        if s.phase[i] == MOVE and q == s.player[i]:
            m1 = 0  # q is deciding right now
        last = min(m1 + rolls_left, reach.shape[0] - 1)
        total = 0.0
        for sq in range(S):
            c = s.gallery[i, q, sq]
            if c == 0:
                guest_cost[sq] = 0.0
                continue
            d = hugo_distance(s, R, i, sq)
            # capture before the owner acts, then in each later cycle (to the round's or the
            # game's expected end) with a falling weight: the owner may save it by then
            before = capture_risk(reach, tail, min(m1, last), d)
            risk = before
            weight = 1.0
            m = m1
            while m < last:
                m = min(m + n, last)
                weight *= next_cycle
                later = capture_risk(reach, tail, m, d)
                risk += weight * (later - before)
                before = later
            rest = residual * horizon * (1.0 - far * min(d, S) / S)
            cost = capture * risk + (1.0 - before) * rest
            guest_cost[sq] = cost
            total += c * cost
        total += supply * s.supply[i, q]
        # the owner's next number: the best room entry of any of its guests
        gain_sum = 0.0
        for f in range(4):
            r = _NUMBERS[f]
            best = 0.0
            for origin in range(S + R.num_rooms + 1):
                if origin < S:
                    if s.gallery[i, q, origin] == 0:
                        continue
                    base = guest_cost[origin]
                elif not R.castle:
                    break
                elif origin < S + R.num_rooms:
                    if s.room[i, origin - S] != q:
                        continue
                    base = 0.0
                else:
                    has = False
                    for place in range(R.num_places + 1):
                        if s.stairs[i, q, place] > 0:
                            has = True
                    if not has:
                        continue
                    base = 0.0
                first, leave = walk_start(S, R.num_rooms, R.door, R.arrow, origin)
                for room in range(R.num_rooms):
                    if origin >= S and origin - S == room:
                        continue
                    k = entry_steps(R, first, leave, room)
                    if k > r or not may_enter(s.room, R, i, q, room, k, r):
                        continue
                    bonus = expel if s.room[i, room] >= 0 else 0.0  # hidden_castle: expelling
                    gain = base - room_points(R, room, s.spooky[i, q]) + bonus
                    if gain > best:
                        best = gain
            gain_sum += best / _FACES  # each number is one face of the die
        total -= opportunity * (1.0 if rooms_open else locked) * gain_sum
        if R.castle and w.forced != 0.0:
            total += w.forced * forced_exit_cost(s, R, i, q, reach, tail, capture, expel)
        out[q] += total


@njit(cache=True)
def forced_exit_cost(s, R, i, q, reach, tail, capture, expel):
    """hidden_castle: a player with no guest on the gallery must take one out of a room or the
    cellar at its next number: the expected cost of the best such move (another room is free)."""
    S = R.num_squares
    for sq in range(S):
        if s.gallery[i, q, sq] > 0:
            return 0.0
    in_cellar = False
    for place in range(R.num_places + 1):
        if s.stairs[i, q, place] > 0:
            in_cellar = True
    hugo_sq = hugo_square(s.hugo, R, i)
    expected = 0.0
    for f in range(4):
        r = _NUMBERS[f]
        best = 1e9
        for origin in range(R.num_rooms + 1):
            if origin < R.num_rooms:
                if s.room[i, origin] != q:
                    continue
            elif not in_cellar:
                continue
            first, leave = walk_start(S, R.num_rooms, R.door, R.arrow, S + origin)
            for room in range(R.num_rooms):
                if room == origin:
                    continue
                k = entry_steps(R, first, leave, room)
                if k > r or not may_enter(s.room, R, i, q, room, k, r):
                    continue
                cost = room_points(R, room, s.spooky[i, q])
                if s.room[i, room] >= 0:
                    cost -= expel
                best = min(best, cost)
            target = walk_target(S, R.num_rooms, R.door, R.arrow, S + origin, r)
            if target == hugo_sq:
                walk = capture
            else:
                walk = capture * capture_risk(reach, tail, R.num_players, hugo_distance(s, R, i, target))
            best = min(best, walk)
        if best < 1e9:
            expected += best / _FACES
    return expected


@njit(cache=True)
def evaluate_states(s, R, who, w, tail, out):
    """out[j]: value of game j for player who[j]: the others' mean expected points minus its own."""
    n = R.num_players
    reach = np.zeros((MAX_CYCLES + 1) * n + 2, np.int64)
    guest_cost = np.zeros(R.num_squares)
    points = np.zeros(n)
    for j in range(s.phase.shape[0]):
        expected_points(s, R, j, w, tail, reach, guest_cost, points)
        p = who[j]
        if n == 1:
            out[j] = -points[0]
        else:
            others = 0.0
            for q in range(n):
                if q != p:
                    others += points[q]
            out[j] = w.others * others / (n - 1) - points[p]


@njit(cache=True)
def expected_points_batch(s, R, w, tail, out):
    """out[j, q]: expected final points of every player in every game (for tests and analysis)."""
    n = R.num_players
    reach = np.zeros((MAX_CYCLES + 1) * n + 2, np.int64)
    guest_cost = np.zeros(R.num_squares)
    for j in range(s.phase.shape[0]):
        expected_points(s, R, j, w, tail, reach, guest_cost, out[j])


def evaluate(engine, state, who, weights: Weights = DEFAULT_WEIGHTS) -> np.ndarray:
    """Value of every game of ``state`` for seat ``who[j]`` (higher is better)."""
    who = np.broadcast_to(np.asarray(who, dtype=np.int64), (state.batch_size,)).copy()
    out = np.empty(state.batch_size, np.float64)
    evaluate_states(state, engine.rules, who, kernel_weights(weights), TAIL, out)
    return out


def expected_points_of(engine, state, weights: Weights = DEFAULT_WEIGHTS) -> np.ndarray:
    out = np.zeros((state.batch_size, engine.num_players), np.float64)
    expected_points_batch(state, engine.rules, kernel_weights(weights), TAIL, out)
    return out
