"""Where everything of the picture lies, computed from the board alone: plain data, no drawing.

Units and axes: one gallery square is 1 x 1; x grows to the right and y downwards, as on the
terminal board and in SVG. The ring lies on the rim of a grid (:func:`ring_grid`): the cell in
row ``r``, column ``c`` covers ``[c, c + 1] x [r, r + 1]``; square 0 takes the top-left cell
and the ring runs clockwise. Rooms lie outside the ring beyond their door squares, the cellar
stairs, the title, the clock (hidden_castle) and the status inside it, the turn, the die, the
player table and the legend below it. The whole picture is the square :attr:`BoardLayout.view`.

Rectangles are :class:`Rect` (top-left corner, width, height), round things :class:`Disc`.
Text is placed by an :class:`Anchor` (a point and how the text aligns to it, as matplotlib's
``ha``/``va`` or SVG's ``text-anchor``/``dominant-baseline``); font sizes are the drawing's
choice. Hugo is drawn at a :class:`HugoSpot`: :data:`HUGO_OUTLINE` scaled by its height around
its centre. Guests are packed into a :class:`GuestArea`, whose :meth:`GuestArea.discs` says where.

``midnight_env.render.picture`` draws exactly this layout with matplotlib; nothing here imports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from midnight_env.core.config import CLOCK_TIMES
from midnight_env.infra import checks

SIDES = ("top", "right", "bottom", "left")  # sides of the ring, clockwise from square 0


class RingCell(NamedTuple):
    row: int
    col: int
    side: str  # the rim side the square lies on (one of SIDES); its room lies beyond it


class RingGrid(NamedTuple):
    rows: int
    cols: int
    cells: tuple[RingCell, ...]  # by gallery square


def ring_grid(num_squares: int) -> RingGrid:
    """The gallery ring on the rim of a ``rows x cols`` grid, clockwise from square 0 in the
    top-left corner; at most 10 squares across so the terminal board stays narrow."""
    side = max(1, round(num_squares / 7))
    across = max(2, min(10, (num_squares - 2 * side) // 2))
    left = (num_squares - 2 * across) // 2
    right = num_squares - 2 * across - left
    rows, cols = right + 2, across
    cells = [RingCell(0, c, "top") for c in range(across)]
    cells += [RingCell(1 + r, across - 1, "right") for r in range(right)]
    cells += [RingCell(rows - 1, across - 1 - c, "bottom") for c in range(across)]
    cells += [RingCell(rows - 2 - r, 0, "left") for r in range(left)]
    return RingGrid(rows, cols, tuple(cells))


# -- plain geometry -------------------------------------------------------------------------------

class Point(NamedTuple):
    x: float
    y: float


class Rect(NamedTuple):
    x: float  # left
    y: float  # top
    w: float
    h: float

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def centre(self) -> Point:
        return Point(self.x + self.w / 2, self.y + self.h / 2)

    def contains(self, other: Rect) -> bool:
        return self.x <= other.x and self.y <= other.y and other.right <= self.right and other.bottom <= self.bottom


class Disc(NamedTuple):
    x: float  # centre
    y: float
    r: float

    @property
    def box(self) -> Rect:
        return Rect(self.x - self.r, self.y - self.r, 2 * self.r, 2 * self.r)


class Anchor(NamedTuple):
    x: float
    y: float
    ha: str  # "left", "center" or "right": which end of the text lies at x
    va: str  # "top", "center" or "bottom": which edge of the text lies at y


class HugoSpot(NamedTuple):
    x: float  # centre of Hugo's outline
    y: float
    height: float  # HUGO_OUTLINE is scaled by this

    @property
    def box(self) -> Rect:
        return Rect(self.x - 0.42 * self.height, self.y - 0.5 * self.height, 0.84 * self.height, 0.96 * self.height)


def _hugo_outline() -> np.ndarray:
    """Hugo's outline in a unit box centred at 0, y pointing down: a dome and a wavy hem."""
    dome = [(0.42 * math.cos(t), -0.08 - 0.42 * math.sin(t)) for t in np.linspace(0, math.pi, 24)]
    hem = []
    for k in range(7):  # from the left side back to the right, three scallops
        x = -0.42 + 0.84 * k / 6
        hem.append((x, 0.46 if k % 2 == 0 else 0.34))
    return np.array(dome + [(-0.42, 0.2)] + hem + [(0.42, 0.2)])


