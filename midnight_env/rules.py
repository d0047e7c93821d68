"""The rules of RULES.md as numba-compiled functions over a :class:`GameState` batch.

Pure rules, no bookkeeping of environments: each function takes the state ``s`` (arrays with a
leading game axis), the batch's :class:`~midnight_env.config.Rules` ``R`` and a game index ``i``.
``step_batch`` is the one entry point: it applies a decision or a die face to every game that
has one, optionally rolls on (from each game's own dice stream) until the next decision, and
leaves the legal-choice mask of the new decision in ``s.legal``.

Section numbers in comments refer to RULES.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from midnight_env.state import HUGO, MOVE, OVER, PLACE, ROLL

GREEN, RED = 2, 1
CASTLE_POINTS_LIMIT = 46
CLOCK_END = 6
_DIE = np.array([1, 2, 4, 5, HUGO, HUGO], dtype=np.int8)

# splitmix64 constants (uint64 throughout: mixing with int64 would promote to float)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _mix64(z):
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def seed_streams(seeds, out):
    """Dice stream of a game seeded ``seeds[i]``: depends on the seed alone, not on the batch."""
    for i in range(seeds.shape[0]):
        out[i] = _mix64(np.uint64(seeds[i]) ^ np.uint64(0x6D69646E69676874))  # "midnight"


@njit(cache=True, inline="always")
def next_random(rng, i):
    """Next 64 random bits of stream ``rng[i]`` (splitmix64)."""
    rng[i] += _GOLDEN
    return _mix64(rng[i])


@njit(cache=True, inline="always")
def draw_face(rng, i):
    """A die face for game ``i``: 1, 2, 4, 5 or HUGO (two faces of six)."""
    z = next_random(rng, i) >> np.uint64(32)
    return _DIE[np.int64((z * np.uint64(6)) >> np.uint64(32))]


# ---------------------------------------------------------------------------------------------
# small queries


@njit(cache=True, inline="always")
def hugo_square(s, R, i):
    """Gallery square Hugo stands on, or -1 while he is on the stairs."""
    h = s.hugo[i] - R.hugo_stairs
    return h if h >= 0 else -1


@njit(cache=True, inline="always")
def hugo_speed(s, R, i):
    return R.clock_speed[s.clock[i]] if R.castle else R.speed


@njit(cache=True, inline="always")
def guests_on_gallery(s, R, i, p):
    n = 0
    for sq in range(R.num_squares):
        n += s.gallery[i, p, sq]
    return n


@njit(cache=True, inline="always")
def top_cellar_place(s, R, i, p):
    """hidden_castle: the player's highest-valued occupied step, or -1 (section 6)."""
    for place in range(R.num_places):
        if s.stairs[i, p, place] > 0:
            return place
    return -1


@njit(cache=True, inline="always")
def _book(s, R, i, p, points):
    s.spooky[i, p] += points
    if R.castle and s.spooky[i, p] < 0:  # hidden_castle: never below 0 (section 6)
        s.spooky[i, p] = 0


@njit(cache=True)
def _capture_place(s, R, i):
    """Stair place a captured group goes to (section 7): the free place with the highest value."""
    for place in range(R.num_places):
        free = True
        for p in range(R.num_players):
            if s.stairs[i, p, place] > 0:
                free = False
                break
        if free:
            return place
    return R.overflow_place


@njit(cache=True)
def _over_points_limit(s, R, i):
    """hidden_castle: has any player reached 46 spooky points (section 8)?"""
    if not R.castle:
        return False
    for p in range(R.num_players):
        if s.spooky[i, p] >= CASTLE_POINTS_LIMIT:
            return True
    return False


@njit(cache=True)
def _capture_square(s, R, i, sq):
    """Hugo stepped onto ``sq``: every guest there is captured as one group (sections 5, 7)."""
    total = 0
    for p in range(R.num_players):
        total += s.gallery[i, p, sq]
    if total == 0:
        return
    place = _capture_place(s, R, i)
    value = R.place_value[place]
    for p in range(R.num_players):
        c = s.gallery[i, p, sq]
        if c > 0:
            s.stairs[i, p, place] += c
            s.gallery[i, p, sq] = 0
            _book(s, R, i, p, c * value)


