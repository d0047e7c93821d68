"""Expectimax search with explicit chance nodes over the die, batched over games.

The tree of a deciding game alternates:

- **its own decisions** (max): one child per legal move;
- **chance nodes**: someone is to roll; one child per die face, applied with
  ``Engine.apply_roll`` to copies of the position. The searching player's own rolls branch on
  all five outcomes with their real odds (1, 2, 4, 5: 1/6 each, Hugo: 1/3, from
  ``Engine.chance_outcomes``). The other players' rolls branch on Hugo (1/3) and on ``k`` of the
  four numbers (2/3 shared among them): all four (exact) when the budget allows, otherwise
  ``k`` drawn per node with common random numbers, so that every move of the root is judged
  against the same dice. When even Hugo and one number do not fit (``k = 0``), each move is
  followed through as many sampled dice sequences as the budget allows (one face per roll,
  drawn with the die's odds; the same sequences for every move) and its values averaged;
- the other players' decisions are the ``expert``'s (an opponent model: the tree does not
  branch on them); a classic round end, where guests are placed again, ends a branch.

Every leaf is a position right after the searching player's own move on its ``turns``-th next
roll (``leaf=move``, the default: the kind of position the expert judges) or where it is about
to roll (``leaf=roll``), a classic round end or a finished game, valued by the expert's
evaluation (``midnight_agents.evaluation``) from its point of view. Leaves of one phase keep the
comparison between moves fair, which mixing depths would not: the evaluation is only roughly
consistent from one roll to the next. The budget (positions per decision) picks the largest
``k`` whose tree fits (at least ``k = 0``).

All games of a batch are searched together, level by level, with one engine call per level; a
game's tree depends on its own position and random draw only, so it plays the same whatever
batch it is in.
"""

from __future__ import annotations

import numpy as np

from midnight_agents.afterstates import expand, pick_best
from midnight_agents.evaluation import Weights, evaluate, weights_from
from midnight_agents.expert import greedy_choices
from midnight_env.agent import Agent, Decisions
from midnight_env.dice import (
    CHANCE_OUTCOMES,
    DIE_FACES,
    GOLDEN,
    HUGO,
    HUGO_PROBABILITY,
    NUMBER_PROBABILITY,
    NUMBERS,
    mix64,
)
from midnight_env.engine import Engine
from midnight_env.state import MOVE, ROLL, GameState


def play_expert(engine: Engine, state: GameState, games: np.ndarray, weights: Weights) -> None:
    """The expert's move in each of ``state``'s games ``games`` (at MOVE), applied in place."""
    sub = state.take(games)
    actions = greedy_choices(engine, sub, np.arange(len(games)), np.zeros(len(games)), weights)
    engine.apply_action(sub, actions, check=False)
    state.put(games, sub)


