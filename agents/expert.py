"""The strong heuristic: one ply of afterstates judged by the expected-points evaluation.

Every legal choice is applied to a copy of the game (the engine books captures, room points,
expelling, the classic round end and the wine cellar exactly), and the choice whose afterstate
has the best value for the deciding player is taken: fewest expected points relative to the
others, with capture risks from the die's real probabilities (``midnight_agents.evaluation``). The same
rule places guests at set-up and between classic rounds.
"""

from __future__ import annotations

import numpy as np

from midnight_agents.afterstates import expand, pick_best
from midnight_agents.evaluation import DEFAULT_WEIGHTS, Weights, evaluate, weights_from
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.core.engine import Engine
from midnight_env.core.state import GameState


def greedy_choices(engine: Engine, state: GameState, games: np.ndarray, draws: np.ndarray,
                   weights: Weights = DEFAULT_WEIGHTS) -> np.ndarray:
    """The expert's choice for each of ``state``'s games ``games`` (all at PLACE or MOVE)."""
    children = expand(engine, state, games)
    values = evaluate(engine, children.state, state.player[games][children.parent], weights)
    best = pick_best(values, children.start, draws)
    return children.action[best]


class ExpertAgent(Agent):
    name = "expert"
    description = ("strong heuristic: tries every legal choice on a copy of the game and keeps the one "
                   "with the fewest expected spooky points relative to the others; capture risk from the "
                   "die's real odds (Hugo 1 in 3 per roll, his speed and the castle clock, the rolls until "
                   "the owner's next turn by seat), next-roll room chances, green/red/expelling, wine cellar")
    plays = "every set-up"

    def __init__(self, **weights):
        self.weights = weights_from(weights)

    def act(self, decisions: Decisions) -> np.ndarray:
        return greedy_choices(decisions.engine, decisions.state, decisions.games, decisions.uniforms(), self.weights)
