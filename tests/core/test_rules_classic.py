"""Rule by rule, ``midnight_party`` (RULES.md): one hand-built position per rule.

Each docstring sketches the relevant stretch of the gallery: square numbers, then what stands
there (``H`` Hugo, digits = guests by seat, ``r0`` a door of room 0, ``+``/``-`` red/green).
On failure ``check`` prints the whole board (``draw_position``). Classic door squares:
r0:2 r1:3 r2-:5 r3-:8 r4:10 r5:14 r6:16 r7:17 r8+:20 r9:23 r10+:25.
"""

from __future__ import annotations

import numpy as np
import pytest

from midnight_env import ActionError
from midnight_env.core.positions import make_position, play

ALL_SQUARES = {f"g{s}" for s in range(28)}



# ------------------------------------------------------------------------------------------------
# Hugo (section 5)


def test_hugo_track_needs_8_steps_to_square_0_third_move_ends_on_square_1(classic, check):
    """Landing 10 (start) -3-> landing 7 -3-> landing 4 -3-> landing 3, g0, g1.
    Once he has stepped onto square 0 the rooms open: 1's guest on g21 may enter r9 (door 23)."""
    eng = classic()
    s = make_position(eng, gallery={20: [0], 21: [1]}, phase="roll")
    check(eng, s, hugo="landing 10")
    play(eng, s, "hugo")
    check(eng, s, hugo="landing 7", player=1, phase="roll", rolls=1)
    play(eng, s, "hugo")
    check(eng, s, hugo="landing 4", player=0, phase="roll", rolls=2)
    play(eng, s, "hugo")
    check(eng, s, hugo="g1", player=1, phase="roll", rolls=3, gallery={20: [0], 21: [1]})
    play(eng, s, 4)
    check(eng, s, phase="move", player=1, roll=4, legal={"g21>g25", "g21>r9", "pass"})


@pytest.mark.parametrize("num_players, options, steps", [
    (1, {}, 3), (4, {}, 3), (5, {}, 2), (8, {}, 2),
    (5, {"hugo_slow_from_players": 7}, 3), (6, {"hugo_slow_from_players": 7}, 3),
    (7, {"hugo_slow_from_players": 7}, 2), (2, {"hugo_slow_from_players": 2}, 2),
])
def test_hugo_speed_3_or_2_from_hugo_slow_from_players(classic, check, num_players, options, steps):
    """Hugo on g0 moves 3 squares, or 2 with >= hugo_slow_from_players players (default 5).
        squares  0  1  2  3  4
                 H        0        0's guest on g3 is captured only at speed 3"""
    eng = classic(num_players, **options)
    s = make_position(eng, gallery={3: [0], 20: [0]}, hugo="g0", phase="roll")
    play(eng, s, "hugo")
    captured = steps >= 3
    check(eng, s, hugo=f"g{steps}", gallery={20: [0]} if captured else {3: [0], 20: [0]},
          stairs={0: [0]} if captured else {}, spooky=[10 if captured else 0] + [0] * (num_players - 1))


# ------------------------------------------------------------------------------------------------
# walking onto Hugo, passing him (sections 6, 7)


@pytest.mark.parametrize("roll, after", [(4, "g12"), (2, "captured")])
def test_passing_hugo_is_safe_ending_on_him_captures(classic, check, roll, after):
    """squares  8  9 10 11 12
                0     H          roll 4: passes H to g12, safe; roll 2: ends on H -> landing 10"""
    eng = classic()
    s = make_position(eng, gallery={8: [0], 27: [0], 22: [1]}, hugo="g10", roll=roll)
    play(eng, s, f"g8>g{8 + roll}")
    if after == "captured":
        check(eng, s, gallery={27: [0], 22: [1]}, stairs={0: [0]}, spooky=[10, 0], hugo="g10",
              phase="roll", player=1)
    else:
        check(eng, s, gallery={12: [0], 27: [0], 22: [1]}, stairs={}, spooky=[0, 0], hugo="g10",
              phase="roll", player=1)


