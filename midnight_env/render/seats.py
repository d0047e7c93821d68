"""How a seat looks in every drawing: its colour (picture and terminal) and its symbol."""

from __future__ import annotations

from typing import NamedTuple


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


def seat_hex(seats) -> list[str]:
    """Picture colour of each seat."""
    return [PLAYER_COLOURS[int(p) % len(PLAYER_COLOURS)].hex for p in seats]


__all__ = ["PlayerColour", "PLAYER_COLOURS", "SEAT_SYMBOLS", "seat_hex"]
