"""``midnight play``: take a seat against agents in the terminal.

The board is drawn before each of your decisions, with the roll and the legal choices numbered
under it, all on one 80 x 24 screen (the frame of ``midnight render``; the choices in columns, a
move into a room named with its colour and points); answer with a number or the choice's
notation (``g14>g18``). ``q`` quits, ``b`` draws the board and the choices again, ``?`` explains.
Bad input is answered with a message and asked again. What the others do is said in a line each
(a room with its colour and points, Hugo's landing while he climbs the cellar stairs).
``--record FILE`` appends the finished game to FILE as a record (``midnight analyze FILE`` then
judges every decision of it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Decisions, decide
from midnight_env.arena.registry import make_agent, split_specs
from midnight_env.commands.common import UsageError, add_game_arguments, engine_from_args
from midnight_env.core.board import GREEN
from midnight_env.core.dice import agent_streams, face_name
from midnight_env.core.engine import Engine
from midnight_env.core.records import Recorder, is_special_file, write_record_lines
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL
from midnight_env.infra import checks

_HELP = ("answer with the number of a choice, or its notation (g7 to place, g14>g18 or g3>r1 to move), "
         "b to show the board again, q to quit; on the board r<n>+ is a red room (+1 spooky point), r<n>- a green "
         "one (-3, exact roll); fewest spooky points win")
SCREEN_COLUMNS, SCREEN_LINES = 80, 24  # the board and the choices fit one screen of this size


def add_parser(sub) -> None:
    p = sub.add_parser("play", help="play a game in the terminal against agents",
                       description="Take seat K in a game against agents: the board is drawn in the terminal with "
                                   "the roll and the numbered legal choices under it, on one 80x24 screen (a move "
                                   "into a room says its colour and spooky points); type the number or the notation "
                                   "of yours (? explains, b shows the board again, q quits).")
    add_game_arguments(p)
    p.add_argument("--seat", type=int, default=0, help="your seat 0..N-1 (default 0; seat 0 places and rolls first)")
    p.add_argument("--opponents", default="expert",
                   help="one agent for every other seat, or one per other seat in seat order (default expert)")
    p.add_argument("--seed", type=int, default=None, help="game seed (default: a random one, printed)")
    p.add_argument("--color", action=argparse.BooleanOptionalAction, default=None,
                   help="ANSI colours on or off (default: on a terminal only, off when NO_COLOR is set)")
    p.add_argument("--record", metavar="FILE",
                   help="append the finished game to FILE as a record (midnight-record/1), to replay or to judge "
                        "with midnight analyze FILE --line K")
    p.set_defaults(run=run)


def _board(engine: Engine, state, color: bool) -> str:
    try:
        from midnight_env.render.text import render_frame
    except ImportError:  # drawing is optional: fall back to the numbers
        return (f"gallery {state.gallery[0].tolist()} rooms {state.room[0].tolist()} "
                f"hugo {engine.hugo_square(state)} points {state.spooky[0].tolist()}")
    return render_frame(engine, state, 0, color=color)


_ROOM_EFFECTS = ("plain, no points", "red: +1 spooky point", "green: -3 spooky points")
_ROOM_SHORT = (("plain", ""), ("red +1", "+1"), ("green -3", "-3"))  # the colour and points, shorter and shortest


def room_words(engine: Engine, room: int) -> str:
    """Room ``room`` with its name where it has one, its colour and what entering it books
    (RULES.md section 6): 'room 8 (library), red: +1 spooky point'."""
    board = engine.board
    name = board.room_names[room]
    label = f"room {room}" + ("" if name == f"room {room}" else f" ({name})")
    effect = _ROOM_EFFECTS[int(board.room_kind[room])]
    if engine.config.castle and int(board.room_kind[room]) == GREEN:
        effect += " (not below 0)"
    return f"{label}, {effect}"


def choice_words(engine: Engine, state, action: int) -> tuple[str, str, str]:
    """What a choice does beyond its notation, in words, in short and in shortest: the room
    entered (colour, points, a guest expelled), a walk onto Hugo."""
    layout = engine.layout
    if layout.kind(action) != "move":
        return "", "", ""
    origin, dest = layout.split_move(action)
    if dest == 0:
        target = layout.walk_square(origin, int(state.roll[0]))
        if target == engine.hugo_square(state):
            return "onto Hugo: captured", "Hugo!", "Hugo!"
        return "", "", ""
    room = dest - 1
    occupant = int(state.room[0, room])
    expel = f"expels {occupant}" if occupant >= 0 else ""
    short, shortest = _ROOM_SHORT[int(engine.board.room_kind[room])]
    return (room_words(engine, room) + (f", expels seat {occupant}" if expel else ""),
            " ".join(w for w in (short, expel) if w), " ".join(w for w in (shortest, expel) if w))


def choice_lines(entries: list[tuple[str, ...]], lines: int, width: int = SCREEN_COLUMNS - 1) -> list[str]:
    """The numbered choices (notation, then its words from the longest to the shortest) in
    columns, numbered down each column: with the longest words that fit in ``lines`` lines, else
    with the notation alone."""
    n = len(entries)
    notes_w = max(len(entry[0]) for entry in entries)
    num_w = len(str(n))
    texts: list[str] = []
    for level in range(1, len(entries[0]) + 1):
        texts = []
        for k, entry in enumerate(entries, 1):
            extra = entry[level] if level < len(entry) else ""
            head = f"{k:>{num_w}}) {entry[0]}"
            texts.append(f"{head:<{num_w + 2 + notes_w}}  {extra}" if extra else head)
        col_w = max(len(t) for t in texts) + 2
        rows = math.ceil(n / max(1, (width + 2) // col_w))
        if rows <= lines:
            break
    columns = [texts[c * rows:(c + 1) * rows] for c in range(math.ceil(n / rows))]
    return ["".join(f"{col[r]:<{col_w}}" if r < len(col) else "" for col in columns).rstrip()
            for r in range(rows)]


def screen_lines() -> int:
    """Lines of the screen the board and the choices share: the terminal's, at least 24."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError, OSError):
        tty = False
    return max(SCREEN_LINES, shutil.get_terminal_size((SCREEN_COLUMNS, SCREEN_LINES)).lines) if tty else SCREEN_LINES


