"""The picture's layout: pure geometry from the board, checked without drawing anything."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from midnight_env import Engine
from midnight_env.core.board import board_from_dict, load_board
from midnight_env.core.config import CLOCK_TIMES
from midnight_env.core.positions import hugo_names, make_position
from midnight_env.render import BoardLayout, board_layout
from midnight_env.render.layout import HUGO_OUTLINE, SIDES, Rect, ring_grid

SHIPPED = ("midnight_party", "hidden_castle")


def custom_board(num_squares: int, doors=None, hugo_start="top", overflow="wine_cellar") -> object:
    doors = list(range(0, num_squares, 3)) if doors is None else doors
    stairs = {"kind": "landings", "values": [9, 7, 5, 3], "hugo_start": hugo_start, "overflow": overflow}
    if overflow == "wine_cellar":
        stairs["wine_cellar_value"] = 1
    return board_from_dict({"name": f"ring of {num_squares}", "gallery_squares": num_squares, "arrow_square": 0,
                            "rooms": [{"door": d, "kind": ("plain", "red", "green")[q % 3]} for q, d in
                                      enumerate(doors)],
                            "stairs": stairs})


def overlap(a: Rect, b: Rect) -> float:
    """Area shared by two rectangles (0 when they only touch)."""
    w = min(a.right, b.right) - max(a.x, b.x)
    h = min(a.bottom, b.bottom) - max(a.y, b.y)
    return max(w, 0) * max(h, 0)


def everything(lay: BoardLayout) -> list[tuple[str, Rect]]:
    """Every rectangle of the layout (boxes of discs, Hugo and anchors included), named."""
    out = []
    for sq in lay.squares:
        out += [(f"square {sq.square}", sq.face), (f"square {sq.square} guests", sq.guests.box),
                (f"square {sq.square} Hugo", sq.hugo.box), (f"square {sq.square} Hugo'", sq.hugo_beside_guests.box)]
        out += [(f"square {sq.square} text", Rect(a.x, a.y, 0, 0)) for a in (sq.number, sq.arrow_mark, sq.room_tag)
                if a is not None]
    for room in lay.rooms:
        out += [(f"room {room.room}", room.box), (f"room {room.room} door", room.door),
                (f"room {room.room} guest", room.occupant.box)]
    places = list(lay.stairs) + [p for p in (lay.cellar_door, lay.wine_cellar) if p is not None]
    for stair in places:
        out += [(f"stair place {stair.place}", stair.box), (f"stair place {stair.place} guests", stair.guests.box)]
        if stair.hugo is not None:
            out.append((f"stair place {stair.place} Hugo", stair.hugo.box))
    if lay.clock is not None:
        (cx, cy), r = lay.clock.centre, lay.clock.radius
        out += [("clock", Rect(cx - r, cy - r, 2 * r, 2 * r))] + [("clock time", m) for m in lay.clock.marks]
    for seat in lay.seats:
        out += [(f"seat {seat.seat}", seat.disc.box), (f"seat {seat.seat} bar", seat.bar)]
    out += [("die", lay.die), ("turn", lay.turn_disc.box)]
    out += [(f"{name} text", Rect(a.x, a.y, 0, 0)) for name, a in
            (("title", lay.title), ("status", lay.status), ("turn", lay.turn), ("legend", lay.legend),
             ("stairs title", lay.stairs_title))]
    out += [("stairs arrow", Rect(p.x, p.y, 0, 0)) for p in lay.stairs_arrow]
    return out


@pytest.mark.parametrize("num_squares", range(6, 65))
def test_the_ring_is_closed_and_clockwise_with_a_cell_per_square(num_squares):
    rows, cols, cells = ring_grid(num_squares)
    assert len(cells) == num_squares
    assert len({(c.row, c.col) for c in cells}) == num_squares  # a distinct cell each
    for cell in cells:  # on the rim of the grid, on the side it names
        on = {"top": cell.row == 0, "bottom": cell.row == rows - 1, "left": cell.col == 0,
              "right": cell.col == cols - 1}
        assert cell.side in SIDES and on[cell.side], cell
    assert (cells[0].row, cells[0].col) == (0, 0)  # square 0 in the top-left corner
    for a, b in zip(cells, cells[1:]):
        assert abs(a.row - b.row) + abs(a.col - b.col) == 1, (a, b)  # each square next to the one before
    # back to square 0: next to it, or (an odd count cannot close on a grid) one free cell short of it
    last = cells[-1]
    assert (last.col, last.row) == ((0, 1) if num_squares % 2 == 0 else (0, 2))
    # clockwise on screen (y down): positive shoelace sum; square 1 right of square 0
    area = sum(a.col * b.row - b.col * a.row for a, b in zip(cells, cells[1:] + cells[:1]))
    assert area > 0 and (cells[1].row, cells[1].col) == (0, 1)


@pytest.mark.parametrize("variant", SHIPPED)
def test_shipped_boards_start_at_the_arrow_square(variant):
    board = load_board(variant)
    lay = board_layout(board, 4, variant == "hidden_castle")
    assert (lay.rows, lay.cols) == (6, 10)
    assert lay.arrow_square.square == board.arrow_square == 0
    assert lay.arrow_square.bounds == Rect(0, 0, 1, 1)
    assert [sq.square for sq in lay.squares if sq.arrow_mark is not None] == [board.arrow_square]


@pytest.mark.parametrize("board", [load_board("midnight_party"), load_board("hidden_castle"), custom_board(33),
                                   custom_board(12, hugo_start="cellar_door", overflow="top_step"),
                                   custom_board(24, doors=list(range(24)))], ids=lambda b: b.name)
def test_rooms_lie_outside_the_ring_behind_their_doors(board):
    lay = board_layout(board, 4, False)
    assert [room.room for room in lay.rooms] == list(range(board.num_rooms))
    cells = [sq.bounds for sq in lay.squares]
    for room in lay.rooms:
        square = lay.squares[room.door_square]
        assert room.door_square == int(board.door_square[room.room]) and room.kind == int(board.room_kind[room.room])
        assert room.side == square.cell.side and square.room_tag is not None
        # the door crosses its square's edge towards the room, which lies right behind it
        door, box = room.door, room.box
        assert overlap(door, cells[room.door_square]) > 0 and not cells[room.door_square].contains(door)
        if room.side in ("top", "bottom"):
            assert box.x < door.x and door.right < box.right
            assert min(abs(box.bottom - door.y), abs(door.bottom - box.y)) < 1e-9
        else:  # rooms on the left stand 0.08 off their doors (kept: the picture must not change here)
            assert box.y < door.y and door.bottom < box.bottom
            assert min(abs(box.right - door.x), abs(door.right - box.x)) < (0.1 if room.side == "left" else 1e-9)
        assert all(overlap(room.box, cell) == 0 for cell in cells)  # outside the ring
        assert all(overlap(room.box, other.box) == 0 for other in lay.rooms if other is not room)
        assert overlap(room.occupant.box, room.box) == pytest.approx(room.occupant.box.w ** 2)  # guest inside
    assert sum(sq.room_tag is not None for sq in lay.squares) == board.num_rooms


@pytest.mark.parametrize("castle", (False, True))
@pytest.mark.parametrize("num_players", (1, 2, 4, 5, 8))
@pytest.mark.parametrize("num_squares", (6, 12, 20, 28, 33, 64))
def test_nothing_lies_outside_the_picture(num_squares, num_players, castle):
    board = custom_board(num_squares, hugo_start="cellar_door" if castle else "top",
                         overflow="top_step" if castle else "wine_cellar")
    lay = board_layout(board, num_players, castle)
    assert lay.view.w == lay.view.h  # the picture is square
    for name, rect in everything(lay):
        assert lay.view.contains(rect), f"{name} {rect} outside {lay.view}"


@pytest.mark.parametrize("variant", SHIPPED)
def test_stairs_climb_towards_the_arrow_square(variant):
    eng = Engine(variant, 4)
    board, lay = eng.board, board_layout(eng.board, 4, variant == "hidden_castle")
    assert [p.place for p in lay.stairs] == list(range(board.num_stair_places))
    assert [p.value for p in lay.stairs] == board.stair_values.tolist()
    climb = list(reversed(lay.stairs)) + ([lay.cellar_door] if lay.cellar_door else [])
    for upper, lower in zip(climb, climb[1:]):  # each place lower and not left of the one nearer the ring
        assert lower.box.y > upper.box.y and lower.box.x >= upper.box.x and overlap(lower.box, upper.box) == 0
    for place in climb:
        assert overlap(place.guests.box, place.box) == pytest.approx(place.guests.box.w * place.guests.box.h)
        assert overlap(place.hugo.box, place.box) > 0
    assert (lay.cellar_door is not None) == (board.hugo_start == "cellar_door")
    assert (lay.wine_cellar is not None) == (board.overflow == "wine_cellar")
    if lay.wine_cellar is not None:
        assert lay.wine_cellar.place == board.num_stair_places and lay.wine_cellar.hugo is None
        assert all(overlap(lay.wine_cellar.box, p.box) == 0 for p in climb)
    start, end = lay.stairs_arrow  # from the place next to the ring into the arrow square
    assert start.y == climb[0].box.y and lay.arrow_square.bounds.contains(Rect(end.x, end.y, 0, 0))
    squares = [sq.bounds for sq in lay.squares]
    assert all(overlap(p.box, cell) == 0 for p in climb for cell in squares)  # inside the ring


@pytest.mark.parametrize("variant", SHIPPED)
def test_hugo_track_has_a_spot_for_every_place_of_his_track(variant):
    """The layout's track, indexed by ``state.hugo``, puts Hugo where the engine says he is."""
    eng = Engine(variant, 2)
    lay = board_layout(eng.board, 2, variant == "hidden_castle")
    names = hugo_names(eng)
    assert len(lay.hugo_track) == len(names) == eng.board.hugo_track_stairs + eng.board.num_squares
    for t, name in enumerate(names):
        state = make_position(eng, hugo=name, phase="roll")
        square, place = eng.hugo_square(state), eng.hugo_stair_place(state)
        if square >= 0:
            expected = lay.squares[square].hugo
        elif place >= 0:
            expected = lay.stairs[place].hugo
        else:
            expected = lay.cellar_door.hugo
        assert lay.hugo_track[t] == expected, name
    assert len(set(lay.hugo_track)) == len(lay.hugo_track)  # never two places at one spot