@pytest.mark.parametrize("taken, place, value", [
    ({}, 0, 10), ({0: [1]}, 1, 9), ({0: [1], 1: [1], 2: [1], 3: [1]}, 4, 6), ({1: [1]}, 0, 10),
])
def test_walk_onto_hugo_goes_to_the_free_landing_with_the_highest_value(classic, check, taken, place, value):
    """squares 20 21 22 23 24
               0           H     roll 4: 0 ends on H; landings already taken by 1 are skipped"""
    eng = classic()
    s = make_position(eng, gallery={20: [0], 2: [0], 12: [1]}, stairs=taken, hugo="g24", roll=4)
    play(eng, s, "g20>g24")
    stairs = {k: list(v) for k, v in taken.items()}
    stairs[place] = sorted(stairs.get(place, []) + [0])
    check(eng, s, gallery={2: [0], 12: [1]}, stairs=stairs, spooky=[value, 0])


def test_hugo_captures_every_group_he_steps_onto_in_order_each_group_on_one_landing(classic, check):
    """Hugo on g2, speed 3: steps g3, g4, g5. Landing 10 is already taken (by 1).
        squares  1   2   3    4   5   6
                 0   H   001      1   0
    g3's group (two of 0, one of 1) shares landing 9: 0 books 2x9, 1 books 9;
    g5's group goes to landing 8 (1 books 8). g1 (behind him) and g6 (beyond) are safe."""
    eng = classic()
    s = make_position(eng, gallery={1: [0], 3: [0, 0, 1], 5: [1], 6: [0]}, stairs={0: [1]}, hugo="g2",
                      spooky=[0, 10], phase="roll")
    play(eng, s, "hugo")
    check(eng, s, hugo="g5", gallery={1: [0], 6: [0]}, stairs={0: [1], 1: [0, 0, 1], 2: [1]},
          spooky=[18, 27], phase="roll", player=1)


def test_all_landings_taken_captures_go_to_the_wine_cellar_which_takes_any_number(classic, check):
    """Landings 10..3 all taken; one guest of 1 already in the wine cellar.
        squares  4   5   6   7
                 H   01          Hugo's move captures g5's group -> wine cellar, 2 points each"""
    eng = classic()
    stairs = {k: [k % 2] for k in range(8)}  # 0 on landings 10, 8, 6, 4; 1 on 9, 7, 5, 3
    s = make_position(eng, gallery={5: [0, 1], 20: [0]}, stairs=stairs, wine_cellar=[1], hugo="g4",
                      spooky=[28, 26], phase="roll")
    play(eng, s, "hugo")
    check(eng, s, hugo="g7", gallery={20: [0]}, stairs=stairs, wine_cellar=[0, 1, 1], spooky=[30, 28])
    # a walk onto Hugo with every landing taken: the wine cellar too
    s = make_position(eng, gallery={20: [0], 5: [1]}, stairs=stairs, hugo="g24", spooky=[28, 24], roll=4)
    play(eng, s, "g20>g24")
    check(eng, s, gallery={5: [1]}, stairs=stairs, wine_cellar=[0], spooky=[30, 24])


# ------------------------------------------------------------------------------------------------
# rooms (section 6)


@pytest.mark.parametrize("roll, legal", [
    (2, {"g2>g4", "g2>r0", "g2>r1", "pass"}),
    (4, {"g2>g6", "g2>r0", "g2>r1", "g2>r2", "pass"}),
    (5, {"g2>g7", "g2>r0", "g2>r1", "pass"}),
])
def test_green_room_needs_the_exact_roll_other_rooms_take_spare_points(classic, check, roll, legal):
    """squares  2    3    4    5     ...  8
                0                              r0 door 2 (1 step), r1 door 3 (2 steps),
                r0   r1        r2-       r3-   green r2 door 5 (4 steps: exactly 4), r3 7 steps"""
    eng = classic()
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={9: 0}, hugo="g0", roll=roll)
    check(eng, s, legal=legal)
    play(eng, s, "g2>r1")  # a plain room with points to spare: they are lost
    check(eng, s, gallery={12: [1]}, rooms={1: 0, 9: 0}, spooky=[0, 0], phase="roll", player=1)