@njit(cache=True)
def _capture_walker(s, R, i, p):
    """A guest of ``p`` walked onto Hugo: a group of one (it has left its old place already)."""
    place = _capture_place(s, R, i)
    s.stairs[i, p, place] += 1
    _book(s, R, i, p, R.place_value[place])


# ---------------------------------------------------------------------------------------------
# legal choices (sections 3, 6)


@njit(cache=True)
def fill_place_mask(s, R, i, row):
    """Placement: every gallery square without a guest (Hugo does not matter)."""
    n = 0
    for sq in range(R.num_squares):
        free = True
        for p in range(R.num_players):
            if s.gallery[i, p, sq] > 0:
                free = False
                break
        if free:
            row[sq] = 1
            n += 1
    return n


@njit(cache=True)
def _mark_origin(s, R, i, p, r, origin, on_square, first, leaving, rooms_open, row):
    """Mark the moves of one origin. A gallery guest stands on ``on_square`` (first = -1);
    a room or cellar guest's first step goes to square ``first`` (on_square = -1)."""
    width = 1 + R.num_rooms
    base = R.num_squares + origin * width
    row[base] = 1  # the walk is always possible
    n = 1
    if not rooms_open:
        return n
    for q in range(R.num_rooms):
        if q == leaving:
            continue  # no re-entering the room just left
        d = R.door[q]
        if on_square >= 0:
            k = (d - on_square) % R.num_squares + 1  # on the door square: one step in
        else:
            k = (d - first) % R.num_squares + 2  # first step reaches `first`, one more to enter
        if k > r:
            continue
        occupant = s.room[i, q]
        if occupant < 0:
            if R.kind[q] == GREEN and k != r:
                continue  # green rooms need the exact roll
        elif not R.castle or k != r or occupant == p:
            continue  # occupied: hidden_castle expels another player's guest with the exact roll
        row[base + 1 + q] = 1
        n += 1
    return n


@njit(cache=True)
def fill_move_mask(s, R, i, p, r, row):
    """Moves of player ``p`` for the number ``r`` into ``row``; returns how many (0: void roll)."""
    rooms_open = s.hugo[i] >= R.hugo_stairs  # locked until Hugo has stepped onto square 0
    n = 0
    on_gallery = 0
    for sq in range(R.num_squares):
        if s.gallery[i, p, sq] > 0:
            on_gallery += s.gallery[i, p, sq]
            n += _mark_origin(s, R, i, p, r, sq, sq, -1, -1, rooms_open, row)
    if R.castle:
        for q in range(R.num_rooms):
            if s.room[i, q] == p:
                n += _mark_origin(s, R, i, p, r, R.num_squares + q, -1, R.door[q], q, rooms_open, row)
        if top_cellar_place(s, R, i, p) >= 0:
            n += _mark_origin(s, R, i, p, r, R.num_squares + R.num_rooms, -1, R.arrow, -1, rooms_open, row)
    elif on_gallery == 1 or (R.pass_always and on_gallery >= 1):
        row[R.num_actions - 1] = 1
        n += 1
    return n


@njit(cache=True)
def fill_mask(s, R, i):
    """Recompute ``s.legal[i]`` for the game's current phase."""
    row = s.legal[i]
    row[:] = 0
    if s.phase[i] == PLACE:
        fill_place_mask(s, R, i, row)
    elif s.phase[i] == MOVE:
        fill_move_mask(s, R, i, s.player[i], s.roll[i], row)


# ---------------------------------------------------------------------------------------------
# turn flow (sections 4, 5, 8)


@njit(cache=True)
def _enter_roll(s, R, i, p):
    """``p`` is to roll next, unless max_turns rolls have been made (section 8)."""
    s.roll[i] = 0
    s.player[i] = p
    if s.rolls[i] >= R.max_turns:
        s.truncated[i] = True
        s.phase[i] = OVER
    else:
        s.phase[i] = ROLL


@njit(cache=True)
def _next_seat(R, p):
    return (p + 1) % R.num_players


@njit(cache=True)
def _most_points_seat(s, R, i):
    best = 0
    for p in range(1, R.num_players):
        if s.spooky[i, p] > s.spooky[i, best]:
            best = p
    return best


