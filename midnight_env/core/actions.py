"""The fixed action space of a board and its record notation (RECORDS.md).

One ``Discrete(A)`` per board, shared by the engine mask, the envs and the records::

    index                              meaning
    0 .. S-1                           place a guest on gallery square s           "g<s>"
    S + o*(1+R) + 0                    move from origin o, walk the roll            "<o>>g<t>"
    S + o*(1+R) + 1+q                  move from origin o into room q               "<o>>r<q>"
    A-1 = S + (S+R+1)*(1+R)            pass                                         "pass"

Origins o: 0..S-1 gallery square o, S..S+R-1 room o-S (hidden_castle), S+R the cellar
(hidden_castle: the player's guest on its highest step). S = 28 gallery squares, R rooms:
``midnight_party`` A = 28 + 40*12 + 1 = 509, ``hidden_castle`` A = 28 + 38*10 + 1 = 409.
A walk's destination follows from the origin and the roll, so notation needs the roll. Actions
are integers 0..A-1 and rolls 1, 2, 4, 5 (0: none); anything else is an :class:`ActionError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from midnight_env.core.board import Board
from midnight_env.core.dice import NUMBERS
from midnight_env.core.rules import walk_target
from midnight_env.infra import checks

_MOVE = re.compile(r"^(g\d+|r\d+|cellar)>(g\d+|r\d+)$")


class ActionError(ValueError):
    """An action index or notation that does not exist or is not legal."""


@dataclass(frozen=True)
class ActionLayout:
    board: Board

    @property
    def num_squares(self) -> int:
        return self.board.num_squares

    @property
    def num_rooms(self) -> int:
        return self.board.num_rooms

    @property
    def num_origins(self) -> int:
        return self.num_squares + self.num_rooms + 1

    @property
    def move_base(self) -> int:
        return self.num_squares

    @property
    def pass_action(self) -> int:
        return self.num_actions - 1

    @property
    def num_actions(self) -> int:
        return self.board.num_actions

    # -- building indices -------------------------------------------------------------------
    def place(self, square: int) -> int:
        return square

    def move(self, origin: int, dest: int) -> int:
        """``dest`` 0 = walk, 1+q = room q."""
        return self.num_squares + origin * (1 + self.num_rooms) + dest

    def cellar_origin(self) -> int:
        return self.num_squares + self.num_rooms

    def room_origin(self, room: int) -> int:
        return self.num_squares + room

    # -- reading indices ----------------------------------------------------------------------
    def kind(self, action: int) -> str:
        self.check_index(action)
        if action < self.num_squares:
            return "place"
        return "pass" if action == self.pass_action else "move"

    def choice_kind(self, action: int) -> str:
        """``kind`` with a move told by where it goes: place, pass, walk or enter a room (the
        choices the research scripts count mistakes by)."""
        kind = self.kind(action)
        if kind != "move":
            return kind
        return "walk" if self.split_move(action)[1] == 0 else "enter a room"

    def check_index(self, action: int) -> None:
        """ActionError unless ``action`` is an integer 0..A-1 (a float, a bool or a string is refused)."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise ActionError(f"action {action!r} is not an action index: allowed are integers "
                              f"0..{self.num_actions - 1}")
        last = self.num_actions - 1
        checks.integer("action", action, 0, last, allowed=f"0..{last}", error=ActionError)

    @staticmethod
    def check_roll(roll: int) -> int:
        """``roll`` as an int, or ActionError unless it is a number rolled (1, 2, 4, 5) or 0 (none)."""
        if isinstance(roll, (bool, np.bool_)) or not isinstance(roll, (int, np.integer)) or roll not in (0, *NUMBERS):
            raise ActionError(f"roll {roll!r} is not a number rolled: allowed are {', '.join(map(str, NUMBERS))}, "
                              "or 0 for none")
        return int(roll)

    def split_move(self, action: int) -> tuple[int, int]:
        """(origin, dest) of a move index."""
        return divmod(int(action) - self.num_squares, 1 + self.num_rooms)

    def origin_name(self, origin: int) -> str:
        s, r = self.num_squares, self.num_rooms
        if origin < s:
            return f"g{origin}"
        if origin < s + r:
            return f"r{origin - s}"
        return "cellar"

    def walk_square(self, origin: int, roll: int) -> int:
        """Gallery square a walk of ``roll`` steps from ``origin`` ends on (the rules' ``walk_target``)."""
        b = self.board
        return int(walk_target(b.num_squares, b.num_rooms, b.door_square, b.arrow_square, int(origin), int(roll)))

    def to_notation(self, action: int, roll: int = 0) -> str:
        """Record notation of an action; a walk needs the roll being decided."""
        roll = self.check_roll(roll)
        kind = self.kind(action)
        if kind == "place":
            return f"g{action}"
        if kind == "pass":
            return "pass"
        origin, dest = self.split_move(action)
        if dest == 0:
            if roll <= 0:
                raise ActionError(f"action {action} is a walk: its notation needs the roll")
            target = f"g{self.walk_square(origin, roll)}"
        else:
            target = f"r{dest - 1}"
        return f"{self.origin_name(origin)}>{target}"

    def describe(self, action: int, roll: int = 0) -> str:
        """Human words for an action (error messages, the play command)."""
        roll = self.check_roll(roll)
        kind = self.kind(action)
        if kind == "place":
            return f"place a guest on gallery square {action}"
        if kind == "pass":
            return "pass"
        origin, dest = self.split_move(action)
        where = "walk" if dest == 0 else f"enter room {dest - 1}"
        text = f"move from {self.origin_name(origin)}, {where}"
        return f"{text} ({self.to_notation(action, roll)})" if roll > 0 or dest else text

    def from_notation(self, text: str, roll: int = 0) -> int:
        """Action index of a record notation (``g14``, ``g14>g18``, ``r2>r5``, ``cellar>g3``, ``pass``)."""
        roll = self.check_roll(roll)
        s, r = self.num_squares, self.num_rooms
        if text == "pass":
            return self.pass_action
        if re.fullmatch(r"g\d+", text):
            square = int(text[1:])
            if square >= s:
                raise ActionError(f"{text!r}: gallery squares are g0..g{s - 1}")
            return self.place(square)
        match = _MOVE.match(text)
        if not match:
            raise ActionError(f"{text!r} is not an action: allowed are 'g<square>', '<origin>><dest>' or 'pass'")
        src, dst = match.groups()
        if src == "cellar":
            origin = self.cellar_origin()
        elif src[0] == "g":
            origin = int(src[1:])
            if origin >= s:
                raise ActionError(f"{text!r}: gallery squares are g0..g{s - 1}")
        else:
            room = int(src[1:])
            if room >= r:
                raise ActionError(f"{text!r}: rooms are r0..r{r - 1}")
            origin = self.room_origin(room)
        if dst[0] == "r":
            room = int(dst[1:])
            if room >= r:
                raise ActionError(f"{text!r}: rooms are r0..r{r - 1}")
            return self.move(origin, 1 + room)
        square = int(dst[1:])
        if roll <= 0:
            raise ActionError(f"{text!r} is a walk: reading it needs the roll")
        if self.walk_square(origin, roll) != square:
            raise ActionError(
                f"{text!r}: a walk of {roll} from {src} ends on g{self.walk_square(origin, roll)}, not {dst}")
        return self.move(origin, 0)