def test_a_custom_board_lays_out():
    board = custom_board(33)
    lay = board_layout(board, 3, False)
    assert len(lay.squares) == 33 and len(lay.rooms) == board.num_rooms == 11
    assert [p.value for p in lay.stairs] == [9, 7, 5, 3] and lay.wine_cellar.value == 1 and lay.cellar_door is None
    assert len(lay.hugo_track) == 4 + 33 and lay.clock is None
    cells = {(sq.cell.row, sq.cell.col) for sq in lay.squares}
    assert len(cells) == 33


@pytest.mark.parametrize("num_players", range(1, 9))
def test_the_player_table_has_a_row_per_seat(num_players):
    lay = board_layout(load_board("midnight_party"), num_players, False)
    assert [seat.seat for seat in lay.seats] == list(range(num_players))
    columns = sorted({seat.disc.x for seat in lay.seats})
    assert len(columns) == (2 if num_players > 4 else 1)
    for a, b in itertools.combinations(lay.seats, 2):
        assert overlap(a.disc.box, b.disc.box) == 0 and overlap(a.bar, b.bar) == 0
    ring_bottom = max(sq.bounds.bottom for sq in lay.squares)
    rooms_bottom = max(room.box.bottom for room in lay.rooms)
    for seat in lay.seats:  # below the ring and its rooms, bars of a positive length
        assert seat.disc.box.y > max(ring_bottom, rooms_bottom) and seat.bar.w > 0
        assert seat.bar.x > seat.disc.x and seat.points.x > seat.bar.x


