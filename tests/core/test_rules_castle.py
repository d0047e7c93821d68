"""Rule by rule, ``hidden_castle`` (RULES.md): one hand-built position per rule.

Sketches as in test_rules_classic.py (``H`` Hugo, digits = guests by seat). Hidden-castle door
squares: r0:2 r1:3 r2+:5 r3+:8 r4:16 r5:17 r6-:20 r7:23 r8-:25. Every player starts with 10
points; Hugo's track is cellar door, step 10 .. step 3, then g0, g1, ...
"""

from __future__ import annotations

import pytest

from midnight_env.core.positions import make_position, play

# ------------------------------------------------------------------------------------------------
# Hugo's track, the clock and his speed (section 5)


def test_hugo_track_needs_9_steps_to_square_0_third_move_ends_on_it(castle, check):
    """Cellar door -3-> step 8 -3-> step 5 -3-> step 4, step 3, g0: the clock moves 23:45 -> 24:00
    (speed stays 3), the rooms open; the fourth move goes g1, g2, g3."""
    eng = castle()
    s = make_position(eng, gallery={20: [0], 21: [1]}, phase="roll")
    check(eng, s, hugo="cellar door", clock="23:45", spooky=[10, 10])
    play(eng, s, "hugo")
    check(eng, s, hugo="step 8", clock="23:45", player=1)
    play(eng, s, "hugo")
    check(eng, s, hugo="step 5", clock="23:45", player=0)
    play(eng, s, "hugo")
    check(eng, s, hugo="g0", clock="24:00", player=1)
    play(eng, s, "hugo")
    check(eng, s, hugo="g3", clock="24:00", player=0, rolls=4)
    play(eng, s, 4)  # rooms are open: r7 (door 23); green r6 on g20 itself would need exactly 1
    check(eng, s, legal={"g20>g24", "g20>r7"})


@pytest.mark.parametrize("clock, speed, after", [
    ("23:45", 3, "24:00"), ("24:00", 3, "1:00"), ("1:00", 4, "2:00"), ("2:00", 5, "3:00"), ("3:00", 6, "4:00"),
])
def test_clock_sets_hugos_speed_and_moves_each_time_he_steps_onto_square_0(castle, check, clock, speed, after):
    """squares 27  0  1  2  3  4  5  6
                H                        a move of `speed` steps from g27 ends on g(speed-1);
                                         stepping onto g0 moves the clock one time on"""
    eng = castle()
    s = make_position(eng, gallery={12: [0], 13: [1]}, hugo="g27", clock=clock, phase="roll")
    play(eng, s, "hugo")
    check(eng, s, hugo=f"g{speed - 1}", clock=after, phase="roll", player=1)


def test_new_speed_applies_from_hugos_next_move(castle, check):
    """Clock 1:00 (speed 4), Hugo on g26: g27, g0 (clock -> 2:00, speed 5), g1, g2 -- 4 steps.
        squares 26 27  0  1  2  3
                H        1  1  0     1's guests on g1, g2 are captured; 0's on g3 is not"""
    eng = castle()
    s = make_position(eng, gallery={1: [1], 2: [1], 3: [0]}, hugo="g26", clock="1:00", phase="roll")
    play(eng, s, "hugo")
    check(eng, s, hugo="g2", clock="2:00", gallery={3: [0]}, stairs={0: [1], 1: [1]}, spooky=[10, 29])
    assert eng.speed(s) == 5


def test_clock_reaching_5_00_ends_the_game_at_once_after_the_captures_on_square_0(castle, check):
    """Clock 4:00 (speed 7), Hugo on g26: g27 captures 0 (step 10), g0 captures 1 (step 9),
    then the clock strikes 5:00: the game is over, the remaining 5 steps are not made.
        squares 26 27  0  1
                H  0  1  0       0's guest on g1 stays"""
    eng = castle()
    s = make_position(eng, gallery={27: [0], 0: [1], 1: [0]}, hugo="g26", clock="4:00", phase="roll")
    play(eng, s, "hugo")
    check(eng, s, phase="over", hugo="g0", clock="5:00", gallery={1: [0]}, stairs={0: [0], 1: [1]},
          spooky=[20, 19], legal=set(), truncated=False)
    assert eng.winners(s) == [1]


# ------------------------------------------------------------------------------------------------
# captures (sections 5, 7)


