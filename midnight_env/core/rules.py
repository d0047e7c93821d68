"""The rules of RULES.md as numba-compiled functions over a :class:`GameState` batch.

Pure rules, no bookkeeping of environments. ``step_serial`` (``step_parallel``: the same on
threads) is the entry point: it applies a decision or a die face to every game that has one,
optionally rolls on (from each game's own dice stream) until the next decision, and leaves the
legal-choice mask of the new decision in ``s.legal``. ``refresh_legal`` recomputes the masks of
positions built or edited by hand.

The entry points take the state ``s`` and the batch's :class:`~midnight_env.core.config.Rules` ``R``
(as namedtuples or as plain tuples of their fields, which numba dispatches faster), and the
turn flow ``advance_games`` unpacks them once. The rule functions below it take only the state
arrays they read or change, the rules ``R`` and a game index ``i``. Handing the whole state down
instead costs more than the rules themselves: numba passes a tuple as all of its fields (some
200 machine words for a GameState) on every call. For the same reason the rule functions are
compiled without numba's reference counting (``_nrt=False``, see numba issue #2350), which
would otherwise add two atomic operations per array argument and call: they never allocate,
and every array they touch is held by the caller.

The rule functions take the board and player numbers from ``R`` (``R.num_squares``, not
``gallery.shape[2]``): ``midnight_env.core.specialize`` compiles a copy of this module with every
scalar ``R.<field>`` written in as a constant, for the VectorEnv's threaded step.

Section numbers in comments refer to RULES.md.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from midnight_env.core.board import GREEN, RED
from midnight_env.core.config import CASTLE_POINTS_LIMIT, CLOCK_END, Rules
from midnight_env.core.dice import HUGO, draw_face, stream_start
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL, GameState

# compile options of the rule functions: no reference counting (see the module docstring)
_RULE = dict(cache=True, _nrt=False)


# ---------------------------------------------------------------------------------------------
# small queries


@njit(**_RULE)
def _ring(sq, num_squares):
    """Square ``sq`` (-num_squares .. 2*num_squares-1) wrapped round the gallery ring; cheaper
    than ``%``, an integer division."""
    if sq >= num_squares:
        return sq - num_squares
    return sq + num_squares if sq < 0 else sq


@njit(**_RULE)
def hugo_square(hugo, R, i):
    """Gallery square Hugo stands on, or -1 while he is on the stairs."""
    h = hugo[i] - R.hugo_stairs
    return h if h >= 0 else -1


@njit(**_RULE)
def hugo_stair_place(hugo, R, i):
    """Stair place Hugo stands on (0 = the highest value), or -1 off them (cellar door, gallery)."""
    place = hugo[i] - (R.hugo_stairs - R.num_places)  # the cellar door, if any, comes first
    return place if 0 <= place < R.num_places else -1


@njit(**_RULE)
def rooms_open(hugo, R, i):
    """Rooms are locked until Hugo has stepped onto the gallery (5)."""
    return hugo[i] >= R.hugo_stairs


@njit(**_RULE)
def hugo_speed(clock, R, i):
    return R.clock_speed[clock[i]] if R.castle else R.speed


@njit(**_RULE)
def guests_on_gallery(gallery, R, i, p):
    n = 0
    for sq in range(R.num_squares):
        n += gallery[i, p, sq]
    return n


@njit(**_RULE)
def top_cellar_place(stairs, R, i, p):
    """hidden_castle: the player's highest-valued occupied step, or -1 (section 6)."""
    for place in range(R.num_places):
        if stairs[i, p, place] > 0:
            return place
    return -1


@njit(**_RULE)
def _book(spooky, R, i, p, points):
    spooky[i, p] += points
    if R.castle and spooky[i, p] < 0:  # hidden_castle: never below 0 (section 6)
        spooky[i, p] = 0


@njit(**_RULE)
def _capture_place(stairs, R, i):
    """Stair place a captured group goes to (section 7): the free place with the highest value."""
    for place in range(R.num_places):
        owners = 0
        for p in range(R.num_players):  # no early exit: branch-free is faster here
            owners += stairs[i, p, place] > 0
        if owners == 0:
            return place
    return R.overflow_place


@njit(**_RULE)
def _over_points_limit(spooky, R, i):
    """hidden_castle: has any player reached 46 spooky points (section 8)?"""
    if not R.castle:
        return False
    for p in range(R.num_players):
        if spooky[i, p] >= CASTLE_POINTS_LIMIT:
            return True
    return False


