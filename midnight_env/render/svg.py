"""The picture as SVG text: the :class:`~midnight_env.render.layout.BoardLayout` of the board and
the position on it, in the colours and words of the matplotlib picture (``style``), for the web
page and for anyone who wants a drawing that scales (a notebook shows :func:`render_svg` as it is).

The drawing comes in two layers, so that a page showing a game move by move draws the board once:
:func:`board_svg` is everything that never changes (squares, rooms, stairs, clock face, player
table, legend) and :func:`position_svg` the position on it (guests, Hugo, the clock's hands, the
status, whose turn, the die, the points). Both are SVG elements in layout units, for an ``<svg>``
whose ``viewBox`` is :func:`view_box`. No text of a record or a user ends up in them.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

from midnight_env.core.config import CASTLE_POINTS_LIMIT, CLOCK_TIMES
from midnight_env.core.state import MOVE, OVER
from midnight_env.infra import checks
from midnight_env.render.layout import HUGO_OUTLINE, Anchor, BoardLayout, HugoSpot, Rect, board_layout
from midnight_env.render.seats import SEAT_SYMBOLS, seat_hex
from midnight_env.render.snapshot import Position, clock_text, snapshot, status_lines, turn_text
from midnight_env.render.style import (
    ARROW_COLOUR,
    ARROW_FACE,
    BACKGROUND,
    BAR_FULL_POINTS,
    CLOCK_FACE,
    DOOR_FACE,
    EDGE,
    FONT_POINTS,
    GHOST_EDGE,
    GHOST_FACE,
    HAND_LENGTHS,
    HAND_WIDTHS,
    LEGEND,
    LINE_POINTS,
    REFERENCE_PIXELS,
    ROOM_FACES,
    ROOM_POINTS,
    SQUARE_FACE,
    STAIR_FACE,
    TIME_MARK,
    WINE_FACE,
    game_title,
    hand_angles,
    stair_label,
    stairs_title,
    text_colour,
)

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"  # matplotlib's own first
_ANCHOR = {"left": "start", "center": "middle", "right": "end"}
_BASELINE = {"top": "hanging", "center": "central", "bottom": "text-after-edge"}
_LINE_HEIGHT = 1.2  # of the font size, for a line spacing of 1
_CHAR_WIDTH = 0.58  # of the font size: DejaVu Sans's average, to space the legend without measuring text


def _n(value: float) -> str:
    """A coordinate with three decimals at most (a thousandth of a square is below a pixel)."""
    text = f"{float(value):.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class _Scale:
    """Type and line sizes in layout units: the picture's sizes at any drawn size."""

    def __init__(self, layout: BoardLayout):
        pixels_per_unit = REFERENCE_PIXELS / layout.view.h
        self.fs = FONT_POINTS * 100 / 72 / pixels_per_unit  # points at 100 dpi, as the picture
        self.lw = LINE_POINTS * 100 / 72 / pixels_per_unit


def _rect(r: Rect, fill: str, stroke: str | None = None, width: float = 0.0, extra: str = "") -> str:
    edge = f' stroke="{stroke}" stroke-width="{_n(width)}"' if stroke else ""
    return (f'<rect x="{_n(r.x)}" y="{_n(r.y)}" width="{_n(r.w)}" height="{_n(r.h)}" fill="{fill}"{edge}'
            f'{extra}/>')


def _text(at: Anchor, words: str, size: float, fill: str = "#222", weight: str = "", style: str = "",
          spacing: float = 1.0) -> str:
    """Text at an anchor; several lines (``\\n``) are spaced ``spacing`` font sizes apart and the
    block aligns to the anchor as a whole, as matplotlib aligns it."""
    lines = words.replace("  ", "\u00a0\u00a0").split("\n")  # SVG collapses runs of spaces
    step = spacing * _LINE_HEIGHT * size
    top = {"top": 0.0, "center": -(len(lines) - 1) * step / 2, "bottom": -(len(lines) - 1) * step}[at.va]
    attrs = (f'font-size="{_n(size)}" fill="{fill}" text-anchor="{_ANCHOR[at.ha]}" '
             f'dominant-baseline="{_BASELINE[at.va]}"')
    if weight:
        attrs += f' font-weight="{weight}"'
    if style:
        attrs += f' font-style="{style}"'
    if len(lines) == 1:
        return f'<text x="{_n(at.x)}" y="{_n(at.y)}" {attrs}>{escape(lines[0])}</text>'
    spans = "".join(f'<tspan x="{_n(at.x)}" y="{_n(at.y + top + k * step)}">{escape(line)}</tspan>'
                    for k, line in enumerate(lines))
    return f"<text {attrs}>{spans}</text>"


