"""Expectimax search with explicit chance nodes over the die, batched over games.

The tree of each deciding game alternates:

- **decision nodes** of the searching player: one child per legal move (max);
- **chance nodes**: a position where someone is to roll; one child per die face 1, 2, 4, 5
  (1/6 each) and Hugo (1/3), taken from ``Engine.chance_outcomes`` and applied with
  ``Engine.apply_roll`` on copies of the position (expectation);
- the other players' decisions, and every placement between classic rounds, are made by the
  ``expert`` policy (an opponent model: the tree does not branch on them).

Chance nodes are expanded most probable first until the game's **budget** of positions (copies of
the engine state) is spent or ``depth`` rolls are reached; every chance node left unexpanded is
valued by the expert's evaluation (``agents.evaluation``), from the searching player's point of
view. All games of a batch are searched together, level by level, with one engine call per
level: the engine's batched kernels do the work, and each game's tree depends on its own
position only (a game plays the same whatever batch it is in). Placements are the expert's.
"""

from __future__ import annotations

import numpy as np

from agents.afterstates import expand, pick_best
from agents.base import Agent, Decisions
from agents.evaluation import DEFAULT_WEIGHTS, Weights, evaluate
from agents.expert import greedy_choices
from midnight_env.engine import Engine
from midnight_env.state import MOVE, PLACE, ROLL, GameState

# expected new positions when a chance node is expanded: five faces, and when the searching
# player is the roller, about four moves for each of its four numbers
_COST_OTHER, _COST_OWN = 5, 5 + 16


def settle(engine: Engine, state: GameState, weights: Weights) -> None:
    """Let the expert place every guest due to be placed (classic round ends), in place."""
    placing = np.flatnonzero(state.phase == PLACE)
    if len(placing) == 0:
        return
    sub = state.take(placing)  # only these games: the engine refreshes every game it is given
    while True:
        due = np.flatnonzero(sub.phase == PLACE)
        if len(due) == 0:
            break
        actions = np.full(sub.batch_size, -1, np.int64)
        actions[due] = greedy_choices(engine, sub, due, np.zeros(len(due)), weights)
        engine.apply_action(sub, actions, check=False)
    state.put(placing, sub)


def play_expert(engine: Engine, state: GameState, games: np.ndarray, weights: Weights) -> None:
    """The expert's move in each of ``state``'s games ``games`` (at MOVE), applied in place."""
    sub = state.take(games)
    actions = greedy_choices(engine, sub, np.arange(len(games)), np.zeros(len(games)), weights)
    engine.apply_action(sub, actions, check=False)
    settle(engine, sub, weights)
    state.put(games, sub)