@njit(**_RULE)
def _guests_on_square(gallery, R, i, sq):
    n = 0
    for p in range(R.num_players):
        n += gallery[i, p, sq]
    return n


@njit(**_RULE)
def _capture_square(gallery, stairs, spooky, R, i, sq):
    """Hugo stepped onto ``sq`` with guests on it: they are captured as one group (sections 5, 7)."""
    place = _capture_place(stairs, R, i)
    value = R.place_value[place]
    for p in range(R.num_players):
        c = gallery[i, p, sq]
        if c > 0:
            stairs[i, p, place] += c
            gallery[i, p, sq] = 0
            _book(spooky, R, i, p, c * value)


@njit(**_RULE)
def _capture_walker(stairs, spooky, R, i, p):
    """A guest of ``p`` walked onto Hugo: a group of one (it has left its old place already)."""
    place = _capture_place(stairs, R, i)
    stairs[i, p, place] += 1
    _book(spooky, R, i, p, R.place_value[place])


# ---------------------------------------------------------------------------------------------
# legal choices (sections 3, 6)


@njit(**_RULE)
def fill_place_mask(gallery, legal, R, i):
    """Placement: every gallery square without a guest (Hugo does not matter)."""
    for sq in range(R.num_squares):
        legal[i, sq] = 1
    for p in range(R.num_players):  # branch-free, so that it compiles to vector code
        for sq in range(R.num_squares):
            legal[i, sq] &= gallery[i, p, sq] <= 0


# lowest set bit of a 64-bit word: de Bruijn multiplication and a table (numba has no ctz)
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array([0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43,
                            22, 45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44,
                            32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6], dtype=np.int64)


@njit(**_RULE)
def _lowest_bit(x):
    """Index of the lowest set bit of the nonzero uint64 ``x``."""
    return _DEBRUIJN_INDEX[np.int64(((x & (~x + np.uint64(1))) * _DEBRUIJN) >> np.uint64(58))]


@njit(**_RULE)
def _occupied_squares(gallery, R, i, p):
    """Bit s set where player ``p`` has a guest on gallery square s (no branches: vector code)."""
    bits = np.uint64(0)
    for sq in range(R.num_squares):
        bits |= np.uint64(gallery[i, p, sq] > 0) << np.uint64(sq)
    return bits


@njit(**_RULE)
def walk_start(num_squares, num_rooms, door, arrow, origin):
    """(square, leave) of a guest at ``origin`` (an origin of the action layout): the square its
    steps count from, and how many steps it takes to be on the next gallery square. A gallery
    guest counts from its square and its first step is onto the next one (leave 1); a room guest's
    first step is onto its door square, a cellar guest's onto the arrow square (leave 2). A walk of
    ``k`` steps then enters the room whose door is ``k - leave`` squares ahead of that square, and
    ends ``k - leave + 1`` squares ahead (section 6)."""
    if origin < num_squares:
        return origin, 1
    if origin < num_squares + num_rooms:
        return door[origin - num_squares], 2
    return arrow, 2


@njit(**_RULE)
def walk_target(num_squares, num_rooms, door, arrow, origin, r):
    """Gallery square a walk of ``r`` steps from ``origin`` ends on."""
    start, leave = walk_start(num_squares, num_rooms, door, arrow, origin)
    return _ring(start + r + 1 - leave, num_squares)


@njit(**_RULE)
def entry_steps(R, start, leave, q):
    """Steps a walk from ``start`` (see ``walk_start``) needs to enter room ``q``."""
    return (R.door[q] - start) % R.num_squares + leave


@njit(**_RULE)
def may_enter(room, R, i, p, q, k, r):
    """Whether a guest of ``p`` whose walk of ``k`` steps (k <= r) reaches room ``q`` may enter it
    with the number ``r`` (section 6): a free room, a green one only with the exact roll; an
    occupied one never, but in hidden_castle another player's guest is expelled by the exact roll."""
    occupant = room[i, q]
    if occupant < 0:
        return R.kind[q] != GREEN or k == r
    return R.castle and k == r and occupant != p


