"""What optimal play looks like: placement values and the decisions optimal play takes.

:func:`placement_values` values every gallery square for the next guest to place (the first,
or a later one after given placements), as the expected final result of placing there and
playing optimally on. :func:`optimal_visits` is how often each state of a solution's graph is
reached per game when every seat plays optimally (:func:`policy_visits`: when they play given
policies) (so that statistics count positions as often
as games meet them, not once each); :func:`decision_table` describes every move decision of
the graph (the roll, Hugo's distance, the clock, what is legal and what the optimal choice is)
and :func:`shares` sums it up: how often optimal play enters a red room when it may, passes
when it may, and so on, by any feature.

Hugo's distance to a guest on gallery square ``s`` is the steps he needs to step onto it: from
the stairs his steps to the arrow square and on, on the gallery ``(s - his square) mod S``.
``hugo_moves`` divides it by his speed (midnight_party: fixed; hidden_castle: the clock's),
rounding up: 1 means his next Hugo face captures the guest where it stands.

(This is play on a solution's whole graph; ``midnight_env.analysis`` is something else: each
decision of one recorded game judged against a solution or an evaluator.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from midnight_env.core.board import GREEN, PLAIN, RED
from midnight_env.core.state import MOVE, PLACE, ROLL
from midnight_env.solve.solution import Solution, booked_points, seat_modes
from midnight_env.solve.values import FACE_PROBABILITY, MAXIMISE, TIE_TOLERANCE

# what a move decision's choice does (``decision_table``'s ``best_kind``): by index
CHOICE_KINDS = ("pass", "walk", "plain room", "red room", "green room")
PASS, WALK, INTO_PLAIN, INTO_RED, INTO_GREEN = range(5)
ORIGIN_KINDS = ("gallery", "room", "cellar")  # where the chosen move starts (hidden_castle: all three)
NO_GUEST = 99  # hugo distance where the player has no guest on the gallery


def placement_values(solution: Solution, placed=()) -> np.ndarray:
    """(S,) the expected final result (``Solution.final_values`` units: solo, seat 0's spooky
    points; two players, seat 0's win chance or point difference) of placing the next guest on
    each gallery square and playing optimally on; nan where the square is taken. ``placed``:
    the gallery squares of the guests placed before, in placement order (empty: the first
    guest of the set-up)."""
    engine = solution.engine
    state = engine.new_games([0])
    S = engine.rules.num_squares
    for square in placed:
        if state.phase[0] != PLACE or not 0 <= int(square) < S or not state.legal[0, int(square)]:
            raise ValueError(f"placed square {square!r} is not a free gallery square at placement "
                             f"(squares 0..{S - 1}, each once, while guests remain)")
        engine.apply_action(state, np.array([int(square)]))
    if state.phase[0] != PLACE:
        raise ValueError(f"after placements {list(placed)} no guest is left to place")
    values = solution.action_values(state)[0, :S]
    return values + booked_points(state, solution.objective)[0]


def best_placements(solution: Solution) -> list[int]:
    """The gallery squares optimal play places the set-up's guests on, in order."""
    engine = solution.engine
    state = engine.new_games([0])
    squares = []
    while state.phase[0] == PLACE:
        action = solution.best_actions(state)
        squares.append(int(action[0]))
        engine.apply_action(state, action)
    return squares


@njit(cache=True)
def _visits(start, odds, edge_start, edge_to, tolerance, max_sweeps):
    """Expected visits of every state per game, each transition taken with probability
    ``odds[e]`` (0: never) (Gauss-Seidel over the incoming transitions, in state order:
    breadth-first from the start, so one sweep carries nearly all of it and the loops settle in
    a few more)."""
    n = edge_start.shape[0] - 1
    into = np.zeros(n + 1, np.int64)
    for x in range(n):
        for e in range(edge_start[x], edge_start[x + 1]):
            if odds[e] > 0.0:
                into[edge_to[e] + 1] += 1
    for x in range(n):
        into[x + 1] += into[x]
    source = np.empty(into[n], np.int32)
    taken = np.empty(into[n], np.float64)
    fill = into[:n].copy()
    for x in range(n):
        for e in range(edge_start[x], edge_start[x + 1]):
            if odds[e] > 0.0:
                k = fill[edge_to[e]]
                source[k] = x
                taken[k] = odds[e]
                fill[edge_to[e]] += 1
    visits = np.zeros(n, np.float64)
    for sweep in range(max_sweeps):
        moved = 0.0
        for x in range(n):
            v = 1.0 if x == start else 0.0
            for k in range(into[x], into[x + 1]):
                v += taken[k] * visits[source[k]]
            moved = max(moved, abs(v - visits[x]))
            visits[x] = v
        if moved <= tolerance:
            return visits, sweep + 1
    return visits, -1


def policy_visits(solution: Solution, weight: np.ndarray, tolerance: float = 1e-13) -> np.ndarray:
    """(n,) how often each state of the solution's graph is reached in one game when every
    decision takes its transitions with the probabilities ``weight`` ((E,), as
    ``midnight_env.solve.policy.Policy.weight``, the seats' policies summed) and every roll its
    die's odds: 1 at the start, the chance of reaching it for a state met at most once, more for
    one a game can come back to (a pass, a void roll). Needs the solver's graph (the solution
    :func:`~midnight_env.solve.solve` returned)."""
    g = solution.graph
    if g is None:
        raise ValueError("visits need the solver's graph: use the solution solve() returned, not a loaded one")
    source = np.repeat(np.arange(g.num_states), np.diff(g.edge_start))
    odds = np.where((g.phases == ROLL)[source], FACE_PROBABILITY[np.clip(g.edge_label, 0, 5)], weight)
    visits, sweeps = _visits(solution.start, odds, g.edge_start, g.edge_to, tolerance, 1_000_000)
    if sweeps < 0:
        raise ValueError("the visits did not settle: a policy that never ends the game?")
    return visits


def optimal_visits(solution: Solution, tolerance: float = 1e-13) -> np.ndarray:
    """:func:`policy_visits` when every seat plays the solution's optimal actions."""
    g = solution.graph
    if g is None:
        raise ValueError("optimal_visits needs the solver's graph: use the solution solve() returned, not a "
                         "loaded one")
    source = np.repeat(np.arange(g.num_states), np.diff(g.edge_start))
    return policy_visits(solution, (g.edge_label == solution.best[source]).astype(np.float64), tolerance)


@njit(cache=True)
def _optimal_kinds(ids, maximise, V, edge_start, edge_to, edge_label, edge_reward, kind, tolerance, out):
    """out[k]: a bit ``1 << kind`` for every kind of choice among the optimal ones of state
    ``ids[k]`` (those within ``tolerance`` of the best)."""
    for k in range(ids.shape[0]):
        x = ids[k]
        lo, hi = edge_start[x], edge_start[x + 1]
        best = edge_reward[lo] + V[edge_to[lo]]
        for e in range(lo + 1, hi):
            q = edge_reward[e] + V[edge_to[e]]
            if (maximise[k] and q > best) or (not maximise[k] and q < best):
                best = q
        bits = 0
        for e in range(lo, hi):
            if abs(edge_reward[e] + V[edge_to[e]] - best) <= tolerance:
                bits |= 1 << kind[edge_label[e]]
        out[k] = bits


@dataclass
class DecisionTable:
    """Every move decision of a graph (one row each), described by plain arrays."""

    state: np.ndarray  # state number in the solution
    weight: np.ndarray  # visits per game under optimal play (1 each where not asked for)
    player: np.ndarray  # seat deciding
    roll: np.ndarray  # the number rolled: 1, 2, 4, 5
    clock: np.ndarray  # hidden_castle clock index (0 = 23:45 .. 5 = 4:00); 0 in midnight_party
    hugo_on_stairs: np.ndarray  # bool: rooms are locked
    hugo_steps: np.ndarray  # Hugo's steps to the player's nearest guest on the gallery (NO_GUEST: none)
    hugo_moves: np.ndarray  # ... in Hugo moves (steps / speed, rounded up)
    on_gallery: np.ndarray  # the player's guests on the gallery
    in_rooms: np.ndarray  # the player's guests in rooms
    best_kind: np.ndarray  # what the solution's optimal choice does: an index of CHOICE_KINDS
    optimal_kinds: np.ndarray  # bit 1 << k for every kind k among the optimal choices (ties included:
    #                             the solution picks the lowest action index, a walk before a room
    #                             before a pass; ``optimal(table, kind)`` asks whether a kind is optimal)
    best_origin: np.ndarray  # where it starts: an index of ORIGIN_KINDS (-1 for a pass)
    best_moves: np.ndarray  # Hugo moves to the guest it moves (its square, its room's door, the arrow
    #                          square for the cellar; NO_GUEST for a pass)
    can_pass: np.ndarray  # bool
    can_red: np.ndarray  # bool: a guest may enter a red room
    can_room: np.ndarray  # bool: a guest on the gallery may enter some room
    can_leave: np.ndarray  # bool: a guest may leave a room (hidden_castle)
    can_walk: np.ndarray  # bool: a guest on the gallery may walk
    red_moves: np.ndarray  # Hugo moves to the nearest guest that may enter a red room (as best_moves; NO_GUEST: none)
    room_moves: np.ndarray  # Hugo moves to the nearest gallery guest that may enter a room

    def __len__(self) -> int:
        return len(self.state)


def _action_kinds(engine) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per action index: what it does (CHOICE_KINDS, -1 for a placement), where it starts
    (ORIGIN_KINDS) and the gallery square Hugo must reach to threaten the guest it moves: its
    square, its room's door, the arrow square for the cellar (-1 for a pass)."""
    r = engine.rules
    S, R, A = r.num_squares, r.num_rooms, r.num_actions
    kind = np.full(A, -1, np.int64)
    origin_kind = np.full(A, -1, np.int64)
    origin_square = np.full(A, -1, np.int64)
    room_kind = {PLAIN: INTO_PLAIN, RED: INTO_RED, GREEN: INTO_GREEN}
    for a in range(S, A - 1):
        origin, dest = divmod(a - S, 1 + R)
        kind[a] = WALK if dest == 0 else room_kind[int(r.kind[dest - 1])]
        origin_kind[a] = 0 if origin < S else (1 if origin < S + R else 2)
        origin_square[a] = origin if origin < S else (int(r.door[origin - S]) if origin < S + R else r.arrow)
    kind[A - 1] = PASS
    return kind, origin_kind, origin_square


def decision_table(solution: Solution, weights: np.ndarray | None = None, seat: int | None = None,
                   only_reached: bool = True, batch: int = 16_384) -> DecisionTable:
    """Every move decision (MOVE state) of the solution (of ``seat`` only, if given), weighted
    by ``weights`` (default: :func:`optimal_visits`; with ``only_reached`` the decisions optimal
    play never meets are left out)."""
    engine = solution.engine
    r = engine.rules
    S, T = r.num_squares, r.hugo_stairs
    if weights is None:
        weights = optimal_visits(solution)
    phases = solution.phases
    pick = phases == MOVE
    if seat is not None:
        pick &= solution.players == seat
    if only_reached:
        pick &= weights > 0
    ids = np.flatnonzero(pick)
    g = solution.graph
    if g is None:
        raise ValueError("decision_table needs the solver's graph: use the solution solve() returned")
    kind, origin_kind, origin_square = _action_kinds(engine)
    seat_maximise = np.array([m == MAXIMISE for m in seat_modes(engine.num_players, solution.objective)])
    is_red = kind == INTO_RED
    is_room = (kind >= INTO_PLAIN) & (origin_kind == 0)
    is_walk = (kind == WALK) & (origin_kind == 0)
    is_leave = origin_kind == 1
    parts = []
    for lo in range(0, len(ids), batch):
        chunk = ids[lo:lo + batch]
        st = solution.positions(chunk)
        b = np.arange(len(chunk))
        player = st.player.astype(np.int64)
        hugo = st.hugo.astype(np.int64)
        speed = np.full(len(chunk), r.speed) if not r.castle else r.clock_speed[np.minimum(st.clock, 5)]
        squares = np.arange(S)
        steps = np.where(hugo[:, None] < T, T - hugo[:, None] + squares[None, :],
                         (squares[None, :] - (hugo[:, None] - T)) % S)  # (B, S) Hugo's steps to each square
        moves = -(-steps // speed[:, None])
        own = st.gallery[b, player] > 0  # (B, S)
        legal = st.legal.astype(bool)
        best = solution.best[chunk].astype(np.int64)

        def nearest(actions_mask, legal=legal, moves=moves):
            """Hugo moves to the nearest origin square of the legal actions of ``actions_mask``."""
            m = legal & actions_mask[None, :] & (origin_square >= 0)[None, :]
            at = np.where(m, moves[:, np.maximum(origin_square, 0)], NO_GUEST)
            return at.min(axis=1)

        best_square = origin_square[best]
        bits = np.empty(len(chunk), np.int64)
        _optimal_kinds(chunk, seat_maximise[player], solution.values, g.edge_start, g.edge_to, g.edge_label,
                       g.edge_reward, np.maximum(kind, 0), TIE_TOLERANCE, bits)
        parts.append(dict(
            state=chunk, weight=weights[chunk], player=player, roll=st.roll.astype(np.int64),
            clock=st.clock.astype(np.int64) if r.castle else np.zeros(len(chunk), np.int64),
            hugo_on_stairs=hugo < T,
            hugo_steps=np.where(own, steps, NO_GUEST).min(axis=1),
            hugo_moves=np.where(own, moves, NO_GUEST).min(axis=1),
            on_gallery=st.gallery[b, player].sum(axis=1).astype(np.int64),
            in_rooms=(st.room == player[:, None]).sum(axis=1).astype(np.int64),
            best_kind=kind[best], optimal_kinds=bits, best_origin=origin_kind[best],
            best_moves=np.where(best_square >= 0, moves[b, np.maximum(best_square, 0)], NO_GUEST),
            can_pass=legal[:, -1], can_red=(legal & is_red).any(axis=1), can_room=(legal & is_room).any(axis=1),
            can_leave=(legal & is_leave).any(axis=1), can_walk=(legal & is_walk).any(axis=1),
            red_moves=nearest(is_red), room_moves=nearest(is_room)))
    if not parts:
        empty = {f: np.zeros(0, np.int64) for f in DecisionTable.__dataclass_fields__}
        return DecisionTable(**empty)
    return DecisionTable(**{f: np.concatenate([p[f] for p in parts]) for f in DecisionTable.__dataclass_fields__})


def optimal(table: DecisionTable, kind: int) -> np.ndarray:
    """(rows,) bool: a choice of ``kind`` (an index of CHOICE_KINDS) is among the optimal ones."""
    return (table.optimal_kinds >> kind) & 1 == 1


@dataclass
class Share:
    """How often ``outcome`` holds among the decisions of one group (``shares``)."""

    group: object  # the value of the ``by`` feature (None: all)
    share: float  # weighted share of the group's decisions where the outcome holds
    per_game: float  # the group's decisions per game (the weights' sum)
    positions: int  # distinct positions (states) in the group


def shares(table: DecisionTable, where: np.ndarray, outcome: np.ndarray, by: np.ndarray | None = None) -> list[Share]:
    """The weighted share of ``outcome`` among the decisions ``where`` holds, overall (``by``
    None) or per value of ``by`` (ascending)."""
    where = np.asarray(where, bool)
    outcome = np.asarray(outcome, bool)
    groups = [None] if by is None else np.unique(np.asarray(by)[where]).tolist()
    rows = []
    for group in groups:
        m = where if group is None else where & (np.asarray(by) == group)
        w = table.weight[m]
        total = float(w.sum())
        share = float((w * outcome[m]).sum() / total) if total > 0 else float("nan")
        rows.append(Share(group, share, total, int(m.sum())))
    return rows


__all__ = ["placement_values", "best_placements", "optimal_visits", "policy_visits", "decision_table", "DecisionTable",
           "shares", "Share", "optimal", "CHOICE_KINDS", "ORIGIN_KINDS", "PASS", "WALK", "INTO_PLAIN", "INTO_RED",
           "INTO_GREEN", "NO_GUEST"]
