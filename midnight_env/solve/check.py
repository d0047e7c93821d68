"""The solver checked against the engine's public API: transitions, canonical keys and values.

The solver's transitions come from the engine's own rule kernel, so these checks test its
bookkeeping: the keys (decoding, encoding, what a key leaves out), the graph's arrays and the
value iteration. Each recomputes, with ``Engine.refresh_legal``, ``Engine.apply_action`` and
``Engine.apply_roll`` on whole batches, what the solver stored:

- :func:`check_transitions`: for sampled states, the legal choices, every successor's key and
  the points it books, and the die's faces with their odds, against the graph;
- :func:`check_games`: positions of real games (random play with real dice, turn counter,
  booked points and all) are found in the solution, and each one's successors through the
  engine have the keys and rewards of its key's transitions in the graph: what a key leaves
  out never changes the rest of a game;
- :func:`check_bellman`: the values satisfy the Bellman equation computed through the engine
  (sampled states; a loaded solution needs no graph for this).

Each raises :class:`CheckError` naming the first state that disagrees, and returns how much it
checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from midnight_env.core.dice import CHANCE_OUTCOMES
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL, GameState
from midnight_env.solve.graph import REWARD_DIFFERENCE, REWARD_NONE, REWARD_SEAT0
from midnight_env.solve.keys import terminal_outcomes
from midnight_env.solve.solution import Solution, reward_mode, seat_modes
from midnight_env.solve.values import MAXIMISE, TIE_TOLERANCE

FACES = np.array([face for face, _ in CHANCE_OUTCOMES], dtype=np.int64)
FACE_ODDS = np.array([p for _, p in CHANCE_OUTCOMES])


class CheckError(AssertionError):
    """The solver disagrees with the engine; the message names the state."""


@dataclass
class Successors:
    """Every transition of a batch of positions, made by ``Engine`` calls."""

    parent: np.ndarray  # (M,) index of the position in the batch
    label: np.ndarray  # (M,) action of a decision, die face of a roll
    key: np.ndarray  # (M,) uint64 key of the successor
    reward: np.ndarray  # (M,) points booked (the objective's reward)
    odds: np.ndarray  # (M,) the die's odds at a roll, nan at a decision


def _rewards(mode: int, before: GameState, parent: np.ndarray, after: GameState) -> np.ndarray:
    if mode == REWARD_NONE:
        return np.zeros(after.batch_size, np.int64)
    if mode == REWARD_SEAT0:
        return after.spooky[:, 0].astype(np.int64) - before.spooky[parent, 0]
    assert mode == REWARD_DIFFERENCE
    return (after.spooky[:, 0].astype(np.int64) - after.spooky[:, 1]) - (
        before.spooky[parent, 0].astype(np.int64) - before.spooky[parent, 1])


def engine_successors(solution: Solution, state: GameState) -> Successors:
    """The transitions of every game of ``state`` (each at PLACE, ROLL or MOVE, legal masks
    filled in) through ``Engine.apply_action`` and ``Engine.apply_roll``."""
    engine = solution.engine
    mode = reward_mode(solution.config, solution.objective)
    deciding = np.flatnonzero((state.phase == PLACE) | (state.phase == MOVE))
    rolling = np.flatnonzero(state.phase == ROLL)
    d_parent, d_action = np.nonzero(state.legal[deciding])
    d_parent = deciding[d_parent]
    after_d = state.take(d_parent)
    engine.apply_action(after_d, d_action.astype(np.int64))  # checked: every action must be legal
    r_parent = np.repeat(rolling, len(FACES))
    r_face = np.tile(FACES, len(rolling))
    after_r = state.take(r_parent)
    engine.apply_roll(after_r, r_face)
    parent = np.concatenate([d_parent, r_parent])
    label = np.concatenate([d_action, r_face]).astype(np.int64)
    odds = np.concatenate([np.full(len(d_parent), np.nan), np.tile(FACE_ODDS, len(rolling))])
    key = np.concatenate([solution.encode(after_d), solution.encode(after_r)])
    reward = np.concatenate([_rewards(mode, state, d_parent, after_d), _rewards(mode, state, r_parent, after_r)])
    order = np.lexsort((np.arange(len(parent)), parent))  # by position; actions ascending, faces in FACES order
    return Successors(parent[order], label[order], key[order], reward[order], odds[order])


def _sample(n: int, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if size >= n:
        return np.arange(n)
    return np.sort(rng.choice(n, size=size, replace=False))


def _compare_with_graph(solution: Solution, ids: np.ndarray, succ: Successors, where) -> int:
    """Successors from the engine against the graph's transitions of states ``ids``; returns
    the number of transitions compared."""
    g = solution.graph
    starts = g.edge_start[ids]
    counts = g.edge_start[ids + 1] - starts
    mine = np.bincount(succ.parent, minlength=len(ids))
    bad = np.flatnonzero(mine != counts)
    if len(bad):
        j = int(bad[0])
        raise CheckError(f"{where(j)}: the engine has {mine[j]} transitions, the graph {counts[j]}")
    edges = np.repeat(starts, counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
    for name, ours, theirs in (("label (action or face)", succ.label, g.edge_label[edges]),
                               ("successor key", succ.key, g.keys[g.edge_to[edges]]),
                               ("reward", succ.reward, g.edge_reward[edges])):
        wrong = np.flatnonzero(ours != theirs)
        if len(wrong):
            e = int(wrong[0])
            raise CheckError(f"{where(int(succ.parent[e]))}, transition {int(succ.label[e])}: {name} {ours[e]} from "
                             f"the engine, {theirs[e]} in the graph")
    return len(edges)


def check_transitions(solution: Solution, sample: int = 20_000, seed: int = 0) -> dict:
    """Legal choices, successors with their rewards, and the die's odds of ``sample`` random
    states of the graph against the engine's."""
    g = solution.graph
    if g is None:
        raise ValueError("check_transitions needs the solver's graph: a freshly solved solution, not a loaded one")
    ids = _sample(g.num_states, sample, seed)
    ids = ids[g.phases[ids] != OVER]
    state = solution.positions(ids)
    succ = engine_successors(solution, state)
    compared = _compare_with_graph(solution, ids, succ, lambda j: f"state {int(ids[j])} (key {int(g.keys[ids[j]]):#x})")
    rolls = np.flatnonzero(~np.isnan(succ.odds))
    sums = np.bincount(succ.parent[rolls], weights=succ.odds[rolls], minlength=len(ids))
    rolling = state.phase == ROLL
    if not np.allclose(sums[rolling], 1.0, atol=1e-15):
        raise CheckError("the die's odds of a roll do not add up to 1")
    return {"states": len(ids), "transitions": compared}