HUGO_OUTLINE = _hugo_outline()  # (K, 2) polygon; HugoSpot.box bounds it


def disc_grid(n: int, x0: float, y0: float, w: float, h: float, r_max: float):
    """Centres and radius of ``n`` equal discs packed in the box (x0, y0, w, h), row by row."""
    best = (0.0, 1)
    for across in range(1, n + 1):
        down = math.ceil(n / across)
        best = max(best, (min(w / across, h / down) / 2, across))
    radius, across = best
    radius = min(radius, r_max)
    down = math.ceil(n / across)
    pitch = 2 * radius
    gx = x0 + (w - across * pitch) / 2 + radius
    gy = y0 + (h - down * pitch) / 2 + radius
    centres = [(gx + (k % across) * pitch, gy + (k // across) * pitch) for k in range(n)]
    return centres, radius * 0.92  # a little air between neighbours


class GuestArea(NamedTuple):
    """Where the guests of one place are drawn: discs packed in ``box``, none larger than ``max_radius``."""

    box: Rect
    max_radius: float

    def discs(self, n: int) -> tuple[list[tuple[float, float]], float]:
        """Centres and the common radius of ``n`` guests' discs."""
        x, y, w, h = self.box
        return disc_grid(n, x, y, w, h, self.max_radius)


# -- the parts of the board ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SquareLayout:
    square: int
    cell: RingCell  # row, column and side in the ring's grid
    face: Rect  # the drawn square, a little inside its cell
    number: Anchor  # the square's number
    guests: GuestArea  # the square's guests
    guests_beside_hugo: GuestArea  # the same when Hugo is there too (he takes the right part)
    hugo: HugoSpot  # Hugo alone on the square
    hugo_beside_guests: HugoSpot
    arrow_mark: Anchor | None  # the arrow of the arrow square (where Hugo enters)
    room_tag: Anchor | None  # "r<q>" on a door square

    @property
    def bounds(self) -> Rect:
        return Rect(self.cell.col, self.cell.row, 1, 1)


@dataclass(frozen=True)
class RoomLayout:
    room: int
    kind: int  # PLAIN, RED or GREEN (midnight_env.core.board)
    name: str
    door_square: int
    side: str  # side of the ring its door square lies on; the room lies beyond it
    box: Rect  # the room
    door: Rect  # across the edge between the room and its door square
    label: Anchor  # "r<q>"
    points: Anchor  # the room's points ("+1", "-3"), where it has some
    name_at: Anchor  # its name, shown where the board names it
    occupant: Disc  # the guest inside


@dataclass(frozen=True)
class StairPlaceLayout:
    place: int  # stair place (0 = the highest value), -1 the cellar door, L the wine cellar
    value: int | None  # points per captured guest; None at the cellar door
    box: Rect
    label: Anchor  # the value ("+10", "10", "door", "wine cellar 2")
    guests: GuestArea  # captured guests (none at the cellar door)
    hugo: HugoSpot | None  # Hugo on this place (never in the wine cellar)


@dataclass(frozen=True)
class ClockLayout:
    centre: Point
    radius: float
    times: tuple[Anchor, ...]  # the times of CLOCK_TIMES in a row, in order
    marks: tuple[Rect, ...]  # the frame around the current time, per time


@dataclass(frozen=True)
class SeatLayout:
    seat: int
    disc: Disc  # the seat's colour
    name: Anchor  # "seat <p>"
    bar: Rect  # the points bar at its full length (the points limit, or the most points if more)
    points: Anchor  # the number beside an empty bar; it moves right by the bar's drawn length


@dataclass(frozen=True)
class BoardLayout:
    """Every place of the picture of one board, for a number of seats and a variant."""

    rows: int  # the ring's grid
    cols: int
    view: Rect  # the whole picture, a square
    squares: tuple[SquareLayout, ...]  # by gallery square
    rooms: tuple[RoomLayout, ...]  # by room
    stairs: tuple[StairPlaceLayout, ...]  # by stair place, 0 = the highest value (farthest from the ring)
    cellar_door: StairPlaceLayout | None  # where Hugo starts (hugo_start "cellar_door")
    wine_cellar: StairPlaceLayout | None  # overflow "wine_cellar"
    stairs_title: Anchor
    stairs_arrow: tuple[Point, Point]  # Hugo's way from the stairs onto the arrow square
    hugo_track: tuple[HugoSpot, ...]  # Hugo per value of state.hugo: cellar door, stair places, squares
    title: Anchor  # the game's name
    clock: ClockLayout | None  # hidden_castle
    status: Anchor  # the lines of the status (clock or round, Hugo, rolls)
    turn: Anchor  # whose turn, in words
    turn_disc: Disc  # in the colour of the seat to play
    die: Rect  # the die of the roll being decided
    seats: tuple[SeatLayout, ...]  # the player table, by seat
    legend: Anchor  # start of the legend line; each entry follows the words of the one before
    legend_swatch: float  # side of a legend's square

    @property
    def arrow_square(self) -> SquareLayout:
        return next(sq for sq in self.squares if sq.arrow_mark is not None)


def _square(board, s: int, cell: RingCell) -> SquareLayout:
    r, c = cell.row, cell.col
    doors = [int(d) for d in board.door_square]
    return SquareLayout(
        square=s, cell=cell, face=Rect(c + 0.02, r + 0.02, 0.96, 0.96),
        number=Anchor(c + 0.07, r + 0.06, "left", "top"),
        guests=GuestArea(Rect(c + 0.05, r + 0.24, 0.86, 0.72), 0.2),
        guests_beside_hugo=GuestArea(Rect(c + 0.05, r + 0.24, 0.5, 0.72), 0.2),
        hugo=HugoSpot(c + 0.5, r + 0.58, 0.62), hugo_beside_guests=HugoSpot(c + 0.72, r + 0.6, 0.52),
        arrow_mark=Anchor(c + 0.93, r + 0.04, "right", "top") if s == board.arrow_square else None,
        room_tag=Anchor(c + 0.93, r + 0.06, "right", "top") if s in doors else None)


def _room(board, q: int, cell: RingCell) -> RoomLayout:
    r, c, side = cell
    bx, by = {"top": (c + 0.08, r - 0.98), "bottom": (c + 0.08, r + 1.06),
              "left": (c - 0.98, r + 0.08), "right": (c + 1.06, r + 0.08)}[side]
    door = {"top": (c + 0.3, r - 0.06, 0.4, 0.12), "bottom": (c + 0.3, r + 0.94, 0.4, 0.12),
            "left": (c - 0.06, r + 0.3, 0.12, 0.4), "right": (c + 0.94, r + 0.3, 0.12, 0.4)}[side]
    return RoomLayout(
        room=q, kind=int(board.room_kind[q]), name=board.room_names[q], door_square=int(board.door_square[q]),
        side=side, box=Rect(bx, by, 0.84, 0.92), door=Rect(*door), label=Anchor(bx + 0.05, by + 0.05, "left", "top"),
        points=Anchor(bx + 0.8, by + 0.05, "right", "top"), name_at=Anchor(bx + 0.42, by + 0.88, "center", "bottom"),
        occupant=Disc(bx + 0.42, by + 0.5, 0.22))


def board_layout(board, num_players: int, castle: bool) -> BoardLayout:
    """The layout of ``board`` with a player table of ``num_players`` seats and, if ``castle``
    (hidden_castle), the clock."""
    num_players = checks.integer("num_players=", num_players, 1, 8, allowed="1..8")
    rows, cols, cells = ring_grid(board.num_squares)
    width = cols + 2.3  # the ring and the rooms around it
    height = max(width, rows + 2.3 + 3.9)  # ... and the panel below
    view = Rect(-1.15 - (height - width) / 2, -1.15, height, height)

    squares = tuple(_square(board, s, cell) for s, cell in enumerate(cells))
    rooms = tuple(_room(board, q, cells[int(d)]) for q, d in enumerate(board.door_square))

    # the stair places climb diagonally towards the arrow square, lowest value on top
    places = board.num_stair_places
    count = places + (1 if board.hugo_start == "cellar_door" else 0)
    box_w, box_h = 1.45, 0.38
    step_y = min(0.46, (rows - 2.3 - box_h) / max(1, count - 1))
    step_x = max(0.0, min(0.42, (cols - 6.9 - box_w) / max(1, count - 1)))
    x0, y0 = 1.2, 1.15
    on_stairs: dict[int, StairPlaceLayout] = {}
    for j in range(count):  # j = 0 is next to the gallery
        place = places - 1 - j if j < places else -1  # -1: the cellar door
        bx, by = x0 + j * step_x, y0 + j * step_y
        guests = Rect(bx + 0.42, by + 0.03, box_w - 0.46, box_h - 0.06)
        on_stairs[place] = StairPlaceLayout(
            place=place, value=int(board.stair_values[place]) if place >= 0 else None, box=Rect(bx, by, box_w, box_h),
            label=Anchor(bx + 0.06, by + box_h / 2, "left", "center"), guests=GuestArea(guests, 0.16),
            hugo=HugoSpot(guests.x + guests.w - 0.2, guests.y + guests.h / 2 - 0.05, 0.5))
    wine_cellar = None
    if board.overflow == "wine_cellar":  # beside the highest landing, off Hugo's way
        bx = x0 + (places - 1) * step_x + box_w + 0.12
        by = y0 + (places - 1) * step_y - 0.1
        wine_cellar = StairPlaceLayout(
            place=places, value=int(board.wine_cellar_value), box=Rect(bx, by, 1.5, box_h + 0.2),
            label=Anchor(bx + 0.06, by + 0.04, "left", "top"),
            guests=GuestArea(Rect(bx + 0.05, by + 0.2, 1.4, box_h - 0.04), 0.16), hugo=None)
    stairs = tuple(on_stairs[place] for place in range(places))
    cellar_door = on_stairs.get(-1)
    arrow = cells[board.arrow_square]
    hugo_track = tuple(([cellar_door.hugo] if cellar_door else []) + [p.hugo for p in stairs]
                       + [sq.hugo for sq in squares])

    # inside the ring, right of the stairs: the title, the clock and the status
    right = cols - 1.15
    clock = None
    if castle:
        time_x = [right - 3.6 + k * 0.55 for k in range(len(CLOCK_TIMES))]
        clock = ClockLayout(centre=Point(cols - 2.0, 2.5), radius=0.6,
                            times=tuple(Anchor(x, 3.5, "center", "center") for x in time_x),
                            marks=tuple(Rect(x - 0.27, 3.37, 0.54, 0.26) for x in time_x))

    # below the ring: the turn and the die, the player table in one or two columns, the legend
    panel_y = rows + 1.25
    table_rows = math.ceil(num_players / 2) if num_players > 4 else num_players
    table_x = [-0.9, cols / 2 + 0.3] if num_players > 4 else [-0.9]
    bar_len = cols / 2 - 2.5 if num_players > 4 else cols - 2.6
    seats = []
    for p in range(num_players):
        col, row = divmod(p, table_rows)
        tx, ty = table_x[col], panel_y + 0.75 + row * 0.55
        seats.append(SeatLayout(seat=p, disc=Disc(tx + 0.2, ty, 0.18), name=Anchor(tx + 0.5, ty, "left", "center"),
                                bar=Rect(tx + 1.75, ty - 0.16, bar_len, 0.32),
                                points=Anchor(tx + 1.8, ty, "left", "center")))

    return BoardLayout(
        rows=rows, cols=cols, view=view, squares=squares, rooms=rooms, stairs=stairs, cellar_door=cellar_door,
        wine_cellar=wine_cellar, stairs_title=Anchor(x0 + 0.05, rows - 1.2, "left", "bottom"),
        stairs_arrow=(Point(x0 + 0.75, y0), Point(arrow.col + 0.75, arrow.row + 0.8)), hugo_track=hugo_track,
        title=Anchor(right, 1.2, "right", "top"), clock=clock,
        status=Anchor(right, 3.9 if castle else 1.85, "right", "top"),
        turn=Anchor(-0.45, panel_y + 0.1, "left", "center"), turn_disc=Disc(-0.75, panel_y + 0.1, 0.18),
        die=Rect(cols / 2, panel_y - 0.2, 0.6, 0.6), seats=tuple(seats),
        legend=Anchor(-0.9, view.bottom - 0.4, "left", "center"), legend_swatch=0.3)


__all__ = ["BoardLayout", "SquareLayout", "RoomLayout", "StairPlaceLayout", "ClockLayout", "SeatLayout",
           "RingCell", "RingGrid", "Point", "Rect", "Disc", "Anchor", "HugoSpot", "GuestArea", "HUGO_OUTLINE",
           "SIDES", "board_layout", "ring_grid", "disc_grid"]
