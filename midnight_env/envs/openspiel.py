"""The game in OpenSpiel: both variants registered with ``pyspiel``, for its algorithms and bots.

Importing this module registers two games (``pyspiel.register_game``)::

    pyspiel.load_game("midnight_party")                      # 4 players, the rules' defaults
    pyspiel.load_game("midnight_party(players=3,rounds=2)")  # rule options as game parameters
    pyspiel.load_game("hidden_castle", {"players": 2, "max_turns": 300})

=====================  =========================================================================
Parameters             ``players`` (1..8) and the variant's rule options (RULES.md): both have
                       ``guests_per_player`` (0: the rules' number for the player count) and
                       ``max_turns``; ``midnight_party`` also ``hugo_slow_from_players``,
                       ``pass_rule`` and ``rounds`` (0: as many rounds as players, the rule
                       option ``rounds="players"``; OpenSpiel parameters have one type each)
Type                   sequential, perfect information, explicit chance, general sum,
                       terminal rewards
Players                seats 0..N-1; ``current_player()`` is the seat deciding (placing a
                       guest, or moving for its roll), ``CHANCE`` at a roll, ``TERMINAL`` at the end
Actions                the engine's ``Discrete(A)`` layout (``midnight_env.core.actions``; A = 509 /
                       409); ``action_to_string`` gives the record notation (``g14>r5``)
Chance                 one outcome per roll: 0..4 = faces 1, 2, 4, 5 (1/6 each) and Hugo (1/3)
Returns                the rank reward at the end (+1 winners, -1 last; ``scoring.rank_rewards``),
                       0 before; a solo game against Hugo always pays +1 (the bounds stay -1, 1)
Observations           ``observation_tensor(p)``: the envs' observation vector from seat p's view
                       (``midnight_env.core.observation``; the observer's ``dict`` names its sections);
                       ``observation_string(p)``: the position drawn as text
=====================  =========================================================================

The state is the engine's own (a batch of one game) moved with its explicit chance API:
``Engine.apply_action`` stops at the next roll, ``Engine.apply_roll`` plays the face OpenSpiel
chose, ``GameState.copy()`` is ``clone()``. So the engine's dice stream is never used: the game
depends on its actions alone, as OpenSpiel's serialisation and search expect.

``openspiel_game(engine)`` loads the game an engine plays; ``state_at(game, engine, position)``
makes a state at a position of a batch (its history starts there: for bots, not for replays).
Agents that play with OpenSpiel bots are in ``midnight_agents.openspiel``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from midnight_env.core.actions import ActionError
from midnight_env.core.config import DEFAULT_GUESTS, MAX_PLAYERS, MIN_PLAYERS, VARIANT_OPTIONS, ConfigError
from midnight_env.core.dice import CHANCE_OUTCOMES, HUGO
from midnight_env.core.engine import Engine
from midnight_env.core.observation import encode_observations, observation_layout
from midnight_env.core.positions import draw_position
from midnight_env.core.scoring import rank_rewards
from midnight_env.core.state import MOVE, OVER, ROLL, GameState

# rule options' defaults as OpenSpiel parameters (one type each; 0 stands for a default that
# depends on the player count, or for rounds="players")
_RULE_PARAMETERS = {"guests_per_player": 0, "hugo_slow_from_players": 5, "pass_rule": "last_guest", "rounds": 3,
                    "max_turns": 2000}
DEFAULT_PLAYERS = 4


def _game_type(variant: str) -> pyspiel.GameType:
    parameters = {"players": DEFAULT_PLAYERS, **{k: _RULE_PARAMETERS[k] for k in VARIANT_OPTIONS[variant]}}
    long_name = {"midnight_party": "Midnight Party", "hidden_castle": "Escape from the Hidden Castle"}[variant]
    return pyspiel.GameType(
        short_name=variant,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS,
        min_num_players=MIN_PLAYERS,
        provides_information_state_string=True,  # the history (perfect information)
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters,
    )


def engine_options(variant: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(players, rule options) of OpenSpiel game parameters, the 0 defaults resolved."""
    players = int(params.get("players", DEFAULT_PLAYERS))
    options = {k: params[k] for k in VARIANT_OPTIONS[variant] if k in params}
    if options.get("guests_per_player") == 0:
        options["guests_per_player"] = DEFAULT_GUESTS.get(players, 1)
    if options.get("rounds") == 0:
        options["rounds"] = "players"
    return players, options


def game_parameters(engine: Engine) -> dict[str, Any]:
    """The OpenSpiel game parameters of the game ``engine`` plays."""
    if engine.config.custom_board:
        raise ConfigError("OpenSpiel plays the variants' own boards only: this engine has a custom board")
    params: dict[str, Any] = {"players": engine.num_players, **engine.config.options}
    if params.get("rounds") == "players":
        params["rounds"] = 0
    return params


class _Position:
    """The engine and its batch of one game; OpenSpiel clones a state by deep copy, which copies
    the game with ``GameState.copy()`` and shares the engine."""

    __slots__ = ("engine", "state")

    def __init__(self, engine: Engine, state: GameState):
        self.engine = engine
        self.state = state

    def __deepcopy__(self, memo) -> _Position:
        return _Position(self.engine, self.state.copy())


