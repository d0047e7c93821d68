"""The terminal boards: the gallery ring of :func:`ring_grid` drawn in characters, one cell per
square; 256-colour ANSI styles, or plain text.

- :func:`render_ansi`: the full board (at most 100 columns, 38 lines on the shipped boards), the
  cellar stairs and the status inside the ring and the spooky points below it;
- :func:`render_frame`: the same position as one screen of a terminal (at most 80 columns, 17
  lines on the shipped boards): two lines a square, rooms marked on their door squares as
  ``r5+`` (red) / ``r2-`` (green), the stairs, the points and a short legend inside the ring.
  ``midnight render`` and ``midnight play`` draw it.

:func:`use_color` says whether a terminal output should be coloured (a flag, NO_COLOR, a terminal).
"""

from __future__ import annotations

import os
import sys
import textwrap

from midnight_env.core.board import GREEN, RED
from midnight_env.core.state import OVER, PLACE, ROLL
from midnight_env.render.layout import ring_grid
from midnight_env.render.seats import PLAYER_COLOURS, SEAT_SYMBOLS
from midnight_env.render.snapshot import Position, clock_text, hugo_text, snapshot, turn_text

HUGO_MARK = "HUGO"
KIND_WORDS = ("pln", "red", "grn")  # room kind as three letters

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


def _stairs_lines(board, pos: Position) -> list[list[tuple[str, str]]]:
    """The cellar stairs: one line per place, Hugo and the captured guests on it."""
    hugo = [(HUGO_MARK, _HUGO_STYLE)]
    lines: list[list[tuple[str, str]]] = []
    if pos.castle:
        lines.append([(f"{'CELLAR STEPS':<14}", "1"), ("Hugo  captured", _DIM)])
        if board.hugo_start == "cellar_door":
            lines.append([(f"{'cellar door':<14}", "")] + (hugo if pos.hugo_at_cellar_door else []))
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


def _status_lines(board, pos: Position) -> list[list[tuple[str, str]]]:
    title = "Hidden Castle" if pos.castle else "Midnight Party"
    players = f"{pos.num_players} player" + ("s" if pos.num_players > 1 else "")
    lines = [[(f"{title}, {players}", "1")]]
    if pos.castle:
        lines.append([("clock ", ""), (clock_text(pos), "1;36"), (f"   Hugo speed {pos.speed}", "")])
    else:
        lines.append([(f"round {pos.round} of {pos.rounds}   Hugo speed {pos.speed}", "")])
    lines.append([(f"rolls so far {pos.rolls}", _DIM)])
    turn_style = _seat_style(pos.player) if pos.phase != OVER else "1"
    lines.append([(turn_text(pos), turn_style)])
    lines.append([(hugo_text(board, pos), "")])
    lines.append([("rooms open" if pos.rooms_open else "rooms locked (Hugo on the stairs)", "")])
    lines.append([])
    seats = "0" if pos.num_players == 1 else f"0-{pos.num_players - 1}"
    lines.append([(seats, "1"), (" guests by seat, ", ""), (HUGO_MARK, _HUGO_STYLE), (" Hugo", "")])
    lines.append([("0>", _ARROW_STYLE), (" arrow square (Hugo enters)", "")])
    lines.append([("room: ", ""), ("pln", ""), ("/", ""), ("red", _KIND_STYLES[RED]), (" +1/", ""),
                  ("grn", _KIND_STYLES[GREEN]), (" -3 exact", "")])
    lines.append([("pln3[1]", ""), (": room 3, seat 1 inside", _DIM)])
    return lines


def _points_lines(pos: Position) -> list[list[tuple[str, str]]]:
    head = f"{'':6}  {'spooky':>6}  {'gallery':>7}  {'rooms':>5}  {'stairs':>6}  {'to place':>8}"
    lines = [[(head, "1")]]
    winners = pos.winners if pos.phase == OVER else ()
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
    pos = snapshot(engine, state, i)
    board = engine.board
    rows, cols, cells = ring_grid(board.num_squares)
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

    stairs, status = _stairs_lines(board, pos), _status_lines(board, pos)
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


# -- one terminal screen -------------------------------------------------------------------------

FRAME_COLUMNS = 80  # a terminal frame is at most this wide
ROOM_SIGNS = ("", "+", "-")  # room kind on the frame: r4 plain, r8+ red (+1 point), r2- green (-3 points)
_FRAME_CELL_W = 7  # characters inside a gallery square of the frame
_PLACE_W = 5  # a stair place's column on the frame (4 characters and a gap)


def use_color(flag: bool | None = None, stream=None) -> bool:
    """Whether terminal output is coloured: ``flag`` (``--color`` / ``--no-color``) where given;
    otherwise only when ``stream`` (stdout) is a terminal, NO_COLOR is unset or empty
    (no-color.org) and TERM is not ``dumb``."""
    if flag is not None:
        return bool(flag)
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or odd stream: no terminal
        tty = False
    return tty and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def room_label(board, q: int) -> str:
    """Room ``q`` as the frame marks it on its door square: ``r<q>`` and ``+`` red / ``-`` green."""
    return f"r{q}{ROOM_SIGNS[int(board.room_kind[q])]}"