class SearchAgent(Agent):
    name = "search"
    description = ("expectimax over the die through its own next turn: its moves maximised, chance nodes "
                   "with the die's real odds (own rolls: all five outcomes; others' rolls: Hugo and as many of "
                   "the numbers as the budget allows, common random numbers), the others modelled by the "
                   "expert, leaves valued by the expert's evaluation (search:budget=N positions,turns=T)")

    def __init__(self, budget: int = 1000, turns: int = 1, leaf: str = "move", **weights):
        if budget < 1 or turns < 1:
            raise ValueError(f"search needs budget >= 1 and turns >= 1, got budget={budget}, turns={turns}")
        if leaf not in ("move", "roll"):
            raise ValueError(f"search leaf={leaf!r}: allowed are move (after its own next move) or roll "
                             "(when it is about to roll)")
        self.leaf = leaf
        self.budget = int(budget)
        self.turns = int(turns)
        self.weights = weights_from(weights)

    def act(self, decisions: Decisions) -> np.ndarray:
        engine, state, games = decisions.engine, decisions.state, decisions.games
        draws = decisions.uniforms()
        out = np.empty(len(games), np.int64)
        placing = decisions.placing
        if placing.any():
            out[placing] = greedy_choices(engine, state, games[placing], draws[placing], self.weights)
        forced = ~placing & (decisions.legal.sum(axis=1) == 1)
        if forced.any():  # one legal move: nothing to search
            out[forced] = np.argmax(decisions.legal[forced], axis=1)
        moving = np.flatnonzero(~placing & ~forced)
        if len(moving):
            out[moving] = self.search(engine, state, games[moving], draws[moving])
        return out

    def numbers_per_roll(self, children: np.ndarray, num_players: int) -> np.ndarray:
        """k per game: the most numbers per other player's roll whose tree fits the budget (0: not
        even Hugo and one number fit, so each of the others' rolls is one face drawn with the die's
        odds, the same for every root move)."""
        k = np.zeros(len(children), np.int64)
        for cand in (1, 2, 3, 4):
            own_turns = self.turns if self.leaf == "move" else self.turns - 1
            size = children * (1 + cand) ** max(num_players - 1, 0) * OWN_ROLL_POSITIONS ** own_turns
            k = np.where(size <= self.budget, cand, k)
        return k

    def samples_per_move(self, children: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Dice sequences followed per root move: 1, or with k = 0 as many as the budget allows."""
        own_turns = self.turns if self.leaf == "move" else self.turns - 1
        size = children * OWN_ROLL_POSITIONS ** own_turns
        return np.where(k > 0, 1, np.maximum(1, self.budget // np.maximum(size, 1))).astype(np.int64)

    # ------------------------------------------------------------------------------------------
    def search(self, engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray,
               values_out: list | None = None) -> np.ndarray:
        """Best move of each of ``state``'s games ``games`` (all at MOVE); ``values_out`` receives
        the values of the root's moves (for tests)."""
        me = state.player[games].astype(np.int64)
        root = expand(engine, state, games)
        children = np.diff(root.start)
        k = self.numbers_per_roll(children, engine.num_players)
        samples = self.samples_per_move(children, k)
        crn = (draws * (1 << 40)).astype(np.int64)  # per-game seed of the sampled numbers

        # with k = 0, every root move is followed through `samples` sampled dice sequences (the
        # same sequences for every move of a game): one copy of the move per sequence
        copies = samples[root.parent]
        replica = np.repeat(np.arange(len(root.parent)), copies)  # root move of each copy
        sequence = np.arange(len(replica)) - np.repeat(np.cumsum(copies) - copies, copies)

        # chance nodes level by level: positions, owning game, reach probability, own turns
        # still to search, path code (the same for every root move: common random numbers)
        st = root.state.take(replica) if len(replica) != len(root.parent) else root.state
        g = root.parent[replica]
        turns = np.full(len(g), self.turns, np.int64)
        code = sequence.astype(np.uint64)
        levels = []  # per level: positions, game, parent max node, expanded nodes, and per max node
        #              below them its face's probability and its chance node
        parent_max = replica
        # a cap on the levels: a classic round end can let the others roll more than once
        max_level = (self.turns + 1) * (2 * engine.num_players + 1)
        level = -1
        while True:
            level += 1
            roller_me = st.player == me[g]
            if self.leaf == "move":  # leaves right after the searcher's own move (or its Hugo roll)
                open_ = (st.phase == ROLL) & (turns >= 1) & (level < max_level)
            else:  # leaves where the searcher is about to roll
                open_ = (st.phase == ROLL) & ~(roller_me & (turns <= 1)) & (level < max_level)
            pick = np.flatnonzero(open_)
            levels.append([st, g, parent_max, pick, None, None])
            if len(pick) == 0:
                break
            mine = roller_me[pick]
            # faces of every expanded node: own rolls all five, others Hugo + k sampled numbers
            nfaces = np.where(mine, 5, 1 + k[g[pick]])
            node = np.repeat(pick, nfaces)
            slot = np.arange(len(node)) - np.repeat(np.cumsum(nfaces) - nfaces, nfaces)
            face, prob = _faces(slot, mine[np.repeat(np.arange(len(pick)), nfaces)], k[g[node]],
                                _mix(crn[g[node]], level, code[node]))
            child = st.take(node)
            engine.apply_roll(child, face)
            m_game = g[node]
            m_turns = turns[node] - np.repeat(mine, nfaces)  # an own roll uses up a turn
            m_code = code[node] * np.uint64(1_000_003) + (slot + 1).astype(np.uint64)  # wraps: a hash
            levels[-1][4] = prob
            own = (child.phase == MOVE) & (child.player == me[m_game])
            other = np.flatnonzero((child.phase == MOVE) & ~own)
            if len(other):  # the others' moves: the expert's choice, no branching
                play_expert(engine, child, other, self.weights)
            single = np.flatnonzero(~own)  # one chance child: the position itself
            mine_max = np.flatnonzero(own)
            parts_state, parts_parent = [child.take(single)], [single]
            if len(mine_max):
                kids = expand(engine, child, mine_max)
                parts_state.append(kids.state)
                parts_parent.append(mine_max[kids.parent])
            parent_max = np.concatenate(parts_parent)
            levels[-1][5] = node
            st = GameState.concatenate(parts_state)
            g = m_game[parent_max]
            turns = m_turns[parent_max]
            code = m_code[parent_max]

        # back up: leaves by the evaluation, chance nodes by expectation over their faces' max
        # nodes (the best own move, or the only child)
        below = None
        for level in range(len(levels) - 1, -1, -1):
            st, g, parent_max, pick, prob, node = levels[level]
            values = np.empty(st.batch_size)
            leaf = np.ones(st.batch_size, bool)
            leaf[pick] = False
            if leaf.any():
                idx = np.flatnonzero(leaf)
                values[idx] = evaluate(engine, st.take(idx), me[g[idx]], self.weights)
            if len(pick):
                values[pick] = np.bincount(node, weights=prob * below, minlength=st.batch_size)[pick]
            if level > 0:
                below = np.full(len(levels[level - 1][5]), -np.inf)
                np.maximum.at(below, parent_max, values)
        # a root move's value: the mean over its sampled sequences (one copy when k >= 1)
        values = np.bincount(replica, weights=values, minlength=len(root.parent)) / copies
        best = pick_best(values, root.start, draws)
        if values_out is not None:
            values_out.append(values)
        return root.action[best]


OWN_ROLL_POSITIONS = 24  # about four numbers times six moves: positions one own roll adds
_OWN_FACES = np.array([face for face, _ in CHANCE_OUTCOMES], np.int64)  # the die's five outcomes
_OWN_PROBS = np.array([prob for _, prob in CHANCE_OUTCOMES])
_NUMBERS = np.array(NUMBERS, np.int64)
_DIE = np.array(DIE_FACES, np.int64)


def _mix(seed: np.ndarray, level: int, code: np.ndarray) -> np.ndarray:
    """A 64-bit hash of (game seed, level, path) (splitmix64's finaliser)."""
    with np.errstate(over="ignore"):  # wrapping multiplication is the point
        z = (seed.astype(np.uint64) * GOLDEN + np.uint64(level) * np.uint64(0xBF58476D1CE4E5B9)
             + code.astype(np.uint64))
    return mix64(z)


def _faces(slot: np.ndarray, own: np.ndarray, k: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Face and probability of outcome ``slot`` of each chance node: own rolls all five outcomes;
    the others' rolls Hugo (slot 0) then ``k`` of the numbers in an order drawn from ``h``."""
    keys = _mix(h[:, None] + np.arange(4, dtype=np.uint64)[None, :], 0, np.zeros((len(h), 4), np.int64))
    order = np.argsort(keys, axis=1)
    sampled = _NUMBERS[order[np.arange(len(h)), np.clip(slot - 1, 0, 3)]]
    other_face = np.where(slot == 0, HUGO, sampled)
    other_prob = np.where(slot == 0, HUGO_PROBABILITY, NUMBER_PROBABILITY / np.maximum(k, 1))
    # k = 0: one face drawn with the die's odds (Hugo 2 faces of 6), probability 1
    drawn = _DIE[((h >> np.uint64(11)) % np.uint64(6)).astype(np.int64)]
    other_face = np.where(k == 0, drawn, other_face)
    other_prob = np.where(k == 0, 1.0, other_prob)
    own_slot = np.clip(slot, 0, 4)
    return (np.where(own, _OWN_FACES[own_slot], other_face),
            np.where(own, _OWN_PROBS[own_slot], other_prob))