def test_the_clock_is_drawn_only_for_hidden_castle():
    board = load_board("hidden_castle")
    assert board_layout(board, 4, False).clock is None
    clock = board_layout(board, 4, True).clock
    assert len(clock.times) == len(clock.marks) == len(CLOCK_TIMES)
    assert [a.x for a in clock.times] == sorted(a.x for a in clock.times)
    for at, mark in zip(clock.times, clock.marks):  # each frame around its time
        assert mark.contains(Rect(at.x, at.y, 0, 0))
    assert all(overlap(a, b) == 0 for a, b in zip(clock.marks, clock.marks[1:]))


def test_bad_seat_counts_are_refused():
    with pytest.raises(ValueError, match=r"num_players=9 .* 1\.\.8"):
        board_layout(load_board("midnight_party"), 9, False)


def test_the_layout_and_the_text_board_do_not_import_matplotlib():
    code = ("import sys; from midnight_env import Engine; from midnight_env.render import board_layout, render_ansi; "
            "eng = Engine('hidden_castle', 3); board_layout(eng.board, 3, True); "
            "render_ansi(eng, eng.new_games([1])); assert 'matplotlib' not in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_layout_values_are_plain_numbers():
    """Plain data for any drawing: no numpy scalars leak out of the board's arrays."""
    lay = board_layout(load_board("midnight_party"), 4, False)
    values = [lay.rows, lay.cols, *lay.view] + [v for room in lay.rooms for v in (room.kind, room.door_square)]
    values += [p.value for p in lay.stairs] + [lay.wine_cellar.value]
    assert all(type(v) in (int, float) for v in values)
    assert not any(isinstance(v, np.generic) for v in values)


def test_a_hugo_spot_bounds_his_outline():
    lay = board_layout(load_board("hidden_castle"), 2, True)
    spot = lay.squares[5].hugo
    outline = HUGO_OUTLINE * spot.height + (spot.x, spot.y)
    box = spot.box
    low, high = outline.min(axis=0), outline.max(axis=0)
    eps = 1e-9  # rounding
    assert box.x - eps <= low[0] and high[0] <= box.right + eps and box.y - eps <= low[1]
    assert high[1] <= box.bottom + eps
    tight = 0.01 * spot.height  # and no larger than it
    assert low[0] - box.x < tight and box.right - high[0] < tight and low[1] - box.y < tight
    assert box.bottom - high[1] < tight
