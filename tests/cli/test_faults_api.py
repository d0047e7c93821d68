"""Hostile input to the Python API, second round (issue 39, items 17-21): each case is refused with
one message naming the value and what is allowed, and the state is left as it was. Each test here
failed before its fix.

17. A state built, loaded or edited by hand is checked where it enters the engine
    (``Engine.check_state``; ``refresh_legal``; ``step``, ``apply_action``, ``apply_roll`` and
    ``roll_on`` unless ``check=False``): StateError (a ValueError) such as
    ``state.player[0] is 99: allowed are seats 0..2`` (it used to reach the compiled rules, which
    changed the points or crashed the process), ``state.gallery[0, 0, 5] is 100: allowed are 0..5
    guests (guests_per_player)`` (accepted, and left a game with no legal action), one message per
    field (dtype, shape, seats, roll, Hugo, clock, rounds, rolls, placing order, rooms, counts,
    points, legal mask), ``state.phase is read-only: ...`` for a state the engine cannot change.
18. ``reset_games`` checks seeds with ``check_seeds`` as ``new_games`` does (``seed -7 is out of
    range: allowed are integers 0..2**62-1``; 1.7 and 2**63 likewise, the latter a bare
    OverflowError before) and game indices as integers (``game indices must be integers (0..1),
    got float64 [0.5]``).
19. ``agent_streams`` checks seeds with ``check_seeds`` (``seed -1 is out of range: ...``; 2**64 a
    bare OverflowError before).
20. ``apply_roll`` takes integer faces only (``die faces must be integers (1, 2, 4, 5 or 0 for
    Hugo; -1 to skip a game), got float64 [1.5, 1.5, 1.5]...``; 1.5 was played as 1), with the
    integer check of ``check_actions``.
21. ``ActionLayout.to_notation`` / ``describe`` / ``from_notation`` take integer actions and
    rolls only (``action 1.5 is not an action index: allowed are integers 0..508``, ``roll 3 is
    not a number rolled: allowed are 1, 2, 4, 5, or 0 for none``; ``to_notation(1.5, 1)`` was
    ``'g1.5'``).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from midnight_env import ActionError, Engine
from midnight_env.core.dice import agent_streams
from midnight_env.core.positions import make_position
from midnight_env.core.state import GameState, StateError


def played(eng: Engine, games: int = 16, steps: int = 40, seed: int = 0):
    """A batch in mid-play (and the stream that played it)."""
    state = eng.new_games(np.arange(games) + seed)
    rng = agent_streams(np.arange(games) + seed)
    for _ in range(steps):
        eng.step(state, eng.random_actions(state, rng))
    return state, rng


def refused(call, message: str, error=StateError) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


# ------------------------------------------------------------------------------------------------
# 17: a state from outside


def test_an_edited_seat_is_refused_before_the_rules_read_it():
    """``st.player[:] = 99`` in a 3-player game: refused by every entry, the state left alone
    (it used to be stepped: points changed, or the process died). In a child process, so that a
    crash could not take the test run with it."""
    script = """
import numpy as np
from midnight_env import Engine
from midnight_env.core.dice import agent_streams
from midnight_env.core.state import StateError
eng = Engine("midnight_party", 3)
for drawn in ("before", "after"):
    st = eng.new_games(range(8))
    rng = agent_streams(range(8))
    for _ in range(25):
        eng.step(st, eng.random_actions(st, rng))
    actions = eng.random_actions(st, rng)
    st.player[:] = 99
    if drawn == "after":
        actions = eng.random_actions(st, rng)
    before = st.copy()
    calls = (lambda: eng.step(st, actions), lambda: eng.apply_action(st, actions), lambda: eng.apply_roll(st),
             lambda: eng.apply_roll(st, 4), lambda: eng.roll_on(st), lambda: eng.refresh_legal(st),
             lambda: eng.check_state(st))
    for call in calls:
        try:
            call()
            print("accepted")
        except StateError as err:
            print(err)
    print("unchanged" if st.equal(before) else "changed")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert lines == 2 * (7 * ["state.player[0] is 99: allowed are seats 0..2"] + ["unchanged"]), run.stdout


