"""Exact optimal play from a saved solution (``midnight solve``): ``optimal:path=DIR``.

At every decision the agent looks the position up in the solution (its canonical key,
``midnight_env.solve.keys``) and plays the stored optimal action; with two players the
solution holds both seats' strategies. Without a path it takes the solution of the game's
set-up from the solution folder (``midnight solve ... --save`` writes there; the environment
variable ``MIDNIGHT_SOLUTIONS`` names it, see ``midnight_env.solve.solution.solution_folder``).
A game it has no solution for is refused with a ValueError naming the set-up
(:meth:`OptimalAgent.check_engine`, which tournaments ask before any game).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Agent, Decisions
from midnight_env.core.config import setup_words
from midnight_env.core.engine import Engine
from midnight_env.infra import checks
from midnight_env.solve.solution import (
    OBJECTIVES,
    Solution,
    find_solution,
    load_solution,
    saved_solutions,
    solution_folder,
)


class OptimalAgent(Agent):
    name = "optimal"
    description = ("exact optimal play from a saved solution (midnight solve --out DIR): optimal:path=DIR, or "
                   "the game's own solution from the solution folder (midnight solve --save); solo games and "
                   "two players with few guests (objective=points|win chooses which optimum)")

    @classmethod
    def plays(cls) -> str:
        """The set-ups of the solutions in the solution folder (what it plays without a path)."""
        folder = solution_folder()
        found = [f"{setup_words(m['variant'], m['players'], m.get('options'), (m.get('board') or {}).get('name'))}"
                 f" ({m['objective']})" for m in saved_solutions(folder)]
        if not found:
            return (f"the saved solutions: none yet in {folder} (midnight solve ... --save); "
                    "optimal:path=DIR plays the one in DIR")
        return f"the saved solutions in {folder}: " + "; ".join(found)

    def __init__(self, path: str | Path | None = None, objective: str | None = None):
        if objective is not None:
            checks.choice("optimal option objective=", objective, OBJECTIVES)
        self.objective = objective
        self.solution: Solution | None = load_solution(path) if path is not None else None
        if self.solution is not None and objective is not None and self.solution.objective != objective:
            raise ValueError(f"the solution {path} is solved for objective {self.solution.objective}, "
                             f"not {objective}")
        self._found: dict[int, Solution] = {}  # engines already matched, by id

    def solution_for(self, engine: Engine) -> Solution:
        """The solution this agent plays ``engine``'s game by; ValueError when it has none."""
        found = self._found.get(id(engine))
        if found is not None:
            return found
        if self.solution is not None:
            self.solution.check_engine(engine)
            found = self.solution
        else:
            found = find_solution(engine, self.objective)
        self._found[id(engine)] = found
        return found

    def check_engine(self, engine: Engine) -> None:
        """ValueError unless this agent has a solution of ``engine``'s game (tournaments ask)."""
        self.solution_for(engine)

    def act(self, decisions: Decisions) -> np.ndarray:
        solution = self.solution_for(decisions.engine)
        return solution.best_actions(decisions.state, decisions.games)
