"""How the board looks in both drawings of its layout, the picture (matplotlib) and the SVG (the
web page): colours, type sizes and the words written on the board. The colour of each seat is
in ``seats``; the words about a position (whose turn, where Hugo is) in ``snapshot``."""

from __future__ import annotations

import math

from midnight_env.core.board import GREEN, RED

BACKGROUND = "#f4ecd8"  # parchment
SQUARE_FACE = "#fbf7ee"
EDGE = "#4a3b2a"
ROOM_FACES = ("#d9c7a7", "#e57373", "#81c784")  # plain, red, green
STAIR_FACE = "#b9a88b"
DOOR_FACE = "#7a5c3a"
WINE_FACE = "#8e5a6e"
ARROW_FACE = "#fff3b0"
ARROW_COLOUR = "#b8860b"
GHOST_FACE = "#fbfbff"
GHOST_EDGE = "#3b2a5a"
CLOCK_FACE = "#fffdf5"
TIME_MARK = "#c0392b"
BAR_FULL_POINTS = 40  # midnight_party: points of a full-length bar (hidden_castle: 46, the end)

# Type and lines at the picture's reference size: 9 pt text and 1.2 pt lines on 640 pixels
# (both drawings scale them with the picture).
FONT_POINTS = 9.0
LINE_POINTS = 1.2
REFERENCE_PIXELS = 640

ROOM_POINTS = {RED: "+1", GREEN: "\u22123"}  # written in the room's corner; plain rooms have none
LEGEND = (("room", 0, "plain room"), ("room", RED, "red room +1"), ("room", GREEN, "green room \u22123 (exact roll)"),
          ("hugo", 0, "Hugo"), ("arrow", 0, "arrow square"))  # (what, room kind, words)


HAND_LENGTHS = (0.5, 0.8)  # the clock's hour and minute hands, in radii
HAND_WIDTHS = (3.0, 1.8)  # in line widths


def hand_angles(time: str) -> tuple[float, float]:
    """Angles of the hour and minute hands for ``"H:MM"``, clockwise from twelve, in radians."""
    hour, minute = (int(v) for v in time.split(":"))
    return ((hour % 12) + minute / 60) / 12 * 2 * math.pi, minute / 60 * 2 * math.pi


def text_colour(hex_colour: str) -> str:
    """Black or white, whichever reads better on ``hex_colour``."""
    r, g, b = (int(hex_colour[k:k + 2], 16) / 255 for k in (1, 3, 5))
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.6 else "white"


def game_title(castle: bool) -> str:
    return "Escape from the Hidden Castle" if castle else "Midnight Party"


def stairs_title(castle: bool) -> str:
    return "CELLAR\nSTEPS" if castle else "CELLAR\nSTAIRS"


def stair_label(value: int | None, castle: bool) -> str:
    """A stair place's label: its value (``+10`` on a castle step), or ``door`` (the cellar door)."""
    if value is None:
        return "door"
    return f"+{value}" if castle else f"{value}"


__all__ = ["BACKGROUND", "SQUARE_FACE", "EDGE", "ROOM_FACES", "STAIR_FACE", "DOOR_FACE", "WINE_FACE", "ARROW_FACE",
           "ARROW_COLOUR", "GHOST_FACE", "GHOST_EDGE", "CLOCK_FACE", "TIME_MARK", "BAR_FULL_POINTS", "FONT_POINTS",
           "LINE_POINTS", "REFERENCE_PIXELS", "ROOM_POINTS", "LEGEND", "HAND_LENGTHS", "HAND_WIDTHS", "hand_angles",
           "text_colour", "game_title", "stairs_title", "stair_label"]