def test_hugo_captures_groups_in_order_onto_the_free_steps_with_the_highest_numbers(castle, check):
    """Clock 24:00, Hugo on g2, step +10 taken: g3's group shares step +9, g5's takes step +8.
        squares  2   3    4   5   6
                 H   001      1   0"""
    eng = castle()
    s = make_position(eng, gallery={3: [0, 0, 1], 5: [1], 6: [0]}, stairs={0: [1]}, hugo="g2", clock="24:00",
                      spooky=[10, 20], phase="roll")
    play(eng, s, "hugo")
    check(eng, s, hugo="g5", gallery={6: [0]}, stairs={0: [1], 1: [0, 0, 1], 2: [1]}, spooky=[28, 37])


def test_all_steps_taken_a_capture_joins_step_10_for_10_points(castle, check):
    """Every step +10..+3 is taken: Hugo's capture on g5 goes onto step +10, 10 points each."""
    eng = castle()
    stairs = {k: [k % 2] for k in range(8)}
    s = make_position(eng, gallery={5: [0, 1], 20: [0], 21: [1]}, stairs=stairs, hugo="g4", clock="24:00",
                      spooky=[10, 10], phase="roll")
    play(eng, s, "hugo")
    check(eng, s, hugo="g7", gallery={20: [0], 21: [1]}, stairs={**stairs, 0: [0, 0, 1]}, spooky=[20, 20],
          phase="roll")


def test_passing_hugo_is_safe_ending_on_him_captures(castle, check):
    """squares 2  3  4  5  6
               0        H       0 on g2 with a 4 passes him to g6; 0 on g3 with a 2 ends on him"""
    eng = castle()
    s = make_position(eng, gallery={2: [0], 12: [1]}, hugo="g5", clock="24:00", roll=4)
    play(eng, s, "g2>g6")
    check(eng, s, gallery={6: [0], 12: [1]}, stairs={}, spooky=[10, 10])
    s = make_position(eng, gallery={3: [0], 12: [1]}, hugo="g5", clock="24:00", roll=2)
    play(eng, s, "g3>g5")
    check(eng, s, gallery={12: [1]}, stairs={0: [0]}, spooky=[20, 10])


# ------------------------------------------------------------------------------------------------
# the end at 46 points (section 8)


@pytest.mark.parametrize("points, over", [(40, True), (30, False)])
def test_46_points_by_a_hugo_capture_end_the_game_right_after_that_step(castle, check, points, over):
    """Clock 24:00, Hugo on g5, steps g6, g7, g8.
        squares 5  6  7  8
                H  0  1          g6: 0 books 10; at 50 >= 46 the game ends before g7"""
    eng = castle()
    s = make_position(eng, gallery={6: [0], 7: [1]}, hugo="g5", clock="24:00", spooky=[points, 10], phase="roll")
    play(eng, s, "hugo")
    if over:
        check(eng, s, phase="over", hugo="g6", gallery={7: [1]}, stairs={0: [0]}, spooky=[50, 10])
        assert eng.winners(s) == [1]
    else:
        check(eng, s, phase="roll", hugo="g8", gallery={}, stairs={0: [0], 1: [1]}, spooky=[40, 19])


@pytest.mark.parametrize("points, over", [(36, True), (35, False)])
def test_46_points_by_walking_onto_hugo_end_the_game(castle, check, points, over):
    """squares 2  3  4  5  6
               0           H     0 walks a 4 onto Hugo: step +10, 10 points"""
    eng = castle()
    s = make_position(eng, gallery={2: [0], 12: [1]}, hugo="g6", clock="24:00", spooky=[points, 10], roll=4)
    play(eng, s, "g2>g6")
    check(eng, s, phase="over" if over else "roll", spooky=[points + 10, 10], stairs={0: [0]}, gallery={12: [1]})


@pytest.mark.parametrize("room, over", [(2, True), (1, False)])
def test_46_points_by_entering_a_red_room_end_the_game(castle, check, room, over):
    """0 with 45 points on g2 rolls 4: red r2 (door 5) books +1 -> 46, the game ends;
    plain r1 (door 3) books nothing and play goes on."""
    eng = castle()
    s = make_position(eng, gallery={2: [0], 12: [1]}, hugo="g10", spooky=[45, 10], roll=4)
    play(eng, s, f"g2>r{room}")
    check(eng, s, phase="over" if over else "roll", rooms={room: 0}, spooky=[46 if over else 45, 10])