@njit(cache=True)
def _round_over(s, R, i):
    """midnight_party: no guest on the gallery, or every room occupied (section 8)."""
    full = True
    for q in range(R.num_rooms):
        if s.room[i, q] < 0:
            full = False
            break
    if full:
        return True
    for p in range(R.num_players):
        if guests_on_gallery(s, R, i, p) > 0:
            return False
    return True


@njit(cache=True)
def _end_round(s, R, i):
    """midnight_party round end and the set-up of the next round (section 8)."""
    wine = R.num_places
    for p in range(R.num_players):  # left on the gallery: to the wine cellar
        c = guests_on_gallery(s, R, i, p)
        if c > 0:
            s.stairs[i, p, wine] += c
            _book(s, R, i, p, c * R.place_value[wine])
            s.gallery[i, p, :] = 0
    s.rounds_done[i] += 1
    if s.rounds_done[i] >= R.rounds:
        s.phase[i] = OVER
        return
    s.round[i] += 1
    for q in range(R.num_rooms):  # 1. guests in rooms to their door squares
        occupant = s.room[i, q]
        if occupant >= 0:
            s.gallery[i, occupant, R.door[q]] += 1
            s.room[i, q] = -1
    # 2. captured guests return: landing 10 first ... wine cellar last; within a group the owner
    #    with more points first (tie: lower seat), all of its guests one after another
    n = 0
    for place in range(R.num_places + 1):
        while True:
            owner = -1
            for p in range(R.num_players):
                if s.stairs[i, p, place] > 0 and (owner < 0 or s.spooky[i, p] > s.spooky[i, owner]):
                    owner = p
            if owner < 0:
                break
            for _ in range(s.stairs[i, owner, place]):
                s.queue[i, n] = owner
                n += 1
            s.supply[i, owner] += s.stairs[i, owner, place]
            s.stairs[i, owner, place] = 0
    s.queue_pos[i] = 0
    s.queue_len[i] = n
    s.hugo[i] = 0  # 3. Hugo back on the 10-landing: rooms lock
    s.first_roller[i] = _most_points_seat(s, R, i)  # 4. most points rolls first
    if n > 0:
        s.phase[i] = PLACE
        s.player[i] = s.queue[i, 0]
    else:
        _enter_roll(s, R, i, s.first_roller[i])


@njit(cache=True)
def _after_turn(s, R, i, p):
    """After a move, pass or Hugo move of player ``p``: round end check, then the next roller."""
    if not R.castle and _round_over(s, R, i):
        _end_round(s, R, i)
    else:
        _enter_roll(s, R, i, _next_seat(R, p))


@njit(cache=True)
def _move_hugo(s, R, i):
    """Hugo walks ``speed`` steps, capturing on every gallery square he steps onto (section 5).
    Returns False when the game ended during the move (hidden_castle clock or 46 points)."""
    steps = hugo_speed(s, R, i)
    last = R.hugo_stairs + R.num_squares - 1
    for _ in range(steps):
        if s.hugo[i] == last:
            s.hugo[i] = R.hugo_stairs  # 27 -> 0 round the ring
        else:
            s.hugo[i] += 1
        sq = s.hugo[i] - R.hugo_stairs
        if sq < 0:
            continue
        _capture_square(s, R, i, sq)
        if R.castle:
            if sq == R.arrow:  # captures first, then the clock moves
                s.clock[i] += 1
                if s.clock[i] >= CLOCK_END:
                    s.phase[i] = OVER
                    return False
            if _over_points_limit(s, R, i):
                s.phase[i] = OVER
                return False
    return True


@njit(cache=True)
def apply_roll(s, R, i, face):
    """The roller of game ``i`` rolled ``face`` (section 4)."""
    p = s.player[i]
    s.rolls[i] += 1
    if face == HUGO:
        if _move_hugo(s, R, i):
            _after_turn(s, R, i, p)
        return
    row = s.legal[i]
    row[:] = 0
    if fill_move_mask(s, R, i, p, face, row) > 0:
        s.phase[i] = MOVE
        s.roll[i] = face
    else:  # no legal move: the roll is void
        _enter_roll(s, R, i, _next_seat(R, p))