def hugo_words(engine: Engine, before, state) -> str:
    """Where Hugo's roll took him: a gallery square (with the guests he captured), a landing or
    step of the cellar stairs he climbs (rooms stay locked), or how far if the round ended."""
    speed = engine.speed(before)
    if state.rounds_done[0] != before.rounds_done[0] or state.phase[0] == OVER:
        return f"he moves {speed} steps and the {'game' if state.phase[0] == OVER else 'round'} ends"
    square = engine.hugo_square(state)
    if square >= 0:
        caught = (state.stairs[0].sum(axis=1) - before.stairs[0].sum(axis=1)).tolist()
        total = int(sum(c for c in caught if c > 0))
        if not total:
            return f"he moves to g{square}"
        seats = ", ".join(f"{int(c)} of seat {p}" for p, c in enumerate(caught) if c > 0)
        return f"he moves to g{square} and captures {total} guest{'s' if total > 1 else ''} ({seats})"
    place = engine.hugo_stair_place(state)
    if place < 0:
        return "he stays at the cellar door"
    value = int(engine.board.stair_values[place])
    where = f"step +{value}" if engine.config.castle else f"landing {value}"
    return f"he climbs the cellar stairs to {where} (rooms stay locked)"


def opponent_specs(spec: str, num_players: int, seat: int) -> list[str | None]:
    """Agent spec per seat (None for the human's seat)."""
    names = split_specs(spec or "")
    others = num_players - 1
    if others == 0:
        names = []
    elif len(names) == 1:
        names = names * others
    elif len(names) != others:
        raise UsageError(f"--opponents {spec!r} names {len(names)} agents: give one for every other seat or "
                         f"exactly {others} (one per other seat)")
    seats: list[str | None] = list(names)
    seats.insert(seat, None)
    return seats


def _ask(prompt: str, out) -> str | bytes | None:
    """The typed answer; its bytes where they are not UTF-8 text; None at the end of input (stdin
    at its end, closed or absent)."""
    out(prompt, end="", flush=True)
    raw = getattr(sys.stdin, "buffer", None)  # bytes, so that a line that is not UTF-8 is one bad answer
    try:
        line = raw.readline() if raw is not None else sys.stdin.readline() if sys.stdin is not None else ""
    except (OSError, ValueError):  # stdin closed under us
        line = ""
    if not line:
        return None
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            return line.strip()
    return line.strip()


def choose(engine: Engine, state, color: bool, out=print) -> int | None:
    """The human's choice for game 0 (None: quit or end of input)."""
    roll = int(state.roll[0])
    legal = [int(a) for a in np.flatnonzero(state.legal[0])]
    notes = [engine.layout.to_notation(a, roll) for a in legal]

    def screen() -> None:  # the board, what to decide and the choices: one screen
        board = _board(engine, state, color)
        out(board)
        if state.phase[0] == PLACE:
            out(f"you (player {int(state.player[0])}) place a guest: choose a free gallery square")
        else:
            out(f"you (player {int(state.player[0])}) rolled {roll}: choose a move")
        entries = [(note, *choice_words(engine, state, a)) for a, note in zip(legal, notes)]
        for line in choice_lines(entries, screen_lines() - board.count("\n") - 3):
            out(line)

    screen()
    while True:
        text = _ask(f"your choice [1-{len(legal)}, ? help, q quit]: ", out)
        if text is None:
            out("")
            return None
        if isinstance(text, bytes):
            out(f"not UTF-8 text ({text[:40]!r}): answer with a number 1..{len(legal)} or a choice's notation "
                "(b shows the board again, q quits)")
            continue
        low = text.lower()
        if low in ("q", "quit", "exit"):
            return None
        if low in ("?", "h", "help"):
            out(_HELP)
            continue
        if low in ("b", "board"):
            screen()
            continue
        if text.isascii() and text.isdigit():  # ('²' is a digit to isdigit, not to int)
            k = int(text)
            if 1 <= k <= len(legal):
                return legal[k - 1]
            out(f"{text} is not one of the choices: enter a number 1..{len(legal)}")
            continue
        if text in notes:
            return legal[notes.index(text)]
        out(f"{text!r} is not a legal choice here: enter a number 1..{len(legal)} or one of "
            f"{', '.join(notes[:8])}{', ...' if len(notes) > 8 else ''} ({_HELP})")


