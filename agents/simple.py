"""Uniform random play, and simple rules a family would play by, one agent each.

Every legal choice (placement or move) gets a score from a short rule; the best score wins and
ties go to the game's own random draw. The rules read the position only (no copies, no search),
so these agents are as fast as the engine.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from midnight_agents.afterstates import pick_best
from midnight_agents.evaluation import hugo_distance
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.core.board import GREEN, RED
from midnight_env.core.dice import NUMBERS
from midnight_env.core.rules import entry_steps, hugo_speed, hugo_square, walk_target
from midnight_env.core.state import PLACE

RUNNER, COWARD, GREEN_HUNTER, PLACER = 0, 1, 2, 3
SAFE = 1000  # distance standing for "Hugo cannot get there" (a room, the cellar)
_IS_NUMBER = np.zeros(max(NUMBERS) + 1, np.bool_)  # _IS_NUMBER[k]: k is a number of the die
_IS_NUMBER[list(NUMBERS)] = True


@njit(cache=True)
def _next_door(R, square, only_free, only_green, s, i):
    """Steps from ``square`` to the next door square ahead (0 when on one), or 99."""
    best = 99
    for q in range(R.num_rooms):
        if only_free and s.room[i, q] >= 0:
            continue
        if only_green and R.kind[q] != GREEN:
            continue
        d = (R.door[q] - square) % R.num_squares
        if d < best:
            best = d
    return best


@njit(cache=True)
def _green_chances(R, square, s, i):
    """Free green rooms an exact 1, 2, 4 or 5 from ``square`` would enter."""
    n = 0
    for q in range(R.num_rooms):
        if R.kind[q] != GREEN or s.room[i, q] >= 0:
            continue
        k = entry_steps(R, square, 1, q)
        if k < _IS_NUMBER.shape[0] and _IS_NUMBER[k]:
            n += 1
    return n


@njit(cache=True)
def _place_score(s, R, i, rule, square):
    if rule == RUNNER:  # on or just before a door: in at the first roll once the rooms open
        return -float(_next_door(R, square, False, False, s, i))
    if rule == COWARD:  # as far along Hugo's way as possible
        return float(hugo_distance(s, R, i, square))
    if rule == GREEN_HUNTER:  # an exact 1, 2, 4 or 5 away from a green room
        return 10.0 * _green_chances(R, square, s, i) - 0.1 * _next_door(R, square, False, True, s, i)
    # PLACER: far from the arrow square (Hugo comes last) and on or one step before a door
    near = 1.0 if _next_door(R, square, False, False, s, i) <= 1 else 0.0
    return square / R.num_squares + near


@njit(cache=True)
def _move_score(s, R, i, rule, action):
    S = R.num_squares
    if rule == PLACER:
        return 0.0  # moves at random: this agent isolates what placement is worth
    r = s.roll[i]
    hugo_sq = hugo_square(s.hugo, R, i)  # -1 while Hugo is on the stairs
    speed = hugo_speed(s.clock, R, i)
    if action == R.num_actions - 1:  # pass (midnight_party): stand still with the last guest
        if rule == COWARD:
            for sq in range(S):
                if s.gallery[i, s.player[i], sq] > 0:
                    d = hugo_distance(s, R, i, sq)
                    return SAFE * (1.0 if d > speed else 0.0) + (S + 10 - d) + 0.01 * d - 0.5
        return -500.0
    origin, dest = divmod(action - S, 1 + R.num_rooms)
    walk_to = walk_target(S, R.num_rooms, R.door, R.arrow, origin, r)
    d_origin = hugo_distance(s, R, i, origin) if origin < S else SAFE
    from_room = S <= origin < S + R.num_rooms
    if dest > 0:
        q = dest - 1
        steps = entry_steps(R, origin, 1, q) if origin < S else 0
        if rule == RUNNER:
            return 1000.0 - steps - (500.0 if from_room else 0.0)
        if rule == COWARD:
            return SAFE + (S + 10 - min(d_origin, S + 10)) + 0.01 * SAFE
        # GREEN_HUNTER
        if R.kind[q] == GREEN:
            return 1000.0
        return -1000.0 if R.kind[q] == RED else 300.0 - (500.0 if from_room else 0.0)
    # a walk
    if rule == RUNNER:
        return 100.0 - _next_door(R, walk_to, True, False, s, i) - (500.0 if from_room else 0.0)
    if rule == COWARD:
        if walk_to == hugo_sq:
            return -10000.0  # walking onto Hugo is a capture
        d_dest = hugo_distance(s, R, i, walk_to)
        safe = 1.0 if d_dest > speed else 0.0
        return SAFE * safe + (S + 10 - min(d_origin, S + 10)) + 0.01 * d_dest
    # GREEN_HUNTER: land where an exact roll enters a free green room
    score = 100.0 * _green_chances(R, walk_to, s, i) - 0.1 * _next_door(R, walk_to, True, True, s, i)
    return score - (500.0 if from_room else 0.0)


@njit(cache=True)
def score_choices(s, R, games, actions, rule, out):
    for j in range(games.shape[0]):
        i = games[j]
        if s.phase[i] == PLACE:
            out[j] = _place_score(s, R, i, rule, actions[j])
        else:
            out[j] = _move_score(s, R, i, rule, actions[j])


class RandomAgent(Agent):
    name = "random"
    description = "uniform over the legal choices (placements and moves alike); the floor every agent must beat"
    plays = "every set-up"

    def act(self, decisions: Decisions) -> np.ndarray:
        return decisions.random_choice()


class RuleAgent(Agent):
    rule = RUNNER
    plays = "every set-up"

    def act(self, decisions: Decisions) -> np.ndarray:
        legal = decisions.legal
        parent, action = np.nonzero(legal)
        start = np.zeros(len(decisions) + 1, np.int64)
        np.cumsum(legal.sum(axis=1, dtype=np.int64), out=start[1:])
        scores = np.empty(len(action), np.float64)
        games = decisions.games[parent].astype(np.int64)
        score_choices(decisions.state, decisions.engine.rules, games, action.astype(np.int64), self.rule, scores)
        return action[pick_best(scores, start, decisions.uniforms())].astype(np.int64)


class RunnerAgent(RuleAgent):
    name = "runner"
    rule = RUNNER
    description = ("runs for the nearest room: enters a room whenever it can (the closest first), otherwise "
                   "walks the guest that lands nearest in front of a free room; places on or just before "
                   "doors; ignores Hugo")


class CowardAgent(RuleAgent):
    name = "coward"
    rule = COWARD
    description = ("keeps away from Hugo: moves the guest Hugo is closest to, never ends within one Hugo "
                   "move when it can avoid it (rooms are safest, any kind); places as far along Hugo's way "
                   "as it can")


class GreenHunterAgent(RuleAgent):
    name = "green_hunter"
    rule = GREEN_HUNTER
    description = ("hunts the green rooms: takes every exact roll into a green room (-3), never enters a red "
                   "one when anything else is legal, otherwise walks to a square an exact 1, 2, 4 or 5 from a "
                   "free green room; places guests there too")


class PlacerAgent(RuleAgent):
    name = "placer"
    rule = PLACER
    description = ("smart placement only: places far along Hugo's way from the arrow square, on or just "
                   "before a door, then moves at random; measures what placement alone is worth")
