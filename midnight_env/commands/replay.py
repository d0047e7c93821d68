"""``midnight replay FILE``: check a record file against the engine."""

from __future__ import annotations

import argparse
import sys

from midnight_env.core.records import RecordError, replay_lines


def add_parser(sub) -> None:
    p = sub.add_parser("replay", help="replay and check a record file (midnight-record/1)",
                       description="Replay every record of a JSON Lines file against the engine. Exits 2 "
                                   "naming the line and event of the first record that does not replay "
                                   "(with --keep-going: of every one).")
    p.add_argument("file", help="record file (one game per line)")
    p.add_argument("--keep-going", action="store_true", help="check every record, report each bad one")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    good = bad = 0
    for _, result in replay_lines(args.file):
        if isinstance(result, RecordError):
            bad += 1
            print(f"{args.file}: {result}", file=sys.stderr)
            if not args.keep_going:
                break
        else:
            good += 1
    print(f"{args.file}: {good} records replayed" + (f", {bad} bad" if bad else ", all good"))
    return 2 if bad else 0