def run(args: argparse.Namespace) -> int:
    engine = engine_from_args(args)
    n = engine.num_players
    checks.integer("--seat", args.seat, 0, n - 1, allowed=f"0..{n - 1}", error=UsageError)
    specs = opponent_specs(args.opponents, n, args.seat)
    agents = {s: make_agent(spec) for s, spec in enumerate(specs) if spec is not None}
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(0, 2**31))
    from midnight_env.render.text import use_color

    color = use_color(args.color)
    out = print
    state = engine.new_games([seed])
    rng = agent_streams([seed])
    recorder = Recorder(engine, [seed], [["human" if spec is None else spec for spec in specs]])
    if args.record:  # a file that cannot be written is named now, not after the game (and not created)
        check_record_file(args.record)
    table = ", ".join("you" if spec is None else f"{s}: {spec}" for s, spec in enumerate(specs))
    out(f"{engine.variant}, {n} players, seed {seed}; you are player {args.seat}; seats {table}")
    out(_HELP)
    rounds_seen = 0
    while state.phase[0] != OVER:
        if state.rounds_done[0] > rounds_seen:
            rounds_seen = int(state.rounds_done[0])
            out(f"round {rounds_seen} is over: points {state.spooky[0].tolist()}")
        p = int(state.player[0])
        if state.phase[0] == ROLL:
            before = state.copy()
            faces = engine.apply_roll(state)
            recorder.rolls(np.array([p]), faces)
            recorder.round_ends(state)
            face = int(faces[0])
            who = "you" if p == args.seat else f"player {p}"
            if face_name(face) == "hugo":
                out(f"{who} rolled Hugo: {hugo_words(engine, before, state)}")
            elif state.phase[0] != MOVE or int(state.player[0]) != p:
                out(f"{who} rolled {face}: no legal move")
            continue
        if p == args.seat:
            action = choose(engine, state, color, out)
            if action is None:
                out("game left unfinished: goodbye" + (" (nothing recorded)" if args.record else ""))
                return 0
        else:
            action = int(decide(agents[p], Decisions(engine, state, np.array([0]), rng, np.array([seed])))[0])
            verb = "places on" if state.phase[0] == PLACE else f"rolled {int(state.roll[0])} and moves"
            words = choice_words(engine, state, action)[0]
            out(f"player {p} ({specs[p]}) {verb} {engine.layout.to_notation(action, int(state.roll[0]))}"
                + (f": {words}" if words else ""))
        recorder.decisions(state, np.array([action]))
        engine.apply_action(state, [action])
        recorder.round_ends(state)
    out(_board(engine, state, color))
    winners = engine.winners(state, 0)
    points = state.spooky[0].tolist()
    verdict = "you win" + (" (shared)" if len(winners) > 1 else "") if args.seat in winners else "you lose"
    out(f"game over: points {points}; winners {winners}: {verdict}")
    if args.record:
        line = append_record(args.record, recorder.record(state, 0))
        if line is None:
            out(f"recorded to {args.record}")
        else:
            out(f"recorded as {args.record} line {line}: midnight analyze {args.record} --line {line} judges every "
                "decision")
    return 0


def check_record_file(path: str) -> None:
    """UsageError unless a game can be appended to ``path`` once it is over: a file this user can
    write, or a new one in a folder that exists and can be written. Nothing is created."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"--record {path!r} is a folder: allowed is a file (the game is appended to it)")
    if file.exists():
        if not os.access(file, os.W_OK):
            raise UsageError(f"--record {path!r} is read-only: allowed is a file this user can write")
    elif not file.parent.is_dir():
        raise UsageError(f"--record {path!r} cannot be created: folder {str(file.parent)!r} does not exist")
    elif not os.access(file.parent, os.W_OK | os.X_OK):
        raise UsageError(f"--record {path!r} cannot be created: folder {str(file.parent)!r} is not writable")


def append_record(path: str, rec: dict) -> int | None:
    """Append ``rec`` to the record file ``path`` (a line of its own); returns its line number
    (None for a FIFO or a device: written in place, it has no lines to count)."""
    line = json.dumps(rec, separators=(",", ":"))
    if is_special_file(path):
        write_record_lines(path, [line], append=True)
        return None
    with open(path, "a+b") as f:
        f.seek(0)
        data = f.read()
    if data and not data.endswith(b"\n"):  # a file edited by hand: the record starts a line of its own
        line = "\n" + line
        data += b"\n"
    write_record_lines(path, [line], append=True)
    return data.count(b"\n") + 1
