"""Hand-built positions: one game (a batch of one) from a readable description, and a drawing.

>>> eng = Engine("midnight_party", 2)
>>> state = make_position(eng, gallery={14: [0, 0], 17: [1]}, rooms={5: 1}, stairs={0: [1]},
...                       hugo="g13", roll=4)
>>> play(eng, state, "g14>r6", "hugo")          # a choice, then a die face, as records write them
>>> print(draw_position(eng, state))
>>> describe_position(eng, state)["stairs"]     # the position as make_position's arguments

Places are named as in RULES.md and RECORDS.md: gallery squares ``0..27``, rooms by index,
stair places by position (``0`` = the highest value: landing 10 / step +10). Guests of a player
not put anywhere wait in ``supply``: at set-up or re-placement they are the guests still to be
placed; in other phases they simply stay out of play. Rule tests build one position per rule
with :func:`make_position` and print :func:`draw_position` in their assertion messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np

from midnight_env.core.board import GREEN, RED
from midnight_env.core.config import CASTLE_START_POINTS, CLOCK_TIMES
from midnight_env.core.dice import HUGO, NUMBERS, seed_streams
from midnight_env.core.engine import Engine
from midnight_env.core.state import MOVE, PHASE_NAMES, PLACE, ROLL, GameState, empty_state
from midnight_env.infra import checks


def _seat(engine: Engine, seat, where: str) -> int:
    n = engine.num_players
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
        raise ValueError(f"{where}: seat {seat!r} is not a player: allowed are 0..{n - 1}")
    return int(seat)


def _seats(engine: Engine, seats, where: str) -> list[int]:
    if isinstance(seats, (int, np.integer)) and not isinstance(seats, bool):
        seats = [seats]  # one guest may be given without a list
    if not isinstance(seats, (list, tuple)):
        raise ValueError(f"{where}: {seats!r} must be a list of seats")
    return [_seat(engine, p, where) for p in seats]


def _index(value, count: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < count:
        raise ValueError(f"{what} {value!r} does not exist: allowed are 0..{count - 1}")
    return int(value)


def hugo_names(engine: Engine) -> list[str]:
    """Every position of Hugo's track in words, in track order (the values ``hugo=`` accepts)."""
    board = engine.board
    stairs = "landing" if board.stairs_kind == "landings" else "step"
    names = ["cellar door"] if board.hugo_start == "cellar_door" else []
    names += [f"{stairs} {v}" for v in board.stair_values]
    return names + [f"g{s}" for s in range(board.num_squares)]


def hugo_track_index(engine: Engine, hugo: str) -> int:
    """Track index (``state.hugo``) of ``"start"``, ``"g13"``, ``"landing 9"``, ``"step 10"``, ``"cellar door"``."""
    names = hugo_names(engine)
    text = " ".join(str(hugo).split()).lower() if isinstance(hugo, str) else hugo
    if text == "start":
        return 0
    match = re.fullmatch(r"(?:g|square )(\d+)", text) if isinstance(text, str) else None
    if match:
        text = f"g{int(match.group(1))}"
    if text in names:
        return names.index(text)
    stairs = ", ".join(repr(x) for x in names[: engine.rules.hugo_stairs])
    raise ValueError(f"hugo={hugo!r} is not a place on Hugo's track: allowed are 'start', {stairs} "
                     f"or 'g0'..'g{engine.board.num_squares - 1}'")


def hugo_place_name(engine: Engine, state: GameState, i: int = 0) -> str:
    return hugo_names(engine)[int(state.hugo[i])]