def _circle(x: float, y: float, r: float, fill: str, stroke: str = "#1a1a1a", width: float = 0.0) -> str:
    edge = f' stroke="{stroke}" stroke-width="{_n(width)}"' if width else ""
    return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{fill}"{edge}/>'


def _hugo(spot: HugoSpot, lw: float) -> str:
    x, y, h = spot
    points = " ".join(f"{_n(x + px * h)},{_n(y + py * h)}" for px, py in HUGO_OUTLINE)
    parts = [f'<polygon points="{points}" fill="{GHOST_FACE}" stroke="{GHOST_EDGE}" stroke-width="{_n(lw * 1.3)}"/>']
    parts += [f'<ellipse cx="{_n(x + dx * h)}" cy="{_n(y - 0.12 * h)}" rx="{_n(0.055 * h)}" ry="{_n(0.085 * h)}" '
              f'fill="#111"/>' for dx in (-0.14, 0.14)]
    parts.append(f'<ellipse cx="{_n(x)}" cy="{_n(y + 0.1 * h)}" rx="{_n(0.06 * h)}" ry="{_n(0.05 * h)}" fill="#111"/>')
    return '<g class="hugo">' + "".join(parts) + "</g>"


def _arrow(start, end, colour: str, width: float) -> str:
    """A line from ``start`` to ``end`` with a filled head at ``end``."""
    (x0, y0), (x1, y1) = start, end
    length = math.hypot(x1 - x0, y1 - y0) or 1.0
    ux, uy = (x1 - x0) / length, (y1 - y0) / length
    head, half = 0.3, 0.12
    bx, by = x1 - ux * head, y1 - uy * head
    tip = f"{_n(x1)},{_n(y1)} {_n(bx - uy * half)},{_n(by + ux * half)} {_n(bx + uy * half)},{_n(by - ux * half)}"
    return (f'<line x1="{_n(x0)}" y1="{_n(y0)}" x2="{_n(bx)}" y2="{_n(by)}" stroke="{colour}" '
            f'stroke-width="{_n(width)}"/><polygon points="{tip}" fill="{colour}"/>')


def view_box(engine) -> Rect:
    """The picture's extent in layout units, for the ``viewBox`` of the ``<svg>``."""
    return board_layout(engine.board, engine.num_players, engine.config.castle).view


