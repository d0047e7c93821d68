"""``midnight render``: show a game move by move as a terminal board (played now, or from a record),
or write it as one self-contained HTML page (``--html``).

On a terminal the frames are shown one at a time, each one screen of at most 80 x 24 (the board
of :func:`~midnight_env.render.text.render_frame` under its caption): Enter, space, n or the
right arrow shows the next, b, p or the left arrow the one before, a number and Enter jumps to
that frame, q quits; ``--delay SECONDS`` replays them by itself instead. To a file or a pipe
every frame is printed, one after another, without colours.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Decisions, decide
from midnight_env.arena.play import play_batch
from midnight_env.commands.common import UsageError, add_game_arguments, check_count, engine_from_args, seat_lineup
from midnight_env.core.dice import FACES_BY_NAME, agent_streams, face_name
from midnight_env.core.engine import Engine
from midnight_env.core.records import RecordError, engine_for_record, read_lines, replay_record
from midnight_env.core.state import MOVE, PLACE, ROLL
from midnight_env.infra import checks
from midnight_env.infra.seeds import check_seed

MAX_DELAY = 60.0  # seconds between frames
NEXT, BACK, QUIT = "next", "back", "quit"  # what a key asks of the stepper (or a frame number)
CLEAR_SCREEN = "\x1b[H\x1b[2J"
STEP_KEYS = "Enter: next  b: back  number+Enter: jump  q: quit"

Frames = Iterable[tuple[str, object]]  # (caption, the position after it), or (a line of text, None)


def add_parser(sub) -> None:
    p = sub.add_parser("render", help="show a game move by move as a terminal board",
                       description="Play one game between agents (or replay one record) and show the board after "
                                   "every roll and decision. On a terminal one frame at a time (80x24): Enter, space "
                                   "or n for the next, b or p for the one before, a number and Enter to jump to that "
                                   "frame, q to quit. To a file or a pipe: every frame, one after another, plain.")
    add_game_arguments(p)
    p.add_argument("--seed", type=int, default=0, help="game seed (default 0)")
    p.add_argument("--agents", default="random", help="one agent for all seats, or one per seat")
    p.add_argument("--record", metavar="FILE", help="render a game from this record file instead")
    p.add_argument("--line", type=int, default=1, help="line of the record file to render (default 1)")
    p.add_argument("--delay", type=float, default=0.0, metavar="SECONDS",
                   help="replay by itself, SECONDS between frames, instead of stepping with keys (default 0: keys)")
    p.add_argument("--color", action=argparse.BooleanOptionalAction, default=None,
                   help="ANSI colours on or off (default: on a terminal only, off when NO_COLOR is set)")
    p.add_argument("--html", metavar="FILE",
                   help="write the game to FILE as one self-contained HTML page (the board move by move, no server, "
                        "no network) instead of printing it")
    p.set_defaults(run=run)


def game_frames(engine: Engine, agents, lineup, seed: int) -> Iterator[tuple[str, object]]:
    """Game ``seed`` with one agent per seat (``agents[lineup[seat]]``), a frame per roll and
    decision, and the result as a line of text."""
    state = engine.new_games([seed])
    rng = agent_streams([seed])
    yield "set-up", state.copy()
    while True:
        if state.phase[0] == ROLL:
            p = int(state.player[0])
            face = int(engine.apply_roll(state)[0])
            yield f"player {p} rolled {face_name(face)}", state.copy()
            continue
        if state.phase[0] not in (PLACE, MOVE):
            break
        p = int(state.player[0])
        action = int(decide(agents[lineup[p]], Decisions(engine, state, np.array([0]), rng, np.array([seed])))[0])
        text = engine.layout.to_notation(action, int(state.roll[0]))
        engine.apply_action(state, [action])
        yield f"player {p} ({agents[lineup[p]].name}): {text}", state.copy()
    yield (f"game over: points {state.spooky[0].tolist()}, winners {engine.winners(state, 0)}"
           + (" (truncated)" if state.truncated[0] else "")), None


def record_frames(path: str, line: int) -> tuple[Engine, Iterator[tuple[str, object]]]:
    """The engine of the record on line ``line`` of ``path`` and its frames, after replaying it
    (a bad record is refused, naming its line and event, before anything is drawn)."""
    for number, rec in read_lines(path):
        if number != line:
            continue
        if isinstance(rec, RecordError):
            raise rec
        engine = engine_for_record(rec, number)
        replay_record(rec, number, engine)  # refuse a bad record before drawing anything
        return engine, _record_events(engine, rec)
    raise RecordError(f"{path} has no record on line {line}")


def _record_events(engine: Engine, rec: dict) -> Iterator[tuple[str, object]]:
    state = engine.new_games([0])
    yield "set-up", state.copy()
    for ev in rec["events"]:
        if ev["e"] == "roll":
            engine.apply_roll(state, [FACES_BY_NAME[ev["face"]]])
            yield f"player {ev['p']} rolled {ev['face']}", state.copy()
        elif ev["e"] in ("place", "move"):
            engine.apply_action(state, [engine.layout.from_notation(ev["a"], int(state.roll[0]))])
            yield f"player {ev['p']}: {ev['a']}", state.copy()
        else:
            yield f"--- round {ev['round']} ends: points {ev['points']}", None
    yield f"game over: points {rec['final_points']}, winners {rec['winners']}", None


def print_frames(engine: Engine, frames: Frames, color: bool, delay: float = 0.0, out=print,
                 clear: bool = False) -> None:
    """Every frame, one after another (``clear``: each on a cleared screen), ``delay`` seconds apart."""
    from midnight_env.render.text import render_frame

    for caption, state in frames:
        if state is None:
            out(caption)
            continue
        if clear:
            out(CLEAR_SCREEN, end="")
        out(f"--- {caption}")
        out(render_frame(engine, state, 0, color=color))
        if delay > 0:
            time.sleep(delay)


def step_frames(engine: Engine, frames: Frames, color: bool, read: Callable[[str], str | int], out=print,
                clear: bool = True) -> int:
    """Show the frames one at a time, each on one screen, moving as ``read(prompt)`` says (NEXT,
    BACK, QUIT or a frame number from 1); the next after the last frame ends. Returns the number
    of the frame shown last."""
    from midnight_env.render.text import render_frame

    shots: list[tuple[str, object, list[str]]] = []
    for caption, state in frames:
        if state is not None:
            shots.append((caption, state, []))
        elif shots:  # a round's end, the result: under the frame it follows
            shots[-1][2].append(caption)
    k, note = 0, ""
    while True:
        caption, state, lines = shots[k]
        if clear:
            out(CLEAR_SCREEN, end="")
        out(f"--- {k + 1}/{len(shots)}: {caption}")
        for line in lines:
            out(line)
        out(render_frame(engine, state, 0, color=color))
        where = "last frame: Enter or q quits" if k == len(shots) - 1 else STEP_KEYS
        command = read(f"{note}{where} > ")
        note = ""
        if command == QUIT or (command == NEXT and k == len(shots) - 1):
            out("")
            return k + 1
        if command == NEXT:
            k += 1
        elif command == BACK:
            if k == 0:
                note = "(first frame) "
            k = max(0, k - 1)
        elif isinstance(command, int) and 1 <= command <= len(shots):
            k = command - 1
        else:
            note = f"(no frame {command}: 1..{len(shots)}) "


def parse_step(text: str) -> str | int | None:
    """A typed line as a step: NEXT, BACK, QUIT, a frame number, or None (not understood)."""
    word = text.strip().lower()
    if word in ("", "n", "next", "f"):
        return NEXT
    if word in ("b", "p", "back", "prev", "previous"):
        return BACK
    if word in ("q", "quit", "exit"):
        return QUIT
    if word.isascii() and word.isdigit():
        return int(word)
    return None


_KEYS = {"\r": NEXT, "\n": NEXT, " ": NEXT, "n": NEXT, "f": NEXT, "b": BACK, "p": BACK, "q": QUIT, "\x04": QUIT}
_ARROWS = {"[C": NEXT, "OC": NEXT, "[B": NEXT, "OB": NEXT, "[6~": NEXT,
           "[D": BACK, "OD": BACK, "[A": BACK, "OA": BACK, "[5~": BACK}


class KeyReader:
    """The steps typed at a terminal: a key at a time where stdin is a terminal (termios cbreak:
    no Enter needed, no echo but of a frame number being typed), else a line at a time."""

    def __init__(self, stdin=None, write: Callable[[str], object] | None = None):
        self.stdin = sys.stdin if stdin is None else stdin
        self.write = write or (lambda text: (sys.stdout.write(text), sys.stdout.flush()))
        self.pending = ""

    def _fd(self) -> int | None:
        try:
            import termios

            fd = self.stdin.fileno()
            termios.tcgetattr(fd)
            return fd
        except (ImportError, AttributeError, ValueError, OSError):  # no termios, no terminal: lines
            return None

    def __call__(self, prompt: str) -> str | int:
        fd = self._fd()
        if fd is None:
            return self._line(prompt)
        import termios
        import tty

        old = termios.tcgetattr(fd)
        try:
            tty.setcbreak(fd, termios.TCSANOW)  # keys one at a time, not echoed, none typed ahead lost
            self.write(prompt)  # (after: a key typed on seeing it is read as a key)
            return self._keys(fd)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, old)

    def _key(self, fd: int) -> str:
        if not self.pending:
            chunk = os.read(fd, 64)
            if not chunk:
                return "\x04"  # end of input
            self.pending = chunk.decode("utf-8", "replace")
        ch, self.pending = self.pending[0], self.pending[1:]
        if ch == "\x1b":
            for seq in _ARROWS:
                if self.pending.startswith(seq):
                    self.pending = self.pending[len(seq):]
                    return seq
            return ""  # a lone Escape or another key's sequence: nothing
        return ch

    def _keys(self, fd: int) -> str | int:
        digits = ""
        while True:
            key = self._key(fd)
            if key.isascii() and key.isdigit():
                digits += key
                self.write(key)
            elif key in ("\x7f", "\b"):
                if digits:
                    digits = digits[:-1]
                    self.write("\b \b")
            elif digits and key in ("\r", "\n"):
                return int(digits)
            elif key in _ARROWS:
                return _ARROWS[key]
            elif key.lower() in _KEYS:
                return _KEYS[key.lower()]

    def _line(self, prompt: str) -> str | int:
        while True:
            self.write(prompt)
            try:
                line = self.stdin.readline()
            except (OSError, ValueError):  # stdin closed under us
                line = ""
            if not line:
                return QUIT
            step = parse_step(line if isinstance(line, str) else line.decode("utf-8", "replace"))
            if step is not None:
                return step
            self.write(f"{line.strip()!r}: allowed are Enter (next), b (back), a frame number, q (quit)\n")


def _is_terminal(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _clears() -> bool:
    return os.environ.get("TERM") != "dumb"


def show_frames(engine: Engine, frames: Frames, delay: float = 0.0, color: bool | None = None, out=print,
                step: bool | None = None, read: Callable[[str], str | int] | None = None) -> None:
    """The frames as a terminal user meets them: stepped with keys (``step``; default: stdin
    and stdout are terminals and no ``delay``), replayed on a cleared screen (a terminal and a
    ``delay``), or printed one after another (a file or a pipe). ``color`` None: as
    :func:`~midnight_env.render.text.use_color` says."""
    from midnight_env.render.text import use_color

    color = use_color(color)
    terminal = _is_terminal(sys.stdout)
    if step is None:
        step = delay <= 0 and terminal and _is_terminal(sys.stdin)
    if step:
        step_frames(engine, frames, color, read or KeyReader(), out, clear=terminal and _clears())
    else:
        print_frames(engine, frames, color, delay, out, clear=terminal and delay > 0 and _clears())


def show_game(engine: Engine, agents, lineup, seed: int, delay: float = 0.0, color: bool | None = True, out=print,
              step: bool | None = False) -> None:
    """Play game ``seed`` with one agent per seat (``agents[lineup[seat]]``), showing every step
    (``step`` None: stepped with keys on a terminal, see :func:`show_frames`)."""
    show_frames(engine, game_frames(engine, agents, lineup, seed), delay, color, out, step)


def show_record(path: str, line: int, delay: float = 0.0, color: bool | None = True, out=print,
                step: bool | None = False) -> None:
    """Draw the record on line ``line`` of ``path`` move by move, after replaying it (a bad record
    is refused, naming its line and event, before anything is drawn)."""
    engine, frames = record_frames(path, line)
    show_frames(engine, frames, delay, color, out, step)


def record_of(args: argparse.Namespace) -> tuple[dict, int | None]:
    """The game ``--record`` and ``--line`` name (with its line), or a new one of ``--agents``."""
    if args.record:
        for number, rec in read_lines(args.record):
            if number == args.line:
                if isinstance(rec, RecordError):
                    raise rec
                return rec, number
        raise RecordError(f"{args.record} has no record on line {args.line}")
    engine = engine_from_args(args)
    agents, lineup, names = seat_lineup(args.agents, engine.num_players)
    return play_batch(engine, agents, lineup[None, :], [args.seed], record=True, agent_names=names).records[0], None


def write_html(args: argparse.Namespace) -> None:
    from midnight_env.web.errors import WebError
    from midnight_env.web.export import write_html as write
    from midnight_env.web.views import record_view

    html = Path(args.html)
    if html.is_dir():
        raise UsageError(f"--html {args.html!r} is a folder: allowed is a file name (the page is written there)")
    if not html.parent.is_dir():
        raise UsageError(f"--html {args.html!r}: folder {str(html.parent)!r} does not exist")
    rec, line = record_of(args)
    try:
        view = record_view(rec, line)
    except WebError as err:  # a record that does not replay: named like midnight replay names it
        raise RecordError(f"{args.record}: {err}" if args.record else str(err)) from None
    game = view["game"]
    where = f"{Path(args.record).name} line {line}" if args.record else f"seed {args.seed}"
    write(view, html, f"{game['variant']}, {game['num_players']} players, {where}")
    print(f"written: {html} ({len(view['events'])} events; open it in a browser)")


def run(args: argparse.Namespace) -> int:
    checks.number("--delay", args.delay, 0, MAX_DELAY, allowed=f"0..{MAX_DELAY} seconds", error=UsageError)
    check_count("--line", args.line)
    check_seed(args.seed, "--seed")
    if args.html:
        write_html(args)
        return 0
    if args.record:
        show_record(args.record, args.line, args.delay, args.color, step=None)
        return 0
    engine = engine_from_args(args)
    agents, lineup, _ = seat_lineup(args.agents, engine.num_players)
    show_game(engine, agents, lineup, args.seed, args.delay, args.color, step=None)
    return 0