def make_position(engine: Engine, *, gallery: Mapping[int, Iterable[int]] | None = None,
                  rooms: Mapping[int, int] | None = None, stairs: Mapping[int, Iterable[int]] | None = None,
                  wine_cellar: Iterable[int] | None = None, hugo: str = "start", clock: str = "23:45",
                  spooky: Iterable[int] | None = None, player: int = 0, phase: str = "move",
                  roll: int | None = None, round: int = 1, rounds_done: int = 0, rolls: int = 0,
                  queue: Iterable[int] | None = None, first_roller: int = 0, seed: int = 0) -> GameState:
    """A single game (batch of one) in the described position, with ``state.legal`` filled in.

    gallery: square -> seats of the guests there (``{14: [0, 0], 17: [1]}``);
    rooms: room index -> seat of its guest; stairs: stair place (0 = highest value) -> seats;
    wine_cellar: seats of guests there (midnight_party); every other guest is in ``supply``.
    hugo: ``"start"``, ``"g13"``, ``"landing 9"`` (midnight_party), ``"step 10"`` or
    ``"cellar door"`` (hidden_castle). clock: ``"23:45"`` .. ``"4:00"`` (hidden_castle).
    spooky: points per seat (default: the variant's start, 0 or 10). phase: ``"place"``,
    ``"roll"``, ``"move"`` (needs ``roll`` 1, 2, 4 or 5 with a legal move) or ``"over"``.
    queue: the seats still to place, in order (phase ``"place"``; default: round-robin from
    ``player`` over the supply, as at set-up); first_roller: who rolls once placing is done.
    seed: the game's dice stream. Raises ValueError naming the bad value.
    """
    r = engine.rules
    n, g = r.num_players, r.guests
    s = empty_state(1, n, r.num_squares, r.num_rooms, r.num_places, g, r.num_actions)
    seed_streams(np.array([seed], np.int64), s.rng)

    for square, seats in (gallery or {}).items():
        square = _index(square, r.num_squares, "gallery square")
        for p in _seats(engine, seats, f"gallery square {square}"):
            s.gallery[0, p, square] += 1
    for room, p in (rooms or {}).items():  # a dict: at most one guest per room by construction
        room = _index(room, r.num_rooms, "room")
        if isinstance(p, (list, tuple)):
            raise ValueError(f"room {room}: a room holds at most one guest, got {p!r}")
        s.room[0, room] = _seat(engine, p, f"room {room}")
    for place, seats in (stairs or {}).items():
        place = _index(place, r.num_places, "stair place (0 = highest value)")
        for p in _seats(engine, seats, f"stair place {place}"):
            s.stairs[0, p, place] += 1
    if wine_cellar:
        if r.overflow_place != r.num_places:
            raise ValueError(f"wine_cellar={list(wine_cellar)!r}: the {engine.variant} board has no wine cellar "
                             "(captures beyond the last step join step +10: use stairs={0: [...]})")
        for p in _seats(engine, list(wine_cellar), "wine cellar"):
            s.stairs[0, p, r.num_places] += 1

    for p in range(n):
        used = int(s.gallery[0, p].sum() + (s.room[0] == p).sum() + s.stairs[0, p].sum())
        if used > g:
            raise ValueError(f"player {p} has {used} guests on the board but guests_per_player is {g}")
        s.supply[0, p] = g - used

    s.hugo[0] = hugo_track_index(engine, hugo)
    if clock not in CLOCK_TIMES[:-1]:
        raise ValueError(f"clock={clock!r} is not a time of the clock: allowed are {', '.join(CLOCK_TIMES[:-1])}")
    if not r.castle and clock != CLOCK_TIMES[0]:
        raise ValueError(f"clock={clock!r}: midnight_party has no clock")
    s.clock[0] = CLOCK_TIMES.index(clock)

    if spooky is None:
        spooky = [CASTLE_START_POINTS if r.castle else 0] * n
    spooky = list(spooky)
    if len(spooky) != n:
        raise ValueError(f"spooky={spooky!r} must give the points of all {n} players")
    if r.castle and min(spooky) < 0:
        raise ValueError(f"spooky={spooky!r}: hidden_castle points are never below 0")
    s.spooky[0] = spooky

    if phase not in PHASE_NAMES:
        raise ValueError(f"phase={phase!r} is not a phase: allowed are {', '.join(PHASE_NAMES)}")
    s.phase[0] = PHASE_NAMES.index(phase)
    s.player[0] = _seat(engine, player, "player")
    s.first_roller[0] = _seat(engine, first_roller, "first_roller")
    round = checks.integer("round=", round, 1, r.rounds, allowed=f"1..{r.rounds}")
    rounds_done = checks.integer("rounds_done=", rounds_done, 0, r.rounds, allowed=f"0..{r.rounds}")
    rolls = checks.integer("rolls=", rolls, 0, r.max_turns, allowed=f"0..{r.max_turns} (max_turns)")
    s.round[0], s.rounds_done[0], s.rolls[0] = round, rounds_done, rolls

    if s.phase[0] == MOVE:
        if roll not in NUMBERS:
            raise ValueError(f"roll={roll!r}: phase 'move' needs the number rolled, one of 1, 2, 4, 5")
        s.roll[0] = roll
    elif roll not in (None, 0):
        raise ValueError(f"roll={roll!r}: only phase 'move' has a roll (phase is {phase!r})")

    if s.phase[0] == PLACE:
        _set_queue(engine, s, queue)
    elif queue is not None:
        raise ValueError(f"queue={queue!r}: only phase 'place' has a placing order (phase is {phase!r})")

    engine.refresh_legal(s)
    if s.phase[0] == MOVE and not s.legal[0].any():
        raise ValueError(f"player {player} has no legal move with roll {roll}: that roll would be void "
                         "(use phase='roll' and apply_roll to see it voided)")
    if s.phase[0] == PLACE and not s.legal[0].any():
        raise ValueError("phase 'place' but no gallery square is free")
    return s


