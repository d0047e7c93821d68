"""The position builder the rule tests rest on: make_position, describe_position, draw_position, play."""

from __future__ import annotations

import pytest

from midnight_env import ActionError, Engine
from midnight_env.core.positions import describe_position, draw_position, hugo_names, make_position, play
from midnight_env.core.state import MOVE, ROLL


@pytest.fixture(scope="module")
def classic2():
    return Engine("midnight_party", 2)


@pytest.fixture(scope="module")
def castle3():
    return Engine("hidden_castle", 3)


def test_position_from_a_description(classic2):
    s = make_position(classic2, gallery={14: [0, 0], 17: [1]}, rooms={5: 1}, stairs={0: [1]}, wine_cellar=[0],
                      hugo="g13", spooky=[2, 11], roll=4, rolls=9, seed=3)
    assert s.batch_size == 1
    assert s.gallery[0, 0, 14] == 2 and s.gallery[0, 1, 17] == 1 and s.gallery[0].sum() == 3
    assert s.room[0].tolist() == [-1] * 5 + [1] + [-1] * 5
    assert s.stairs[0, 1, 0] == 1 and s.stairs[0, 0, 8] == 1 and s.stairs[0].sum() == 2
    assert s.supply[0].tolist() == [3, 3]  # 6 guests each, the rest wait in the supply
    assert int(s.hugo[0]) == 8 + 13  # 8 landings, then the gallery
    assert (s.phase[0], s.player[0], s.roll[0], s.rolls[0]) == (MOVE, 0, 4, 9)
    assert s.spooky[0].tolist() == [2, 11]


def test_describe_position_rebuilds_the_same_position(classic2, castle3):
    for eng, kwargs in [
        (classic2, dict(gallery={14: [0, 0], 17: [1]}, rooms={5: 1}, stairs={0: [1]}, wine_cellar=[0], hugo="g13",
                       roll=4, round=2, rounds_done=1)),
        (castle3, dict(gallery={2: [2]}, rooms={8: 0}, stairs={3: [1, 1]}, hugo="step 4", clock="24:00",
                      phase="roll", player=2, spooky=[0, 30, 12])),
        (Engine("hidden_castle", 3, guests_per_player=2),
         dict(gallery={2: [2], 4: [0]}, phase="place", player=1, queue=[1, 0, 2, 1])),
    ]:
        s = make_position(eng, **kwargs)
        again = make_position(eng, **describe_position(eng, s))
        assert again.equal(s)
        for key, value in kwargs.items():
            assert describe_position(eng, s)[key] == value


def test_the_legal_mask_is_filled_in(classic2):
    s = make_position(classic2, gallery={2: [0]}, rooms={9: 0}, hugo="g0", roll=4)
    assert {classic2.layout.to_notation(int(a), 4) for a in classic2.legal_actions(s)} == \
        {"g2>g6", "g2>r0", "g2>r1", "g2>r2", "pass"}
    s = make_position(classic2, gallery={2: [0]}, phase="roll")
    assert not s.legal.any()


def test_placing_order_defaults_to_seat_order_from_the_player(castle3):
    s = make_position(castle3, gallery={0: [0], 1: [0], 2: [1]}, phase="place", player=1)
    # supply: 0 has 3 left, 1 has 4, 2 has 5; one each in turn from seat 1, skipping the done
    assert describe_position(castle3, s)["queue"] == [1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 2]


@pytest.mark.parametrize("kwargs, words", [
    (dict(gallery={28: [0]}), "gallery square 28 does not exist: allowed are 0..27"),
    (dict(gallery={3: [2]}), "seat 2 is not a player: allowed are 0..1"),
    (dict(gallery={3: [0] * 7}), "player 0 has 7 guests on the board but guests_per_player is 6"),
    (dict(gallery={3: [0] * 3}, rooms={0: 0, 1: 0}, stairs={0: [0], 1: [0]}), "player 0 has 7 guests"),
    (dict(rooms={11: 0}), "room 11 does not exist: allowed are 0..10"),
    (dict(rooms={1: [0, 1]}), "a room holds at most one guest"),
    (dict(stairs={8: [0]}), "stair place (0 = highest value) 8 does not exist: allowed are 0..7"),
    (dict(hugo="step 10"), "hugo='step 10' is not a place on Hugo's track"),
    (dict(hugo="g28"), "hugo='g28'"),
    (dict(clock="1:00"), "midnight_party has no clock"),
    (dict(spooky=[1, 2, 3]), "must give the points of all 2 players"),
    (dict(phase="moving"), "phase='moving' is not a phase: allowed are place, roll, move, over"),
    (dict(phase="move", roll=3), "roll=3: phase 'move' needs the number rolled, one of 1, 2, 4, 5"),
    (dict(phase="roll", roll=4), "only phase 'move' has a roll"),
    (dict(gallery={}, rooms={0: 0}, phase="move", roll=4), "no legal move with roll 4"),
    (dict(phase="place", queue=[0, 1]), "queue=[0, 1] places 1 guests of player 0, but 5 are not on the board"),
    (dict(round=4, phase="roll"), "round=4 is out of range: allowed are 1..3"),
])
def test_bad_descriptions_name_the_bad_value(classic2, kwargs, words):
    kwargs = {"gallery": {5: [0]}, "phase": "roll", **kwargs}
    with pytest.raises(ValueError) as info:
        make_position(classic2, **kwargs)
    assert words in str(info.value)


