"""Agents that play with OpenSpiel's bots (the ``openspiel`` extra: ``pip install open_spiel``).

:class:`OpenSpielAgent` wraps any bot: it is given a factory ``make_bot(game, player, random_state)``
returning a ``pyspiel.Bot`` (OpenSpiel's own, or a Python one such as ``MCTSBot``). For every
decision it loads the OpenSpiel game of the engine's set-up (``midnight_env.envs.openspiel``), makes
an OpenSpiel state at the game's position and asks a fresh bot for its step. The bot's
``random_state`` is seeded from the game's own random stream, so a game plays the same whatever
batch it runs in (and a fresh bot carries nothing from one game to another).

:class:`MCTSAgent` is OpenSpiel's ``MCTSBot`` with random rollouts, registered as
``openspiel_mcts`` (``midnight tournament --agents openspiel_mcts:simulations=100,expert,...``).
A bot of your own plays as ``module:Attribute`` naming a function that returns
``OpenSpielAgent(make_bot)`` (docs/INTEGRATIONS.md shows one).

Search through OpenSpiel's Python API copies a position per node and plays rollouts one
decision at a time: it is far slower than the batched ``search`` agent, so ``openspiel_mcts``
sits out the default tournament.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

from midnight_env.arena.agent import Agent, Decisions
from midnight_env.infra import checks


def _openspiel():
    """midnight_env.envs.openspiel, or an ImportError saying which extra brings it."""
    try:
        from midnight_env.envs import openspiel
    except ImportError as err:
        raise ImportError(f"OpenSpiel agents need the open_spiel package ({err}): pip install "
                          "'midnight-env[openspiel]'") from None
    return openspiel


class OpenSpielAgent(Agent):
    """Plays every decision with ``make_bot(game, player, random_state).step(state)``."""

    name = "openspiel"
    description = "plays with an OpenSpiel bot (a factory make_bot(game, player, random_state))"

    @classmethod
    def plays(cls) -> str:
        """Every set-up OpenSpiel loads (the variants' own boards), where the package is installed."""
        if importlib.util.find_spec("pyspiel") is None:
            return ("no set-up here: it needs the open_spiel package (pip install 'midnight-env[openspiel]'), then "
                    "every set-up on the variants' own boards")
        return "every set-up on the variants' own boards"

    def __init__(self, make_bot: Callable[[Any, int, np.random.RandomState], Any]):
        self._bridge = _openspiel()
        self.make_bot = make_bot
        self._games: dict[int, Any] = {}  # id of an engine -> the OpenSpiel game of its set-up

    def act(self, decisions: Decisions) -> np.ndarray:
        engine = decisions.engine
        game = self._games.get(id(engine))
        if game is None:
            game = self._games[id(engine)] = self._bridge.openspiel_game(engine)
        seeds = (decisions.uniforms() * 2**31).astype(np.int64)  # from each game's own stream
        positions = decisions.substate()
        actions = np.empty(len(decisions), np.int64)
        for k in range(len(decisions)):
            state = self._bridge.state_at(game, positions, k)
            bot = self.make_bot(game, state.current_player(), np.random.RandomState(int(seeds[k])))
            actions[k] = bot.step(state)
        return actions


class MCTSAgent(OpenSpielAgent):
    """OpenSpiel's Monte-Carlo tree search (``MCTSBot``, UCT with random rollouts)."""

    name = "openspiel_mcts"
    description = ("OpenSpiel's MCTSBot: UCT over decisions and dice with random rollouts (simulations, "
                   "rollouts, uct_c; open_spiel package)")

    def __init__(self, simulations: int = 100, rollouts: int = 1, uct_c: float = 2.0):
        for option, value in (("simulations", simulations), ("rollouts", rollouts)):
            checks.integer(f"openspiel_mcts option {option}=", value, 1)
        checks.number("openspiel_mcts option uct_c=", uct_c, 0, low_open=True)
        _openspiel()  # a clear ImportError first
        from open_spiel.python.algorithms import mcts

        def make_bot(game, player, random_state):
            evaluator = mcts.RandomRolloutEvaluator(int(rollouts), random_state)
            return mcts.MCTSBot(game, float(uct_c), int(simulations), evaluator, random_state=random_state)

        super().__init__(make_bot)
        self.simulations, self.rollouts, self.uct_c = int(simulations), int(rollouts), float(uct_c)


__all__ = ["OpenSpielAgent", "MCTSAgent"]
