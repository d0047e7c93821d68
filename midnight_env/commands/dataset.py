"""``midnight dataset``: an open data set of good decisions, as CSV with a data card
(midnight_env.analysis.dataset)."""

from __future__ import annotations

import argparse
import shlex
import sys

from midnight_env.analysis.dataset import export_selfplay, export_solved, solved_set_ups
from midnight_env.core.config import VARIANTS


def add_parser(sub) -> None:
    p = sub.add_parser(
        "dataset", help="export a data set of decisions with every legal action's value (CSV and a data card)",
        description="Write a data set of good decisions to a new folder: decisions.csv (one row per decision: "
                    "seat, phase, roll, value and the observation features), actions.csv (one row per legal "
                    "action: its value in points of margin, loss, optimal or chosen) and DATA_CARD.md (every "
                    "column, the units, how it was made, the known limits). `solved`: every decision of a small "
                    "set-up solved exactly; `selfplay`: the shipped champion's decisions at real size, valued by "
                    "the trusted evaluator (`midnight analyze`'s default). Prints rows, files, bytes and seconds.")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    solved = kinds.add_parser("solved", help="every decision of a solved set-up with every action's exact value",
                              description="Solve a named small set-up exactly and write every decision position "
                                          "with every legal action's exact value and how often optimal play "
                                          "meets the position.")
    solved.add_argument("--set-up", required=True, metavar="NAME",
                        help=f"the set-up: {', '.join(solved_set_ups())}")
    solved.add_argument("--out", required=True, metavar="DIR", help="a new folder to write (refused if it exists)")
    solved.set_defaults(run=run)
    play = kinds.add_parser("selfplay", help="the champion's decisions at real size, every action valued",
                            description="Play the set-up's shipped champion (value-<variant>-<N>p) against "
                                        "itself and write every decision with two or more legal actions, every "
                                        "action valued by the default evaluator of `midnight analyze`.")
    play.add_argument("--variant", default="midnight_party", help=f"{', '.join(VARIANTS)} (default: midnight_party)")
    play.add_argument("--players", type=int, default=2, help="number of players (default: 2)")
    play.add_argument("--games", type=int, default=20, help="games to play (default: 20)")
    play.add_argument("--seed", type=int, default=0, help="first game seed (default: 0)")
    play.add_argument("--out", required=True, metavar="DIR", help="a new folder to write (refused if it exists)")
    play.set_defaults(run=run)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    command = "midnight " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["dataset"] else None

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if args.kind == "solved":
        command = command or f"midnight dataset solved --set-up {args.set_up} --out {shlex.quote(args.out)}"
        export = export_solved(args.set_up, args.out, command, say)
    else:
        command = command or (f"midnight dataset selfplay --variant {args.variant} --players {args.players} "
                              f"--games {args.games} --seed {args.seed} --out {shlex.quote(args.out)}")
        export = export_selfplay(args.variant, args.players, args.games, args.out, args.seed, command, say)
    for name, rows, size in export.files:
        print(f"{export.out / name}: {rows:,} rows, {size:,} bytes" if rows else f"{export.out / name}: {size:,} bytes")
    print(f"dataset: {export.rows:,} rows, {len(export.files)} files, {export.bytes:,} bytes, "
          f"{export.seconds:.1f} s")
    return 0
