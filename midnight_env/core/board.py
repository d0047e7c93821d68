"""Boards as data: the gallery ring, the rooms with their door squares and kinds, and the stairs.

A board is a JSON file (``midnight_env/core/boards/<name>.json`` for the shipped ones). It is loaded
and validated once; the rules engine only ever sees the arrays of :class:`Board`. Changing a door
square or a room kind is a data change, never a code change (RULES.md section 1).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

ROOM_KINDS = ("plain", "red", "green")  # index = kind code used by the engine
PLAIN, RED, GREEN = 0, 1, 2
HUGO_STARTS = ("top", "cellar_door")  # on the highest landing / in front of the steps
OVERFLOWS = ("wine_cellar", "top_step")  # where a capture goes when every stair place is taken
STAIRS_KINDS = ("landings", "steps")
SHIPPED_BOARDS = ("midnight_party", "hidden_castle")


class BoardError(ValueError):
    """A board file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    num_squares: int  # gallery squares 0..num_squares-1, clockwise
    arrow_square: int  # where Hugo enters the gallery and cellar guests count from
    door_square: np.ndarray  # (R,) int64: door square of room q
    room_kind: np.ndarray  # (R,) int64: 0 plain, 1 red (+1), 2 green (-3, exact roll)
    room_names: tuple[str, ...]
    stairs_kind: str  # "landings" (midnight_party) or "steps" (hidden_castle)
    stair_values: np.ndarray  # (L,) spooky points of stair place 0..L-1, highest first
    hugo_start: str  # "top": Hugo starts on stair place 0; "cellar_door": one step before it
    overflow: str  # "wine_cellar": extra place L; "top_step": join stair place 0
    wine_cellar_value: int  # points of the wine cellar (0 where there is none)

    @property
    def num_rooms(self) -> int:
        return len(self.door_square)

    @property
    def num_stair_places(self) -> int:
        return len(self.stair_values)

    @property
    def hugo_track_stairs(self) -> int:
        """Positions of Hugo's track before gallery square ``arrow_square`` (T in the engine)."""
        return self.num_stair_places + (1 if self.hugo_start == "cellar_door" else 0)

    @property
    def num_actions(self) -> int:
        """Size of the board's action space: S placements, (S+R+1) origins x (walk, R rooms), pass
        (laid out in ``actions.py``; here because the rules need the size and sit below the layout)."""
        return self.num_squares + (self.num_squares + self.num_rooms + 1) * (1 + self.num_rooms) + 1

    def place_values(self) -> np.ndarray:
        """(L+1,) points per guest of each stair place, then the overflow place (wine cellar)."""
        extra = self.wine_cellar_value if self.overflow == "wine_cellar" else self.stair_values[0]
        return np.append(self.stair_values, extra).astype(np.int32)


def _field(data: dict, key: str, source: str, kind: type | tuple[type, ...]):
    if key not in data:
        raise BoardError(f"{source}: missing field '{key}'")
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise BoardError(f"{source}: field '{key}' must be {names}, got {value!r}")
    return value


def board_from_dict(data: dict, source: str = "<board>") -> Board:
    """Validate a board definition and build a :class:`Board`; errors name the field."""
    if not isinstance(data, dict):
        raise BoardError(f"{source}: a board must be a JSON object, got {type(data).__name__}")
    name = _field(data, "name", source, str)
    num_squares = _field(data, "gallery_squares", source, int)
    if not 6 <= num_squares <= 64:
        raise BoardError(f"{source}: field 'gallery_squares' must be in 6..64, got {num_squares}")
    arrow = _field(data, "arrow_square", source, int)
    if not 0 <= arrow < num_squares:
        raise BoardError(f"{source}: field 'arrow_square' must be in 0..{num_squares - 1}, got {arrow}")
    rooms = _field(data, "rooms", source, list)
    if not 1 <= len(rooms) <= 32:
        raise BoardError(f"{source}: field 'rooms' must list 1..32 rooms, got {len(rooms)}")
    doors, kinds, names = [], [], []
    for q, room in enumerate(rooms):
        where = f"{source}: rooms[{q}]"
        if not isinstance(room, dict):
            raise BoardError(f"{where} must be an object with 'door' and 'kind'")
        door = _field(room, "door", where, int)
        if not 0 <= door < num_squares:
            raise BoardError(f"{where}: field 'door' must be a gallery square 0..{num_squares - 1}, got {door}")
        if door in doors:
            raise BoardError(f"{where}: field 'door' {door} is already the door of room {doors.index(door)}")
        kind = _field(room, "kind", where, str)
        if kind not in ROOM_KINDS:
            raise BoardError(f"{where}: field 'kind' must be one of {', '.join(ROOM_KINDS)}, got {kind!r}")
        doors.append(door)
        kinds.append(ROOM_KINDS.index(kind))
        names.append(str(room.get("name", f"room {q}")))
    stairs = _field(data, "stairs", source, dict)
    where = f"{source}: stairs"
    stairs_kind = _field(stairs, "kind", where, str)
    if stairs_kind not in STAIRS_KINDS:
        raise BoardError(f"{where}: field 'kind' must be one of {', '.join(STAIRS_KINDS)}, got {stairs_kind!r}")
    values = _field(stairs, "values", where, list)
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
        raise BoardError(f"{where}: field 'values' must be a non-empty list of points >= 0, got {values!r}")
    if any(a < b for a, b in zip(values, values[1:])):
        raise BoardError(f"{where}: field 'values' must be highest first (Hugo climbs from the top), got {values!r}")
    hugo_start = _field(stairs, "hugo_start", where, str)
    if hugo_start not in HUGO_STARTS:
        raise BoardError(f"{where}: field 'hugo_start' must be one of {', '.join(HUGO_STARTS)}, got {hugo_start!r}")
    overflow = _field(stairs, "overflow", where, str)
    if overflow not in OVERFLOWS:
        raise BoardError(f"{where}: field 'overflow' must be one of {', '.join(OVERFLOWS)}, got {overflow!r}")
    wine = 0
    if overflow == "wine_cellar":
        wine = _field(stairs, "wine_cellar_value", where, int)
        if wine < 0:
            raise BoardError(f"{where}: field 'wine_cellar_value' must be >= 0, got {wine}")
    return Board(
        name=name,
        description=str(data.get("description", "")),
        num_squares=num_squares,
        arrow_square=arrow,
        door_square=np.array(doors, dtype=np.int64),
        room_kind=np.array(kinds, dtype=np.int64),
        room_names=tuple(names),
        stairs_kind=stairs_kind,
        stair_values=np.array(values, dtype=np.int32),
        hugo_start=hugo_start,
        overflow=overflow,
        wine_cellar_value=wine,
    )


def load_board(name_or_path: str | Path) -> Board:
    """Load a shipped board by name (``midnight_party``, ``hidden_castle``) or a JSON file by path."""
    text_name = str(name_or_path)
    if text_name in SHIPPED_BOARDS:
        source = f"boards/{text_name}.json"
        text = resources.files("midnight_env.core").joinpath("boards", f"{text_name}.json").read_text("utf-8")
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise BoardError(
                f"board {text_name!r} is neither a shipped board ({', '.join(SHIPPED_BOARDS)}) nor a file"
            )
        source, text = str(path), path.read_text("utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise BoardError(f"{source}: not valid JSON ({err})") from None
    return board_from_dict(data, source)