def test_an_occupied_room_can_never_be_entered(classic, check):
    """r1 (door 3) holds 1's guest: 0 on g2 with a 4 may enter r0 and green r2, not r1."""
    eng = classic()
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={1: 1, 9: 0}, hugo="g0", roll=4)
    check(eng, s, legal={"g2>g6", "g2>r0", "g2>r2", "pass"})
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={1: 0, 9: 0}, hugo="g0", roll=4)
    check(eng, s, legal={"g2>g6", "g2>r0", "g2>r2", "pass"})  # one's own guest too


def test_standing_on_the_door_square_a_room_costs_one_step(classic, check):
    """squares 14  15  16  17        0 on g16 (door of r6): r6 costs 1, r7 (door 17) costs 2.
                r5      r6  r7       with a 1 only r6 (and the walk) is in reach"""
    eng = classic()
    s = make_position(eng, gallery={16: [0], 3: [1]}, rooms={0: 0}, hugo="g0", roll=1)
    check(eng, s, legal={"g16>g17", "g16>r6", "pass"})
    s = make_position(eng, gallery={16: [0], 3: [1]}, rooms={0: 0}, hugo="g0", roll=2)
    check(eng, s, legal={"g16>g18", "g16>r6", "g16>r7", "pass"})


@pytest.mark.parametrize("room, start, roll, points", [
    (8, 18, 4, 2),  # library (red, door 20): +1
    (10, 24, 2, 2),  # laundry (red, door 25): +1
    (2, 4, 2, -2),  # game room (green, door 5): -3, and classic totals may go below 0
    (3, 7, 2, -2),  # trophy room (green, door 8): -3
    (6, 15, 2, 1),  # plain room (door 16): nothing
])
def test_entering_a_room_books_red_plus_1_green_minus_3(classic, check, room, start, roll, points):
    """Player 0 with 1 point enters a room from ``start``; points are booked at once."""
    eng = classic()
    s = make_position(eng, gallery={start: [0], 11: [1]}, hugo="g0", spooky=[1, 0], roll=roll)
    play(eng, s, f"g{start}>r{room}")
    check(eng, s, rooms={room: 0}, gallery={11: [1]}, spooky=[points, 0])


@pytest.mark.parametrize("hugo, legal", [
    ("landing 3", {"g2>g6", "pass"}),
    ("g0", {"g2>g6", "g2>r0", "g2>r1", "g2>r2", "pass"}),
    ("g27", {"g2>g6", "g2>r0", "g2>r1", "g2>r2", "pass"}),
])
def test_rooms_are_locked_while_hugo_is_on_the_stairs(classic, check, hugo, legal):
    """0 on g2 with a 4: rooms r0, r1, r2 are in reach only once Hugo has reached square 0."""
    eng = classic()
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={9: 0}, hugo=hugo, roll=4)
    check(eng, s, legal=legal)


def test_rooms_unlock_when_hugo_steps_onto_square_0(classic, check):
    """Hugo on landing 5. 1's 4 from g12 may not enter r5 (door 14) yet. Then Hugo moves
    (speed 3: landing 4, landing 3, g0): now 1 may enter r5 and 0 the rooms at doors 2, 3, 5."""
    eng = classic()
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={9: 0}, hugo="landing 5", player=1, phase="roll")
    play(eng, s, 4)
    check(eng, s, player=1, legal={"g12>g16", "pass"})
    play(eng, s, "pass", "hugo")
    check(eng, s, hugo="g0", player=1, phase="roll")
    play(eng, s, 4)
    check(eng, s, player=1, legal={"g12>g16", "g12>r5", "pass"})
    play(eng, s, "pass", 4)
    check(eng, s, player=0, legal={"g2>g6", "g2>r0", "g2>r1", "g2>r2", "pass"})


