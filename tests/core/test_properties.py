"""Property tests over random games (hypothesis): invariants, an independent reference of the
rules, and batch-vs-single equivalence.

``Reference`` below is a second, deliberately plain implementation of RULES.md written for these
tests (dicts and lists, one game at a time). Random games are played event by event on the engine
and on the reference; after every roll and decision the two positions must be identical and the
engine's legal mask must equal the reference's legal set.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from midnight_env import Engine, agent_streams
from midnight_env.config import CASTLE_POINTS_LIMIT, CASTLE_START_POINTS, CLOCK_END, CLOCK_SPEED
from midnight_env.dice import HUGO
from midnight_env.positions import legal_set
from midnight_env.state import MOVE, OVER, PLACE, ROLL

PLACE_, ROLL_, MOVE_, OVER_ = "place", "roll", "move", "over"
PHASES = {PLACE: PLACE_, ROLL: ROLL_, MOVE: MOVE_, OVER: OVER_}


# ------------------------------------------------------------------------------------------------
# the reference rules (RULES.md), one game as a dict of plain lists


class Reference:
    def __init__(self, eng: Engine):
        board, cfg = eng.board, eng.config
        self.castle = cfg.castle
        self.n, self.g = cfg.num_players, cfg.guests
        self.squares = board.num_squares
        self.arrow = board.arrow_square
        self.doors = [int(d) for d in board.door_square]
        self.kinds = [("plain", "red", "green")[int(k)] for k in board.room_kind]
        self.values = [int(v) for v in board.stair_values]  # landing / step values, highest first
        self.places = len(self.values)
        self.wine = self.places  # index of the wine cellar (midnight_party)
        self.track_stairs = self.places + (1 if self.castle else 0)  # cellar door + steps, or landings
        self.rounds = cfg.rounds
        self.pass_always = not self.castle and cfg.options["pass_rule"] == "always"
        self.max_turns = cfg.options["max_turns"]
        self.slow = not self.castle and self.n >= cfg.options["hugo_slow_from_players"]
        self.seen: Counter = Counter()  # rare rules met, so tests can show they are exercised

    # -- set-up (section 3)
    def new_game(self) -> dict:
        n, g = self.n, self.g
        return {"phase": PLACE_, "player": 0, "roll": 0,
                "gallery": [[0] * self.squares for _ in range(n)], "room": [-1] * len(self.doors),
                "stairs": [[0] * (self.places + 1) for _ in range(n)], "supply": [g] * n,
                "hugo": 0, "clock": 0, "spooky": [CASTLE_START_POINTS if self.castle else 0] * n,
                "round": 1, "rounds_done": 0, "rolls": 0, "queue": list(range(n)) * g,
                "first_roller": 0, "truncated": False}

    # -- queries
    def hugo_square(self, pos) -> int | None:
        h = pos["hugo"] - self.track_stairs
        return h if h >= 0 else None

    def place_value(self, place: int) -> int:
        return 2 if place == self.wine else self.values[place]

    def capture_place(self, pos) -> int:
        for place in range(self.places):
            if all(pos["stairs"][p][place] == 0 for p in range(self.n)):
                return place
        self.seen["stairs full"] += 1
        return 0 if self.castle else self.wine  # castle: join step +10; classic: the wine cellar

    def book(self, pos, p: int, points: int) -> None:
        pos["spooky"][p] += points
        if self.castle:
            pos["spooky"][p] = max(0, pos["spooky"][p])

    def legal(self, pos) -> set[str]:
        if pos["phase"] == PLACE_:
            return {f"g{s}" for s in range(self.squares) if all(pos["gallery"][p][s] == 0 for p in range(self.n))}
        if pos["phase"] == MOVE_:
            return self.moves(pos, pos["player"], pos["roll"])
        return set()

    def moves(self, pos, p: int, r: int) -> set[str]:
        s_ = self.squares
        origins = []  # (name, first square reached: None for a gallery guest, square it stands on, room left)
        for s in range(s_):
            if pos["gallery"][p][s]:
                origins.append((f"g{s}", None, s, None))
        if self.castle:
            for q, who in enumerate(pos["room"]):
                if who == p:
                    origins.append((f"r{q}", self.doors[q], None, q))
            if any(pos["stairs"][p][: self.places]):
                origins.append(("cellar", self.arrow, None, None))
        rooms_open = self.hugo_square(pos) is not None
        out = set()
        for name, first, on, left in origins:
            if first is None:
                out.add(f"{name}>g{(on + r) % s_}")
            else:
                out.add(f"{name}>g{(first + r - 1) % s_}")
            if not rooms_open:
                continue
            for q, door in enumerate(self.doors):
                if q == left:
                    continue
                k = ((door - on) % s_ if first is None else (door - first) % s_ + 1) + 1
                if k > r:
                    continue
                who = pos["room"][q]
                if who < 0:
                    ok = k == r if self.kinds[q] == "green" else True
                else:
                    ok = self.castle and k == r and who != p
                if ok:
                    out.add(f"{name}>r{q}")
        if not self.castle:
            on_gallery = sum(pos["gallery"][p])
            if on_gallery == 1 or (self.pass_always and on_gallery >= 1):
                out.add("pass")
        return out

    # -- events
    def place(self, pos, square: int) -> None:
        p = pos["player"]
        pos["gallery"][p][square] += 1
        pos["supply"][p] -= 1
        pos["queue"].pop(0)
        if pos["queue"]:
            pos["player"] = pos["queue"][0]
        else:
            self.enter_roll(pos, pos["first_roller"])

    def roll(self, pos, face: int) -> None:
        p = pos["player"]
        pos["rolls"] += 1
        if face == HUGO:
            if self.move_hugo(pos):
                self.after_turn(pos, p)
        elif self.moves(pos, p, face):
            pos["phase"], pos["roll"] = MOVE_, face
        else:  # void roll
            self.seen["void roll"] += 1
            self.enter_roll(pos, (p + 1) % self.n)

    def move_hugo(self, pos) -> bool:
        speed = int(CLOCK_SPEED[pos["clock"]]) if self.castle else (2 if self.slow else 3)
        for _ in range(speed):
            pos["hugo"] += 1
            if pos["hugo"] == self.track_stairs + self.squares:
                pos["hugo"] = self.track_stairs
            sq = self.hugo_square(pos)
            if sq is None:
                continue
            if any(pos["gallery"][p][sq] for p in range(self.n)):
                place = self.capture_place(pos)
                for p in range(self.n):
                    c = pos["gallery"][p][sq]
                    if c:
                        pos["gallery"][p][sq] = 0
                        pos["stairs"][p][place] += c
                        self.book(pos, p, c * self.place_value(place))
            if self.castle:
                if sq == self.arrow:
                    pos["clock"] += 1
                    if pos["clock"] == CLOCK_END:
                        self.seen["5:00"] += 1
                        pos["phase"] = OVER_
                        return False
                if max(pos["spooky"]) >= CASTLE_POINTS_LIMIT:
                    self.seen["46 points by Hugo"] += 1
                    pos["phase"] = OVER_
                    return False
        return True

    def decide(self, pos, choice: str) -> None:
        p, r = pos["player"], pos["roll"]
        if choice == "pass":
            self.seen["pass"] += 1
            pos["roll"] = 0
            self.after_turn(pos, p)
            return
        origin, dest = choice.split(">")
        self.seen["leave " + origin[0]] += 1  # g, r or c(ellar)
        if origin == "cellar":
            top = next(place for place in range(self.places) if pos["stairs"][p][place])
            pos["stairs"][p][top] -= 1
            target = (self.arrow + r - 1) % self.squares
        elif origin[0] == "r":
            q = int(origin[1:])
            pos["room"][q] = -1
            target = (self.doors[q] + r - 1) % self.squares
        else:
            s = int(origin[1:])
            pos["gallery"][p][s] -= 1
            target = (s + r) % self.squares
        if dest[0] == "g":
            assert int(dest[1:]) == target
            if self.hugo_square(pos) == target:  # walked onto Hugo
                self.seen["walk onto Hugo"] += 1
                place = self.capture_place(pos)
                pos["stairs"][p][place] += 1
                self.book(pos, p, self.place_value(place))
            else:
                pos["gallery"][p][target] += 1
        else:
            q = int(dest[1:])
            who = pos["room"][q]
            if who >= 0:  # expelled onto the door square
                self.seen["expel"] += 1
                pos["gallery"][who][self.doors[q]] += 1
            pos["room"][q] = p
            self.book(pos, p, {"plain": 0, "red": 1, "green": -3}[self.kinds[q]])
        pos["roll"] = 0
        if self.castle and max(pos["spooky"]) >= CASTLE_POINTS_LIMIT:
            self.seen["46 points by a move"] += 1
            pos["phase"] = OVER_
            return
        self.after_turn(pos, p)

    def after_turn(self, pos, p: int) -> None:
        gallery_empty = not any(any(row) for row in pos["gallery"])
        if not self.castle and (gallery_empty or all(who >= 0 for who in pos["room"])):
            self.end_round(pos)
        else:
            self.enter_roll(pos, (p + 1) % self.n)

    def enter_roll(self, pos, p: int) -> None:
        pos["player"], pos["roll"] = p, 0
        if pos["rolls"] >= self.max_turns:
            pos["phase"], pos["truncated"] = OVER_, True
        else:
            pos["phase"] = ROLL_

    def end_round(self, pos) -> None:
        self.seen["rooms full" if all(who >= 0 for who in pos["room"]) else "gallery empty"] += 1
        for p in range(self.n):
            c = sum(pos["gallery"][p])
            pos["gallery"][p] = [0] * self.squares
            pos["stairs"][p][self.wine] += c
            self.book(pos, p, 2 * c)
        pos["rounds_done"] += 1
        if pos["rounds_done"] >= self.rounds:
            pos["phase"] = OVER_
            return
        pos["round"] += 1
        for q, who in enumerate(pos["room"]):
            if who >= 0:
                pos["gallery"][who][self.doors[q]] += 1
                pos["room"][q] = -1
        queue = []
        for place in range(self.places + 1):  # landing 10 first ... wine cellar last
            owners = sorted((p for p in range(self.n) if pos["stairs"][p][place]), key=lambda p: (-pos["spooky"][p], p))
            for p in owners:
                queue += [p] * pos["stairs"][p][place]
                pos["supply"][p] += pos["stairs"][p][place]
                pos["stairs"][p][place] = 0
        pos["hugo"] = 0
        pos["first_roller"] = max(range(self.n), key=lambda p: (pos["spooky"][p], -p))
        pos["queue"] = queue
        if queue:
            pos["phase"], pos["player"] = PLACE_, queue[0]
        else:
            self.enter_roll(pos, pos["first_roller"])


def snapshot(state, i: int = 0) -> dict:
    """The engine's game ``i`` in the reference's form."""
    phase = PHASES[int(state.phase[i])]
    return {"phase": phase, "player": int(state.player[i]), "roll": int(state.roll[i]),
            "gallery": state.gallery[i].tolist(), "room": state.room[i].tolist(), "stairs": state.stairs[i].tolist(),
            "supply": state.supply[i].tolist(), "hugo": int(state.hugo[i]), "clock": int(state.clock[i]),
            "spooky": state.spooky[i].tolist(), "round": int(state.round[i]),
            "rounds_done": int(state.rounds_done[i]), "rolls": int(state.rolls[i]),
            "queue": state.queue[i, state.queue_pos[i]: state.queue_len[i]].tolist() if phase == PLACE_ else [],
            "first_roller": int(state.first_roller[i]), "truncated": bool(state.truncated[i])}


def check_invariants(eng: Engine, ref: Reference, state, after_hugo: bool) -> None:
    pos = snapshot(state)
    n, g = eng.num_players, eng.config.guests
    for p in range(n):  # guests are conserved
        total = sum(pos["gallery"][p]) + pos["room"].count(p) + sum(pos["stairs"][p]) + pos["supply"][p]
        assert total == g, f"player {p} has {total} guests, not {g}: {pos}"
    assert all(-1 <= who < n for who in pos["room"])  # one guest per room (the encoding) of a real seat
    assert min(min(row) for row in pos["gallery"] + pos["stairs"]) >= 0
    if ref.castle:
        assert min(pos["spooky"]) >= 0
        assert all(pos["stairs"][p][ref.wine] == 0 for p in range(n))  # the castle has no wine cellar
    hugo = ref.hugo_square(pos)
    # Hugo's square is empty: always in midnight_party (guests reach a square by walking, and are
    # re-placed only while he is back on the stairs); in hidden_castle an expelled guest may stand
    # on it, but never right after Hugo has moved.
    if hugo is not None and (after_hugo or not ref.castle):
        assert all(pos["gallery"][p][hugo] == 0 for p in range(n)), f"guest on Hugo's square g{hugo}: {pos}"
    if not ref.castle:
        assert pos["clock"] == 0
    # phase / player / mask consistency
    legal = state.legal[0]
    assert 0 <= pos["player"] < n
    if pos["phase"] in (PLACE_, MOVE_):
        assert legal.any()
    else:
        assert not legal.any()
    assert (pos["roll"] in (1, 2, 4, 5)) == (pos["phase"] == MOVE_)
    if pos["phase"] == PLACE_:
        assert pos["queue"] and pos["queue"][0] == pos["player"]
        assert sorted(pos["queue"]) == sorted(p for p in range(n) for _ in range(pos["supply"][p]))
    elif pos["phase"] != OVER_:
        assert sum(pos["supply"]) == 0
    assert pos["rolls"] <= ref.max_turns
    if pos["truncated"]:
        assert pos["phase"] == OVER_ and pos["rolls"] == ref.max_turns
    if pos["phase"] == ROLL_:
        assert pos["rolls"] < ref.max_turns


def choose(eng: Engine, state, rnd: random.Random, hide: bool) -> int:
    """A random legal choice; ``hide``: enter rooms when possible and leave them only when forced
    (so rooms fill up, guests get expelled and hidden_castle games can last until 5:00)."""
    legal = [int(a) for a in np.flatnonzero(state.legal[0])]
    if hide and state.phase[0] == MOVE:
        names = {a: eng.layout.to_notation(a, int(state.roll[0])) for a in legal}
        staying = [a for a in legal if not names[a].startswith("r")]
        entering = [a for a in staying if ">r" in names[a]]
        return rnd.choice(entering or staying or legal)
    return rnd.choice(legal)


def play_against_reference(eng: Engine, seed: int, hide: bool, max_events: int = 5000) -> tuple[dict, Counter]:
    ref = Reference(eng)
    rnd = random.Random(seed)
    state = eng.new_games([seed])
    pos = ref.new_game()
    assert snapshot(state) == pos
    for _ in range(max_events):
        phase = int(state.phase[0])
        if phase == OVER:
            return pos, ref.seen
        if phase == ROLL:
            face = int(eng.apply_roll(state)[0])
            ref.roll(pos, face)
            event = f"roll {face}"
        else:
            assert legal_set(eng, state) == ref.legal(pos), f"legal sets differ at {pos}"
            a = choose(eng, state, rnd, hide)
            choice = eng.layout.to_notation(a, int(state.roll[0]))
            eng.apply_action(state, [a])
            if phase == PLACE:
                ref.place(pos, int(choice[1:]))
            else:
                ref.decide(pos, choice)
            face, event = None, f"choice {choice}"
        got = snapshot(state)
        assert got == pos, f"after {event}: engine {got} != reference {pos}"
        check_invariants(eng, ref, state, after_hugo=face == HUGO)
    raise AssertionError(f"game seeded {seed} did not end within {max_events} events")


# ------------------------------------------------------------------------------------------------
# random set-ups

classic_options = st.fixed_dictionaries({
    "pass_rule": st.sampled_from(["last_guest", "always"]),
    "hugo_slow_from_players": st.sampled_from([5, 7]),
    "rounds": st.sampled_from([1, 2, 3, "players"]),
    "max_turns": st.sampled_from([2000, 2000, 40, 7]),
})
castle_options = st.fixed_dictionaries({"max_turns": st.sampled_from([2000, 2000, 40])})


@st.composite
def games(draw):
    variant = draw(st.sampled_from(["midnight_party", "hidden_castle"]))
    n = draw(st.integers(1, 8))
    options = draw(classic_options if variant == "midnight_party" else castle_options)
    if draw(st.booleans()):  # research set-ups: fewer or more guests
        options["guests_per_player"] = draw(st.integers(1, min(9, 28 // n)))
    return Engine(variant, n, **options), draw(st.integers(0, 2**31 - 1)), draw(st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_random_games_match_the_reference_rules_and_keep_the_invariants(game):
    eng, seed, hide = game
    pos, _ = play_against_reference(eng, seed, hide)
    assert pos["phase"] == OVER_


def test_reference_games_reach_the_rare_rules():
    """Random games do reach the rules that need luck (a guard that the comparison with the
    reference is not vacuous): expelling, full stairs, full rooms, both castle endings..."""
    seen: Counter = Counter()
    for variant, n, options in [("midnight_party", 2, {}), ("midnight_party", 6, {"pass_rule": "always"}),
                                ("midnight_party", 8, {"guests_per_player": 3}),
                                ("hidden_castle", 1, {}), ("hidden_castle", 3, {}), ("hidden_castle", 8, {})]:
        eng = Engine(variant, n, **options)
        for seed in range(10):
            seen += play_against_reference(eng, seed, hide=seed % 2 == 0)[1]
    expected = {"void roll", "pass", "walk onto Hugo", "expel", "stairs full", "rooms full", "gallery empty",
                "5:00", "46 points by Hugo", "46 points by a move", "leave g", "leave r", "leave c"}
    assert expected <= set(seen), f"never reached: {expected - set(seen)}"


# ------------------------------------------------------------------------------------------------
# batch-vs-single equivalence


def play_batch(eng: Engine, seeds) -> tuple:
    """Play games seeded ``seeds`` in one batch with uniform random agents (per-game streams)."""
    state = eng.new_games(seeds)
    rng = agent_streams(seeds)
    while not state.done.all():
        eng.step(state, eng.random_actions(state, rng))
    return state


def rows(state) -> list[tuple]:
    """Per game: every field (dice stream included), for comparison across batches."""
    return [tuple(a[i].tobytes() for a in state) for i in range(state.batch_size)]


@settings(max_examples=6, deadline=None)
@given(variant=st.sampled_from(["midnight_party", "hidden_castle"]), n=st.integers(1, 8),
       first=st.integers(0, 10**6), shuffle=st.randoms(use_true_random=False))
def test_a_game_plays_the_same_in_a_batch_of_64_alone_and_anywhere_in_the_batch(variant, n, first, shuffle):
    eng = Engine(variant, n)
    seeds = list(range(first, first + 64))
    batch = rows(play_batch(eng, seeds))
    for k in range(0, 64, 9):  # one by one (a sample, to stay fast)
        assert rows(play_batch(eng, [seeds[k]]))[0] == batch[k], f"game seeded {seeds[k]} differs alone"
    order = list(range(64))
    shuffle.shuffle(order)
    moved = rows(play_batch(eng, [seeds[k] for k in order]))
    assert [moved[j] for j in np.argsort(order)] == batch


def test_the_parallel_kernel_plays_the_same_games_as_the_serial_one():
    """Batches of PARALLEL_FROM games or more use the threaded kernel: same games as in batches of 64."""
    from midnight_env.threads import PARALLEL_FROM

    for variant, n in [("midnight_party", 4), ("hidden_castle", 3)]:
        eng = Engine(variant, n)
        seeds = list(range(7, 7 + PARALLEL_FROM))
        big = rows(play_batch(eng, seeds))
        small = sum((rows(play_batch(eng, seeds[k: k + 64])) for k in range(0, len(seeds), 64)), [])
        assert big == small


@pytest.mark.parametrize("variant, n", [("midnight_party", 4), ("hidden_castle", 3), ("midnight_party", 8)])
def test_reset_games_restarts_a_game_in_place_as_new_games_would(variant, n):
    """Finished (and unfinished) games restarted with ``reset_games`` are exactly ``new_games`` of
    the same seeds, and then play the same as a fresh batch."""
    eng = Engine(variant, n)
    state = play_batch(eng, list(range(40)))  # every game over, fields far from set-up
    half = eng.new_games(range(40, 50))
    eng.step(half, eng.random_actions(half, agent_streams(range(10))))
    state.put(np.arange(10), half)  # some games in mid-play as well
    games = np.array([3, 0, 17, 39, 8])
    before = state.copy()
    eng.reset_games(state, games, [1000, 1001, 1002, 1003, 1004])
    assert rows(state.take(games)) == rows(eng.new_games([1000, 1001, 1002, 1003, 1004]))
    others = np.setdiff1d(np.arange(40), games)
    assert rows(state.take(others)) == rows(before.take(others)), "the other games are left alone"
    replay = play_batch(eng, [1000, 1001, 1002, 1003, 1004])
    sub = state.take(games)
    rng = agent_streams([1000, 1001, 1002, 1003, 1004])
    while not sub.done.all():
        eng.step(sub, eng.random_actions(sub, rng))
    assert rows(sub) == rows(replay)


def test_reset_games_refuses_bad_indices_and_seed_counts():
    eng = Engine("hidden_castle", 2)
    state = eng.new_games(range(4))
    with pytest.raises(ValueError, match=r"game index 4 is out of range: allowed are 0..3"):
        eng.reset_games(state, [1, 4], [7, 8])
    with pytest.raises(ValueError, match="got 1 seeds for 2 games"):
        eng.reset_games(state, [0, 1], [7])