def _width(line: list[tuple[str, str]]) -> int:
    return sum(len(t) for t, _ in line)


def _stair_block(board, pos: Position) -> list[list[tuple[str, str]]]:
    """The stairs as two lines: the places with their values, and under each Hugo or the
    captured guests on it."""
    head: list[tuple[str, str]] = [(f"{'steps' if pos.castle else 'landing':<8}", "1")]
    below: list[tuple[str, str]] = [(" " * 8, "")]

    def place(title: str, hugo: bool, counts, last: bool = False) -> None:
        width = max(_PLACE_W - 1, len(title)) if last else _PLACE_W - 1
        head.append((f"{title:<{width}}" + ("" if last else " "), ""))
        pieces = [(HUGO_MARK, _HUGO_STYLE)] if hugo else []
        room = width - (len(HUGO_MARK) + 1 if hugo else 0)
        guests = _styled_guests(counts, room) if room > 0 and counts is not None and counts.sum() else []
        if hugo and guests:
            pieces.append((" ", ""))
        used = _width(pieces + guests)
        below.extend(pieces + guests + ([(" " * (width - used + (0 if last else 1)), "")] if used < width + 1 else []))

    if board.hugo_start == "cellar_door":
        place("door", pos.hugo_at_cellar_door, None)
    for k, value in enumerate(board.stair_values):
        last = k == len(board.stair_values) - 1 and board.overflow != "wine_cellar"
        place(f"+{int(value)}" if pos.castle else f"{int(value)}", pos.hugo_place == k, pos.stairs[:, k], last)
    if board.overflow == "wine_cellar":
        place(f"wine {board.wine_cellar_value}", False, pos.stairs[:, -1], last=True)
    return [head, below]


def _points_block(pos: Position) -> list[list[tuple[str, str]]]:
    """The points by seat, one column a seat (the deciding seat marked ``>``)."""
    seats: list[tuple[str, str]] = [(f"{'seat':<9}", "1")]
    for p in range(pos.num_players):
        mark = ">" if pos.phase != OVER and p == pos.player else " "
        seats += [(f"{mark:>3}", "1"), (SEAT_SYMBOLS[p], _seat_style(p))]
    rows = [("spooky", pos.spooky), ("gallery", pos.gallery.sum(axis=1)),
            ("rooms", [(pos.room == p).sum() for p in range(pos.num_players)]), ("stairs", pos.stairs.sum(axis=1)),
            ("to place", pos.supply)]
    lines = [seats]
    for label, values in rows:
        lines.append([(f"{label:<9}", "1" if label == "spooky" else "")]
                     + [("".join(f"{int(v):>4}" for v in values), "1" if label == "spooky" else "")])
    return lines


def _note_items(pos: Position, board) -> list[list[tuple[str, str]]]:
    """The status (round or clock, Hugo's speed, rolls, locked rooms), then the legend, as short
    items, the most needed first."""
    items = [[(f"clock {clock_text(pos)}" if pos.castle else f"round {pos.round} of {pos.rounds}", "")],
             [(f"Hugo speed {pos.speed}", "")], [(f"{pos.rolls} rolls", _DIM)]]
    if not pos.rooms_open:
        items.append([("rooms locked", "1")])
    for kind, words in ((RED, " red room: +1 point"), (GREEN, " green: -3 points, exact roll")):
        rooms = [q for q in range(board.num_rooms) if int(board.room_kind[q]) == kind]
        if rooms:
            items.append([(room_label(board, rooms[0]), _KIND_STYLES[kind]), (words, "")])
    items += [[("[0]", ""), (" seat 0 inside", "")], [("fewest spooky points win", _DIM)],
              [(HUGO_MARK, _HUGO_STYLE), (" Hugo", "")], [(f"{board.arrow_square}>", _ARROW_STYLE), (" arrow", "")]]
    return items


def _pack(items: list[list[tuple[str, str]]], width: int, height: int) -> list[list[tuple[str, str]]]:
    """Items in order, two spaces apart, into at most ``height`` lines of ``width`` characters;
    an item that does not fit where it comes is left out."""
    lines: list[list[tuple[str, str]]] = []
    for item in items:
        w = _width(item)
        if w > width:
            continue
        if lines and _width(lines[-1]) + 2 + w <= width:
            lines[-1] += [("  ", "")] + item
        elif len(lines) < height:
            lines.append(list(item))
    return lines