def test_a_gallery_count_of_100_is_refused_by_refresh_legal_and_step():
    """It used to be accepted, and leave a game with no legal action."""
    eng = Engine("midnight_party", 3)
    st = eng.new_games(4)
    st.gallery[0, 0, 5] = 100
    before = st.copy()
    message = "state.gallery[0, 0, 5] is 100: allowed are 0..5 guests (guests_per_player)"
    refused(lambda: eng.refresh_legal(st), message)
    refused(lambda: eng.step(st, np.full(4, -1)), message)
    refused(lambda: eng.check_state(st), message)
    assert st.equal(before)
    st = eng.new_games(4)
    st.hugo[1] = 8 + 100  # Hugo on gallery square 100
    refused(lambda: eng.step(st, np.full(4, -1)), "state.hugo[1] is 108: allowed are 0..35 (Hugo's track: 8 places "
            "before the gallery, then gallery squares 0..27)")


def test_a_large_batch_is_checked_too():
    """Batches the kernels run on threads get the quick check on threads: a fault in any game."""
    eng = Engine("midnight_party", 4)
    st = eng.new_games(1100)
    st.gallery[1099, 2, :] = 1  # 28 guests of a player who has 4
    refused(lambda: eng.step(st, np.full(1100, -1)), "game 1099: player 2 has 32 guests on the gallery, in rooms, on "
            "the stairs and in supply: allowed are 4 (guests_per_player)")
    st.gallery[1099, 2, :] = 0
    st.room[1099, 3] = 4
    refused(lambda: eng.roll_on(st), "state.room[1099, 3] is 4: allowed are seats 0..3, or -1 for an empty room")


def _move_position(eng: Engine) -> GameState:
    return make_position(eng, gallery={14: [0], 3: [1]}, roll=4, phase="move")


def _place_position(eng: Engine) -> GameState:
    st = eng.new_games(1)
    eng.step(st, [0])  # seat 0 placed one guest: seat 1 places next
    return st


def _set(field: str, index, value):
    def edit(st):
        getattr(st, field)[index] = value
    return edit


# (variant, players, position, edit, message; "quick": step refuses it too (the facts its quick check covers)
FAULTS = [
    ("midnight_party", 3, "new", _set("phase", 0, 7), "state.phase[0] is 7: allowed are 0..3 (place, roll, move, over)",
     True),
    ("midnight_party", 3, "new", _set("player", 0, -1), "state.player[0] is -1: allowed are seats 0..2", True),
    ("midnight_party", 3, "new", _set("first_roller", 0, 3), "state.first_roller[0] is 3: allowed are seats 0..2",
     True),
    ("midnight_party", 2, "move", _set("roll", 0, 3), "state.roll[0] is 3: allowed are 1, 2, 4, 5 in phase move",
     True),
    ("midnight_party", 2, "new", _set("roll", 0, 2),
     "state.roll[0] is 2: allowed is 0 in phase place (only phase move has a roll)", True),
    ("midnight_party", 2, "move", _set("hugo", 0, 36),
     "state.hugo[0] is 36: allowed are 0..35 (Hugo's track: 8 places before the gallery, then gallery squares 0..27)",
     True),
    ("hidden_castle", 2, "move", _set("clock", 0, 6),
     "state.clock[0] is 6: allowed are 0..5, and 6 (5:00) once the game is over", True),
    ("midnight_party", 2, "move", _set("clock", 0, 1),
     "state.clock[0] is 1: allowed is 0 (midnight_party has no clock)", True),
    ("midnight_party", 2, "move", _set("round", 0, 0), "state.round[0] is 0: allowed are 1..3 (rounds)", True),
    ("midnight_party", 2, "move", _set("rounds_done", 0, 4), "state.rounds_done[0] is 4: allowed are 0..3 (rounds)",
     True),
    ("midnight_party", 2, "move", _set("rolls", 0, 2001), "state.rolls[0] is 2001: allowed are 0..2000 (max_turns)",
     True),
    ("midnight_party", 2, "move", _set("truncated", 0, True),
     "state.truncated[0] is True in phase move: allowed only once the game is over", True),
    ("midnight_party", 2, "new", _set("queue_len", 0, 13),
     "state.queue_len[0] is 13: allowed are 0..12 (players * guests)", True),
    ("midnight_party", 2, "new", _set("queue_pos", 0, 12),
     "state.queue_pos[0] is 12: allowed are 0..11 in phase place (state.queue_len[0] is 12)", True),
    ("midnight_party", 2, "move", _set("queue", (0, 5), 2), "state.queue[0, 5] is 2: allowed are seats 0..1", True),
    ("midnight_party", 2, "place", _set("player", 0, 0),
     "state.player[0] is 0: allowed is 1, the seat the placing order names next (state.queue[0, 1])", True),
    ("midnight_party", 2, "move", _set("room", (0, 4), 5),
     "state.room[0, 4] is 5: allowed are seats 0..1, or -1 for an empty room", True),
    ("midnight_party", 2, "move", _set("stairs", (0, 1, 2), -1),
     "state.stairs[0, 1, 2] is -1: allowed are 0..6 guests (guests_per_player)", True),
    ("midnight_party", 2, "move", _set("supply", (0, 0), -1),
     "state.supply[0, 0] is -1: allowed are 0..6 guests (guests_per_player)", False),
    ("midnight_party", 2, "move", _set("gallery", (0, 1, 20), 1),
     "game 0: player 1 has 7 guests on the gallery, in rooms, on the stairs and in supply: allowed are 6 "
     "(guests_per_player)", False),
    ("midnight_party", 2, "move", _set("gallery", (0, 1, 20), 11),  # 13 on the gallery: a round end queues 13 of 12
     "state.gallery[0, 1, 20] is 11: allowed are 0..6 guests (guests_per_player)", True),
    ("midnight_party", 2, "move", _set("supply", (0, 1), 4),
     "game 0: player 1 has 5 guests on the gallery, in rooms, on the stairs and in supply: allowed are 6 "
     "(guests_per_player)", False),
    ("hidden_castle", 2, "move", _set("spooky", (0, 1), -1),
     "state.spooky[0, 1] is -1: allowed are 0 and up (hidden_castle points are never below 0)", False),
    ("midnight_party", 2, "place", _set("supply", (0, 1), 0),
     "game 0: player 1 has 0 guests on the gallery, in rooms, on the stairs and in supply: allowed are 6 "
     "(guests_per_player)", False),
]