def _set_queue(engine: Engine, s: GameState, queue: Iterable[int] | None) -> None:
    n = engine.num_players
    supply = [int(x) for x in s.supply[0]]
    if queue is None:  # set-up order from `player`: one guest each, clockwise, while any are left
        left, order, p = supply[:], [], int(s.player[0])
        while sum(left):
            if left[p]:
                order.append(p)
                left[p] -= 1
            p = (p + 1) % n
        queue = order
    queue = [_seat(engine, p, "queue") for p in queue]
    if not queue:
        raise ValueError("phase 'place' but no guest is left to place (every guest is on the board)")
    for p in range(n):
        if queue.count(p) != supply[p]:
            raise ValueError(f"queue={queue!r} places {queue.count(p)} guests of player {p}, "
                             f"but {supply[p]} are not on the board")
    if queue[0] != s.player[0]:
        raise ValueError(f"queue={queue!r} starts with player {queue[0]}, but player={int(s.player[0])}")
    s.queue[0, : len(queue)] = queue
    s.queue_pos[0] = 0
    s.queue_len[0] = len(queue)


def describe_position(engine: Engine, state: GameState, i: int = 0) -> dict:
    """Game ``i`` as the keyword arguments of :func:`make_position` (seats listed in order), so
    ``make_position(engine, **describe_position(engine, state))`` rebuilds it (dice stream aside).
    Tests compare parts of it with the position they expect."""
    r = engine.rules

    def seats(counts) -> list[int]:
        return [p for p in range(r.num_players) for _ in range(int(counts[p]))]

    gallery = {sq: seats(state.gallery[i, :, sq]) for sq in range(r.num_squares) if state.gallery[i, :, sq].any()}
    stairs = {place: seats(state.stairs[i, :, place]) for place in range(r.num_places)
              if state.stairs[i, :, place].any()}
    phase = int(state.phase[i])
    queue = None
    if phase == PLACE:
        queue = [int(p) for p in state.queue[i, int(state.queue_pos[i]): int(state.queue_len[i])]]
    return {
        "gallery": gallery,
        "rooms": {q: int(state.room[i, q]) for q in range(r.num_rooms) if state.room[i, q] >= 0},
        "stairs": stairs,
        "wine_cellar": seats(state.stairs[i, :, r.num_places]),
        "hugo": hugo_place_name(engine, state, i),
        "clock": CLOCK_TIMES[int(state.clock[i])],
        "spooky": [int(x) for x in state.spooky[i]],
        "player": int(state.player[i]),
        "phase": PHASE_NAMES[phase],
        "roll": int(state.roll[i]) if phase == MOVE else None,
        "round": int(state.round[i]),
        "rounds_done": int(state.rounds_done[i]),
        "rolls": int(state.rolls[i]),
        "queue": queue,
        "first_roller": int(state.first_roller[i]),
    }


# ------------------------------------------------------------------------------------------------
# drawing


def _room_label(engine: Engine, q: int) -> str:
    kind = int(engine.board.room_kind[q])
    return f"r{q}" + ("+" if kind == RED else "-" if kind == GREEN else "")