# ------------------------------------------------------------------------------------------------
# passing and void rolls (section 6)


def test_pass_only_with_exactly_one_guest_on_the_gallery(classic, check):
    """last_guest (default): 0 with one gallery guest (g12) may pass; with two may not."""
    eng = classic()
    s = make_position(eng, gallery={12: [0], 20: [1]}, rooms={0: 0}, hugo="g0", roll=1)
    check(eng, s, legal={"g12>g13", "pass"})
    play(eng, s, "pass")
    check(eng, s, gallery={12: [0], 20: [1]}, rooms={0: 0}, phase="roll", player=1, rolls=0)
    s = make_position(eng, gallery={12: [0, 0], 20: [1]}, hugo="g0", roll=1)
    check(eng, s, legal={"g12>g13"})
    with pytest.raises(ActionError, match="not legal"):
        play(eng, s, "pass")


def test_pass_rule_always_allows_passing_with_any_guest_on_the_gallery(classic, check):
    eng = classic(pass_rule="always")
    s = make_position(eng, gallery={12: [0], 13: [0], 20: [1]}, hugo="g0", roll=1)
    check(eng, s, legal={"g12>g13", "g13>g14", "pass"})
    play(eng, s, "pass")
    check(eng, s, gallery={12: [0], 13: [0], 20: [1]}, phase="roll", player=1)


@pytest.mark.parametrize("pass_rule", ["last_guest", "always"])
def test_no_guest_on_the_gallery_the_roll_is_void(classic, check, pass_rule):
    """0's guests are all in rooms or on the stairs: its 4 is void, 1 rolls next; the roll counts."""
    eng = classic(pass_rule=pass_rule)
    s = make_position(eng, gallery={10: [1]}, rooms={0: 0, 3: 0}, stairs={0: [0]}, hugo="g0",
                      spooky=[10, 0], phase="roll", rolls=7)
    play(eng, s, 4)
    check(eng, s, gallery={10: [1]}, rooms={0: 0, 3: 0}, stairs={0: [0]}, spooky=[10, 0], phase="roll",
          player=1, rolls=8)


# ------------------------------------------------------------------------------------------------
# end of a round, re-placement, end of the game (section 8)


def test_round_ends_when_every_room_is_full_gallery_guests_go_to_the_wine_cellar(classic, check):
    """0 enters the laundry (r10+, door 25), the last empty room, from g23 with a 4 (+1).
    1's guest still on g1 goes to the wine cellar (+2). Then: room guests onto their door
    squares, 1 re-places its wine-cellar guest, Hugo back on landing 10, rooms locked,
    most points (0: 5+1=6 vs 1: 3+2=5) rolls first."""
    eng = classic()
    rooms = {q: q % 2 for q in range(10)}  # 0 in r0 r2 r4 r6 r8, 1 in r1 r3 r5 r7 r9
    s = make_position(eng, gallery={23: [0], 1: [1]}, rooms=rooms, hugo="g11", spooky=[5, 3], roll=4)
    check(eng, s, legal={"g23>g27", "g23>r10", "pass"})
    play(eng, s, "g23>r10")
    doors = {2: [0], 5: [0], 10: [0], 16: [0], 20: [0], 25: [0], 3: [1], 8: [1], 14: [1], 17: [1], 23: [1]}
    check(eng, s, phase="place", player=1, queue=[1], gallery=doors, rooms={}, stairs={}, wine_cellar=[],
          supply=[0, 1], spooky=[6, 5], hugo="landing 10", round=2, rounds_done=1, first_roller=0,
          legal=ALL_SQUARES - {f"g{d}" for d in doors})
    play(eng, s, "g0")
    check(eng, s, phase="roll", player=0, gallery={**doors, 0: [1]}, supply=[0, 0])
    play(eng, s, 4)  # rooms are locked again: only walks (0 has six guests on the gallery)
    check(eng, s, legal={"g2>g6", "g5>g9", "g10>g14", "g16>g20", "g20>g24", "g25>g1"})