def _frame_cell(canvas: _TextCanvas, board, pos: Position, s: int, top: int, left: int, room_of: dict) -> None:
    """Gallery square ``s``: its number and room on the first line, Hugo, the guests and the
    room's occupant on the second."""
    w = _FRAME_CELL_W
    number = [(f"{s}>", _ARROW_STYLE)] if s == board.arrow_square else [(f"{s}", "")]
    canvas.put_line(top, left, number)
    occupant = ""
    if s in room_of:
        q = room_of[s]
        label = room_label(board, q)
        canvas.put(top, left + max(_width(number) + 1, w - len(label)), label, _KIND_STYLES[int(board.room_kind[q])])
        seat = int(pos.room[q])
        if seat >= 0:
            occupant = SEAT_SYMBOLS[seat]
            canvas.put_line(top + 1, left + w - 3, [("[", ""), (occupant, _seat_style(seat)), ("]", "")])
    room = w - (3 if occupant else 0)
    counts = pos.gallery[:, s]
    hugo = s == pos.hugo_square
    mark = HUGO_MARK if not counts.sum() or room - len(HUGO_MARK) - 1 >= 2 else "H"
    pieces = [(mark, _HUGO_STYLE)] if hugo else []
    space = room - (len(mark) + 1 if hugo else 0)
    if counts.sum() and space > 0:
        pieces += ([(" ", "")] if hugo else []) + _styled_guests(counts, space)
    canvas.put_line(top + 1, left, pieces)


def render_frame(engine, state, i: int = 0, color: bool = True) -> str:
    """Game ``i`` as one terminal screen: at most 80 columns, 17 lines on the shipped boards
    (a status line and the ring with the stairs, the points and a legend inside);
    ``color=False`` gives plain text."""
    pos = snapshot(engine, state, i)
    board = engine.board
    rows, cols, cells = ring_grid(board.num_squares)
    pitch = _FRAME_CELL_W + 1
    width = cols * pitch - 1
    side = rows - 2
    top_of = [1] + [4 + 2 * (r - 1) for r in range(1, rows - 1)] + [4 + 2 * side + (1 if side else 0)]
    bottom_row = top_of[-1]
    ring_h = bottom_row + 3
    title = "Hidden Castle" if pos.castle else "Midnight Party"
    players = f"{pos.num_players} player" + ("s" if pos.num_players > 1 else "")
    turn_style = _seat_style(pos.player) if pos.phase != OVER else "1"
    status = [[(f"{title}, {players}: ", "1"), (turn_text(pos), turn_style)]]
    if _width(status[0]) > FRAME_COLUMNS - 1:
        status = [[(part, "1")] for part in textwrap.wrap(f"{title}, {players}: {turn_text(pos)}", FRAME_COLUMNS - 1)]
    canvas = _TextCanvas(max(width, FRAME_COLUMNS - 1), ring_h + len(status))
    for k, line in enumerate(status):
        canvas.put_line(k, 0, line)
    y0 = len(status)
    # rules: the rim above and below, and the inner edges of the top and bottom rows
    rules = [0, 3, bottom_row - 1, bottom_row + 2] if side else [0, 3, bottom_row + 2]
    for y in rules:
        canvas.put(y0 + y, 0, "-" * width)
        for c in range(cols - 1):
            canvas.put(y0 + y, c * pitch + _FRAME_CELL_W, "+")
    for r in range(rows):
        for k in range(2):
            y = y0 + top_of[r] + k
            seps = range(cols - 1) if r in (0, rows - 1) else (0, cols - 2)
            for c in seps:
                canvas.put(y, c * pitch + _FRAME_CELL_W, "|")
    room_of = {int(d): q for q, d in enumerate(board.door_square)}
    for s, (r, c, _) in enumerate(cells):
        _frame_cell(canvas, board, pos, s, y0 + top_of[r], c * pitch, room_of)

    stairs, points = _stair_block(board, pos), _points_block(pos)
    inner_left, inner_w, inner_h = pitch + 1, (cols - 2) * pitch - 3, 2 * side
    stairs_w = max(_width(line) for line in stairs)
    points_w = max(_width(line) for line in points)
    if inner_w >= max(stairs_w, points_w + 16) and inner_h >= len(stairs) + len(points):
        row = y0 + 4
        for line in stairs + points:
            canvas.put_line(row, inner_left, line)
            row += 1
        notes = _pack(_note_items(pos, board), inner_w - points_w - 3, len(points))
        for k, line in enumerate(notes):
            canvas.put_line(y0 + 4 + len(stairs) + k, inner_left + points_w + 3, line)
    else:  # a ring too small to hold them: below it
        row = y0 + ring_h
        for line in stairs + points + _pack(_note_items(pos, board), FRAME_COLUMNS - 1, 3):
            canvas.put_line(row, 0, line)
            row += 1
    return canvas.text(color)


__all__ = ["FRAME_COLUMNS", "HUGO_MARK", "KIND_WORDS", "ROOM_SIGNS", "render_ansi", "render_frame", "room_label",
           "use_color"]
