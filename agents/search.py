"""Expectimax search with explicit chance nodes over the die, batched over games.

The tree of a deciding game alternates:

- **its own decisions** (max): one child per legal move;
- **chance nodes**: someone is to roll; one child per die face, applied with
  ``Engine.apply_roll`` to copies of the position. The searching player's first roll branches
  on all five outcomes with their real odds (1, 2, 4, 5: 1/6 each, Hugo: 1/3, from
  ``Engine.chance_outcomes``), its later rolls too when the budget allows, else on one face
  drawn with the die's odds. The other players' rolls branch on Hugo (1/3) and on ``k`` of the
  four numbers (2/3 shared among them): all four when the budget allows, otherwise ``k`` drawn
  per node with common random numbers, so that every move of the root is judged against the
  same dice. With ``k = 0`` each of their rolls is one drawn face, and each root move is
  followed through as many sampled dice sequences as the budget allows (the same sequences for
  every move), its values averaged;
- the other players' decisions are the ``expert``'s (an opponent model: the tree does not
  branch on them); a classic round end, where guests are placed again, ends a branch.

Every leaf is a position right after the searching player's own move on its ``T``-th next roll
(``leaf=move``, the default: the kind of position the expert judges) or where it is about to
roll for the ``T``-th time (``leaf=roll``), a classic round end or a finished game, valued by the
expert's evaluation (``midnight_agents.evaluation``) from its point of view. Leaves of one phase
keep the comparison between moves fair, which mixing depths would not: the evaluation is only
roughly consistent from one roll to the next.

The budget counts positions per decision, the ones the expert looks at when it plays the
others included (:meth:`SearchAgent.tree_size`), and buys **depth first**: ``T`` is the most own
turns (up to ``turns``) whose cheapest tree fits, then what is left buys exact own rolls, more
numbers per other player's roll, or more sampled sequences (:meth:`SearchAgent.plan`). Until
depth came first, four times the budget bought only more exact chance nodes at the same depth,
and almost no strength in midnight_party. In hidden_castle a second own turn followed through
sampled faces of the others' rolls costs strength, and pays once their rolls branch on Hugo and a
number; so by default (no ``turns`` given) ``search`` looks up to two own turns ahead, in
hidden_castle the second only where the others' rolls branch on Hugo and at least one number
(``SECOND_TURN_NUMBERS``); ``turns=T`` searches up to T turns whatever the numbers. Measurements in
BENCHMARKS.md.

The game knowledge sits in three methods (:meth:`SearchAgent.judge` values leaves,
:meth:`SearchAgent.reply` plays the others, :meth:`SearchAgent.choose` places guests): the
expert's here, a trained value network's in :mod:`midnight_agents.value`.

All games of a batch are searched together, level by level, with one engine call per level; a
game's tree depends on its own position and random draw only, so it plays the same whatever
batch it is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from midnight_agents.afterstates import expand, pick_best
from midnight_agents.evaluation import Weights, evaluate, weights_from
from midnight_agents.expert import greedy_choices
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.core.dice import (
    CHANCE_OUTCOMES,
    DIE_FACES,
    GOLDEN,
    HUGO,
    HUGO_PROBABILITY,
    NUMBER_PROBABILITY,
    NUMBERS,
    mix64,
)
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, ROLL, GameState


@dataclass(slots=True)
class _Level:
    """One level of the search's chance nodes, as the forward pass builds it (the backup reads it
    bottom up)."""

    state: GameState  # the level's positions
    game: np.ndarray  # the searched game each position belongs to
    parent_max: np.ndarray  # the max node of the level above each position hangs from
    expanded: np.ndarray  # the positions at a roll that are expanded (chance nodes); the rest are leaves
    prob: np.ndarray | None = None  # per max node of the level below: its face's probability
    node: np.ndarray | None = None  # per max node of the level below: its chance node (a position here)


def play_expert(engine: Engine, state: GameState, games: np.ndarray, weights: Weights) -> None:
    """The expert's move in each of ``state``'s games ``games`` (at MOVE), applied in place."""
    sub = state.take(games)
    actions = greedy_choices(engine, sub, np.arange(len(games)), np.zeros(len(games)), weights)
    engine.apply_action(sub, actions, check=False)
    state.put(games, sub)


class SearchAgent(Agent):
    name = "search"
    description = ("expectimax over the die through its next turns: its moves maximised, chance nodes "
                   "with the die's real odds or sampled with common random numbers, the others modelled by the "
                   "expert, leaves valued by the expert's evaluation; the budget buys depth first "
                   "(search:budget=N positions per decision,turns=T at most: by default 2, in hidden_castle "
                   "the second only where the others' rolls branch on Hugo and a number)")
    plays = "every set-up"

    def __init__(self, budget: int = 1500, turns: int | None = None, leaf: str = "move", **weights):
        if budget < 1 or (turns is not None and turns < 1):
            raise ValueError(f"search needs budget >= 1 and turns >= 1, got budget={budget}, turns={turns}")
        if leaf not in ("move", "roll"):
            raise ValueError(f"search leaf={leaf!r}: allowed are move (after its own next move) or roll "
                             "(when it is about to roll)")
        self.leaf = leaf
        self.budget = int(budget)
        self.turns = None if turns is None else int(turns)
        self.weights = weights_from(weights)

    def max_turns(self, engine: Engine) -> int:
        """The most own turns searched: ``turns`` if given, else ``DEFAULT_TURNS``."""
        return self.turns if self.turns is not None else DEFAULT_TURNS

    def second_turn_numbers(self, engine: Engine) -> int:
        """The fewest numbers each other player's roll must branch on (beside Hugo) for a second
        own turn to be searched: the variant's ``SECOND_TURN_NUMBERS`` by default, none when
        ``turns`` is given."""
        return 0 if self.turns is not None else SECOND_TURN_NUMBERS.get(engine.variant, 0)

    def act(self, decisions: Decisions) -> np.ndarray:
        engine, state, games = decisions.engine, decisions.state, decisions.games
        draws = decisions.uniforms()
        out = np.empty(len(games), np.int64)
        placing = decisions.placing
        if placing.any():
            out[placing] = self.choose(engine, state, games[placing], draws[placing])
        forced = ~placing & (decisions.legal.sum(axis=1) == 1)
        if forced.any():  # one legal move: nothing to search
            out[forced] = np.argmax(decisions.legal[forced], axis=1)
        moving = np.flatnonzero(~placing & ~forced)
        if len(moving):
            out[moving] = self.search(engine, state, games[moving], draws[moving])
        return out

    def action_values(self, decisions: Decisions) -> np.ndarray:
        """(n, A) the value of every legal choice of each game of ``decisions`` to its deciding
        seat, as this agent judges it when it decides (NaN where a choice is not legal): a move's
        is the search's backed-up value of that root move, the one :meth:`act` maximises (a forced
        move is searched too), through :meth:`search` itself; a placement's is its afterstate
        judged (:meth:`judged_afterstates`, what :meth:`choose` maximises). The draws are those
        :meth:`act` takes, so the best value is the choice it makes (up to ties).

        Units: the leaves' (:meth:`judge`): :meth:`others_weight` times the other players' mean
        expected final spooky points minus the seat's own (alone against Hugo: minus its own),
        higher better. A choice's loss in points is the best value minus its own."""
        engine, state, games = decisions.engine, decisions.state, decisions.games
        draws = decisions.uniforms()
        out = np.full(decisions.legal.shape, np.nan)
        placing = decisions.placing
        if placing.any():
            out[placing] = self.judged_afterstates(engine, state, games[placing])
        moving = np.flatnonzero(~placing)
        if len(moving):
            found: list = []
            self.search(engine, state, games[moving], draws[moving], values_out=found)
            parent, action = np.nonzero(state.legal[games[moving]])  # the root's moves as expand() orders them
            out[moving[parent], action] = found[0]
        return out

    def judged_afterstates(self, engine: Engine, state: GameState, games: np.ndarray) -> np.ndarray:
        """(n, A) every legal choice of ``state``'s games ``games`` applied to a copy and judged
        (:meth:`judge`) for the deciding seat; NaN where a choice is not legal."""
        children = expand(engine, state, games)
        who = state.player[games][children.parent].astype(np.int64)
        out = np.full((len(games), state.legal.shape[1]), np.nan)
        out[children.parent, children.action] = self.judge(engine, children.state, who)
        return out

    def others_weight(self) -> float:
        """The weight of the other players' points in a value (:meth:`judge`): the evaluation's ``others``."""
        return float(self.weights.others)

    # -- what the tree asks of the game's knowledge: here the expert's; a learned value's in
    # midnight_agents.value -------------------------------------------------------------------
    def judge(self, engine: Engine, state: GameState, who: np.ndarray) -> np.ndarray:
        """Value of every position of ``state`` (a leaf) for seat ``who[j]`` (higher is better)."""
        return evaluate(engine, state, who, self.weights)

    def reply(self, engine: Engine, state: GameState, games: np.ndarray) -> None:
        """Another player's move in each of ``state``'s games ``games`` (at MOVE), applied in place."""
        play_expert(engine, state, games, self.weights)

    def choose(self, engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """The choice of a decision the tree does not search (placing a guest)."""
        return greedy_choices(engine, state, games, draws, self.weights)

    def plan(self, children: np.ndarray, num_players: int, turns: int, second_turn_numbers: int = 0) -> Plan:
        """How each game spends the budget (positions searched or judged per decision).

        Depth first: the most own turns (up to ``turns``: :meth:`max_turns`) whose cheapest tree
        fits (one sampled dice sequence per move; the searcher's rolls after its first one sampled
        too; beyond one turn, the others' rolls branching on Hugo and ``second_turn_numbers``
        numbers where that is above 0: :meth:`second_turn_numbers`). Then, in this order, what
        still fits: every face of the searcher's later rolls, the most numbers per other player's
        roll (Hugo and k of the four; all four makes the tree exact), and with none of them, more
        sampled sequences per move. Depth comes first because it pays most where a second turn
        pays at all (measured in BENCHMARKS.md)."""
        depth = np.ones(len(children), np.int64)
        for t in range(2, turns + 1):
            fits = self.tree_size(children, num_players, t, second_turn_numbers, False) <= self.budget
            depth = np.where(fits, t, depth)
        least = np.where(depth > 1, second_turn_numbers, 0)  # numbers a chosen second turn needs
        own_exact = self.tree_size(children, num_players, depth, least, True) <= self.budget
        k = least.astype(np.int64)
        for cand in (1, 2, 3, 4):
            k = np.where(self.tree_size(children, num_players, depth, cand, own_exact) <= self.budget, cand, k)
        size = self.tree_size(children, num_players, depth, 0, own_exact)
        samples = np.where(k == 0, np.maximum(1, self.budget // np.maximum(size, 1)), 1).astype(np.int64)
        return Plan(depth, k, samples, own_exact)

    def tree_size(self, children, num_players: int, turns, k, own_exact) -> np.ndarray:
        """Positions searched or judged below ``children`` root moves through ``turns`` own turns:
        each other player's roll branches on Hugo and ``k`` numbers (k = 0: one sampled face)
        and its numbers cost the expert's look at about six moves each; the searcher's first
        roll branches on all five outcomes, its later rolls too (``own_exact``) or on one face."""
        children, turns, k, own_exact = np.broadcast_arrays(np.asarray(children, np.float64), turns, k, own_exact)
        expert = OWN_MOVE_POSITIONS
        other_roll = np.where(k > 0, 1.0 + k * (1.0 + expert), 1.0 + NUMBER_PROBABILITY * expert)
        branch = np.where(k > 0, 1.0 + k, 1.0)
        later = np.where(own_exact, OWN_ROLL_POSITIONS, OWN_MOVE_POSITIONS)
        nodes = np.ones(children.shape)
        size = np.zeros(children.shape)
        for t in range(int(np.max(turns, initial=1))):  # floats: deep exact trees overflow int64
            on = t < turns
            for _ in range(num_players - 1):
                size += np.where(on, nodes * other_roll, 0.0)
                nodes = np.where(on, nodes * branch, nodes)
            own = on & ((t < turns - 1) | (self.leaf == "move"))  # leaf=roll: the last roll is a leaf
            width = OWN_ROLL_POSITIONS if t == 0 else later
            size += np.where(own, nodes * width, 0.0)
            nodes = np.where(own, nodes * width, nodes)
        return children * size

    # ------------------------------------------------------------------------------------------
    def search(self, engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray,
               values_out: list | None = None) -> np.ndarray:
        """Best move of each of ``state``'s games ``games`` (all at MOVE); ``values_out`` receives
        the values of the root's moves (for tests)."""
        me = state.player[games].astype(np.int64)
        root = expand(engine, state, games)
        children = np.diff(root.start)
        plan = self.plan(children, engine.num_players, self.max_turns(engine), self.second_turn_numbers(engine))
        k, samples = plan.numbers, plan.samples
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
        turns = plan.turns[g]
        code = sequence.astype(np.uint64)
        levels: list[_Level] = []
        parent_max = replica
        # a cap on the levels: a classic round end can let the others roll more than once
        max_level = (int(plan.turns.max(initial=1)) + 1) * (2 * engine.num_players + 1)
        level = -1
        while True:
            level += 1
            roller_me = st.player == me[g]
            if self.leaf == "move":  # leaves right after the searcher's own move (or its Hugo roll)
                open_ = (st.phase == ROLL) & (turns >= 1) & (level < max_level)
            else:  # leaves where the searcher is about to roll
                open_ = (st.phase == ROLL) & ~(roller_me & (turns <= 1)) & (level < max_level)
            pick = np.flatnonzero(open_)
            levels.append(_Level(st, g, parent_max, pick))
            if len(pick) == 0:
                break
            mine = roller_me[pick]
            # faces of every expanded node: own rolls all five (after the first one: one sampled
            # face unless the tree is exact), others Hugo + k numbers or one sampled face
            later = mine & (turns[pick] < plan.turns[g[pick]]) & ~plan.own_exact[g[pick]]
            nfaces = np.where(mine, np.where(later, 1, 5), 1 + k[g[pick]])
            node = np.repeat(pick, nfaces)
            slot = np.arange(len(node)) - np.repeat(np.cumsum(nfaces) - nfaces, nfaces)
            of_node = np.repeat(np.arange(len(pick)), nfaces)
            face, prob = _faces(slot, mine[of_node], np.where(later[of_node], 0, k[g[node]]),
                                _mix(crn[g[node]], level, code[node]), later[of_node])
            child = st.take(node)
            engine.apply_roll(child, face)
            m_game = g[node]
            m_turns = turns[node] - np.repeat(mine, nfaces)  # an own roll uses up a turn
            m_code = code[node] * np.uint64(1_000_003) + (slot + 1).astype(np.uint64)  # wraps: a hash
            levels[-1].prob = prob
            own = (child.phase == MOVE) & (child.player == me[m_game])
            other = np.flatnonzero((child.phase == MOVE) & ~own)
            if len(other):  # the others' moves: the expert's choice, no branching
                self.reply(engine, child, other)
            single = np.flatnonzero(~own)  # one chance child: the position itself
            mine_max = np.flatnonzero(own)
            parts_state, parts_parent = [child.take(single)], [single]
            if len(mine_max):
                kids = expand(engine, child, mine_max)
                parts_state.append(kids.state)
                parts_parent.append(mine_max[kids.parent])
            parent_max = np.concatenate(parts_parent)
            levels[-1].node = node
            st = GameState.concatenate(parts_state)
            g = m_game[parent_max]
            turns = m_turns[parent_max]
            code = m_code[parent_max]

        # back up: leaves by the evaluation, chance nodes by expectation over their faces' max
        # nodes (the best own move, or the only child)
        below = None
        for level in range(len(levels) - 1, -1, -1):
            at = levels[level]
            st, g, parent_max, pick, prob, node = at.state, at.game, at.parent_max, at.expanded, at.prob, at.node
            values = np.empty(st.batch_size)
            leaf = np.ones(st.batch_size, bool)
            leaf[pick] = False
            if leaf.any():
                idx = np.flatnonzero(leaf)
                values[idx] = self.judge(engine, st.take(idx), me[g[idx]])
            if len(pick):
                values[pick] = np.bincount(node, weights=prob * below, minlength=st.batch_size)[pick]
            if level > 0:
                below = np.full(len(levels[level - 1].node), -np.inf)
                np.maximum.at(below, parent_max, values)
        # a root move's value: the mean over its sampled sequences (one copy when k >= 1)
        values = np.bincount(replica, weights=values, minlength=len(root.parent)) / copies
        best = pick_best(values, root.start, draws)
        if values_out is not None:
            values_out.append(values)
        return root.action[best]


# the most own turns searched unless `turns` says otherwise. A second own turn pays in
# midnight_party (against three experts: 1.4 points a game at 4x the default budget, followed
# through sampled dice); in hidden_castle it costs strength while the others' rolls are sampled
# faces and pays once they branch on Hugo and a number (BENCHMARKS.md, "hidden_castle: a second
# own turn costs strength" and "... pays where the others' rolls branch")
DEFAULT_TURNS = 2
SECOND_TURN_NUMBERS = {"hidden_castle": 1}  # numbers per other player's roll a second turn needs
OWN_ROLL_POSITIONS = 24  # about four numbers times six moves: positions one own roll adds
OWN_MOVE_POSITIONS = 6  # about six moves: positions one sampled own roll adds


class Plan(NamedTuple):
    """How a decision's search spends its budget (one entry per game)."""

    turns: np.ndarray  # own turns searched
    numbers: np.ndarray  # numbers branched on per other player's roll (0: one sampled face)
    samples: np.ndarray  # sampled dice sequences per root move (1 when k >= 1)
    own_exact: np.ndarray  # the searcher's rolls after its first one branch on all five outcomes
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


def _faces(slot: np.ndarray, own: np.ndarray, k: np.ndarray, h: np.ndarray,
           own_sampled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Face and probability of outcome ``slot`` of each chance node: own rolls all five outcomes
    (``own_sampled``: one face drawn from ``h``); the others' rolls Hugo (slot 0) then ``k`` of
    the numbers in an order drawn from ``h`` (k = 0: one face drawn from ``h``)."""
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
    own = own & ~own_sampled  # a sampled own roll is drawn like the others' (k = 0)
    return (np.where(own, _OWN_FACES[own_slot], other_face),
            np.where(own, _OWN_PROBS[own_slot], other_prob))
