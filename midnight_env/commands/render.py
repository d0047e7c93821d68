"""``midnight render``: show a game move by move as an ANSI board (played now, or from a record),
or write it as one self-contained HTML page (``--html``)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from midnight_env.arena.agent import Decisions, decide
from midnight_env.arena.play import play_batch
from midnight_env.commands.common import UsageError, add_game_arguments, check_count, engine_from_args, seat_lineup
from midnight_env.core.dice import FACES_BY_NAME, agent_streams, face_name
from midnight_env.core.engine import Engine
from midnight_env.core.records import RecordError, engine_for_record, read_lines, replay_record
from midnight_env.core.state import MOVE, PLACE, ROLL
from midnight_env.infra.seeds import check_seed

MAX_DELAY = 60.0  # seconds between frames


def add_parser(sub) -> None:
    p = sub.add_parser("render", help="show a game move by move as a terminal board",
                       description="Play one game between agents (or replay one record) and print the board "
                                   "after every roll and decision.")
    add_game_arguments(p)
    p.add_argument("--seed", type=int, default=0, help="game seed (default 0)")
    p.add_argument("--agents", default="random", help="one agent for all seats, or one per seat")
    p.add_argument("--record", metavar="FILE", help="render a game from this record file instead")
    p.add_argument("--line", type=int, default=1, help="line of the record file to render (default 1)")
    p.add_argument("--delay", type=float, default=0.0, help="seconds to wait between frames")
    p.add_argument("--no-color", action="store_true", help="plain text without ANSI colours")
    p.add_argument("--html", metavar="FILE",
                   help="write the game to FILE as one self-contained HTML page (the board move by move, no server, "
                        "no network) instead of printing it")
    p.set_defaults(run=run)


def _frame(engine: Engine, state, caption: str, color: bool, delay: float, out) -> None:
    from midnight_env.render import render_ansi

    out(f"--- {caption}")
    out(render_ansi(engine, state, 0, color=color))
    if delay > 0:
        time.sleep(delay)


def show_game(engine: Engine, agents, lineup, seed: int, delay: float = 0.0, color: bool = True, out=print) -> None:
    """Play game ``seed`` with one agent per seat (``agents[lineup[seat]]``), printing every step."""
    state = engine.new_games([seed])
    rng = agent_streams([seed])
    _frame(engine, state, "set-up", color, delay, out)
    while True:
        if state.phase[0] == ROLL:
            p = int(state.player[0])
            face = int(engine.apply_roll(state)[0])
            _frame(engine, state, f"player {p} rolled {face_name(face)}", color, delay, out)
            continue
        if state.phase[0] not in (PLACE, MOVE):
            break
        p = int(state.player[0])
        action = int(decide(agents[lineup[p]], Decisions(engine, state, np.array([0]), rng, np.array([seed])))[0])
        text = engine.layout.to_notation(action, int(state.roll[0]))
        engine.apply_action(state, [action])
        _frame(engine, state, f"player {p} ({agents[lineup[p]].name}): {text}", color, delay, out)
    out(f"game over: points {state.spooky[0].tolist()}, winners {engine.winners(state, 0)}"
        + (" (truncated)" if state.truncated[0] else ""))


def show_record(path: str, line: int, delay: float = 0.0, color: bool = True, out=print) -> None:
    """Draw the record on line ``line`` of ``path`` move by move, after replaying it (a bad record
    is refused, naming its line and event, before anything is drawn)."""
    for number, rec in read_lines(path):
        if number != line:
            continue
        if isinstance(rec, RecordError):
            raise rec
        engine = engine_for_record(rec, number)
        replay_record(rec, number, engine)  # refuse a bad record before drawing anything
        state = engine.new_games([0])
        _frame(engine, state, "set-up", color, delay, out)
        for ev in rec["events"]:
            if ev["e"] == "roll":
                engine.apply_roll(state, [FACES_BY_NAME[ev["face"]]])
                _frame(engine, state, f"player {ev['p']} rolled {ev['face']}", color, delay, out)
            elif ev["e"] in ("place", "move"):
                engine.apply_action(state, [engine.layout.from_notation(ev["a"], int(state.roll[0]))])
                _frame(engine, state, f"player {ev['p']}: {ev['a']}", color, delay, out)
            else:
                out(f"--- round {ev['round']} ends: points {ev['points']}")
        out(f"game over: points {rec['final_points']}, winners {rec['winners']}")
        return
    raise RecordError(f"{path} has no record on line {line}")


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
    if not 0 <= args.delay <= MAX_DELAY:  # (also refuses nan and inf)
        raise UsageError(f"--delay {args.delay} is out of range: allowed are 0..{MAX_DELAY} seconds")
    check_count("--line", args.line)
    check_seed(args.seed, "--seed")
    if args.html:
        write_html(args)
        return 0
    if args.record:
        show_record(args.record, args.line, args.delay, not args.no_color)
        return 0
    engine = engine_from_args(args)
    agents, lineup, _ = seat_lineup(args.agents, engine.num_players)
    show_game(engine, agents, lineup, args.seed, args.delay, not args.no_color)
    return 0