@pytest.mark.parametrize("spooky, first", [([3, 10], 1), ([10, 3], 0), ([10, 10], 0)])
def test_round_ends_when_no_guest_is_on_the_gallery_most_points_rolls_first(classic, check, spooky, first):
    """0's last gallery guest enters r0 (door 2); 1 has none on the gallery: the round ends.
    r0 -> g2, r5 -> g14; 1's landing-10 guest is re-placed; most points rolls first (tie: lower seat)."""
    eng = classic()
    s = make_position(eng, gallery={2: [0]}, rooms={5: 1}, stairs={0: [1]}, hugo="g0", spooky=spooky, roll=4)
    play(eng, s, "g2>r0")
    check(eng, s, phase="place", player=1, queue=[1], gallery={2: [0], 14: [1]}, rooms={}, stairs={},
          spooky=spooky, round=2, rounds_done=1, first_roller=first, hugo="landing 10")
    play(eng, s, "g20")
    check(eng, s, phase="roll", player=first, gallery={2: [0], 14: [1], 20: [1]})


@pytest.mark.parametrize("spooky0, queue", [
    (10, [0, 2, 1, 1, 0, 0, 2]),  # 0 reaches 10+8 = 18 > 16: places first on landing 10
    (8, [0, 2, 1, 1, 0, 0, 2]),  # 8+8 = 16 = 16: tie, lower seat first
    (6, [2, 0, 1, 1, 0, 0, 2]),  # 6+8 = 14 < 16: 2 first
])
def test_replacement_order_landing_10_first_wine_cellar_last_more_points_first(classic, check, spooky0, queue):
    """1 rolls Hugo (g10 -> g11, g12, g13): 0's last gallery guest on g12 is captured to landing 8
    (+8), no guest is left on the gallery, the round ends. Stairs then:
        landing 10: 0 2 | landing 9: 0 1 1 | landing 8: 0 | wine cellar: 2
    Re-placement: landing 10's group (more points first, after this round's bookings; tie lower
    seat), then landing 9's (1 places both its guests, then 0), landing 8, the wine cellar."""
    eng = classic(3)  # 5 guests each
    s = make_position(eng, gallery={12: [0]}, stairs={0: [0, 2], 1: [0, 1, 1]}, wine_cellar=[2],
                      rooms={0: 0, 3: 0, 1: 1, 4: 1, 7: 1, 2: 2, 5: 2, 8: 2}, hugo="g10",
                      spooky=[spooky0, 30, 16], player=1, phase="roll")
    play(eng, s, "hugo")
    doors = {2: [0], 8: [0], 3: [1], 10: [1], 17: [1], 5: [2], 14: [2], 20: [2]}
    check(eng, s, phase="place", player=queue[0], queue=queue, gallery=doors, rooms={}, stairs={},
          wine_cellar=[], supply=[3, 2, 2], spooky=[spooky0 + 8, 30, 16], hugo="landing 10",
          round=2, rounds_done=1, first_roller=1)
    for k, square in enumerate([0, 1, 4, 6, 7, 9, 11]):
        check(eng, s, phase="place", player=queue[k], queue=queue[k:])
        play(eng, s, f"g{square}")
        assert f"g{square}" not in {f"g{x}" for x in np.flatnonzero(s.legal[0])}
    check(eng, s, phase="roll", player=1, supply=[0, 0, 0], stairs={}, wine_cellar=[])


def test_game_ends_after_the_last_round_winners_share_ties(classic, check):
    """rounds=1: the round end is the game end; nobody re-places. Ties share the win."""
    eng = classic(3, rounds=1)
    s = make_position(eng, gallery={2: [0]}, rooms={5: 1}, stairs={0: [1]}, hugo="g0",
                      spooky=[12, 12, 15], roll=4)
    play(eng, s, "g2>r0")
    check(eng, s, phase="over", rounds_done=1, rooms={0: 0, 5: 1}, stairs={0: [1]}, spooky=[12, 12, 15],
          legal=set(), truncated=False)
    assert eng.winners(s) == [0, 1]
    assert eng.ranks(s).tolist() == [[1, 1, 3]]