@pytest.mark.parametrize("variant, n, position, edit, message, quick", FAULTS,
                         ids=[f[4].split(":")[0] for f in FAULTS])
def test_each_fault_of_a_state_is_named_with_what_is_allowed(variant, n, position, edit, message, quick):
    eng = Engine(variant, n)
    st = {"new": lambda: eng.new_games(1), "move": lambda: _move_position(eng),
          "place": lambda: _place_position(eng)}[position]()
    eng.check_state(st)  # sound before the edit
    edit(st)
    before = st.copy()
    refused(lambda: eng.check_state(st), message)
    refused(lambda: eng.refresh_legal(st), message)
    if quick:  # what the compiled rules index with: the quick check of every step refuses it too
        refused(lambda: eng.step(st, np.full(1, -1)), message)
        refused(lambda: eng.apply_roll(st), message)
        refused(lambda: eng.roll_on(st), message)
    assert st.equal(before)


def test_the_placing_order_must_match_the_supply():
    eng = Engine("midnight_party", 2)
    st = _place_position(eng)
    st.queue[0, 1:3] = [0, 0]  # seat 0 to place twice more, seat 1 never
    st.player[0] = 0
    refused(lambda: eng.check_state(st), "state.supply[0, 0] is 5: allowed is 6, the guests of player 0 the placing "
            "order still places (state.queue[0, queue_pos:queue_len])")


def test_a_legal_mask_edited_by_hand_is_named_and_refresh_legal_mends_it():
    eng = Engine("midnight_party", 2)
    st = _move_position(eng)
    st.legal[0, 3] = 1  # a placement in phase move
    refused(lambda: eng.check_state(st), "state.legal[0, 3] is 1: allowed is 0, as action 3 (place a guest on gallery "
            "square 3) is not legal in game 0's position (after editing a position, call Engine.refresh_legal)")
    eng.refresh_legal(st)
    eng.check_state(st)
    stuck = _move_position(eng)
    stuck.gallery[0, 0, 14], stuck.supply[0, 0] = 0, 6  # seat 0 has no guest left to move with its 4
    with pytest.raises(StateError, match=r"^state\.legal\[0, \d+\] is 1: allowed is 0, as action"):
        eng.check_state(stuck)
    eng.refresh_legal(stuck)  # (it recomputes the mask and leaves the rest to check_state)
    refused(lambda: eng.check_state(stuck), "game 0: phase move, but player 0 has no legal choice with roll 4: allowed "
            "are decisions with a legal choice (a roll without a legal move is void: phase roll)")


