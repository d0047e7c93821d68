"""The terminal board (:func:`render_ansi`): the gallery ring of :func:`ring_grid` drawn in
characters, one cell per square, with the cellar stairs and the game's status inside the ring
and the spooky points below it; 256-colour ANSI styles, or plain text."""

from __future__ import annotations

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


__all__ = ["HUGO_MARK", "KIND_WORDS", "render_ansi"]