def check_games(solution: Solution, games: int = 200, seed: int = 0) -> dict:
    """Real games (random legal play, the dice of seeds ``seed``, ``seed+1`` ...): every position
    they pass is in the solution, and its successors through the engine match its key's
    transitions in the graph (keys and rewards)."""
    g = solution.graph
    if g is None:
        raise ValueError("check_games needs the solver's graph: a freshly solved solution, not a loaded one")
    engine = solution.engine
    state = engine.new_games(np.arange(seed, seed + games))
    rng = np.random.default_rng(seed)
    positions = transitions = 0
    while True:
        live = np.flatnonzero(state.phase != OVER)
        if not len(live):
            break
        now = state.take(live)
        ids = solution.state_ids(now)
        transitions += _compare_with_graph(solution, ids, engine_successors(solution, now),
                                           lambda j, ids=ids: f"a real game's position (state {int(ids[j])})")
        positions += len(live)
        rolling = state.phase == ROLL
        if rolling.any():
            engine.apply_roll(state)
        deciding = (state.phase == PLACE) | (state.phase == MOVE)
        if deciding.any():
            actions = np.full(state.batch_size, -1, np.int64)
            for i in np.flatnonzero(deciding):
                actions[i] = rng.choice(np.flatnonzero(state.legal[i]))
            engine.apply_action(state, actions)
    return {"games": games, "positions": positions, "transitions": transitions}


def check_bellman(solution: Solution, sample: int = 20_000, seed: int = 0, tolerance: float = 1e-9) -> dict:
    """|Bellman backup through the engine - value| <= ``tolerance`` at ``sample`` random states
    (every successor looked up in the solution by its key)."""
    n = solution.num_states
    ids = _sample(n, sample, seed)
    phases = solution.phases[ids]
    over = phases == OVER
    terminal_ids = ids[over]
    worst = 0.0
    if len(terminal_ids):
        want = terminal_outcomes(solution.keys[terminal_ids]) / 2.0 if solution.objective == "win" else 0.0
        worst = float(np.max(np.abs(solution.values[terminal_ids] - want)))
    ids = ids[~over]
    state = solution.positions(ids)
    succ = engine_successors(solution, state)
    target = solution.find(succ.key)
    if (target < 0).any():
        e = int(np.flatnonzero(target < 0)[0])
        raise CheckError(f"state {int(ids[succ.parent[e]])}: its successor by {int(succ.label[e])} (key "
                         f"{int(succ.key[e]):#x}) is not in the solution")
    q = succ.reward + solution.values[target]
    backup = np.full(len(ids), np.nan)
    rolls = ~np.isnan(succ.odds)
    backup[state.phase == ROLL] = 0.0
    np.add.at(backup, succ.parent[rolls], succ.odds[rolls] * q[rolls])
    modes = np.array(seat_modes(solution.config.num_players, solution.objective))
    deciding = np.flatnonzero(state.phase != ROLL)
    maximise = modes[state.player[deciding].astype(np.int64)] == MAXIMISE
    sign = np.ones(len(ids))
    sign[deciding[~maximise]] = -1.0
    best = np.full(len(ids), -np.inf)
    np.maximum.at(best, succ.parent[~rolls], sign[succ.parent[~rolls]] * q[~rolls])
    backup[deciding] = sign[deciding] * best[deciding]
    residual = np.abs(backup - solution.values[ids])
    if residual.size:
        worst = max(worst, float(residual.max()))
    if worst > tolerance:
        j = int(np.argmax(residual))
        raise CheckError(f"state {int(ids[j])}: value {solution.values[ids[j]]!r}, Bellman backup through the engine "
                         f"{backup[j]!r} (residual {worst:.3g} > {tolerance:g})")
    # the stored optimal action is one of the best
    chosen = np.full(len(ids), -2, np.int64)
    chosen[deciding] = solution.best[ids[deciding]]
    on_choice = ~rolls & (succ.label == chosen[succ.parent])
    got = np.full(len(ids), np.nan)
    got[succ.parent[on_choice]] = q[on_choice]
    gap = np.abs(got[deciding] - backup[deciding])
    if gap.size and not (gap <= TIE_TOLERANCE + tolerance).all():
        j = deciding[int(np.nanargmax(gap))]
        raise CheckError(f"state {int(ids[j])}: the stored optimal action {int(solution.best[ids[j]])} is not "
                         "among the best")
    return {"states": len(ids) + len(terminal_ids), "residual": worst}