@njit(**_RULE)
def _moves_from(room, legal, R, i, p, r, origin, start, leave, leaving, rooms_open):
    """The moves of one origin (a walk, and rooms within ``r`` steps) into ``legal[i]``; returns
    how many. A walk of ``k`` steps from ``start`` enters the room whose door is ``k - leave``
    squares ahead (``walk_start``)."""
    base = R.num_squares + origin * (1 + R.num_rooms)
    legal[i, base] = 1  # the walk is always possible
    n = 1
    if not rooms_open:
        return n
    for k in range(leave, r + 1):
        q = R.room_at[_ring(start + k - leave, R.num_squares)]
        if q < 0 or q == leaving or not may_enter(room, R, i, p, q, k, r):
            continue
        legal[i, base + 1 + q] = 1
        n += 1
    return n


@njit(**_RULE)
def fill_move_mask(gallery, room, stairs, hugo, legal, R, i, p, r):
    """Moves of player ``p`` for the number ``r`` into ``legal[i]`` (cleared by the caller);
    returns how many (0: void roll).

    Origins are the player's gallery squares, then (hidden_castle) its rooms and its cellar. A
    gallery guest's walk of ``k`` steps enters a room whose door is ``k - 1`` squares ahead; a
    room or cellar guest's first step goes to its door square or the arrow square, so one
    step more is needed."""
    unlocked = rooms_open(hugo, R, i)
    n = 0
    on_gallery = 0
    occupied = _occupied_squares(gallery, R, i, p)
    while occupied:  # gallery origins, one per occupied square
        sq = _lowest_bit(occupied)
        occupied &= occupied - np.uint64(1)
        on_gallery += gallery[i, p, sq]
        n += _moves_from(room, legal, R, i, p, r, sq, sq, 1, -1, unlocked)  # on the door square: one step in
    if R.castle:
        for q in range(R.num_rooms):
            if room[i, q] == p:  # no re-entering the room just left
                n += _moves_from(room, legal, R, i, p, r, R.num_squares + q, R.door[q], 2, q, unlocked)
        if top_cellar_place(stairs, R, i, p) >= 0:
            n += _moves_from(room, legal, R, i, p, r, R.num_squares + R.num_rooms, R.arrow, 2, -1, unlocked)
    if not R.castle and (on_gallery == 1 or (R.pass_always and on_gallery >= 1)):
        legal[i, R.num_actions - 1] = 1
        n += 1
    return n


@njit(**_RULE)
def fill_mask(gallery, room, stairs, hugo, legal, phase, player, roll, R, i):
    """Recompute ``legal[i]`` for the game's current phase."""
    legal[i, :] = 0
    if phase[i] == PLACE:
        fill_place_mask(gallery, legal, R, i)
    elif phase[i] == MOVE:
        fill_move_mask(gallery, room, stairs, hugo, legal, R, i, player[i], roll[i])


# ---------------------------------------------------------------------------------------------
# turn flow (sections 4, 5, 8); ``advance_games`` below strings these together


@njit(**_RULE)
def _enter_roll(phase, player, roll, rolls, truncated, R, i, p):
    """``p`` is to roll next, unless max_turns rolls have been made (section 8)."""
    roll[i] = 0
    player[i] = p
    if rolls[i] >= R.max_turns:
        truncated[i] = True
        phase[i] = OVER
    else:
        phase[i] = ROLL


@njit(**_RULE)
def _next_seat(R, p):
    return p + 1 if p + 1 < R.num_players else 0


@njit(**_RULE)
def _most_points_seat(spooky, R, i):
    best = 0
    for p in range(1, R.num_players):
        if spooky[i, p] > spooky[i, best]:
            best = p
    return best


@njit(**_RULE)
def _round_over(gallery, room, R, i):
    """midnight_party: no guest on the gallery, or every room occupied (section 8)."""
    full = True
    for q in range(R.num_rooms):
        if room[i, q] < 0:
            full = False
            break
    if full:
        return True
    for p in range(R.num_players):
        for sq in range(R.num_squares):
            if gallery[i, p, sq] > 0:
                return False
    return True


@njit(**_RULE)
def _end_round(s, R, i):
    """midnight_party round end and the set-up of the next round (section 8). Once a round:
    this one takes the whole state."""
    wine = R.num_places
    for p in range(R.num_players):  # left on the gallery: to the wine cellar
        c = guests_on_gallery(s.gallery, R, i, p)
        if c > 0:
            s.stairs[i, p, wine] += c
            _book(s.spooky, R, i, p, c * R.place_value[wine])
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
    s.first_roller[i] = _most_points_seat(s.spooky, R, i)  # 4. most points rolls first
    if n > 0:
        s.phase[i] = PLACE
        s.player[i] = s.queue[i, 0]
    else:
        _enter_roll(s.phase, s.player, s.roll, s.rolls, s.truncated, R, i, s.first_roller[i])


