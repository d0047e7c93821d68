"""The agent protocol: the one interface every agent implements, and the decisions it is handed.

An agent gets a :class:`Decisions`: the games of a batch whose deciding seat it holds, with read
access to their engine state, legal masks, observations and per-game random streams, and returns
one legal action per game (an integer array of ``len(decisions)``). Placements (set-up and
between classic rounds) and moves come the same way; ``Decisions.placing`` tells them apart.

Built-in agents live in the package ``midnight_agents``; agents of other packages plug in by
name through :mod:`midnight_env.arena.registry`. docs/AGENTS.md explains the protocol with an example.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from midnight_env.core.dice import uniform_draws
from midnight_env.core.engine import Engine, check_actions
from midnight_env.core.random_choice import random_legal_actions
from midnight_env.core.state import MOVE, PLACE, GameState


class AgentError(ValueError):
    """An unknown agent, a bad agent option, a plugin that cannot be loaded, or an agent that
    failed to act; the message names the agent (raised here and by the registry)."""


@dataclass
class Decisions:
    engine: Engine
    state: GameState  # the whole batch; read it, never write it
    games: np.ndarray  # indices into the batch of the games to decide
    rng: np.ndarray  # (B,) uint64 per-game agent streams of the whole batch (see ``random_choice``)
    seeds: np.ndarray | None = None  # (B,) game seeds of the whole batch, where known (error messages)
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
            from midnight_env.core.observation import encode_observations

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
        streams = self.rng[self.games]
        out = np.empty(len(self.games), np.float64)
        uniform_draws(streams, out)
        self.rng[self.games] = streams
        return out


class Agent:
    """Base class: ``act`` returns one legal action per game of ``decisions``.

    ``name`` is how tables and records call the agent (the registry sets it to the spec it was
    made from); ``description`` is the one line ``midnight agents`` prints, and ``plays`` which
    set-ups it plays, in words (``every set-up``, ``hidden_castle 4 players``), or a function of no
    arguments returning them (looked at when agents are listed; empty: the agent does not say). An
    agent that refuses some games says so by a ``check_engine(engine)`` raising a ValueError, which
    tournaments ask before any game. The constructor's keyword arguments are the agent's options
    (``search:budget=200`` calls ``SearchAgent(budget=200)``).
    """

    name: str = "agent"
    description: str = ""
    plays: str = ""

    def act(self, decisions: Decisions) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<agent {self.name}>"


def fit_error(agent: Agent, engine: Engine) -> str | None:
    """Why ``agent`` cannot play ``engine``'s game (a trained model made for another one, a
    solution of another set-up), or None. An agent says so by a ``check_engine(engine)`` that
    raises a ValueError, of its own or of its ``model``."""
    check = getattr(agent, "check_engine", None)
    if check is None:
        check = getattr(getattr(agent, "model", None), "check_engine", None)
    if check is None:
        return None
    try:
        check(engine)
    except ValueError as err:
        return str(err)
    return None


def decide(agent: Agent, decisions: Decisions) -> np.ndarray:
    """``agent.act(decisions)``, checked: one legal action per game as an int64 array, or an
    :class:`AgentError` naming the agent, the game and the action. An agent
    that fails with anything but a ValueError (its own refusal, passed on) is named too, its error
    chained. Nothing has changed when it raises."""
    try:
        actions = agent.act(decisions)
    except ValueError:  # the agent's own clear refusal (a model made for another game ...): as it is
        raise
    except Exception as err:
        raise AgentError(f"agent {agent.name!r} failed to act ({type(err).__name__}: {err}) in "
                         f"{_game_words(decisions, 0)}") from err
    name = f"agent {agent.name!r}"
    return check_actions(decisions.engine, decisions.state, actions, games=decisions.games, none=False,
                         error=AgentError, who=f"{name}: ",
                         where=lambda k: f"{name} chose an illegal action in {_game_words(decisions, k)}: ")


def _game_words(decisions: Decisions, k: int) -> str:
    """The k-th game of ``decisions`` in words: its seed where known, else its batch index."""
    i = int(decisions.games[k]) if len(decisions) else -1
    if decisions.seeds is not None and i >= 0:
        return f"the game seeded {int(decisions.seeds[i])}"
    return f"game {i} of the batch"
