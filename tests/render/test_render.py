"""Rendering: the terminal board and the picture show the position they are given."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest

from midnight_env import Engine, agent_streams
from midnight_env.core.board import board_from_dict
from midnight_env.core.config import CLOCK_TIMES
from midnight_env.core.state import OVER, PLACE
from midnight_env.render import HUGO_MARK, KIND_WORDS, PLAYER_COLOURS, picture, render_ansi, render_rgb
from midnight_env.render.layout import ring_grid
from midnight_env.render.picture import _scene
from midnight_env.render.text import _CELL_H, _CELL_W, _STAIR_GUESTS

VARIANTS = ("midnight_party", "hidden_castle")
PLAYERS = (1, 4, 8)
STAGES = ("setup", "mid", "end")
ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
SIZE = 320  # small pictures keep the tests fast


@functools.cache
def game(variant: str, num_players: int):
    """An engine and one random game of it at set-up, in the middle and at the end."""
    eng = Engine(variant, num_players)
    seed = 20 + num_players
    state = eng.new_games([seed])
    rng = agent_streams([seed])
    stages = {"setup": state.copy()}
    seen = []
    while not state.done.all():
        eng.step(state, eng.random_actions(state, rng))
        if state.phase[0] not in (PLACE, OVER):
            seen.append(state.copy())
    stages["mid"] = seen[len(seen) // 2]
    stages["end"] = state
    return eng, stages


def cell_lines(text: str, num_squares: int, square: int) -> list[str]:
    """The inside lines of gallery square ``square`` in a plain terminal board."""
    r, c, _ = ring_grid(num_squares).cells[square]
    lines = text.split("\n")
    top, left = r * (_CELL_H + 1), c * (_CELL_W + 1)
    return [lines[top + k][left + 1:left + 1 + _CELL_W].ljust(_CELL_W) for k in range(1, _CELL_H + 1)]


def seats_in(text: str, num_players: int) -> list[int]:
    return sorted(int(ch) for ch in text if ch.isdigit() and int(ch) < num_players)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("num_players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_ansi_shows_points_hugo_and_time(variant, num_players, stage):
    eng, stages = game(variant, num_players)
    state = stages[stage]
    text = render_ansi(eng, state, color=False)
    assert "\x1b" not in text
    assert max(len(line) for line in text.split("\n")) <= 100
    points = {int(p): int(v) for p, v in re.findall(r"^ seat (\d)\s+(-?\d+)", text, flags=re.M)}
    assert points == {p: int(state.spooky[0, p]) for p in range(num_players)}
    # Hugo once on the board, once in the legend
    assert text.count(HUGO_MARK) == 2
    square = eng.hugo_square(state)
    if square >= 0:
        assert HUGO_MARK in cell_lines(text, eng.board.num_squares, square)[0]
    else:
        h, values = int(state.hugo[0]), eng.board.stair_values
        if variant == "hidden_castle":
            label = "cellar door" if h == 0 else f"step +{values[h - 1]} "
        else:
            label = f"landing {values[h]:>2} "
        assert HUGO_MARK in next(line for line in text.split("\n") if label in line)
    if variant == "hidden_castle":
        assert f"clock {CLOCK_TIMES[state.clock[0]]}" in text
        assert f"Hugo speed {eng.speed(state)}" in text
    else:
        assert f"round {state.round[0]} of {eng.config.rounds}" in text
    if stage == "end":
        assert "game over" in text


@pytest.mark.parametrize("num_players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_ansi_colour_is_the_plain_board_with_escapes(variant, num_players):
    eng, stages = game(variant, num_players)
    coloured = render_ansi(eng, stages["mid"], color=True)
    assert "\x1b[" in coloured
    assert ESCAPE.sub("", coloured) == render_ansi(eng, stages["mid"], color=False)
    seat_colour = f"38;5;{PLAYER_COLOURS[0].ansi}m0"
    assert seat_colour in coloured  # seat 0's guests or points row in its colour


@pytest.mark.parametrize("stage", ("mid", "end"))
@pytest.mark.parametrize("num_players", (2, 4, 8))
@pytest.mark.parametrize("variant", VARIANTS)
def test_ansi_places_every_guest(variant, num_players, stage):
    """Each gallery square's cell lists its guests by seat; each room its kind and occupant;
    each stair line its captured guests."""
    eng, stages = game(variant, num_players)
    state = stages[stage]
    board = eng.board
    text = render_ansi(eng, state, color=False)
    for square in range(board.num_squares):
        guests = cell_lines(text, board.num_squares, square)[2:]
        expected = [p for p in range(num_players) for _ in range(state.gallery[0, p, square])]
        assert seats_in("".join(guests), num_players) == expected, f"square {square}"
    for q, door in enumerate(board.door_square):
        occupant = int(state.room[0, q])
        room_line = cell_lines(text, board.num_squares, int(door))[1]
        mark = str(occupant) if occupant >= 0 else " "
        assert room_line.startswith(f"{KIND_WORDS[board.room_kind[q]]}{q}[{mark}]")
    lines = text.split("\n")
    for place, value in enumerate(board.stair_values):
        label = f"step +{value} " if variant == "hidden_castle" else f"landing {value:>2} "
        line = next(line for line in lines if label in line)
        start = line.index(label) + 20  # label (14) and Hugo's column (4 + 2)
        stair_part = line[start:start + _STAIR_GUESTS]
        expected = [p for p in range(num_players) for _ in range(state.stairs[0, p, place])]
        assert seats_in(stair_part, num_players) == expected, f"stair place {place}"


def test_ansi_marks_the_arrow_square_and_rejects_bad_input():
    eng, stages = game("midnight_party", 4)
    text = render_ansi(eng, stages["setup"], color=False)
    assert cell_lines(text, 28, eng.board.arrow_square)[0].startswith("0>")
    with pytest.raises(ValueError, match="game index i=3"):
        render_ansi(eng, stages["setup"], i=3)
    with pytest.raises(ValueError, match="8 players"):
        render_ansi(eng, game("midnight_party", 8)[1]["setup"])


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("num_players", PLAYERS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_rgb_is_a_picture_with_every_seat_colour(variant, num_players, stage):
    eng, stages = game(variant, num_players)
    image = render_rgb(eng, stages[stage], size=SIZE)
    assert image.shape == (SIZE, SIZE, 3) and image.dtype == np.uint8
    colours = np.unique(image.reshape(-1, 3), axis=0)
    assert len(colours) > 50  # not blank: many shades of many things
    present = {tuple(c) for c in colours}
    for p in range(num_players):  # the points table has a disc of each seat's colour
        hex_colour = PLAYER_COLOURS[p].hex
        rgb = tuple(int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))
        assert rgb in present, f"seat {p} colour {hex_colour} missing"


@pytest.mark.parametrize("variant", VARIANTS)
def test_rgb_changes_with_the_position_and_only_with_it(variant):
    eng = Engine(variant, 4)
    state = eng.new_games([5])
    rng = agent_streams([5])
    before = render_rgb(eng, state, size=SIZE)
    other, stages = game(variant, 8)
    render_rgb(other, stages["end"], size=SIZE)  # another scene in between
    assert np.array_equal(render_rgb(eng, state, size=SIZE), before)
    for _ in range(12):
        key = state.key(0)
        eng.step(state, eng.random_actions(state, rng))
        after = render_rgb(eng, state, size=SIZE)
        assert state.key(0) == key or not np.array_equal(after, before)
        before = after


def test_rgb_draws_hugo_on_his_square():
    eng = Engine("hidden_castle", 2)
    state = eng.new_games([1])
    size = 640
    scene = _scene(eng, size)
    ghost = np.array([0xFB, 0xFB, 0xFF])

    def ghost_pixels(image, square):
        x, y, w, h = scene.layout.squares[square].bounds
        (x0, y0), (x1, y1) = scene.ax.transData.transform([(x, y), (x + w, y + h)])
        rows = slice(int(size - max(y0, y1)), int(size - min(y0, y1)))
        block = image[rows, int(x0):int(x1)]
        return int((block == ghost).all(axis=2).sum())

    empty = render_rgb(eng, state, size=size)
    state.hugo[0] = eng.board.hugo_track_stairs + 12  # Hugo on gallery square 12
    with_hugo = render_rgb(eng, state, size=size)
    assert ghost_pixels(empty, 12) == 0
    assert ghost_pixels(with_hugo, 12) > 200
    assert ghost_pixels(with_hugo, 13) == 0


def test_rgb_keeps_few_figures_and_checks_its_size(monkeypatch):
    monkeypatch.setattr(picture, "_MAX_SCENES", 1)
    eng, stages = game("midnight_party", 1)
    for size in (100, 120):
        assert render_rgb(eng, stages["setup"], size=size).shape == (size, size, 3)
    assert len(picture._SCENES) == 1
    with pytest.raises(ValueError, match="size=10"):
        render_rgb(eng, stages["setup"], size=10)


def test_a_changed_board_draws_without_code_changes():
    """33 squares, 4 rooms, 4 landings: rooms are marked on their own door squares."""
    board = board_from_dict({
        "name": "small", "gallery_squares": 33, "arrow_square": 0,
        "rooms": [{"door": 1, "kind": "red"}, {"door": 12, "kind": "green"}, {"door": 20, "kind": "plain"},
                  {"door": 30, "kind": "plain"}],
        "stairs": {"kind": "landings", "values": [9, 7, 5, 3], "hugo_start": "top", "overflow": "wine_cellar",
                   "wine_cellar_value": 1}})
    eng = Engine("midnight_party", 3, board=board)
    state = eng.new_games([1])
    rng = agent_streams([1])
    for _ in range(30):
        eng.step(state, eng.random_actions(state, rng))
    text = render_ansi(eng, state, color=False)
    for q, door in enumerate(board.door_square):
        assert cell_lines(text, 33, int(door))[1].startswith(f"{KIND_WORDS[board.room_kind[q]]}{q}[")
    marked = [s for s in range(33) if cell_lines(text, 33, s)[1].strip()]
    assert marked == sorted(board.door_square.tolist())
    assert "landing  9" in text and "wine cellar 1" in text and "landing 10" not in text
    assert render_rgb(eng, state, size=SIZE).shape == (SIZE, SIZE, 3)