class SearchAgent(Agent):
    name = "search"
    description = ("expectimax over the die: chance nodes for 1, 2, 4, 5 and Hugo with their real odds, "
                   "its own moves maximised, the other players modelled by the expert, leaves valued by "
                   "the expert's evaluation; budget = positions per decision (search:budget=N,depth=D)")

    def __init__(self, budget: int = 200, depth: int = 6, **weights):
        if budget < 1 or depth < 1:
            raise ValueError(f"search needs budget >= 1 and depth >= 1, got budget={budget}, depth={depth}")
        self.budget = int(budget)
        self.depth = int(depth)
        self.weights = Weights(**weights) if weights else DEFAULT_WEIGHTS

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

    # ------------------------------------------------------------------------------------------
    def search(self, engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """Best move of each of ``state``'s games ``games`` (all at MOVE)."""
        n = len(games)
        me = state.player[games].astype(np.int64)
        root = expand(engine, state, games)
        settle(engine, root.state, self.weights)
        faces = np.array([f for f, _ in engine.chance_outcomes()], np.int64)
        probs = np.array([p for _, p in engine.chance_outcomes()])
        nf = len(faces)

        # chance nodes level by level: positions, owning game, reach probability, parent
        # max node (level 0: the root's children, parent = game)
        levels_state = [root.state]
        levels_game = [root.parent]
        levels_prob = [np.ones(len(root.parent))]
        levels_parent = [root.parent]
        expanded: list[np.ndarray] = []  # per level: indices of expanded chance nodes
        left = self.budget - np.bincount(root.parent, minlength=n)
        for _ in range(self.depth):
            st, g, pr = levels_state[-1], levels_game[-1], levels_prob[-1]
            pick = self._select(st, g, pr, me, left)
            expanded.append(pick)
            if len(pick) == 0:
                break
            # one max node per (expanded chance node, face)
            rep = np.repeat(pick, nf)
            child = st.take(rep)
            engine.apply_roll(child, np.tile(faces, len(pick)))
            settle(engine, child, self.weights)
            m_game = g[rep]
            m_prob = pr[rep] * np.tile(probs, len(pick))
            own = (child.phase == MOVE) & (child.player == me[m_game])
            other = np.flatnonzero((child.phase == MOVE) & ~own)
            if len(other):  # the opponents' moves: the expert's choice, no branching
                play_expert(engine, child, other, self.weights)
            single = np.flatnonzero(~own)  # max nodes with one chance child: the position itself
            mine = np.flatnonzero(own)
            parts_state, parts_parent = [child.take(single)], [single]
            if len(mine):
                kids = expand(engine, child, mine)
                settle(engine, kids.state, self.weights)
                parts_state.append(kids.state)
                parts_parent.append(mine[kids.parent])
            new_state = GameState.concatenate(parts_state)
            new_parent = np.concatenate(parts_parent)
            new_game = m_game[new_parent]
            levels_state.append(new_state)
            levels_game.append(new_game)
            levels_prob.append(m_prob[new_parent])
            levels_parent.append(new_parent)
            left -= np.bincount(new_game, minlength=n)
        while len(expanded) < len(levels_state):
            expanded.append(np.zeros(0, np.int64))

        # back up: unexpanded chance nodes by the evaluation, expanded ones by expectation over
        # the faces of the best (own move) or only (everything else) child
        below = None  # values of the max nodes of the level below, (len(expanded) * nf,)
        for level in range(len(levels_state) - 1, -1, -1):
            st, g = levels_state[level], levels_game[level]
            values = np.empty(st.batch_size)
            pick = expanded[level]
            leaf = np.ones(st.batch_size, bool)
            leaf[pick] = False
            if leaf.any():
                leaf_idx = np.flatnonzero(leaf)
                values[leaf_idx] = evaluate(engine, st.take(leaf_idx), me[g[leaf_idx]], self.weights)
            if len(pick):
                values[pick] = (below.reshape(len(pick), nf) * probs).sum(axis=1)
            if level > 0:
                parent = levels_parent[level]
                below = np.full(len(expanded[level - 1]) * nf, -np.inf)
                np.maximum.at(below, parent, values)
            else:
                best = pick_best(values, root.start, draws)
        return root.action[best]

    @staticmethod
    def _select(st: GameState, game: np.ndarray, prob: np.ndarray, me: np.ndarray, left: np.ndarray) -> np.ndarray:
        """Chance nodes to expand: per game, the most probable first while the budget lasts."""
        open_ = np.flatnonzero(st.phase == ROLL)
        if len(open_) == 0:
            return open_
        g = game[open_]
        cost = np.where(st.player[open_] == me[g], _COST_OWN, _COST_OTHER)
        order = np.lexsort((open_, -prob[open_], g))  # by game, most probable first, then position
        g_sorted, cost_sorted = g[order], cost[order]
        cum = np.cumsum(cost_sorted)
        starts = np.searchsorted(g_sorted, g_sorted, side="left")
        spent = cum - np.where(starts > 0, cum[starts - 1], 0)
        take = spent <= left[g_sorted]
        return np.sort(open_[order[take]])