def board_svg(engine) -> str:
    """Everything of the picture that never changes, as SVG elements in layout units."""
    board, castle, n = engine.board, engine.config.castle, engine.num_players
    lay = board_layout(board, n, castle)
    sc = _Scale(lay)
    fs, lw = sc.fs, sc.lw
    out = [f'<g class="board" font-family="{FONT}">', _rect(lay.view, BACKGROUND)]
    room_at = {room.door_square: room for room in lay.rooms}
    texts = []  # drawn over every face and door, as the picture does
    for sq in lay.squares:
        arrow = sq.arrow_mark is not None
        out.append(_rect(sq.face, ARROW_FACE if arrow else SQUARE_FACE, EDGE, lw))
        texts.append(_text(sq.number, str(sq.square), fs * 0.8, EDGE, "bold" if arrow else ""))
        if arrow:
            texts.append(_text(sq.arrow_mark, "\u2192", fs * 1.1, ARROW_COLOUR, "bold"))
        room = room_at.get(sq.square)
        if room is not None:
            texts.append(_text(sq.room_tag, f"r{room.room}", fs * 0.62, "#555"))
    doors = []
    for room in lay.rooms:
        face = ROOM_FACES[room.kind]
        out.append(_rect(room.box, face, EDGE, lw))
        doors.append(_rect(room.door, face, EDGE, lw * 0.7))
        texts.append(_text(room.label, f"r{room.room}", fs * 0.8))
        if room.kind in ROOM_POINTS:
            texts.append(_text(room.points, ROOM_POINTS[room.kind], fs * 0.8, weight="bold"))
        if room.name != f"room {room.room}":
            texts.append(_text(room.name_at, room.name, fs * 0.6, style="italic"))
    out += doors
    # the stairs, from the place next to the gallery down to the cellar door, and the wine cellar
    for stair in list(reversed(lay.stairs)) + ([lay.cellar_door] if lay.cellar_door else []):
        face, colour = (STAIR_FACE, "#2b2115") if stair.value is not None else (DOOR_FACE, "white")
        out.append(_rect(stair.box, face, EDGE, lw))
        texts.append(_text(stair.label, stair_label(stair.value, castle), fs * 0.85, colour, "bold"))
    if lay.wine_cellar is not None:
        out.append(_rect(lay.wine_cellar.box, WINE_FACE, EDGE, lw))
        texts.append(_text(lay.wine_cellar.label, f"wine cellar {lay.wine_cellar.value}", fs * 0.62, "white"))
    out.append(_arrow(*lay.stairs_arrow, ARROW_COLOUR, lw * 1.5))
    texts.append(_text(lay.stairs_title, stairs_title(castle), fs * 0.8, EDGE, "bold", spacing=1.3))
    texts.append(_text(lay.title, game_title(castle), fs * 1.15, EDGE, "bold", "italic"))
    if lay.clock is not None:
        (cx, cy), radius = lay.clock.centre, lay.clock.radius
        out.append(_circle(cx, cy, radius, CLOCK_FACE, EDGE, lw * 1.5))
        for h in range(12):
            t = h / 12 * 2 * math.pi
            inner = 0.72 if h % 3 == 0 else 0.84
            (sx, sy), (ex, ey) = ((cx + k * radius * math.sin(t), cy - k * radius * math.cos(t)) for k in (inner, 0.95))
            out.append(f'<line x1="{_n(sx)}" y1="{_n(sy)}" x2="{_n(ex)}" y2="{_n(ey)}" stroke="{EDGE}" '
                       f'stroke-width="{_n(lw)}"/>')
        texts += [_text(at, t, fs * 0.62, "#555") for at, t in zip(lay.clock.times, CLOCK_TIMES)]
    # the player table: a disc and a name per seat
    for seat, colour in zip(lay.seats, seat_hex(range(n))):
        out.append(_circle(seat.disc.x, seat.disc.y, seat.disc.r, colour, width=lw * 0.8))
        texts.append(_text(seat.name, f"seat {seat.seat}", fs))
    # the legend along the bottom edge, each entry as wide as its words
    x, y, side = lay.legend.x, lay.legend.y, lay.legend_swatch
    for what, kind, words in LEGEND:
        if what == "hugo":
            out.append(_hugo(HugoSpot(x + 0.15, y, 0.42), lw / 1.3))
        else:
            face = ARROW_FACE if what == "arrow" else ROOM_FACES[kind]
            out.append(_rect(Rect(x, y - side / 2, side, side), face, EDGE, lw * 0.8))
        texts.append(_text(Anchor(x + 0.4, y, "left", "center"), words, fs * 0.8))
        x += 0.4 + len(words) * _CHAR_WIDTH * fs * 0.8 + 0.35
    return "".join(out + texts) + "</g>"


def _guests(area, seats: list[int]) -> list[tuple[float, float, float, int]]:
    """The discs (x, y, radius, seat) of ``seats``' guests packed into ``area``."""
    if not seats:
        return []
    centres, r = area.discs(len(seats))
    return [(x, y, r, p) for (x, y), p in zip(centres, seats)]


def _discs(discs: list[tuple[float, float, float, int]], lw: float) -> list[str]:
    """Every guest's disc, and its seat's digit where it can be read (as the picture's)."""
    if not discs:
        return []
    colours = seat_hex([p for *_, p in discs])
    circles = "".join(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}" fill="{c}"/>'
                      for (x, y, r, _), c in zip(discs, colours))
    digits = "".join(f'<text x="{_n(x)}" y="{_n(y)}" font-size="{_n(1.52 * r)}" fill="{text_colour(c)}">'
                     f"{SEAT_SYMBOLS[p]}</text>" for (x, y, r, p), c in zip(discs, colours) if 2 * r >= 0.17)
    return [f'<g class="guests" stroke="#1a1a1a" stroke-width="{_n(lw * 0.8)}">{circles}</g>',
            f'<g text-anchor="middle" dominant-baseline="central">{digits}</g>']


def _seats_on(counts: np.ndarray) -> list[int]:
    """One entry per guest, by seat: ``[0, 0, 2]`` for two guests of seat 0 and one of seat 2."""
    return [p for p in range(len(counts)) for _ in range(int(counts[p]))]