def test_three_rounds_by_default_and_rounds_players(classic, check):
    """Round 3 of 3 ends the game; with rounds='players' a 4-player game has a round 4."""
    for eng, over in [(classic(4), True), (classic(4, rounds="players"), False)]:
        s = make_position(eng, gallery={2: [0]}, rooms={5: 1}, hugo="g0", roll=4, round=3, rounds_done=2)
        play(eng, s, "g2>r0")
        check(eng, s, phase="over" if over else "roll", rounds_done=3, round=3 if over else 4)


# ------------------------------------------------------------------------------------------------
# set-up and max_turns (sections 3, 8)


def test_setup_places_one_guest_each_in_seat_order_on_free_squares_only(classic, check):
    eng = classic(3, guests_per_player=2)
    s = eng.new_games([5])
    check(eng, s, phase="place", player=0, queue=[0, 1, 2, 0, 1, 2], hugo="landing 10", legal=ALL_SQUARES)
    taken: set[str] = set()
    for k, square in enumerate(["g5", "g6", "g27", "g0", "g13", "g14"]):
        check(eng, s, phase="place", player=k % 3, legal=ALL_SQUARES - taken)
        for occupied in taken:
            with pytest.raises(ActionError, match="not legal"):
                play(eng, s, occupied)
        play(eng, s, square)
        taken.add(square)
    check(eng, s, phase="roll", player=0, gallery={5: [0], 6: [1], 27: [2], 0: [0], 13: [1], 14: [2]},
          supply=[0, 0, 0], spooky=[0, 0, 0], rolls=0)


def test_max_turns_stops_after_that_roll_is_resolved(classic, check):
    """max_turns=5, 4 rolls made: the 5th roll is still decided, then the game stops, truncated."""
    eng = classic(max_turns=5)
    s = make_position(eng, gallery={2: [0], 20: [0], 12: [1]}, hugo="g0", phase="roll", rolls=4)
    play(eng, s, 4)
    check(eng, s, phase="move", rolls=5, truncated=False)
    play(eng, s, "g20>r8")  # the library: +1 is still booked
    check(eng, s, phase="over", rolls=5, truncated=True, rooms={8: 0}, spooky=[1, 0], legal=set())
    s = make_position(eng, gallery={2: [0], 20: [0], 12: [1]}, hugo="g0", phase="roll", rolls=4)
    play(eng, s, "hugo")  # a Hugo roll counts, and is resolved in full (he captures on g2)
    check(eng, s, phase="over", rolls=5, truncated=True, hugo="g3", stairs={0: [0]}, spooky=[10, 0],
          gallery={20: [0], 12: [1]})
    s = make_position(eng, gallery={12: [1]}, rooms={0: 0}, hugo="g0", phase="roll", rolls=4)
    play(eng, s, 5)  # a void roll counts
    check(eng, s, phase="over", rolls=5, truncated=True, player=1)
    s = make_position(eng, gallery={2: [0], 20: [0], 12: [1]}, hugo="g0", phase="roll", rolls=3)
    play(eng, s, "hugo")
    check(eng, s, phase="roll", rolls=4, truncated=False)


def test_max_turns_round_end_and_replacement_of_the_last_roll_still_happen(classic, check):
    """Roll 5 of 5 ends the round; 1 still re-places its landing-10 guest, then the game stops."""
    eng = classic(max_turns=5)
    s = make_position(eng, gallery={2: [0]}, rooms={5: 1}, stairs={0: [1]}, hugo="g0", spooky=[0, 10],
                      phase="roll", rolls=4)
    play(eng, s, 4, "g2>r0")
    check(eng, s, phase="place", player=1, rounds_done=1, truncated=False)
    play(eng, s, "g9")
    check(eng, s, phase="over", truncated=True, rolls=5, gallery={2: [0], 9: [1], 14: [1]}, spooky=[0, 10])
    assert eng.winners(s) == [0]
