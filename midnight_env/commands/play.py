"""``midnight play``: take a seat against agents in the terminal.

The board is drawn before each of your decisions; you see the roll and the legal choices
numbered, and answer with a number or the choice's notation (``g14>g18``). ``q`` quits, ``b``
redraws the board, ``?`` explains. Bad input is answered with a message and asked again.
``--record FILE`` appends the finished game to FILE as a record (``midnight analyze FILE`` then
judges every decision of it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Decisions, decide
from midnight_env.arena.registry import make_agent, split_specs
from midnight_env.commands.common import UsageError, add_game_arguments, engine_from_args
from midnight_env.core.dice import agent_streams, face_name
from midnight_env.core.engine import Engine
from midnight_env.core.records import Recorder, is_special_file, write_record_lines
from midnight_env.core.state import MOVE, OVER, PLACE, ROLL

_HELP = ("answer with the number of a choice, or its notation (g7 to place, g14>g18 or g3>r1 to move), "
         "b to show the board again, q to quit")


def add_parser(sub) -> None:
    p = sub.add_parser("play", help="play a game in the terminal against agents",
                       description="Take seat K in a game against agents: the board is drawn in the terminal, "
                                   "you see the roll and the numbered legal choices and type yours.")
    add_game_arguments(p)
    p.add_argument("--seat", type=int, default=0, help="your seat 0..N-1 (default 0; seat 0 places and rolls first)")
    p.add_argument("--opponents", default="expert",
                   help="one agent for every other seat, or one per other seat in seat order (default expert)")
    p.add_argument("--seed", type=int, default=None, help="game seed (default: a random one, printed)")
    p.add_argument("--no-color", action="store_true", help="plain text without ANSI colours")
    p.add_argument("--record", metavar="FILE",
                   help="append the finished game to FILE as a record (midnight-record/1), to replay or to judge "
                        "with midnight analyze FILE --line K")
    p.set_defaults(run=run)


def _board(engine: Engine, state, color: bool) -> str:
    try:
        from midnight_env.render import render_ansi
    except ImportError:  # drawing is optional: fall back to the numbers
        return (f"gallery {state.gallery[0].tolist()} rooms {state.room[0].tolist()} "
                f"hugo {engine.hugo_square(state)} points {state.spooky[0].tolist()}")
    return render_ansi(engine, state, 0, color=color)


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
    out(_board(engine, state, color))
    if state.phase[0] == PLACE:
        out(f"you (player {int(state.player[0])}) place a guest: choose a free gallery square")
    else:
        out(f"you (player {int(state.player[0])}) rolled {roll}: choose a move")
    for k, (a, note) in enumerate(zip(legal, notes), 1):
        words = engine.layout.describe(a, roll)
        out(f"  {k:>2}) {note:<10} {words if words != note else ''}".rstrip())
    while True:
        text = _ask(f"your choice [1-{len(legal)}, q to quit]: ", out)
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
            out(_board(engine, state, color))
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
    if not 0 <= args.seat < n:
        raise UsageError(f"--seat {args.seat} is out of range: allowed are 0..{n - 1}")
    specs = opponent_specs(args.opponents, n, args.seat)
    agents = {s: make_agent(spec) for s, spec in enumerate(specs) if spec is not None}
    seed = args.seed if args.seed is not None else int(np.random.default_rng().integers(0, 2**31))
    color = not args.no_color and sys.stdout.isatty()
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
            faces = engine.apply_roll(state)
            recorder.rolls(np.array([p]), faces)
            recorder.round_ends(state)
            face = int(faces[0])
            who = "you" if p == args.seat else f"player {p}"
            if face_name(face) == "hugo":
                square = engine.hugo_square(state)
                out(f"{who} rolled Hugo: he moves to {square if square >= 0 else 'the stairs'}")
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
            out(f"player {p} ({specs[p]}) {verb} {engine.layout.to_notation(action, int(state.roll[0]))}")
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