# ------------------------------------------------------------------------------------------------
# rooms, expelling, leaving rooms and the cellar (section 6)


def test_rooms_are_locked_while_hugo_is_on_the_stairs(castle, check):
    """Hugo on step 3: 0's 4 from g4 may only walk. Hugo moves g0, g1, g2: now red r2 (door 5,
    2 steps) opens for the 4; r3 (door 8) would take 5."""
    eng = castle()
    s = make_position(eng, gallery={4: [0], 12: [1]}, hugo="step 3", roll=4)
    check(eng, s, legal={"g4>g8"})
    s = make_position(eng, gallery={4: [0], 12: [1]}, hugo="step 3", phase="roll", player=1)
    play(eng, s, "hugo", 4)
    check(eng, s, hugo="g2", clock="24:00", player=0, legal={"g4>g8", "g4>r2"})


def test_never_pass_with_a_guest_left(castle, check):
    """One guest on the gallery: hidden_castle has no pass."""
    eng = castle()
    s = make_position(eng, gallery={2: [0], 12: [1]}, hugo="g10", roll=4)
    check(eng, s, legal={"g2>g6", "g2>r0", "g2>r1", "g2>r2"})


@pytest.mark.parametrize("room, start", [(6, 17), (8, 22)])
def test_green_room_books_minus_3_never_below_0(castle, check, room, start):
    """0 enters a green room with the exact 4 (r6 door 20 from g17, r8 door 25 from g22):
    from 1 point it drops to 0, not -2; from 10 to 7."""
    eng = castle()
    for before, after in [(1, 0), (10, 7)]:
        s = make_position(eng, gallery={start: [0], 12: [1]}, hugo="g10", spooky=[before, 10], roll=4)
        play(eng, s, f"g{start}>r{room}")
        check(eng, s, rooms={room: 0}, gallery={12: [1]}, spooky=[after, 10])


@pytest.mark.parametrize("roll, legal", [
    (4, {"g2>g6", "g2>r0", "g2>r1", "g2>r2"}),  # r2 is 4 steps away: exact, 1's guest is expelled
    (5, {"g2>g7", "g2>r0", "g2>r1"}),  # 5 is not exact for an occupied room
])
def test_an_occupied_room_is_entered_only_with_the_exact_roll_expelling_the_guest(castle, check, roll, legal):
    """squares  2   3   4   5
                0           H       r2+ (door 5) holds 1's guest; Hugo stands on its door square.
                r0  r1      r2+     0 enters with exactly 4: 1's guest goes onto g5, uncaptured"""
    eng = castle()
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={2: 1}, hugo="g5", clock="24:00", roll=roll)
    check(eng, s, legal=legal)
    if roll == 4:
        play(eng, s, "g2>r2")
        check(eng, s, rooms={2: 0}, gallery={5: [1], 12: [1]}, hugo="g5", stairs={}, spooky=[11, 10],
              phase="roll", player=1)


def test_ones_own_guest_is_never_expelled(castle, check):
    """0 is in r2 itself: its guest on g2 may not enter r2 with the 4; 0's r2 guest may walk out."""
    eng = castle()
    s = make_position(eng, gallery={2: [0], 12: [1]}, rooms={2: 0}, hugo="g10", roll=4)
    check(eng, s, legal={"g2>g6", "g2>r0", "g2>r1", "r2>g8"})


@pytest.mark.parametrize("roll, legal, choice", [
    (1, {"r2>g5"}, "r2>g5"),  # the first step goes onto the door square
    (2, {"r2>g6"}, "r2>g6"),  # never back into the room just left (it would be exact: 2 steps)
    (4, {"r2>g8"}, "r2>g8"),
    (5, {"r2>g9", "r2>r3"}, "r2>r3"),  # r3+ (door 8) is 3 + 2 = 5 steps from inside r2: +1
])
def test_leaving_a_room_starts_on_its_door_square_never_back_into_it(castle, check, roll, legal, choice):
    """0's only guest is in r2+ (door 5); with no gallery guest it must move out.
        squares  5    6   7   8    9
                 r2+          r3+"""
    eng = castle()
    s = make_position(eng, gallery={12: [1]}, rooms={2: 0}, hugo="g20", roll=roll)
    check(eng, s, legal=legal)
    play(eng, s, choice)
    where = choice.split(">")[1]
    if where.startswith("g"):  # leaving a room books nothing
        check(eng, s, rooms={}, gallery={int(where[1:]): [0], 12: [1]}, spooky=[10, 10])
    else:
        check(eng, s, rooms={3: 0}, gallery={12: [1]}, spooky=[11, 10])