@njit(**_RULE)
def _move_hugo(gallery, stairs, spooky, hugo, clock, R, i):
    """Hugo walks ``speed`` steps, capturing on every gallery square he steps onto (section 5).
    Returns False when the game ended during the move (hidden_castle clock or 46 points)."""
    steps = hugo_speed(clock, R, i)
    last = R.hugo_stairs + R.num_squares - 1
    for _ in range(steps):
        if hugo[i] == last:
            hugo[i] = R.hugo_stairs  # 27 -> 0 round the ring
        else:
            hugo[i] += 1
        sq = hugo[i] - R.hugo_stairs
        if sq < 0:
            continue
        if _guests_on_square(gallery, R, i, sq) > 0:
            _capture_square(gallery, stairs, spooky, R, i, sq)
        if R.castle:
            if sq == R.arrow:  # captures first, then the clock moves
                clock[i] += 1
                if clock[i] >= CLOCK_END:
                    return False
            if _over_points_limit(spooky, R, i):
                return False
    return True


@njit(**_RULE)
def apply_place(gallery, supply, queue, queue_pos, queue_len, player, i, square):
    """The placing player puts a guest on ``square``; returns True when that was the last
    placement of the queue (then the first roller rolls)."""
    p = player[i]
    gallery[i, p, square] += 1
    supply[i, p] -= 1
    queue_pos[i] += 1
    if queue_pos[i] < queue_len[i]:
        player[i] = queue[i, queue_pos[i]]
        return False
    queue_len[i] = 0
    queue_pos[i] = 0
    return True


@njit(**_RULE)
def apply_move(gallery, room, stairs, spooky, hugo, roll, R, i, p, action):
    """Player ``p`` makes move ``action`` (an index of the action layout) for its roll.
    Returns False when the move ended the game (hidden_castle: 46 points), else the turn is over."""
    if action == R.num_actions - 1:  # pass
        return True
    r = roll[i]
    width = 1 + R.num_rooms
    origin = (action - R.num_squares) // width
    dest = (action - R.num_squares) % width
    # leave the origin; `target` is the square the walk ends on
    target = walk_target(R.num_squares, R.num_rooms, R.door, R.arrow, origin, r)
    if origin < R.num_squares:
        gallery[i, p, origin] -= 1
    elif origin < R.num_squares + R.num_rooms:
        room[i, origin - R.num_squares] = -1
    else:
        stairs[i, p, top_cellar_place(stairs, R, i, p)] -= 1
    if dest == 0:  # walk: ending on Hugo's square is a capture at once
        if hugo_square(hugo, R, i) == target:
            _capture_walker(stairs, spooky, R, i, p)
        else:
            gallery[i, p, target] += 1
    else:
        q = dest - 1
        occupant = room[i, q]
        if occupant >= 0:  # hidden_castle: expelled onto the door square, never captured
            gallery[i, occupant, R.door[q]] += 1
        room[i, q] = p
        if R.kind[q] == RED:
            _book(spooky, R, i, p, 1)
        elif R.kind[q] == GREEN:
            _book(spooky, R, i, p, -3)
    roll[i] = 0
    return not _over_points_limit(spooky, R, i)


# ---------------------------------------------------------------------------------------------
# batch entry points