def test_dtypes_shapes_and_the_type_of_a_state_are_named():
    eng = Engine("midnight_party", 4)
    st = eng.new_games(2)
    refused(lambda: eng.step(tuple(st), np.full(2, -1)), "state must be a GameState (as Engine.new_games makes), "
            "got tuple")
    refused(lambda: eng.step(st._replace(player=st.player.astype(np.int64)), np.full(2, -1)),
            "state.player has dtype int64: allowed is int8")
    refused(lambda: eng.step(st._replace(spooky=st.spooky.tolist()), np.full(2, -1)),
            "state.spooky is a list: allowed is a numpy array of int32")
    three = Engine("midnight_party", 3).new_games(2)
    refused(lambda: eng.step(three, np.full(2, -1)), "state.gallery has shape (2, 3, 28): allowed is (2, 4, 28) "
            "(games, players, gallery squares)")
    refused(lambda: eng.reset_games(three, [0], [1]), "state.gallery has shape (2, 3, 28): allowed is (2, 4, 28) "
            "(games, players, gallery squares)")
    refused(lambda: eng.check_state(st._replace(legal=st.legal[:1])), "state.legal has shape (1, 509): allowed is "
            "(2, 509) (games, actions)")


def test_a_read_only_state_is_checked_but_not_stepped():
    eng = Engine("midnight_party", 4)
    st = eng.new_games(2)
    st.phase.flags.writeable = False
    eng.check_state(st)
    message = "state.phase is read-only: the engine changes games in place (use state.copy())"
    refused(lambda: eng.step(st, np.full(2, -1)), message)
    refused(lambda: eng.refresh_legal(st), message)
    refused(lambda: eng.reset_games(st, [0], [1]), message)
    copy = st.copy()
    eng.step(copy, np.full(2, -1))


@pytest.mark.parametrize("variant, n, options", [("midnight_party", 4, {}), ("midnight_party", 1, {}),
                                                 ("hidden_castle", 3, {}), ("midnight_party", 8, {"max_turns": 40}),
                                                 ("hidden_castle", 2, {"max_turns": 30})])
def test_every_state_the_engine_makes_passes_the_checks(variant, n, options):
    """No false alarm: every position of random games (finished, truncated, in every phase), a
    strided view of them and hand-built positions pass ``check_state``."""
    eng = Engine(variant, n, **options)
    st = eng.new_games(24)
    rng = agent_streams(range(24))
    while not st.done.all():
        eng.check_state(st)
        eng.apply_action(st, eng.random_actions(st, rng))
        eng.check_state(st)
        eng.apply_roll(st)
    eng.check_state(st)
    assert st.truncated.any() == ("max_turns" in options)
    eng.check_state(GameState(*(a[::2] for a in st)))  # every other game: strided arrays
    eng.check_state(make_position(eng, phase="place"))


def test_check_false_skips_the_quick_check():
    """The envs and search agents step their own states: ``check=False`` costs them nothing."""
    eng = Engine("midnight_party", 4)
    st = eng.new_games(2)
    st.rolls[1] = -5  # out of range, but harmless to the rules
    eng.step(st, np.full(2, -1), check=False)
    refused(lambda: eng.step(st, np.full(2, -1)), "state.rolls[1] is -5: allowed are 0..2000 (max_turns)")


# ------------------------------------------------------------------------------------------------
# 18, 19: seeds and game indices


@pytest.mark.parametrize("seed, message", [
    (-7, "seed -7 is out of range: allowed are integers 0..2**62-1"),
    (1.7, "seed 1.7 is not a whole number: allowed are integers 0..2**62-1"),
    (2**63, "seed 9223372036854775808 is out of range: allowed are integers 0..2**62-1"),
    (2**64, "seed 18446744073709551616 is out of range: allowed are integers 0..2**62-1"),
])
def test_reset_games_and_agent_streams_take_the_seeds_new_games_takes(seed, message):
    eng = Engine("midnight_party", 4)
    st = eng.new_games(2)
    before = st.copy()
    refused(lambda: eng.new_games([seed]), message, ValueError)
    refused(lambda: eng.reset_games(st, [0], [seed]), message, ValueError)
    refused(lambda: agent_streams([seed]), message, ValueError)
    assert st.equal(before)


