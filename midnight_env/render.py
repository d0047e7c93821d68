"""Drawing a game position: a terminal board (:func:`render_ansi`) and a picture (:func:`render_rgb`).

Both read the geometry from ``engine.board`` (door squares, room kinds, stair values): a board
is data, so a changed board draws without a code change. The gallery ring is laid out on the
rim of a grid, clockwise from the arrow square at the top-left corner; the cellar stairs and
the game's status sit inside the ring, the spooky points below it.

Both show game ``i`` of a batch; neither changes the state.
"""

from __future__ import annotations

import math
import textwrap
from collections import OrderedDict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from midnight_env.board import GREEN, RED
from midnight_env.config import CASTLE_POINTS_LIMIT, CLOCK_TIMES
from midnight_env.state import MOVE, OVER, PLACE, ROLL


class PlayerColour(NamedTuple):
    name: str
    hex: str  # for pictures
    ansi: int  # 256-colour terminal code


# One colour per seat; none is red or green, which mark the room kinds.
PLAYER_COLOURS = (
    PlayerColour("blue", "#1f77b4", 33),
    PlayerColour("orange", "#ff7f0e", 208),
    PlayerColour("purple", "#9467bd", 141),
    PlayerColour("gold", "#e6b800", 220),
    PlayerColour("cyan", "#17becf", 44),
    PlayerColour("pink", "#e377c2", 213),
    PlayerColour("brown", "#8c564b", 137),
    PlayerColour("grey", "#6b6b6b", 247),
)
SEAT_SYMBOLS = "01234567"  # guests read by seat without colour
HUGO_MARK = "HUGO"
KIND_WORDS = ("pln", "red", "grn")  # room kind as three letters (terminal)


# ---------------------------------------------------------------------------------------------
# the position of one game as plain Python values


@dataclass(frozen=True)
class _Position:
    castle: bool
    num_players: int
    gallery: np.ndarray  # (N, S) guests per seat and square
    room: np.ndarray  # (R,) occupant seat, -1 empty
    stairs: np.ndarray  # (N, L+1) guests per seat and stair place (L: wine cellar)
    supply: np.ndarray  # (N,) guests still to place
    spooky: np.ndarray  # (N,)
    hugo_square: int  # gallery square, -1 on the stairs
    hugo_place: int  # stair place (0 = highest value), -1 at the cellar door, -2 on the gallery
    speed: int
    clock: int
    round: int
    rounds: int
    rolls: int
    phase: int
    player: int
    roll: int
    truncated: bool

    @property
    def rooms_open(self) -> bool:
        return self.hugo_square >= 0  # rooms lock while Hugo is on the stairs (RULES.md 5)

    def winners(self) -> list[int]:
        return [int(p) for p in np.flatnonzero(self.spooky == self.spooky.min())]


def _position(engine, state, i: int) -> _Position:
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < state.batch_size:
        raise ValueError(f"game index i={i!r} is out of range: allowed are 0..{state.batch_size - 1}")
    if state.num_players != engine.num_players or state.gallery.shape[2] != engine.board.num_squares:
        raise ValueError(f"state of {state.num_players} players on {state.gallery.shape[2]} squares does not "
                         f"match the engine ({engine.num_players} players, {engine.board.num_squares} squares)")
    board = engine.board
    track = board.hugo_track_stairs
    h = int(state.hugo[i])
    if h >= track:
        hugo_square, hugo_place = h - track, -2
    else:
        hugo_square = -1
        hugo_place = h - 1 if board.hugo_start == "cellar_door" else h
    return _Position(
        castle=engine.config.castle, num_players=engine.num_players,
        gallery=state.gallery[i].astype(np.int64), room=state.room[i].astype(np.int64),
        stairs=state.stairs[i].astype(np.int64), supply=state.supply[i].astype(np.int64),
        spooky=state.spooky[i].astype(np.int64), hugo_square=hugo_square, hugo_place=hugo_place,
        speed=engine.speed(state, i), clock=int(state.clock[i]), round=int(state.round[i]),
        rounds=engine.config.rounds, rolls=int(state.rolls[i]), phase=int(state.phase[i]),
        player=int(state.player[i]), roll=int(state.roll[i]), truncated=bool(state.truncated[i]))


def _turn_text(pos: _Position) -> str:
    """Whose turn it is and what is being decided, in words."""
    p = pos.player
    if pos.phase == PLACE:
        verb = "re-places" if pos.round > 1 else "places"
        return f"seat {p} {verb} a guest ({pos.supply[p]} left)"
    if pos.phase == ROLL:
        return f"seat {p} to roll the die"
    if pos.phase == MOVE:
        return f"seat {p} to move, roll {pos.roll}"
    win = pos.winners()
    who = f"seat {win[0]} wins" if len(win) == 1 else "seats " + ", ".join(map(str, win)) + " share the win"
    return f"game over, {who}" + (" (stopped at max_turns)" if pos.truncated else "")


def _hugo_text(board, pos: _Position) -> str:
    if pos.hugo_square >= 0:
        return f"Hugo on gallery square {pos.hugo_square}"
    if pos.hugo_place == -1:
        return "Hugo at the cellar door"
    value = int(board.stair_values[pos.hugo_place])
    return f"Hugo on step +{value}" if pos.castle else f"Hugo on landing {value}"