def position_svg(engine, pos: Position) -> str:
    """The position ``pos`` on :func:`board_svg`, as SVG elements in layout units."""
    lay = board_layout(engine.board, pos.num_players, pos.castle)
    sc = _Scale(lay)
    fs, lw = sc.fs, sc.lw
    discs = []  # every guest: (x, y, radius, seat)
    ghosts = []  # Hugo, drawn over everything else
    for sq in lay.squares:
        seats = _seats_on(pos.gallery[:, sq.square])
        hugo_here = sq.square == pos.hugo_square
        if hugo_here:
            ghosts.append(_hugo(sq.hugo_beside_guests if seats else sq.hugo, lw))
        discs += _guests(sq.guests_beside_hugo if hugo_here else sq.guests, seats)
    for room in lay.rooms:
        if pos.room[room.room] >= 0:
            discs.append((*room.occupant, int(pos.room[room.room])))
    for stair in lay.stairs:
        discs += _guests(stair.guests, _seats_on(pos.stairs[:, stair.place]))
        if stair.place == pos.hugo_place:
            ghosts.append(_hugo(stair.hugo, lw))
    if lay.cellar_door is not None and pos.hugo_at_cellar_door:
        ghosts.append(_hugo(lay.cellar_door.hugo, lw))
    if lay.wine_cellar is not None:
        discs += _guests(lay.wine_cellar.guests, _seats_on(pos.stairs[:, lay.wine_cellar.place]))
    out = [f'<g class="position" font-family="{FONT}">'] + _discs(discs, lw) + ghosts

    if lay.clock is not None:
        (cx, cy), radius = lay.clock.centre, lay.clock.radius
        for angle, length, width in zip(hand_angles(clock_text(pos)), HAND_LENGTHS, HAND_WIDTHS):
            tip = (cx + length * radius * math.sin(angle), cy - length * radius * math.cos(angle))
            out.append(f'<line x1="{_n(cx)}" y1="{_n(cy)}" x2="{_n(tip[0])}" y2="{_n(tip[1])}" stroke="{EDGE}" '
                       f'stroke-width="{_n(lw * width)}" stroke-linecap="round"/>')
        mark = lay.clock.marks[min(pos.clock, len(CLOCK_TIMES) - 1)]
        out.append(_rect(mark, "none", TIME_MARK, lw * 1.6))
    out.append(_text(lay.status, "\n".join(status_lines(engine.board, pos)), fs * 0.85, spacing=1.6))
    out.append(_text(lay.turn, turn_text(pos), fs * 1.1, weight="bold"))
    if pos.phase != OVER:
        disc = lay.turn_disc
        out.append(_circle(disc.x, disc.y, disc.r, seat_hex([pos.player])[0], width=lw * 0.8))
    if pos.phase == MOVE:  # the die of the roll being decided
        out.append(_die(lay.die, pos.roll, lw))

    winners = pos.winners if pos.phase == OVER else ()
    top = max(CASTLE_POINTS_LIMIT if pos.castle else BAR_FULL_POINTS, int(pos.spooky.max()))
    for seat in lay.seats:
        p = seat.seat
        points = int(pos.spooky[p])
        length = seat.bar.w * max(points, 0) / top
        if length > 0:
            out.append(_rect(Rect(seat.bar.x, seat.bar.y, length, seat.bar.h), seat_hex([p])[0],
                             extra=' fill-opacity="0.85"'))
        mark = "  \u2605 winner" if p in winners else ("  \u25c0" if pos.phase != OVER and p == pos.player else "")
        at = Anchor(seat.points.x + length, seat.points.y, seat.points.ha, seat.points.va)
        out.append(_text(at, f"{points}{mark}", fs, weight="bold"))
    return "".join(out) + "</g>"


def _die(die: Rect, roll: int, lw: float) -> str:
    x, y, w, _ = die
    spots = {1: [(0.5, 0.5)], 2: [(0.25, 0.25), (0.75, 0.75)], 4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75),
             (0.75, 0.75)], 5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)]}
    face = _rect(die, "white", "#222", lw * 1.4, extra=' rx="0.1"')
    pips = "".join(_circle(x + w * u, y + w * v, 0.065, "#222") for u, v in spots.get(roll, []))
    return f'<g class="die" data-roll="{roll}">{face}{pips}</g>'


def render_svg(engine, state, i: int = 0, size: int = 640) -> str:
    """Game ``i`` as an SVG document ``size`` pixels square: the same layout, colours and words as
    :func:`~midnight_env.render.picture.render_rgb`."""
    size = checks.integer("size=", size, 64, 4096, allowed="integers 64..4096 (pixels)")
    pos = snapshot(engine, state, i)
    v = view_box(engine)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{int(size)}" height="{int(size)}" '
            f'viewBox="{_n(v.x)} {_n(v.y)} {_n(v.w)} {_n(v.h)}">' + board_svg(engine) + position_svg(engine, pos)
            + "</svg>")


__all__ = ["board_svg", "position_svg", "render_svg", "view_box", "FONT"]