def draw_position(engine: Engine, state: GameState, i: int = 0) -> str:
    """A compact plain-text drawing of game ``i``: the gallery as two strips of squares (door
    marks above, Hugo ``H`` and guests by seat below), rooms, stairs, points and legal choices.

    Room marks: ``r8+`` a red room (+1), ``r2-`` a green room (-3, exact roll), ``r0`` plain.
    """
    r = engine.rules
    board = engine.board
    phase = int(state.phase[i])
    player, roll = int(state.player[i]), int(state.roll[i])
    head = f"{engine.variant}, {r.num_players} players, round {int(state.round[i])}/{r.rounds}, " \
           f"{int(state.rolls[i])} rolls"
    if phase == PLACE:
        head += f" | player {player} to place"
    elif phase == ROLL:
        head += f" | player {player} to roll"
    elif phase == MOVE:
        head += f" | player {player} to move a {roll}"
    else:
        head += " | game over" + (" (truncated)" if state.truncated[i] else "")
    if r.castle:
        head += f" | clock {CLOCK_TIMES[int(state.clock[i])]} (Hugo speed {engine.speed(state, i)})"
    lines = [head]

    doors = {int(d): q for q, d in enumerate(board.door_square)}
    hugo_sq = engine.hugo_square(state, i)
    width = 5
    for start in range(0, r.num_squares, 14):
        squares = range(start, min(start + 14, r.num_squares))
        nums, marks, here = ["square "], ["door   "], ["guests "]
        for sq in squares:
            cell = ("H" if sq == hugo_sq else "") + "".join(
                str(p) * int(state.gallery[i, p, sq]) for p in range(r.num_players))
            nums.append(f"{sq:<{width}}")
            marks.append(f"{_room_label(engine, doors[sq]) if sq in doors else '':<{width}}")
            here.append(f"{cell or '.':<{width}}")
        lines += ["".join(x).rstrip() for x in (nums, marks, here)]

    rooms = " ".join(f"{_room_label(engine, q)}:{'.' if state.room[i, q] < 0 else int(state.room[i, q])}"
                     for q in range(r.num_rooms))
    lines.append(f"rooms  {rooms}" + ("" if state.hugo[i] >= r.hugo_stairs else "  (locked: Hugo on the stairs)"))
    stair_word = "landing" if board.stairs_kind == "landings" else "step"
    places = []
    for place in range(r.num_places + (1 if r.overflow_place == r.num_places else 0)):
        label = "wine" if place == r.num_places else str(int(board.stair_values[place]))
        seats = "".join(str(p) * int(state.stairs[i, p, place]) for p in range(r.num_players))
        places.append(f"{label}:{seats or '.'}")
    lines.append(f"stairs ({stair_word}s) " + " ".join(places) + f" | Hugo: {hugo_place_name(engine, state, i)}")
    supply = [int(x) for x in state.supply[i]]
    lines.append(f"points {[int(x) for x in state.spooky[i]]}" + (f" | supply {supply}" if any(supply) else ""))
    if phase in (PLACE, MOVE):
        lines.append(f"legal  {' '.join(sorted(legal_set(engine, state, i), key=_natural))}")
    return "\n".join(lines)


def _natural(text: str) -> list:
    """Sort key putting g2 before g10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def legal_set(engine: Engine, state: GameState, i: int = 0) -> set[str]:
    """The legal choices of game ``i`` in record notation."""
    return set(engine.legal_notations(state, i))


def play(engine: Engine, state: GameState, *events) -> GameState:
    """Apply rolls and decisions to a single game, written as in records: a die face (``4``,
    ``"hugo"``) or a choice (``"g14"``, ``"g14>g18"``, ``"r2>r5"``, ``"pass"``). Returns ``state``.
    A roll when no roll is due, or an illegal choice, raises ValueError / ActionError."""
    if state.batch_size != 1:
        raise ValueError(f"play() takes a single game, got a batch of {state.batch_size}")
    for event in events:
        phase = PHASE_NAMES[int(state.phase[0])]
        if event == "hugo" or isinstance(event, (int, np.integer)):
            if phase != "roll":
                raise ValueError(f"roll {event!r} given, but the game is at phase {phase!r}")
            face = HUGO if event == "hugo" else int(event)
            engine.apply_roll(state, [face])
        else:
            if phase not in ("place", "move"):
                raise ValueError(f"choice {event!r} given, but the game is at phase {phase!r}")
            engine.apply_action(state, [action(engine, state, str(event))])
    return state


def action(engine: Engine, state: GameState, notation: str, i: int = 0) -> int:
    """Action index of a record notation (``"g14>g18"``, ``"r2>r5"``, ``"pass"``) for game ``i``'s roll."""
    return engine.layout.from_notation(notation, int(state.roll[i]))


__all__ = ["make_position", "describe_position", "draw_position", "legal_set", "play", "action",
           "hugo_track_index", "hugo_names", "hugo_place_name"]