def _clock_text(pos: _Position) -> str:
    return CLOCK_TIMES[min(pos.clock, len(CLOCK_TIMES) - 1)]


def _ring_layout(num_squares: int) -> tuple[int, int, list[tuple[int, int, str]]]:
    """(rows, cols, [(row, col, side)] per gallery square): the ring on the rim of a grid,
    clockwise from the top-left corner; at most 10 squares across so the text stays narrow."""
    side = max(1, round(num_squares / 7))
    across = max(2, min(10, (num_squares - 2 * side) // 2))
    left = (num_squares - 2 * across) // 2
    right = num_squares - 2 * across - left
    rows, cols = right + 2, across
    cells = [(0, c, "top") for c in range(across)]
    cells += [(1 + r, across - 1, "right") for r in range(right)]
    cells += [(rows - 1, across - 1 - c, "bottom") for c in range(across)]
    cells += [(rows - 2 - r, 0, "left") for r in range(left)]
    return rows, cols, cells


def _guest_run(counts, width: int) -> list[tuple[str, int]]:
    """Guests as (text, seat) pieces fitting ``width`` characters: one symbol per guest
    ('0011'), or counted ('0x5 1x3') when that is too long, cut with '+' if still too long."""
    total = int(sum(counts))
    if total <= width:
        return [(SEAT_SYMBOLS[p] * int(c), p) for p, c in enumerate(counts) if c > 0]
    pieces, used = [], 0
    for p, c in enumerate(counts):
        if c <= 0:
            continue
        text = (" " if pieces else "") + f"{SEAT_SYMBOLS[p]}x{int(c)}"
        if used + len(text) > width:
            pieces.append(("+", -1))
            break
        pieces.append((text, p))
        used += len(text)
    return pieces


# ---------------------------------------------------------------------------------------------
# terminal board

_ESC = "\x1b["
_RESET = "\x1b[0m"
_HUGO_STYLE = "1;97;45"
_ARROW_STYLE = "1;33"
_KIND_STYLES = ("", "1;31", "1;32")
_DIM = "2"
_CELL_W, _CELL_H = 8, 4  # inside a gallery square's border
_STAIR_GUESTS = 14  # characters for the captured guests of one stair place


def _seat_style(p: int) -> str:
    return f"1;38;5;{PLAYER_COLOURS[p % len(PLAYER_COLOURS)].ansi}" if p >= 0 else ""


class _TextCanvas:
    """Characters with one terminal style each; written by position, read as lines."""

    def __init__(self, width: int, height: int):
        self.width = width
        self.chars = [[" "] * width for _ in range(height)]
        self.styles = [[""] * width for _ in range(height)]

    def grow(self, height: int) -> None:
        while len(self.chars) < height:
            self.chars.append([" "] * self.width)
            self.styles.append([""] * self.width)

    def put(self, row: int, col: int, text: str, style: str = "") -> int:
        self.grow(row + 1)
        for k, ch in enumerate(text):
            if 0 <= col + k < self.width:
                self.chars[row][col + k] = ch
                self.styles[row][col + k] = style
        return col + len(text)

    def put_line(self, row: int, col: int, pieces: list[tuple[str, str]]) -> None:
        for text, style in pieces:
            col = self.put(row, col, text, style)

    def text(self, color: bool) -> str:
        lines = []
        for chars, styles in zip(self.chars, self.styles):
            end = len(chars)
            while end and chars[end - 1] == " " and not styles[end - 1]:
                end -= 1
            out, current = [], ""
            for ch, st in zip(chars[:end], styles[:end]):
                if color and st != current:
                    out.append(_RESET if current else "")
                    out.append(f"{_ESC}{st}m" if st else "")
                    current = st
                out.append(ch)
            if color and current:
                out.append(_RESET)
            lines.append("".join(out))
        return "\n".join(lines)


def _styled_guests(counts, width: int) -> list[tuple[str, str]]:
    return [(text, _seat_style(p)) for text, p in _guest_run(counts, width)]


def _stairs_lines(board, pos: _Position) -> list[list[tuple[str, str]]]:
    """The cellar stairs: one line per place, Hugo and the captured guests on it."""
    hugo = [(HUGO_MARK, _HUGO_STYLE)]
    lines: list[list[tuple[str, str]]] = []
    if pos.castle:
        lines.append([(f"{'CELLAR STEPS':<14}", "1"), ("Hugo  captured", _DIM)])
        if board.hugo_start == "cellar_door":
            lines.append([(f"{'cellar door':<14}", "")] + (hugo if pos.hugo_place == -1 else []))
    else:
        lines.append([(f"{'CELLAR STAIRS':<14}", "1"), ("Hugo  captured", _DIM)])
    for place, value in enumerate(board.stair_values):
        label = f"step +{int(value):<3}" if pos.castle else f"landing {int(value):>2}"
        line = [(f"{label:<14}", "")]
        line += hugo if pos.hugo_place == place else [("    ", "")]
        line += [("  ", "")] + _styled_guests(pos.stairs[:, place], _STAIR_GUESTS)
        lines.append(line)
    if board.overflow == "wine_cellar":
        line = [(f"{'wine cellar ' + str(board.wine_cellar_value):<20}", "")]
        lines.append(line + _styled_guests(pos.stairs[:, -1], _STAIR_GUESTS))
    elif pos.castle:
        lines.append([(f"(all taken: captures join +{int(board.stair_values[0])})", _DIM)])
    return lines


def _status_lines(engine, pos: _Position) -> list[list[tuple[str, str]]]:
    board = engine.board
    title = "Hidden Castle" if pos.castle else "Midnight Party"
    players = f"{pos.num_players} player" + ("s" if pos.num_players > 1 else "")
    lines = [[(f"{title}, {players}", "1")]]
    if pos.castle:
        lines.append([("clock ", ""), (_clock_text(pos), "1;36"), (f"   Hugo speed {pos.speed}", "")])
    else:
        lines.append([(f"round {pos.round} of {pos.rounds}   Hugo speed {pos.speed}", "")])
    lines.append([(f"rolls so far {pos.rolls}", _DIM)])
    turn_style = _seat_style(pos.player) if pos.phase != OVER else "1"
    lines.append([(_turn_text(pos), turn_style)])
    lines.append([(_hugo_text(board, pos), "")])
    lines.append([("rooms open" if pos.rooms_open else "rooms locked (Hugo on the stairs)", "")])
    lines.append([])
    seats = "0" if pos.num_players == 1 else f"0-{pos.num_players - 1}"
    lines.append([(seats, "1"), (" guests by seat, ", ""), (HUGO_MARK, _HUGO_STYLE), (" Hugo", "")])
    lines.append([("0>", _ARROW_STYLE), (" arrow square (Hugo enters)", "")])
    lines.append([("room: ", ""), ("pln", ""), ("/", ""), ("red", _KIND_STYLES[RED]), (" +1/", ""),
                  ("grn", _KIND_STYLES[GREEN]), (" -3 exact", "")])
    lines.append([("pln3[1]", ""), (": room 3, seat 1 inside", _DIM)])
    return lines


def _points_lines(pos: _Position) -> list[list[tuple[str, str]]]:
    head = f"{'':6}  {'spooky':>6}  {'gallery':>7}  {'rooms':>5}  {'stairs':>6}  {'to place':>8}"
    lines = [[(head, "1")]]
    winners = pos.winners() if pos.phase == OVER else []
    for p in range(pos.num_players):
        row = (f"  {int(pos.spooky[p]):>6}  {int(pos.gallery[p].sum()):>7}  {int((pos.room == p).sum()):>5}"
               f"  {int(pos.stairs[p].sum()):>6}  {int(pos.supply[p]):>8}")
        note = ""
        if p in winners:
            note = "  winner"
        elif pos.phase != OVER and p == pos.player:
            note = "  <- to " + ("place" if pos.phase == PLACE else "roll" if pos.phase == ROLL else "move")
        lines.append([("seat ", ""), (SEAT_SYMBOLS[p], _seat_style(p)), (row, ""), (note, "1")])
    return lines


def _wrap(lines: list[list[tuple[str, str]]], width: int) -> list[list[tuple[str, str]]]:
    """Break one-piece lines longer than ``width`` at spaces (keeping their style)."""
    out = []
    for line in lines:
        if len(line) == 1 and len(line[0][0]) > width > 10:
            text, style = line[0]
            out += [[(part, style)] for part in textwrap.wrap(text, width, subsequent_indent="  ")]
        else:
            out.append(line)
    return out


def render_ansi(engine, state, i: int = 0, color: bool = True) -> str:
    """Game ``i`` as a terminal board (at most 100 columns); ``color=False`` gives plain text."""
    pos = _position(engine, state, i)
    board = engine.board
    rows, cols, cells = _ring_layout(board.num_squares)
    door_room = {int(d): q for q, d in enumerate(board.door_square)}
    cw, ch = _CELL_W + 1, _CELL_H + 1
    canvas = _TextCanvas(cols * cw + 1, rows * ch + 1)
    for s, (r, c, _) in enumerate(cells):
        top, left = r * ch, c * cw
        canvas.put(top, left, "+" + "-" * _CELL_W + "+")
        canvas.put(top + ch, left, "+" + "-" * _CELL_W + "+")
        for k in range(1, ch):
            canvas.put(top + k, left, "|")
            canvas.put(top + k, left + cw, "|")
        x = left + 1
        if s == board.arrow_square:
            canvas.put_line(top + 1, x, [(f"{s}>", _ARROW_STYLE)])
        else:
            canvas.put(top + 1, x, f"{s}")
        if s == pos.hugo_square:
            canvas.put(top + 1, x + 4, HUGO_MARK, _HUGO_STYLE)
        if s in door_room:
            q = door_room[s]
            kind = int(board.room_kind[q])
            occupant = int(pos.room[q])
            canvas.put_line(top + 2, x, [(f"{KIND_WORDS[kind]}{q}", _KIND_STYLES[kind]), ("[", ""),
                                         (SEAT_SYMBOLS[occupant] if occupant >= 0 else " ", _seat_style(occupant)),
                                         ("]", "")])
        pieces = _styled_guests(pos.gallery[:, s], 2 * _CELL_W)
        flat = [(char, st) for text, st in pieces for char in text]
        for k, (char, st) in enumerate(flat):
            canvas.put(top + 3 + k // _CELL_W, x + k % _CELL_W, char, st)

    stairs, status = _stairs_lines(board, pos), _status_lines(engine, pos)
    inner_top, inner_left = ch + 1, cw + 2
    inner_w, inner_h = (cols - 2) * cw - 3, (rows - 2) * ch - 1
    stairs_w = max(20 + _STAIR_GUESTS, max(sum(len(t) for t, _ in line) for line in stairs)) + 2
    status = _wrap(status, inner_w - stairs_w)
    status_w = max(sum(len(t) for t, _ in line) for line in status)
    row = rows * ch + 2
    if inner_w >= stairs_w + status_w and inner_h >= max(len(stairs), len(status)):
        for k, line in enumerate(stairs):
            canvas.put_line(inner_top + k, inner_left, line)
        for k, line in enumerate(status):
            canvas.put_line(inner_top + k, inner_left + stairs_w, line)
    else:  # a ring too small to hold them: below it
        for line in stairs + [[]] + status:
            canvas.put_line(row, 1, line)
            row += 1
        row += 1
    for line in _points_lines(pos):
        canvas.put_line(row, 1, line)
        row += 1
    return canvas.text(color)


# ---------------------------------------------------------------------------------------------
# picture


_BACKGROUND = "#f4ecd8"  # parchment
_SQUARE_FACE = "#fbf7ee"
_EDGE = "#4a3b2a"
_ROOM_FACES = ("#d9c7a7", "#e57373", "#81c784")  # plain, red, green
_STAIR_FACE = "#b9a88b"
_DOOR_FACE = "#7a5c3a"
_WINE_FACE = "#8e5a6e"
_ARROW_FACE = "#fff3b0"
_ARROW_COLOUR = "#b8860b"
_GHOST_FACE = "#fbfbff"
_GHOST_EDGE = "#3b2a5a"
_BAR_FULL_POINTS = 40  # midnight_party: points of a full-length bar (hidden_castle: 46, the end)


def _text_colour(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[k:k + 2], 16) / 255 for k in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.6 else "white"


def _disc_grid(n: int, x0: float, y0: float, w: float, h: float, r_max: float):
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
    return centres, radius * 0.92


def _ghost_outline() -> np.ndarray:
    """Hugo's outline in a unit box centred at 0, y pointing down: a dome and a wavy hem."""
    dome = [(0.42 * math.cos(t), -0.08 - 0.42 * math.sin(t)) for t in np.linspace(0, math.pi, 24)]
    hem = []
    for k in range(7):  # from the left side back to the right, three scallops
        x = -0.42 + 0.84 * k / 6
        hem.append((x, 0.46 if k % 2 == 0 else 0.34))
    return np.array(dome + [(-0.42, 0.2)] + hem + [(0.42, 0.2)])


_GHOST = _ghost_outline()


class _Scene:
    """A figure with everything that never changes drawn once (the background) and the
    artists that do kept for reuse; a frame restores the background and draws on it."""

    def __init__(self, engine, size: int):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.markers import MarkerStyle

        board = self.board = engine.board
        self.castle = engine.config.castle
        self.num_players = engine.num_players
        rows, cols, cells = _ring_layout(board.num_squares)
        self.rows, self.cols = rows, cols
        width = cols + 2.3
        height = max(width, rows + 2.3 + 3.9)
        self.fig = Figure(figsize=(size / 100, size / 100), dpi=100, facecolor=_BACKGROUND)
        self.canvas = FigureCanvasAgg(self.fig)
        ax = self.ax = self.fig.add_axes((0, 0, 1, 1))
        x_lo = -1.15 - (height - width) / 2
        ax.set_xlim(x_lo, x_lo + height)
        self.y_hi = -1.15 + height
        ax.set_ylim(self.y_hi, -1.15)  # y grows downwards, like the text board
        ax.set_aspect("equal")
        ax.axis("off")
        scale = size / 640  # font sizes and line widths follow the picture size
        self.fs, self.lw = 9 * scale, 1.2 * scale
        self.points_per_unit = size / height * 72 / 100  # marker sizes are in points
        markers = [MarkerStyle(f"${SEAT_SYMBOLS[p]}$") for p in range(self.num_players)] + [MarkerStyle("o")]
        paths = [m.get_path().transformed(m.get_transform()) for m in markers]
        self.digit_path, self.pip_path = paths[:-1], paths[-1]

        self._gallery(cells)
        self._stairs()
        self._inside()
        self._panel()
        self.canvas.draw()
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)

    # -- the background ------------------------------------------------------------------------
    def _gallery(self, cells) -> None:
        from matplotlib.patches import Rectangle

        ax, fs, lw, board = self.ax, self.fs, self.lw, self.board
        self.cell: dict[int, tuple[int, int]] = {}
        self.room_box: dict[int, tuple[float, float]] = {}
        door_room = {int(d): q for q, d in enumerate(board.door_square)}
        for s, (r, c, side) in enumerate(cells):
            self.cell[s] = (c, r)
            arrow = s == board.arrow_square
            ax.add_patch(Rectangle((c + 0.02, r + 0.02), 0.96, 0.96, facecolor=_ARROW_FACE if arrow else _SQUARE_FACE,
                                   edgecolor=_EDGE, linewidth=self.lw))
            ax.text(c + 0.07, r + 0.06, str(s), fontsize=fs * 0.8, color=_EDGE, ha="left", va="top",
                    fontweight="bold" if arrow else "normal")
            if arrow:
                ax.text(c + 0.93, r + 0.04, "\u2192", fontsize=fs * 1.1, ha="right", va="top", color=_ARROW_COLOUR,
                        fontweight="bold")
            if s not in door_room:
                continue
            q = door_room[s]
            kind = int(board.room_kind[q])
            # rooms sit outside the ring, against the side their door square is on
            bx, by = {"top": (c + 0.08, r - 0.98), "bottom": (c + 0.08, r + 1.06),
                      "left": (c - 0.98, r + 0.08), "right": (c + 1.06, r + 0.08)}[side]
            ax.add_patch(Rectangle((bx, by), 0.84, 0.92, facecolor=_ROOM_FACES[kind], edgecolor=_EDGE, linewidth=lw))
            dx, dy, dw, dh = {"top": (c + 0.3, r - 0.06, 0.4, 0.12), "bottom": (c + 0.3, r + 0.94, 0.4, 0.12),
                              "left": (c - 0.06, r + 0.3, 0.12, 0.4), "right": (c + 0.94, r + 0.3, 0.12, 0.4)}[side]
            ax.add_patch(Rectangle((dx, dy), dw, dh, facecolor=_ROOM_FACES[kind], edgecolor=_EDGE,
                                   linewidth=lw * 0.7, zorder=3))  # the door
            ax.text(bx + 0.05, by + 0.05, f"r{q}", fontsize=fs * 0.8, ha="left", va="top", color="#222")
            points = {RED: "+1", GREEN: "\u22123"}.get(kind)
            if points:
                ax.text(bx + 0.8, by + 0.05, points, fontsize=fs * 0.8, ha="right", va="top", color="#222",
                        fontweight="bold")
            name = board.room_names[q]
            if name != f"room {q}":
                ax.text(bx + 0.42, by + 0.88, name, fontsize=fs * 0.6, ha="center", va="bottom", color="#222",
                        style="italic")
            ax.text(c + 0.93, r + 0.06, f"r{q}", fontsize=fs * 0.62, ha="right", va="top", color="#555")
            self.room_box[q] = (bx, by)

    def _stairs(self) -> None:
        """The stair places climb diagonally towards the arrow square, lowest value on top."""
        from matplotlib.patches import FancyArrowPatch, Rectangle

        ax, fs, lw, board = self.ax, self.fs, self.lw, self.board
        places = board.num_stair_places
        count = places + (1 if board.hugo_start == "cellar_door" else 0)
        box_w, box_h = 1.45, 0.38
        step_y = min(0.46, (self.rows - 2.3 - box_h) / max(1, count - 1))
        step_x = max(0.0, min(0.42, (self.cols - 6.9 - box_w) / max(1, count - 1)))
        x0, y0 = 1.2, 1.15
        self.stair_box: dict[int, tuple[float, float, float, float]] = {}  # area for guests per place
        for j in range(count):  # j = 0 is next to the gallery
            place = places - 1 - j if j < places else -1  # -1: the cellar door
            if place >= 0:
                value = int(board.stair_values[place])
                label, face, colour = (f"+{value}" if self.castle else f"{value}"), _STAIR_FACE, "#2b2115"
            else:
                label, face, colour = "door", _DOOR_FACE, "white"
            bx, by = x0 + j * step_x, y0 + j * step_y
            ax.add_patch(Rectangle((bx, by), box_w, box_h, facecolor=face, edgecolor=_EDGE, linewidth=lw))
            ax.text(bx + 0.06, by + box_h / 2, label, fontsize=fs * 0.85, ha="left", va="center", color=colour,
                    fontweight="bold")
            self.stair_box[place] = (bx + 0.42, by + 0.03, box_w - 0.46, box_h - 0.06)
        if board.overflow == "wine_cellar":  # beside the highest landing, off Hugo's way
            bx = x0 + (places - 1) * step_x + box_w + 0.12
            by = y0 + (places - 1) * step_y - 0.1
            ax.add_patch(Rectangle((bx, by), 1.5, box_h + 0.2, facecolor=_WINE_FACE, edgecolor=_EDGE, linewidth=lw))
            ax.text(bx + 0.06, by + 0.04, f"wine cellar {board.wine_cellar_value}", fontsize=fs * 0.62,
                    ha="left", va="top", color="white")
            self.stair_box[places] = (bx + 0.05, by + 0.2, 1.4, box_h - 0.04)
        ac, ar = self.cell[board.arrow_square]
        ax.add_patch(FancyArrowPatch((x0 + 0.75, y0), (ac + 0.75, ar + 0.8), arrowstyle="-|>",
                                     mutation_scale=12 * self.fs / 9, color=_ARROW_COLOUR, linewidth=lw * 1.5,
                                     zorder=4))
        title = "CELLAR\nSTEPS" if self.castle else "CELLAR\nSTAIRS"
        ax.text(x0 + 0.05, self.rows - 1.2, title, fontsize=fs * 0.8, ha="left", va="bottom",
                color=_EDGE, fontweight="bold", linespacing=1.3)

    def _inside(self) -> None:
        """Title, the clock (hidden_castle) and the status lines, right of the stairs."""
        from matplotlib.lines import Line2D
        from matplotlib.patches import Circle, Rectangle

        ax, fs, lw, cols = self.ax, self.fs, self.lw, self.cols
        right = cols - 1.15
        game = "Escape from the Hidden Castle" if self.castle else "Midnight Party"
        ax.text(right, 1.2, game, fontsize=fs * 1.15, ha="right", va="top", color=_EDGE, fontweight="bold",
                style="italic")
        self.dynamic = []
        if self.castle:
            cx, cy, radius = cols - 2.0, 2.5, 0.6
            self.clock = (cx, cy, radius)
            ax.add_patch(Circle((cx, cy), radius, facecolor="#fffdf5", edgecolor=_EDGE, linewidth=lw * 1.5))
            for h in range(12):
                t = h / 12 * 2 * math.pi
                inner = 0.72 if h % 3 == 0 else 0.84
                ax.plot([cx + inner * radius * math.sin(t), cx + 0.95 * radius * math.sin(t)],
                        [cy - inner * radius * math.cos(t), cy - 0.95 * radius * math.cos(t)], color=_EDGE,
                        linewidth=lw)
            self.hands = [Line2D([], [], color=_EDGE, linewidth=lw * w, solid_capstyle="round", animated=True)
                          for w in (3.0, 1.8)]
            for hand in self.hands:
                ax.add_line(hand)
            self.time_x = [right - 3.6 + k * 0.55 for k in range(len(CLOCK_TIMES))]
            for k, t in enumerate(CLOCK_TIMES):
                ax.text(self.time_x[k], 3.5, t, fontsize=fs * 0.62, ha="center", va="center", color="#555")
            self.time_mark = Rectangle((0, 3.37), 0.54, 0.26, facecolor="none", edgecolor="#c0392b",
                                       linewidth=lw * 1.6, animated=True)
            ax.add_patch(self.time_mark)
            self.dynamic += self.hands + [self.time_mark]
        text_y = 3.9 if self.castle else 1.85
        self.info = ax.text(right, text_y, "", fontsize=fs * 0.85, ha="right", va="top", color="#222",
                            linespacing=1.6, animated=True)
        self.dynamic.append(self.info)

    def _panel(self) -> None:
        """Below the ring: whose turn, the die, the spooky points of every seat and a legend."""
        from matplotlib.collections import EllipseCollection
        from matplotlib.patches import FancyBboxPatch, Polygon, Rectangle

        ax, fs, lw, cols, n = self.ax, self.fs, self.lw, self.cols, self.num_players
        self.panel_y = self.rows + 1.25
        self.table_rows = math.ceil(n / 2) if n > 4 else n
        self.table_x = [-0.9, cols / 2 + 0.3] if n > 4 else [-0.9]
        self.bar_len = cols / 2 - 2.5 if n > 4 else cols - 2.6
        slots = [self._table_slot(p) for p in range(n)]
        for p, (tx, ty) in enumerate(slots):
            ax.text(tx + 0.5, ty, f"seat {p}", fontsize=fs, ha="left", va="center", color="#222")
        d = np.full(n, 0.36)
        ax.add_collection(EllipseCollection(d, d, np.zeros(n), units="xy", offsets=[(x + 0.2, y) for x, y in slots],
                                            offset_transform=ax.transData, facecolors=_seat_hex(range(n)),
                                            edgecolors="#1a1a1a", linewidths=lw * 0.8, zorder=5))
        self.bars = [Rectangle((tx + 1.75, ty - 0.16), 0, 0.32, facecolor=_seat_hex([p])[0], alpha=0.85,
                               edgecolor="none", animated=True) for p, (tx, ty) in enumerate(slots)]
        self.points = [ax.text(tx + 1.8, ty, "", fontsize=fs, ha="left", va="center", color="#222",
                               fontweight="bold", animated=True) for tx, ty in slots]
        for bar in self.bars:
            ax.add_patch(bar)
        self.turn = ax.text(-0.45, self.panel_y + 0.1, "", fontsize=fs * 1.1, ha="left", va="center", color="#222",
                            fontweight="bold", animated=True)
        self.turn_disc = EllipseCollection([0.36], [0.36], [0], units="xy", offsets=[(-0.75, self.panel_y + 0.1)],
                                           offset_transform=ax.transData, edgecolors="#1a1a1a",
                                           linewidths=lw * 0.8, animated=True)
        ax.add_collection(self.turn_disc)
        # the die of the roll being decided
        self.die_at = (cols / 2, self.panel_y - 0.2)
        self.die = FancyBboxPatch(self.die_at, 0.6, 0.6, boxstyle="round,pad=0.02,rounding_size=0.1",
                                  facecolor="white", edgecolor="#222", linewidth=lw * 1.4, animated=True)
        ax.add_patch(self.die)
        self.dynamic += self.bars + self.points + [self.turn, self.turn_disc]
        # legend, along the bottom edge; each entry as wide as its words
        y = self.y_hi - 0.4
        x = -0.9
        renderer = self.canvas.get_renderer()
        to_data = ax.transData.inverted()
        entries = [("room", 0, "plain room"), ("room", RED, "red room +1"),
                   ("room", GREEN, "green room \u22123 (exact roll)"), ("hugo", 0, "Hugo"),
                   ("arrow", 0, "arrow square")]
        for what, kind, words in entries:
            if what == "hugo":
                ax.add_patch(Polygon(_GHOST * 0.42 + (x + 0.15, y), facecolor=_GHOST_FACE, edgecolor=_GHOST_EDGE,
                                     linewidth=lw))
            else:
                face = _ARROW_FACE if what == "arrow" else _ROOM_FACES[kind]
                ax.add_patch(Rectangle((x, y - 0.15), 0.3, 0.3, facecolor=face, edgecolor=_EDGE, linewidth=lw * 0.8))
            label = ax.text(x + 0.4, y, words, fontsize=fs * 0.8, ha="left", va="center", color="#222")
            box = label.get_window_extent(renderer)
            x = to_data.transform((box.x1, box.y0))[0] + 0.35

    def _table_slot(self, p: int) -> tuple[float, float]:
        col, row = divmod(p, self.table_rows)
        return self.table_x[col], self.panel_y + 0.75 + row * 0.55

    # -- one frame --------------------------------------------------------------------------------
    def frame(self, pos: _Position) -> np.ndarray:
        ax = self.ax
        discs: list[tuple[float, float, float, int]] = []  # x, y, radius, seat
        ghosts = []  # Hugo, drawn over everything else
        # guests on the gallery, Hugo on his square
        for s, (c, r) in self.cell.items():
            seats = [p for p in range(pos.num_players) for _ in range(int(pos.gallery[p, s]))]
            if s == pos.hugo_square:
                ghosts += self._hugo(c + 0.72, r + 0.6, 0.52) if seats else self._hugo(c + 0.5, r + 0.58, 0.62)
            if seats:
                w = 0.5 if s == pos.hugo_square else 0.86
                centres, rad = _disc_grid(len(seats), c + 0.05, r + 0.24, w, 0.72, 0.2)
                discs += [(x, y, rad, p) for (x, y), p in zip(centres, seats)]
        for q, (bx, by) in self.room_box.items():
            if pos.room[q] >= 0:
                discs.append((bx + 0.42, by + 0.5, 0.22, int(pos.room[q])))
        # captured guests on the stairs, Hugo on his place
        for place, (bx, by, bw, bh) in self.stair_box.items():
            if place >= 0:
                seats = [p for p in range(pos.num_players) for _ in range(int(pos.stairs[p, place]))]
                if seats:
                    centres, rad = _disc_grid(len(seats), bx, by, bw, bh, 0.16)
                    discs += [(x, y, rad, p) for (x, y), p in zip(centres, seats)]
            if place == pos.hugo_place:
                ghosts += self._hugo(bx + bw - 0.2, by + bh / 2 - 0.05, 0.5)
        fresh = self._discs(discs) + ghosts  # artists made for this frame only

        # clock or rounds, and the status
        if self.castle:
            cx, cy, radius = self.clock
            hour, minute = (int(v) for v in _clock_text(pos).split(":"))
            angles = (((hour % 12) + minute / 60) / 12 * 2 * math.pi, minute / 60 * 2 * math.pi)
            for hand, angle, length in zip(self.hands, angles, (0.5, 0.8)):
                tip = (cx + length * radius * math.sin(angle), cy - length * radius * math.cos(angle))
                hand.set_data([cx, tip[0]], [cy, tip[1]])
            self.time_mark.set_x(self.time_x[min(pos.clock, len(CLOCK_TIMES) - 1)] - 0.27)
            first = f"clock {_clock_text(pos)}, Hugo speed {pos.speed}"
        else:
            first = f"round {pos.round} of {pos.rounds}, Hugo speed {pos.speed}"
        lines = (first, _hugo_text(self.board, pos) + ("" if pos.rooms_open else "; rooms locked"),
                 f"rolls so far: {pos.rolls}")
        self.info.set_text("\n".join(lines))
        self.turn.set_text(_turn_text(pos))
        self.turn_disc.set_facecolor(_seat_hex([pos.player]) if pos.phase != OVER else "none")
        self.turn_disc.set_visible(pos.phase != OVER)
        shown = list(self.dynamic)
        if pos.phase == MOVE:  # the die of the roll being decided
            fresh += self._pips(pos.roll)
            shown.append(self.die)

        # points: a bar and a number per seat
        winners = pos.winners() if pos.phase == OVER else []
        top = max(CASTLE_POINTS_LIMIT if pos.castle else _BAR_FULL_POINTS, int(pos.spooky.max()))
        for p in range(pos.num_players):
            pts = int(pos.spooky[p])
            length = self.bar_len * max(pts, 0) / top
            self.bars[p].set_width(length)
            mark = "  \u2605 winner" if p in winners else ("  \u25c0" if pos.phase != OVER and p == pos.player else "")
            self.points[p].set_text(f"{pts}{mark}")
            self.points[p].set_x(self.bars[p].get_x() + length + 0.05)

        self.canvas.restore_region(self.background)
        for artist in shown + fresh:
            if artist.get_visible():
                ax.draw_artist(artist)
        image = np.asarray(self.canvas.buffer_rgba())[:, :, :3].copy()
        for artist in fresh:
            artist.remove()
        return image

    def _hugo(self, x: float, y: float, h: float) -> list:
        from matplotlib.patches import Ellipse, Polygon

        parts = [Polygon(_GHOST * h + (x, y), closed=True, facecolor=_GHOST_FACE, edgecolor=_GHOST_EDGE,
                         linewidth=self.lw * 1.3)]
        parts += [Ellipse((x + dx * h, y - 0.12 * h), 0.11 * h, 0.17 * h, facecolor="#111") for dx in (-0.14, 0.14)]
        parts.append(Ellipse((x, y + 0.1 * h), 0.12 * h, 0.1 * h, facecolor="#111"))
        for part in parts:
            part.set_animated(True)
            self.ax.add_artist(part)
        return parts

    def _discs(self, discs) -> list:
        """One collection for every guest disc, one scatter of seat symbols per seat."""
        from matplotlib.collections import EllipseCollection

        if not discs:
            return []
        ax = self.ax
        d = np.array([2 * rad for _, _, rad, _ in discs])
        seats = np.array([p for *_, p in discs])
        xy = np.array([(x, y) for x, y, _, _ in discs])
        out = [EllipseCollection(d, d, np.zeros(len(d)), units="xy", offsets=xy, offset_transform=ax.transData,
                                 facecolors=_seat_hex(seats), edgecolors="#1a1a1a", linewidths=self.lw * 0.8,
                                 animated=True)]
        ax.add_collection(out[0], autolim=False)
        labelled = d >= 0.17  # symbols only where they can be read
        for p in np.unique(seats[labelled]):
            mine = labelled & (seats == p)
            out.append(self._symbols(self.digit_path[p], xy[mine], 0.55 * d[mine], _text_colour(_seat_hex([p])[0])))
        return out

    def _symbols(self, path, xy, heights, colour):
        """Marker-like symbols (seat digits, die pips) of the given heights in data units, without
        the cost of ``scatter`` (which rescales the axes)."""
        from matplotlib.collections import PathCollection
        from matplotlib.transforms import IdentityTransform

        sizes = (np.asarray(heights) * self.points_per_unit) ** 2
        symbols = PathCollection((path,), sizes=sizes, offsets=xy, offset_transform=self.ax.transData,
                                 facecolors=colour, edgecolors="none", animated=True)
        symbols.set_transform(IdentityTransform())
        self.ax.add_collection(symbols, autolim=False)
        return symbols

    def _pips(self, roll: int) -> list:
        x, y = self.die_at
        spots = {1: [(0.5, 0.5)], 2: [(0.25, 0.25), (0.75, 0.75)], 4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75),
                 (0.75, 0.75)], 5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)]}
        xy = np.array([(x + 0.6 * u, y + 0.6 * v) for u, v in spots.get(roll, [])]).reshape(-1, 2)
        return [self._symbols(self.pip_path, xy, np.full(len(xy), 0.13), "#222")] if len(xy) else []


