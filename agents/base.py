"""The one interface every agent implements, and the batch of decisions it is handed.

An agent gets a :class:`Decisions`: the games of a batch whose deciding seat it holds, with read
access to their engine state, legal masks, observations and per-game random streams, and returns
one action per game. Placements (set-up and between classic rounds) and moves come the same way;
``Decisions.placing`` tells them apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from midnight_env.engine import Engine
from midnight_env.rules import random_legal_actions
from midnight_env.state import MOVE, PLACE, GameState


@dataclass
class Decisions:
    engine: Engine
    state: GameState  # the whole batch; read it, never write it
    games: np.ndarray  # indices into the batch of the games to decide
    rng: np.ndarray  # (B,) uint64 per-game agent streams of the whole batch (see ``random_choice``)
    _obs: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.games)

    @property
    def legal(self) -> np.ndarray:
        """(n, A) int8 legal mask of each game to decide."""
        return self.state.legal[self.games]

    @property
    def players(self) -> np.ndarray:
        return self.state.player[self.games]

    @property
    def rolls(self) -> np.ndarray:
        """Number being decided per game (0 for placements)."""
        return self.state.roll[self.games]

    @property
    def placing(self) -> np.ndarray:
        return self.state.phase[self.games] == PLACE

    @property
    def moving(self) -> np.ndarray:
        return self.state.phase[self.games] == MOVE

    def substate(self) -> GameState:
        """A copy of the games to decide as their own batch (for search on copies)."""
        return self.state.take(self.games)

    def observations(self) -> np.ndarray:
        """(n, D) float32 observations from each deciding player's point of view."""
        if self._obs is None:
            from midnight_env.observation import encode_observations

            self._obs = encode_observations(self.engine, self.state, self.games)
        return self._obs

    def random_choice(self, legal: np.ndarray | None = None) -> np.ndarray:
        """Uniform choice among ``legal`` (default: the legal mask), drawn from the games' own
        streams so a game plays the same whatever batch it is in."""
        legal = self.legal if legal is None else np.ascontiguousarray(legal, dtype=np.int8)
        streams = self.rng[self.games]
        out = np.empty(len(self.games), np.int64)
        random_legal_actions(legal, streams, out)
        self.rng[self.games] = streams
        return out

    def uniforms(self) -> np.ndarray:
        """One float in [0, 1) per game from the games' own streams."""
        from midnight_env.rules import uniform_draws

        streams = self.rng[self.games]
        out = np.empty(len(self.games), np.float64)
        uniform_draws(streams, out)
        self.rng[self.games] = streams
        return out


class Agent:
    """Base class: ``act`` returns one legal action per game of ``decisions``."""

    name: str = "agent"
    description: str = ""

    def act(self, decisions: Decisions) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<agent {self.name}>"


class RandomAgent(Agent):
    name = "random"
    description = "uniform over the legal choices (placements and moves alike); the floor every agent must beat"

    def act(self, decisions: Decisions) -> np.ndarray:
        return decisions.random_choice()