@njit(**_RULE)
def advance_games(s, R, lo, hi, actions, faces, auto_roll, faces_out):
    """Games ``lo..hi-1``: apply the decision ``actions[i]`` or, to a game at ROLL, the die face
    ``faces[i]`` (-1: none; -2: one roll from the game's stream when not ``auto_roll``); roll
    on when ``auto_roll``; leave the mask of each game's next decision in ``s.legal``."""
    (phase, player, roll, gallery, room, stairs, supply, hugo, clock, spooky, _round, _rounds_done, rolls,
     queue, queue_pos, queue_len, first_roller, truncated, rng, legal) = s
    for i in range(lo, hi):
        action = actions[i]
        face = -1  # a face to apply before rolling on
        turn_over = False  # a move or Hugo's move is done and the game goes on
        mask_done = False  # legal[i] holds the mask of the game's next decision
        if phase[i] == PLACE and action >= 0:
            if apply_place(gallery, supply, queue, queue_pos, queue_len, player, i, action):
                _enter_roll(phase, player, roll, rolls, truncated, R, i, first_roller[i])
            else:  # the next placer has the same free squares but this one
                legal[i, action] = 0
                mask_done = True
        elif phase[i] == MOVE and action >= 0:
            if apply_move(gallery, room, stairs, spooky, hugo, roll, R, i, player[i], action):
                turn_over = True
            else:
                phase[i] = OVER
        elif phase[i] == ROLL and faces[i] >= 0:
            face = faces[i]
            faces_out[i] = face
        elif phase[i] == ROLL and not auto_roll and faces[i] == -2:
            face = draw_face(rng, i)
            faces_out[i] = face
        while True:
            if turn_over:  # round end check, then the next roller (section 8)
                turn_over = False
                if not R.castle and _round_over(gallery, room, R, i):
                    _end_round(s, R, i)
                else:
                    _enter_roll(phase, player, roll, rolls, truncated, R, i, _next_seat(R, player[i]))
            if phase[i] != ROLL:
                break
            if face < 0:
                if not auto_roll:
                    break
                face = draw_face(rng, i)
            # the roller rolled `face` (section 4)
            rolls[i] += 1
            if face == HUGO:
                if _move_hugo(gallery, stairs, spooky, hugo, clock, R, i):
                    turn_over = True
                else:
                    phase[i] = OVER
            else:
                legal[i, :] = 0
                if fill_move_mask(gallery, room, stairs, hugo, legal, R, i, player[i], face) > 0:
                    phase[i] = MOVE
                    roll[i] = face
                    mask_done = True
                else:  # no legal move: the roll is void
                    _enter_roll(phase, player, roll, rolls, truncated, R, i, _next_seat(R, player[i]))
            face = -1
        if not mask_done and phase[i] != MOVE:  # (a game at MOVE without an action keeps its mask)
            legal[i, :] = 0
            if phase[i] == PLACE:
                fill_place_mask(gallery, legal, R, i)


@njit(cache=True)
def step_serial(s, R, actions, faces, auto_roll, faces_out):
    """Advance every game of the batch: see ``advance_games``."""
    actions = np.asarray(actions)  # (a list of actions works too)
    advance_games(GameState(*s), Rules(*R), 0, len(actions), actions, np.asarray(faces), auto_roll, faces_out)


@njit(cache=True, parallel=True)
def step_parallel(s, R, actions, faces, auto_roll, faces_out, size):
    """``step_serial`` with tasks of ``size`` games spread over threads."""
    s = GameState(*s)
    R = Rules(*R)
    actions = np.asarray(actions)
    faces = np.asarray(faces)
    b = len(actions)
    for c in prange((b + size - 1) // size):
        advance_games(s, R, c * size, min(b, (c + 1) * size), actions, faces, auto_roll, faces_out)


@njit(**_RULE)
def _refresh_games(s, R):
    for i in range(s.phase.shape[0]):
        fill_mask(s.gallery, s.room, s.stairs, s.hugo, s.legal, s.phase, s.player, s.roll, R, i)


@njit(cache=True)
def refresh_legal(s, R):
    """Recompute every game's legal mask (after a position was built or edited by hand)."""
    _refresh_games(GameState(*s), Rules(*R))


@njit(**_RULE)
def reset_game(s, R, i, seed, start_points):
    """Game ``i`` back at set-up (section 3), seeded ``seed``: seat 0 places first, then 1, 2, ..."""
    s.phase[i] = PLACE
    s.player[i] = 0
    s.roll[i] = 0
    s.gallery[i] = 0
    s.room[i] = -1
    s.stairs[i] = 0
    s.hugo[i] = 0
    s.clock[i] = 0
    s.round[i] = 1
    s.rounds_done[i] = 0
    s.rolls[i] = 0
    for p in range(R.num_players):
        s.supply[i, p] = R.guests
        s.spooky[i, p] = start_points
    for k in range(R.num_players * R.guests):
        s.queue[i, k] = k % R.num_players
    s.queue_pos[i] = 0
    s.queue_len[i] = R.num_players * R.guests
    s.first_roller[i] = 0
    s.truncated[i] = False
    s.rng[i] = stream_start(seed)
    s.legal[i, :] = 0
    s.legal[i, : R.num_squares] = 1  # an empty gallery: every square is free


@njit(cache=True)
def reset_games(s, R, games, seeds, start_points):
    """Games ``games[k]`` back at set-up with seeds ``seeds[k]``, in place (restarts without
    building a new batch)."""
    s = GameState(*s)
    R = Rules(*R)
    for k in range(games.shape[0]):
        reset_game(s, R, games[k], seeds[k], start_points)