def test_reset_games_takes_integer_game_indices():
    eng = Engine("midnight_party", 4)
    st = eng.new_games(2)
    refused(lambda: eng.reset_games(st, [0.5], [1]), "game indices must be integers (0..1), got float64 [0.5]",
            ValueError)
    refused(lambda: eng.reset_games(st, [True], [1]), "game indices must be integers (0..1), got bool [True]",
            ValueError)
    refused(lambda: eng.reset_games(st, np.array([2**63], np.uint64), [1]),
            "game index 9223372036854775808 is out of range: allowed are 0..1", ValueError)
    eng.reset_games(st, np.array([1], np.uint8), [5])
    assert st.take(1).equal(eng.new_games([5]))
    eng.reset_games(st, [], [])  # none


def test_agent_streams_take_seeds_of_any_integer_form_and_refuse_the_rest():
    refused(lambda: agent_streams([True]), "seed True is not an integer: allowed are integers 0..2**62-1", ValueError)
    refused(lambda: agent_streams(np.array([-1, 2])), "seed[0] -1 is out of range: allowed are integers "
            "0..2**62-1", ValueError)
    assert np.array_equal(agent_streams(range(3)), agent_streams(np.arange(3, dtype=np.uint8)))
    assert np.array_equal(agent_streams([0, 1, 2], stream=2), agent_streams(np.arange(3), stream=2))
    assert agent_streams([]).shape == (0,)


# ------------------------------------------------------------------------------------------------
# 20, 21: die faces, action indices and rolls


def test_apply_roll_takes_integer_faces_only():
    eng = Engine("midnight_party", 4)
    st = GameState.concatenate([make_position(eng, gallery={14: [0, 0], 20: [1]}, phase="roll")] * 4)
    before = st.copy()
    refused(lambda: eng.apply_roll(st, np.full(4, 1.5)), "die faces must be integers (1, 2, 4, 5 or 0 for Hugo; -1 "
            "to skip a game), got float64 [1.5, 1.5, 1.5]...", ValueError)
    refused(lambda: eng.apply_roll(st, [True] * 4), "die faces must be integers (1, 2, 4, 5 or 0 for Hugo; -1 to "
            "skip a game), got bool [True, True, True]...", ValueError)
    refused(lambda: eng.apply_roll(st, [1, 2]), "got die faces of shape (2,) for a batch of 4 games: give one per "
            "game, shape (4,), or one for all", ValueError)
    refused(lambda: eng.apply_roll(st, 3), "die face 3 for game 0 is not a face: allowed are 1, 2, 4, 5, 0 (Hugo)",
            ValueError)
    assert st.equal(before)
    small = st.copy()
    assert np.array_equal(eng.apply_roll(small, np.array([1, 2, 4, 0], np.uint8)), [1, 2, 4, 0])
    plain = st.copy()
    eng.apply_roll(plain, [1, 2, 4, 0])
    assert small.equal(plain)
    refused(lambda: eng.step(st, np.full(4, -1.0)), "actions must be integers (one per game, -1 for none), got "
            "float64 [-1.0, -1.0, -1.0]...", ActionError)


def test_notation_takes_integer_actions_and_rolls_only():
    layout = Engine("midnight_party", 4).layout
    walk = layout.move(1, 0)
    refused(lambda: layout.to_notation(1.5, 1), "action 1.5 is not an action index: allowed are integers 0..508",
            ActionError)
    refused(lambda: layout.to_notation(True), "action True is not an action index: allowed are integers 0..508",
            ActionError)
    refused(lambda: layout.to_notation(509), "action 509 is out of range: allowed are 0..508", ActionError)
    refused(lambda: layout.to_notation(walk, 1.5), "roll 1.5 is not a number rolled: allowed are 1, 2, 4, 5, or 0 "
            "for none", ActionError)
    refused(lambda: layout.to_notation(walk, 3), "roll 3 is not a number rolled: allowed are 1, 2, 4, 5, or 0 "
            "for none", ActionError)
    refused(lambda: layout.describe(walk, 6), "roll 6 is not a number rolled: allowed are 1, 2, 4, 5, or 0 for none",
            ActionError)
    refused(lambda: layout.from_notation("g1>g5", 3), "roll 3 is not a number rolled: allowed are 1, 2, 4, 5, or 0 "
            "for none", ActionError)
    assert layout.to_notation(np.int64(walk), np.int8(4)) == "g1>g5" == layout.to_notation(walk, 4)
    assert layout.from_notation("g1>g5", np.int8(4)) == walk