def test_castle_positions_have_no_wine_cellar_and_no_negative_points(castle3):
    with pytest.raises(ValueError, match="has no wine cellar"):
        make_position(castle3, wine_cellar=[0], phase="roll")
    with pytest.raises(ValueError, match="never below 0"):
        make_position(castle3, spooky=[-1, 0, 0], phase="roll")
    with pytest.raises(ValueError, match="'landing 9'"):
        make_position(castle3, hugo="landing 9", phase="roll")


def test_hugo_names_follow_his_track(classic2, castle3):
    assert hugo_names(classic2)[:9] == [f"landing {v}" for v in range(10, 2, -1)] + ["g0"]
    assert hugo_names(castle3)[:10] == ["cellar door"] + [f"step {v}" for v in range(10, 2, -1)] + ["g0"]
    for eng in (classic2, castle3):
        for k, name in enumerate(hugo_names(eng)):
            assert int(make_position(eng, hugo=name, phase="roll").hugo[0]) == k


def test_engine_says_where_hugo_is_along_his_track(classic2, castle3):
    """hugo_square, hugo_stair_place and rooms_open agree with the names of his track."""
    for eng in (classic2, castle3):
        values = eng.board.stair_values.tolist()
        for name in hugo_names(eng):
            s = make_position(eng, hugo=name, phase="roll")
            square, place = eng.hugo_square(s), eng.hugo_stair_place(s)
            if name.startswith("g"):
                assert (square, place) == (int(name[1:]), -1) and eng.rooms_open(s)
            elif name == "cellar door":
                assert (square, place) == (-1, -1) and not eng.rooms_open(s)
            else:  # "landing 10": stair place 0 holds the highest value
                assert (square, place) == (-1, values.index(int(name.split()[1]))) and not eng.rooms_open(s)


def test_drawing_shows_guests_hugo_doors_rooms_stairs_and_points(classic2):
    s = make_position(classic2, gallery={14: [0, 0], 17: [1]}, rooms={5: 1}, stairs={0: [1]}, wine_cellar=[0],
                      hugo="g13", spooky=[2, 11], roll=4)
    text = draw_position(classic2, s)
    lines = text.splitlines()
    assert lines[0].startswith("midnight_party, 2 players, round 1/3") and "player 0 to move a 4" in lines[0]
    second_row = lines[4:7]  # squares 14..27: numbers, doors, guests
    column = second_row[0].index("17")
    assert second_row[1][column:].startswith("r7") and second_row[2][column:].startswith("1")
    assert lines[3].split()[-1] == "H"  # g13, last of the first row
    assert "r5:1" in text and "r8+:." in text and "r2-:." in text
    assert "10:1" in text and "wine:0" in text and "Hugo: g13" in text
    assert "points [2, 11]" in text and "legal  g14>g18 g14>r6 g14>r7" in text


def test_play_applies_rolls_and_choices_and_refuses_what_is_not_due(classic2):
    s = make_position(classic2, gallery={2: [0], 12: [1]}, hugo="g0", phase="roll")
    play(classic2, s, 4, "g2>r0")
    assert (s.phase[0], s.player[0], s.room[0, 0]) == (ROLL, 1, 0)
    with pytest.raises(ValueError, match="choice 'pass' given, but the game is at phase 'roll'"):
        play(classic2, s, "pass")
    play(classic2, s, 1)
    with pytest.raises(ValueError, match="roll 4 given, but the game is at phase 'move'"):
        play(classic2, s, 4)
    with pytest.raises(ActionError, match="not legal"):
        play(classic2, s, "g12>r5")
