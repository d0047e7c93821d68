"""A person's game against agents on the page: one seat is the person's, the others are agents.

The server keeps the game (:class:`HumanGame`): it rolls the dice and lets the agents decide until
the person is to decide, and hands the page every event on the way with the position after it
(the page shows them one by one). The person's choice comes back in record notation and is
checked against the legal ones. The game is recorded as it goes, like any other
(:class:`~midnight_env.core.records.Recorder`), and written to the data folder when it ends.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from midnight_env.arena.agent import Decisions, decide
from midnight_env.core.config import MAX_PLAYERS, MIN_PLAYERS, VARIANTS, make_config
from midnight_env.core.dice import agent_streams
from midnight_env.core.engine import Engine
from midnight_env.core.records import Recorder
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL
from midnight_env.infra.seeds import SEED_LIMIT, SEED_RANGE
from midnight_env.web.checks import agent_names, text, whole
from midnight_env.web.errors import WebError
from midnight_env.web.sources import DataFolder
from midnight_env.web.views import board_view, frame, seat_agents

HUMAN = "human"  # the person's seat, as the record names its agent
MAX_GAMES = 64  # games kept at once; the one least recently played is dropped


OPPONENTS_ALLOWED = ("an agent's name for every other seat, names separated by commas, or a list of names (one "
                     "per other seat)")


class HumanGame:
    """One game: the person on ``seat``, an agent spec on every other seat (``opponents``: one
    for all, or one per other seat in seat order). Every argument is a request's JSON value,
    checked here (type and range; a refusal names the field, :mod:`midnight_env.web.checks`)."""

    def __init__(self, variant: Any, players: Any, seat: Any, opponents: Any, seed: Any = None):
        num_players = whole("players", players, MIN_PLAYERS, MAX_PLAYERS)
        try:
            config = make_config(text("variant", variant, ", ".join(VARIANTS)), num_players)
        except (TypeError, ValueError) as err:
            raise WebError(str(err)) from None
        seat = whole("seat", seat, 0, num_players - 1)
        names = [] if opponents is None else agent_names("opponents", opponents, OPPONENTS_ALLOWED)
        others = num_players - 1
        if others and len(names) == 1:
            names = names * others
        if len(names) != others:
            raise WebError(f"{len(names)} opponents for {others} other seats: give one agent for all of them, or "
                           f"one per other seat")
        if seed is None or seed == "":
            seed = secrets.randbelow(min(SEED_LIMIT, 2**31))  # short enough to read and to type again
        seed = whole("seed", seed, 0, SEED_LIMIT - 1, SEED_RANGE)
        specs: list[str | None] = list(names)
        specs.insert(seat, None)
        self.engine = Engine(config)
        self.seat, self.seed, self.specs = seat, seed, specs
        self.agents = seat_agents(self.engine, specs)
        self.state = self.engine.new_games([seed])
        self.rng = agent_streams([seed])
        self.recorder = Recorder(self.engine, [seed], [spec or HUMAN for spec in specs])
        self.id = secrets.token_urlsafe(12)
        self.saved: dict | None = None  # where the record was written, once the game is over
        self.lock = threading.Lock()  # one move at a time

    @property
    def over(self) -> bool:
        return int(self.state.phase[0]) == OVER

    def _events(self) -> list[dict]:
        return self.recorder.events[0]

    def _apply(self, action: int) -> None:
        actions = np.array([action], np.int64)
        self.recorder.decisions(self.state, actions)
        self.engine.apply_action(self.state, actions)
        self.recorder.round_ends(self.state)

    def _step(self, before: int) -> dict:
        """The events since ``before`` and the position after them."""
        return {"events": self._events()[before:], "frame": frame(self.engine, self.state)}

    def _advance(self) -> list[dict]:
        """Roll and let the agents decide until the person decides or the game ends."""
        steps = []
        while True:
            before = len(self._events())
            phase, player = int(self.state.phase[0]), int(self.state.player[0])
            if phase == ROLL:
                rollers = self.state.player.copy()
                self.recorder.rolls(rollers, self.engine.apply_roll(self.state))
                self.recorder.round_ends(self.state)
            elif phase in (PLACE, MOVE) and player != self.seat:
                decisions = Decisions(self.engine, self.state, np.array([0]), self.rng, np.array([self.seed]))
                self._apply(int(decide(self.agents[player], decisions)[0]))
            else:
                break
            steps.append(self._step(before))
        return steps

    def _finish(self, data: DataFolder | None) -> None:
        record = self.recorder.record(self.state, 0)
        if data is None:
            self.saved = {"error": "no data folder: the record was not written"}
            return
        try:
            self.saved = data.save_record(record)
        except (OSError, WebError) as err:  # a read-only folder: the game is over all the same
            self.saved = {"error": f"the record could not be written: {err}"}

    def _reply(self, steps: list[dict]) -> dict:
        return {"id": self.id, "seat": self.seat, "seed": str(self.seed), "agents": [s or HUMAN for s in self.specs],
                "steps": steps, "frame": frame(self.engine, self.state), "over": self.over, "saved": self.saved}

    def start(self, data: DataFolder | None) -> dict:
        """The board and the game up to the person's first decision."""
        with self.lock:
            steps = self._advance()
            if self.over:
                self._finish(data)
            return {**self._reply(steps), "board": board_view(self.engine)}

    def choose(self, move: Any, data: DataFolder | None) -> dict:
        """Play the person's ``move`` (record notation), then on to their next decision."""
        with self.lock:
            if self.over:
                raise WebError("the game is over: start a new one", 409)
            legal = self.engine.legal_notations(self.state, 0)
            if not isinstance(move, str) or move not in legal:
                shown = str(move)[:30] if isinstance(move, str) else repr(move)[:30]
                raise WebError(f"move {shown!r} is not legal here: legal are {', '.join(legal)}")
            before = len(self._events())
            self._apply(self.engine.layout.from_notation(move, int(self.state.roll[0])))
            steps = [self._step(before)] + self._advance()
            if self.over:
                self._finish(data)
            return self._reply(steps)


class HumanGames:
    """The games being played, by id, the MAX_GAMES most recently played."""

    def __init__(self):
        self._games: OrderedDict[str, HumanGame] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, game: HumanGame) -> None:
        with self._lock:
            self._games[game.id] = game
            while len(self._games) > MAX_GAMES:
                self._games.popitem(last=False)

    def get(self, key: Any) -> HumanGame:
        with self._lock:
            game = self._games.get(key) if isinstance(key, str) else None
            if game is not None:
                self._games.move_to_end(key)
        if game is None:
            raise WebError(f"game {str(key)[:30]!r} is not being played here (games are kept in memory, the "
                           f"{MAX_GAMES} most recent, until the server stops): start a new one", 404)
        return game


__all__ = ["HUMAN", "HumanGame", "HumanGames", "MAX_GAMES"]