@njit(cache=True)
def apply_place(s, R, i, square):
    p = s.player[i]
    s.gallery[i, p, square] += 1
    s.supply[i, p] -= 1
    s.queue_pos[i] += 1
    if s.queue_pos[i] < s.queue_len[i]:
        s.player[i] = s.queue[i, s.queue_pos[i]]
    else:
        s.queue_len[i] = 0
        s.queue_pos[i] = 0
        _enter_roll(s, R, i, s.first_roller[i])


@njit(cache=True)
def apply_move(s, R, i, action):
    """Player to move makes move ``action`` (an index of the action layout) for its roll."""
    p = s.player[i]
    r = s.roll[i]
    if action == R.num_actions - 1:  # pass
        _after_turn(s, R, i, p)
        return
    width = 1 + R.num_rooms
    origin = (action - R.num_squares) // width
    dest = (action - R.num_squares) % width
    # leave the origin; `first` is the square a room or cellar guest steps onto first
    if origin < R.num_squares:
        s.gallery[i, p, origin] -= 1
        target = (origin + r) % R.num_squares
    elif origin < R.num_squares + R.num_rooms:
        s.room[i, origin - R.num_squares] = -1
        target = (R.door[origin - R.num_squares] + r - 1) % R.num_squares
    else:
        s.stairs[i, p, top_cellar_place(s, R, i, p)] -= 1
        target = (R.arrow + r - 1) % R.num_squares
    if dest == 0:  # walk: ending on Hugo's square is a capture at once
        if hugo_square(s, R, i) == target:
            _capture_walker(s, R, i, p)
        else:
            s.gallery[i, p, target] += 1
    else:
        q = dest - 1
        occupant = s.room[i, q]
        if occupant >= 0:  # hidden_castle: expelled onto the door square, never captured
            s.gallery[i, occupant, R.door[q]] += 1
        s.room[i, q] = p
        if R.kind[q] == RED:
            _book(s, R, i, p, 1)
        elif R.kind[q] == GREEN:
            _book(s, R, i, p, -3)
    s.roll[i] = 0
    if _over_points_limit(s, R, i):
        s.phase[i] = OVER
        return
    _after_turn(s, R, i, p)


@njit(cache=True, inline="always")
def _advance_game(s, R, i, action, face, auto_roll, faces_out):
    phase = s.phase[i]
    if phase == PLACE and action >= 0:
        apply_place(s, R, i, action)
    elif phase == MOVE and action >= 0:
        apply_move(s, R, i, action)
    elif phase == ROLL and face >= 0:
        apply_roll(s, R, i, face)
        faces_out[i] = face
    elif phase == ROLL and not auto_roll and face == -2:  # draw one roll from the game's stream
        f = draw_face(s.rng, i)
        apply_roll(s, R, i, f)
        faces_out[i] = f
    if auto_roll:
        while s.phase[i] == ROLL:
            apply_roll(s, R, i, draw_face(s.rng, i))
    if s.phase[i] != MOVE:  # MOVE masks were written by apply_roll
        fill_mask(s, R, i)


@njit(cache=True)
def step_serial(s, R, actions, faces, auto_roll, faces_out):
    for i in range(s.phase.shape[0]):
        _advance_game(s, R, i, actions[i], faces[i], auto_roll, faces_out)


@njit(cache=True, parallel=True)
def step_parallel(s, R, actions, faces, auto_roll, faces_out):
    for i in prange(s.phase.shape[0]):
        _advance_game(s, R, i, actions[i], faces[i], auto_roll, faces_out)


@njit(cache=True)
def random_legal_actions(legal, rng, out):
    """Uniform random legal choice per game from per-game streams ``rng`` (-1 where none)."""
    for i in range(legal.shape[0]):
        n = 0
        for a in range(legal.shape[1]):
            n += legal[i, a]
        if n == 0:
            out[i] = -1
            continue
        k = np.int64(((next_random(rng, i) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))
        for a in range(legal.shape[1]):
            if legal[i, a]:
                if k == 0:
                    out[i] = a
                    break
                k -= 1


@njit(cache=True)
def uniform_draws(rng, out):
    """One float in [0, 1) per stream."""
    for i in range(rng.shape[0]):
        out[i] = np.float64(next_random(rng, i) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def refresh_legal(s, R):
    """Recompute every game's legal mask (after a position was built or edited by hand)."""
    for i in range(s.phase.shape[0]):
        fill_mask(s, R, i)