@pytest.mark.parametrize("roll, captured", [(4, False), (1, True)])
def test_leaving_a_room_past_hugo_on_its_door_square_is_safe_ending_there_is_not(castle, check, roll, captured):
    """squares  5    6   7   8
                H                 0 in r2+ (door 5): a 4 passes Hugo to g8; a 1 ends on him"""
    eng = castle()
    s = make_position(eng, gallery={12: [1]}, rooms={2: 0}, hugo="g5", clock="24:00", roll=roll)
    play(eng, s, f"r2>g{4 + roll}")
    if captured:
        check(eng, s, rooms={}, gallery={12: [1]}, stairs={0: [0]}, spooky=[20, 10])
    else:
        check(eng, s, rooms={}, gallery={8: [0], 12: [1]}, stairs={}, spooky=[10, 10])


@pytest.mark.parametrize("roll, legal", [
    (1, {"cellar>g0"}),
    (4, {"cellar>g3", "cellar>r0"}),  # first step onto g0, so r0 (door 2) is 2 + 2 = 4 steps away
    (5, {"cellar>g4", "cellar>r0", "cellar>r1"}),
])
def test_leaving_the_cellar_counts_from_square_0(castle, check, roll, legal):
    """0's guests are on steps +9 and +6 (none on the gallery): it must leave the cellar."""
    eng = castle()
    s = make_position(eng, gallery={12: [1]}, stairs={1: [0], 4: [0]}, hugo="g20", spooky=[25, 10], roll=roll)
    check(eng, s, legal=legal)


def test_the_cellar_guest_that_leaves_is_the_one_on_the_highest_step(castle, check):
    """Steps +9 and +6 hold 0's guests: cellar>g3 takes the +9 guest; leaving books nothing."""
    eng = castle()
    s = make_position(eng, gallery={12: [1]}, stairs={1: [0], 4: [0]}, hugo="g20", spooky=[25, 10], roll=4)
    play(eng, s, "cellar>g3")
    check(eng, s, stairs={4: [0]}, gallery={3: [0], 12: [1]}, spooky=[25, 10])


def test_a_cellar_guest_walking_onto_hugo_may_return_to_the_step_it_left(castle, check):
    """0 on step +10, 1 on step +9; Hugo on g3. 0's 4 from the cellar ends on Hugo: the guest
    left step +10 first, so +10 is the highest free step again: back there, +10 points."""
    eng = castle()
    s = make_position(eng, stairs={0: [0], 1: [1]}, gallery={12: [1]}, hugo="g3", spooky=[20, 19], roll=4)
    play(eng, s, "cellar>g3")
    check(eng, s, stairs={0: [0], 1: [1]}, gallery={12: [1]}, spooky=[30, 19], phase="roll", player=1)


def test_no_round_end_when_the_gallery_empties(castle, check):
    """hidden_castle has one long round: the last gallery guest entering a room ends nothing."""
    eng = castle()
    s = make_position(eng, gallery={2: [0]}, rooms={7: 1}, hugo="g10", roll=1)
    play(eng, s, "g2>r0")
    check(eng, s, phase="roll", player=1, rooms={0: 0, 7: 1}, gallery={}, rounds_done=0)


def test_setup_order_and_start(castle, check):
    """Seats place one guest each in turn; Hugo on the cellar door, 10 points each, 23:45."""
    eng = castle(3, guests_per_player=1)
    s = eng.new_games([3])
    check(eng, s, phase="place", queue=[0, 1, 2], hugo="cellar door", clock="23:45", spooky=[10, 10, 10])
    play(eng, s, "g4", "g9", "g11")
    check(eng, s, phase="roll", player=0, gallery={4: [0], 9: [1], 11: [2]})


def test_max_turns_truncates_a_castle_game(castle, check):
    eng = castle(max_turns=3)
    s = make_position(eng, gallery={2: [0], 12: [1]}, hugo="g10", phase="roll", rolls=2)
    play(eng, s, "hugo")
    check(eng, s, phase="over", truncated=True, rolls=3, hugo="g13", stairs={0: [1]}, spooky=[10, 20])
    assert eng.winners(s) == [0]
