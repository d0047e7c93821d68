"""``midnight analyze RECORD``: every decision of a recorded game judged (midnight_env.analysis)."""

from __future__ import annotations

import argparse
import json

from midnight_env.analysis import BLUNDER, CLEAR, INACCURACY, MISTAKE, analyze_file, format_analysis


def add_parser(sub) -> None:
    p = sub.add_parser(
        "analyze", help="judge every decision of a recorded game: each choice's value, the points lost, mistakes",
        description="Replay a game of a record file and value every legal choice of every decision by the "
                    "strongest evaluator available: the exact solution where the set-up is solved (midnight solve "
                    "... --objective points --save), else the set-up's shipped champion inside its search, else "
                    "search. Prints a line per decision (the choice made, the points it loses against the best "
                    "with that loss's error: the evaluator's measured error in that stage of the game, the best "
                    f"choice and its value, a mark: ?! inaccuracy from {INACCURACY:g} points, ? mistake from "
                    f"{MISTAKE:g}, ?? blunder from {BLUNDER:g}, only where the loss exceeds {CLEAR:g} x its error; "
                    "an evaluator not measured on the set-up marks nothing), the placement book's values of the "
                    "first guest where the book covers the set-up, and a line per seat.")
    p.add_argument("record", metavar="RECORD", help="record file (midnight-record/1, one game per line)")
    p.add_argument("--line", type=int, help="line of the game in the file (default: the first record)")
    p.add_argument("--evaluator", metavar="EVALUATOR",
                   help="optimal (the saved solution of the set-up; optimal:path=DIR), search[:budget=N], or a value "
                        "agent such as value-midnight_party-4p:budget=1500 (default: the strongest available)")
    p.add_argument("--marked", action="store_true", help="list only the marked decisions (the seat lines stay)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (every legal choice's value, each loss's error, the evaluator's "
                        "measured accuracy)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    analysis = analyze_file(args.record, args.line, args.evaluator)
    if args.json:
        print(json.dumps(analysis.as_dict()))
    else:
        print(format_analysis(analysis, every=not args.marked))
    return 0
