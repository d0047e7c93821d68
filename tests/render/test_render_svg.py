"""The board as SVG (render/svg.py, what the web page shows): the picture's layout, every guest,
Hugo where the engine has him, the die and the clock when they matter, the picture's words."""

from __future__ import annotations

import functools
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from midnight_env import Engine, agent_streams
from midnight_env.core.board import board_from_dict
from midnight_env.core.state import MOVE, OVER
from midnight_env.render.layout import board_layout
from midnight_env.render.seats import seat_hex
from midnight_env.render.snapshot import snapshot, status_lines, turn_text
from midnight_env.render.svg import board_svg, render_svg, view_box

NS = {"svg": "http://www.w3.org/2000/svg"}
STAGES = ("setup", "mid", "end")


@functools.cache
def game(variant: str, num_players: int):
    """An engine and one random game of it at set-up, at a decision in the middle, and at the end."""
    eng = Engine(variant, num_players)
    seed = 30 + num_players
    state = eng.new_games([seed])
    rng = agent_streams([seed])
    stages = {"setup": state.copy()}
    seen = []
    while not state.done.all():
        eng.step(state, eng.random_actions(state, rng))
        if state.phase[0] == MOVE:
            seen.append(state.copy())
    stages["mid"] = seen[len(seen) // 2]
    stages["end"] = state
    return eng, stages


def parse(eng, state) -> ET.Element:
    return ET.fromstring(render_svg(eng, state, size=320))


def layer(doc: ET.Element, name: str) -> ET.Element:
    return doc.find(f"svg:g[@class='{name}']", NS)


def words(element: ET.Element) -> list[str]:
    """The text of every <text>, its lines (tspans) joined, spaces as the page shows them."""
    out = []
    for text in element.iter(f"{{{NS['svg']}}}text"):
        out.append("\n".join(t for t in text.itertext()).replace("\u00a0", " "))
    return out


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("num_players", (1, 4, 8))
@pytest.mark.parametrize("variant", ("midnight_party", "hidden_castle"))
def test_every_guest_off_the_supply_is_drawn_in_its_seats_colour(variant, num_players, stage):
    eng, stages = game(variant, num_players)
    state = stages[stage]
    doc = parse(eng, state)
    guests = layer(doc, "position").find("svg:g[@class='guests']", NS)
    drawn = [c.get("fill") for c in guests.findall("svg:circle", NS)] if guests is not None else []
    for p, colour in enumerate(seat_hex(range(num_players))):
        on_board = (int(state.gallery[0, p].sum()) + int((state.room[0] == p).sum())
                    + int(state.stairs[0, p].sum()))
        assert on_board == eng.config.guests - int(state.supply[0, p])
        assert drawn.count(colour) == on_board, f"seat {p}"


def test_hugo_is_drawn_once_on_the_square_the_engine_names():
    eng = Engine("hidden_castle", 2)
    state = eng.new_games([1])
    lay = board_layout(eng.board, 2, True)
    state.hugo[0] = eng.board.hugo_track_stairs + 12  # Hugo on gallery square 12
    assert eng.hugo_square(state) == 12
    ghosts = layer(parse(eng, state), "position").findall(".//svg:g[@class='hugo']", NS)
    assert len(ghosts) == 1
    points = np.array([[float(v) for v in xy.split(",")] for xy in
                       ghosts[0].find("svg:polygon", NS).get("points").split()])
    x, y, w, h = lay.squares[12].bounds
    assert (points[:, 0] >= x).all() and (points[:, 0] <= x + w).all()
    assert (points[:, 1] >= y).all() and (points[:, 1] <= y + h).all()


@pytest.mark.parametrize("variant", ("midnight_party", "hidden_castle"))
def test_the_die_shows_the_roll_being_decided_and_only_then(variant):
    eng, stages = game(variant, 4)
    for state in stages.values():
        die = layer(parse(eng, state), "position").find("svg:g[@class='die']", NS)
        if state.phase[0] == MOVE:
            assert die is not None and int(die.get("data-roll")) == int(state.roll[0])
            assert len(die.findall("svg:circle", NS)) == int(state.roll[0])  # a pip per point
        else:
            assert die is None


def test_the_clock_is_drawn_for_hidden_castle_only():
    castle = words(layer(parse(*_setup("hidden_castle")), "board"))
    classic = words(layer(parse(*_setup("midnight_party")), "board"))
    assert "23:45" in castle and "5:00" in castle
    assert "23:45" not in classic


def _setup(variant):
    eng, stages = game(variant, 4)
    return eng, stages["setup"]


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("variant", ("midnight_party", "hidden_castle"))
def test_the_words_are_the_pictures(variant, stage):
    eng, stages = game(variant, 4)
    pos = snapshot(eng, stages[stage], 0)
    shown = words(layer(parse(eng, stages[stage]), "position"))
    assert turn_text(pos) in shown
    assert "\n".join(status_lines(eng.board, pos)) in shown
    table = ["".join(t.itertext()) for t in layer(parse(eng, stages[stage]), "position").findall("svg:text", NS)]
    points = [t.split()[0] for t in table if t.split()[0].lstrip("-").isdigit()]  # (guests' digits lie deeper)
    assert points == [str(int(x)) for x in pos.spooky]  # the player table, by seat
    if pos.phase == OVER:
        assert any("winner" in t for t in shown)


def test_the_board_layer_follows_the_layout():
    eng = Engine("midnight_party", 4)
    lay = board_layout(eng.board, 4, False)
    board = ET.fromstring(f'<svg xmlns="{NS["svg"]}">{board_svg(eng)}</svg>')
    numbers = {(t.text, float(t.get("x")), float(t.get("y"))) for t in board.iter(f"{{{NS['svg']}}}text")
               if t.get("x") is not None}
    for sq in lay.squares:
        assert (str(sq.square), round(sq.number.x, 3), round(sq.number.y, 3)) in numbers
    rects = {tuple(round(float(r.get(k)), 3) for k in ("x", "y", "width", "height"))
             for r in board.iter(f"{{{NS['svg']}}}rect")}
    for room in lay.rooms:
        assert tuple(round(v, 3) for v in room.box) in rects
    assert tuple(view_box(eng)) == tuple(lay.view)


def test_a_changed_board_draws_and_sizes_are_checked():
    board = board_from_dict({
        "name": "small", "gallery_squares": 33, "arrow_square": 0,
        "rooms": [{"door": 1, "kind": "red", "name": "<kitchen & hall>"}, {"door": 12, "kind": "green"},
                  {"door": 20, "kind": "plain"}, {"door": 30, "kind": "plain"}],
        "stairs": {"kind": "landings", "values": [9, 7, 5, 3], "hugo_start": "top", "overflow": "wine_cellar",
                   "wine_cellar_value": 1}})
    eng = Engine("midnight_party", 3, board=board)
    state = eng.new_games([1])
    doc = parse(eng, state)  # well-formed: the room's name is escaped
    shown = words(doc)
    assert "wine cellar 1" in shown and "<kitchen & hall>" in shown
    with pytest.raises(ValueError, match="size=10"):
        render_svg(eng, state, size=10)
