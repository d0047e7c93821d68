"""Drawing a game position: a terminal board (:func:`render_ansi`) and a picture (:func:`render_rgb`).

Both read the geometry from ``engine.board`` (door squares, room kinds, stair values): a board is
data, so a changed board draws without a code change. Both show game ``i`` of a batch; neither
changes the state. The package holds one concern per module:

- ``snapshot``: the position of one game as plain values, every fact from the engine;
- ``seats``: how a seat looks (colour, symbol) in both drawings;
- ``text``: the terminal board;
- ``layout``: where everything of the picture lies, from the board alone (plain data, no drawing);
- ``picture``: that layout drawn with matplotlib (imported only once a picture is drawn).
"""

from __future__ import annotations

from midnight_env.render.layout import BoardLayout, board_layout
from midnight_env.render.picture import render_rgb
from midnight_env.render.seats import PLAYER_COLOURS, SEAT_SYMBOLS, PlayerColour
from midnight_env.render.text import HUGO_MARK, KIND_WORDS, render_ansi

__all__ = ["PLAYER_COLOURS", "PlayerColour", "SEAT_SYMBOLS", "HUGO_MARK", "KIND_WORDS", "BoardLayout",
           "board_layout", "render_ansi", "render_rgb"]
