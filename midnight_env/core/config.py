"""Variants and rule options: validated once, then frozen into the engine's :class:`Rules`.

Every option of RULES.md is here with its default and allowed values; a bad value raises
:class:`ConfigError` naming the option, the value and what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from midnight_env.core.board import Board, load_board
from midnight_env.infra import checks

VARIANTS = ("midnight_party", "hidden_castle")
MIN_PLAYERS, MAX_PLAYERS = 1, 8
# RULES.md section 2; one player (solo against Hugo) gets 6 guests.
DEFAULT_GUESTS = {1: 6, 2: 6, 3: 5, 4: 4, 5: 3, 6: 2, 7: 2, 8: 2}
PASS_RULES = ("last_guest", "always")
# hidden_castle: the game ends when any player reaches this many spooky points.
CASTLE_POINTS_LIMIT = 46
CASTLE_START_POINTS = 10
# hidden_castle clock index 0..6 = 23:45, 24:00, 1:00, 2:00, 3:00, 4:00, 5:00 (game over).
CLOCK_TIMES = ("23:45", "24:00", "1:00", "2:00", "3:00", "4:00", "5:00")
CLOCK_END = 6
CLOCK_SPEED = np.array([3, 3, 4, 5, 6, 7, 7], dtype=np.int64)

# Options each variant knows, in the order records write them.
VARIANT_OPTIONS = {
    "midnight_party": ("guests_per_player", "hugo_slow_from_players", "pass_rule", "rounds", "max_turns"),
    "hidden_castle": ("guests_per_player", "max_turns"),
}


class ConfigError(ValueError):
    """An unknown variant, a player count or option out of range."""


class UnknownOptionError(ConfigError, TypeError):
    """An option name the variant does not know. A TypeError too, as Python raises for an unknown
    keyword argument: libraries that pass extra keywords to an env (TorchRL's ``GymEnv``) drop
    them on a TypeError."""


def check_option_names(variant: str, names) -> None:
    """UnknownOptionError for the first of ``names`` that is not a rule option of ``variant``."""
    known = VARIANT_OPTIONS[variant]
    for name in names:
        if name not in known:
            raise UnknownOptionError(f"unknown option {name!r} for variant {variant}: allowed are {', '.join(known)}")


class Rules(NamedTuple):
    """Everything the compiled rules need, as plain numbers and arrays (one per batch)."""

    castle: bool  # hidden_castle rules (clock, expelling, rooms and cellar as origins)
    num_players: int  # N
    guests: int  # G, guests per player
    num_squares: int  # S, gallery squares
    arrow: int  # arrow square: Hugo's entry, cellar guests' first step
    num_rooms: int  # R
    door: np.ndarray  # (R,) door square per room
    kind: np.ndarray  # (R,) 0 plain, 1 red, 2 green
    place_value: np.ndarray  # (L+1,) points per guest on stair place l; l = L is the overflow
    num_places: int  # L, stair places (landings / steps)
    overflow_place: int  # place a capture takes when all L are occupied: L (wine cellar) or 0
    hugo_stairs: int  # T, positions of Hugo's track before the gallery
    speed: int  # midnight_party: Hugo's steps per move (hidden_castle: clock decides)
    clock_speed: np.ndarray  # hidden_castle speed per clock index
    rounds: int  # midnight_party rounds (1 for hidden_castle)
    pass_always: bool  # midnight_party pass_rule == "always"
    max_turns: int  # rolls before truncation
    num_actions: int  # A, size of the action space
    room_at: np.ndarray  # (S,) room whose door is gallery square s, -1 for none (doors are distinct)


@dataclass(frozen=True)
class GameConfig:
    """A validated variant + player count + options on a board."""

    variant: str
    num_players: int
    options: dict[str, Any] = field(hash=False)  # every option of the variant, defaults filled in
    board: Board = field(hash=False, repr=False)
    custom_board: bool = False  # a board other than the variant's own (Python API only: records,
    #                             tournaments and the command line play the variant's own board)

    @property
    def castle(self) -> bool:
        return self.variant == "hidden_castle"

    @property
    def guests(self) -> int:
        return self.options["guests_per_player"]

    @property
    def rounds(self) -> int:
        if self.castle:
            return 1
        rounds = self.options["rounds"]
        return self.num_players if rounds == "players" else rounds

    @property
    def hugo_speed(self) -> int:
        """midnight_party: Hugo's fixed speed (hidden_castle: see the clock)."""
        slow = self.options.get("hugo_slow_from_players", 5)
        return 2 if self.num_players >= slow else 3

    def rules(self) -> Rules:
        b = self.board
        num_places = b.num_stair_places
        room_at = np.full(b.num_squares, -1, np.int64)
        room_at[b.door_square] = np.arange(b.num_rooms)
        return Rules(
            castle=self.castle,
            num_players=self.num_players,
            guests=self.guests,
            num_squares=b.num_squares,
            arrow=b.arrow_square,
            num_rooms=b.num_rooms,
            door=b.door_square.astype(np.int64),
            kind=b.room_kind.astype(np.int64),
            place_value=b.place_values().astype(np.int64),
            num_places=num_places,
            overflow_place=num_places if b.overflow == "wine_cellar" else 0,
            hugo_stairs=b.hugo_track_stairs,
            speed=self.hugo_speed,
            clock_speed=CLOCK_SPEED,
            rounds=self.rounds,
            pass_always=(not self.castle) and self.options["pass_rule"] == "always",
            max_turns=self.options["max_turns"],
            num_actions=b.num_actions,
            room_at=room_at,
        )


def _int_option(name: str, value: Any, low: int, high: int, allowed: str | None = None) -> int:
    """An integer option (a string of digits, from the command line, is read as one)."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    return checks.integer(f"option {name}=", value, low, high, allowed=allowed, error=ConfigError)


def make_config(variant: str = "midnight_party", num_players: int = 4, board: str | Board | None = None,
                **options: Any) -> GameConfig:
    """Validate a variant, a player count and rule options (RULES.md), filling in defaults.

    ``board`` is a shipped board name, a JSON path or a :class:`Board`; by default the
    variant's own board. Options given as strings (from the command line) are converted.
    """
    if variant not in VARIANTS:
        raise ConfigError(f"unknown variant {variant!r}: allowed are {', '.join(VARIANTS)}")
    if isinstance(num_players, str) and num_players.isdigit():
        num_players = int(num_players)
    num_players = checks.integer("num_players=", num_players, MIN_PLAYERS, MAX_PLAYERS,
                                 allowed=f"{MIN_PLAYERS}..{MAX_PLAYERS}", error=ConfigError)
    check_option_names(variant, options)
    board_obj = board if isinstance(board, Board) else load_board(board or variant)
    num_squares = board_obj.num_squares

    resolved: dict[str, Any] = {}
    guests = options.get("guests_per_player", DEFAULT_GUESTS[num_players])
    resolved["guests_per_player"] = _int_option("guests_per_player", guests, 1, num_squares // num_players)
    if variant == "midnight_party":
        resolved["hugo_slow_from_players"] = _int_option(
            "hugo_slow_from_players", options.get("hugo_slow_from_players", 5), 1, 99)
        resolved["pass_rule"] = checks.choice("option pass_rule=", options.get("pass_rule", "last_guest"), PASS_RULES,
                                              error=ConfigError)
        rounds = options.get("rounds", 3)
        resolved["rounds"] = "players" if rounds == "players" else _int_option(
            "rounds", rounds, 1, 99, allowed="integers 1..99 or 'players' (as many rounds as players)")
    resolved["max_turns"] = _int_option("max_turns", options.get("max_turns", 2000), 1, 10_000_000)
    return GameConfig(variant=variant, num_players=num_players, options=resolved, board=board_obj,
                      custom_board=board is not None and board != variant)


def setup_words(variant: str, num_players: int, options: dict[str, Any] | None = None,
                board: str | None = None) -> str:
    """A set-up in words, as ``midnight agents`` says which ones an agent plays: ``hidden_castle 4
    players``, then each rule option that differs from its default for that many players
    (``max_turns`` aside), then a board other than the variant's own."""
    try:
        defaults = make_config(variant, num_players).options
    except ConfigError:  # not a set-up of this version: said as it is
        defaults = {}
    words = [f"{variant} {num_players} player{'' if num_players == 1 else 's'}"]
    words += [f"{k}={v}" for k, v in (options or {}).items() if k != "max_turns" and defaults.get(k) != v]
    if board and board != variant:
        words.append(f"board {board}")
    return ", ".join(words)