class MidnightGame(pyspiel.Game):
    """One variant with its players and rule options (``variant`` is set by the subclasses)."""

    variant = ""

    def __init__(self, params: dict[str, Any] | None = None):
        params = dict(params or {})
        players, options = engine_options(self.variant, params)
        self.engine = Engine(self.variant, players, **options)
        rules = self.engine.rules
        # an upper bound: each roll is a chance outcome, a move, and at most every guest placed
        # again; set-up and the classic rounds' re-placements besides
        guests = players * rules.guests
        info = pyspiel.GameInfo(
            num_distinct_actions=self.engine.num_actions,
            max_chance_outcomes=len(CHANCE_OUTCOMES),
            num_players=players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=None,
            max_game_length=rules.max_turns * (2 + guests) + guests * (rules.rounds + 1),
        )
        super().__init__(_game_type(self.variant), info, params)

    def new_initial_state(self) -> MidnightState:
        return MidnightState(self, self.engine.new_games([0]))

    def make_py_observer(self, iig_obs_type=None, params=None):
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return MidnightObserver(self.engine, params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class MidnightPartyGame(MidnightGame):
    variant = "midnight_party"


class HiddenCastleGame(MidnightGame):
    variant = "hidden_castle"


class MidnightState(pyspiel.State):
    """A game in progress: the engine's position, moved by OpenSpiel's actions and chance outcomes."""

    def __init__(self, game: MidnightGame, state: GameState):
        super().__init__(game)
        self._position = _Position(game.engine, state)

    @property
    def game_state(self) -> GameState:
        """The engine's batch of one game (read it, never write it)."""
        return self._position.state

    def current_player(self) -> int:
        s = self._position.state
        phase = int(s.phase[0])
        if phase == OVER:
            return pyspiel.PlayerId.TERMINAL
        if phase == ROLL:
            return pyspiel.PlayerId.CHANCE
        return int(s.player[0])

    def _legal_actions(self, player: int) -> list[int]:
        return np.flatnonzero(self._position.state.legal[0]).tolist()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(k, p) for k, (_, p) in enumerate(CHANCE_OUTCOMES)]

    def _apply_action(self, action: int) -> None:
        engine, s = self._position.engine, self._position.state
        if s.phase[0] == ROLL:
            engine.apply_roll(s, CHANCE_OUTCOMES[action][0])
        else:  # OpenSpiel has checked that the action is legal
            engine.apply_action(s, np.array([action], np.int64), check=False)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            face = CHANCE_OUTCOMES[action][0]
            return "roll Hugo" if face == HUGO else f"roll {face}"
        s = self._position.state
        roll = int(s.roll[0]) if s.phase[0] == MOVE else 0
        try:
            return self._position.engine.layout.to_notation(action, roll)
        except ActionError:  # a walk asked about outside a move: its square depends on the roll
            return f"action {action}"

    def is_terminal(self) -> bool:
        return int(self._position.state.phase[0]) == OVER

    def returns(self) -> list[float]:
        s = self._position.state
        if s.phase[0] != OVER:
            return [0.0] * s.spooky.shape[1]
        return rank_rewards(s.spooky[0:1])[0].astype(float).tolist()

    def __str__(self) -> str:
        return draw_position(self._position.engine, self._position.state)


class MidnightObserver:
    """OpenSpiel's observer: ``tensor`` the observation vector of the envs from a seat's view,
    ``dict`` its named sections (``gallery``, ``hugo``, ``spooky`` ...)."""

    def __init__(self, engine: Engine, params=None):
        if params:
            raise ValueError(f"observation parameters are not supported: got {params}")
        self._engine = engine
        lay = observation_layout(engine)
        self.tensor = np.zeros(lay.size, np.float32)
        self.dict = {name: self.tensor[start:start + size] for name, start, size in lay.sections}

    def set_from(self, state: MidnightState, player: int) -> None:
        self.tensor[:] = encode_observations(self._engine, state.game_state, [0], player)[0]

    def string_from(self, state: MidnightState, player: int) -> str:
        return f"seat {player}\n" + draw_position(self._engine, state.game_state)


GAMES = {"midnight_party": MidnightPartyGame, "hidden_castle": HiddenCastleGame}


def openspiel_game(engine: Engine) -> MidnightGame:
    """The OpenSpiel game that ``engine`` plays (variant, players and rule options)."""
    return pyspiel.load_game(engine.variant, game_parameters(engine))


def state_at(game: MidnightGame, position: GameState, i: int = 0) -> MidnightState:
    """An OpenSpiel state at game ``i`` of a batch of ``game``'s engine (a copy; its history starts
    here, so it is for bots and search, not for replaying or serialising)."""
    return MidnightState(game, position.take([i]))


def _register() -> None:
    registered = set(pyspiel.registered_names())
    for variant, cls in GAMES.items():
        if variant not in registered:
            pyspiel.register_game(_game_type(variant), cls)


_register()

__all__ = ["MidnightGame", "MidnightPartyGame", "HiddenCastleGame", "MidnightState", "MidnightObserver", "GAMES",
           "openspiel_game", "state_at", "game_parameters", "engine_options"]