def _seat_hex(seats) -> list[str]:
    return [PLAYER_COLOURS[int(p) % len(PLAYER_COLOURS)].hex for p in seats]


_SCENES: OrderedDict = OrderedDict()
_MAX_SCENES = 4  # figures kept for reuse; older ones are dropped (and freed)


def _scene(engine, size: int) -> _Scene:
    board = engine.board
    key = (engine.variant, board.name, board.num_squares, board.arrow_square, tuple(board.door_square.tolist()),
           tuple(board.room_kind.tolist()), tuple(board.stair_values.tolist()), board.hugo_start, board.overflow,
           board.wine_cellar_value, board.room_names, engine.num_players, size)
    scene = _SCENES.get(key)
    if scene is None:
        scene = _SCENES[key] = _Scene(engine, size)
        while len(_SCENES) > _MAX_SCENES:
            _SCENES.popitem(last=False)
    _SCENES.move_to_end(key)
    return scene


def render_rgb(engine, state, i: int = 0, size: int = 640) -> np.ndarray:
    """Game ``i`` as a ``(size, size, 3)`` uint8 picture (matplotlib, Agg; no window)."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 64 <= size <= 4096:
        raise ValueError(f"size={size!r} is out of range: allowed are integers 64..4096 (pixels)")
    pos = _position(engine, state, i)
    return _scene(engine, int(size)).frame(pos)


__all__ = ["PLAYER_COLOURS", "PlayerColour", "HUGO_MARK", "render_ansi", "render_rgb"]
