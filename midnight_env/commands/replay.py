"""``midnight replay FILE``: check a record file against the engine."""

from __future__ import annotations

import argparse
import sys

from midnight_env.records import RecordError, engine_for_record, read_records, replay_record


def add_parser(sub) -> None:
    p = sub.add_parser("replay", help="replay and check a record file (midnight-record/1)",
                       description="Replay every record of a JSON Lines file against the engine. Exits 1 "
                                   "naming the line and event of the first record that does not replay.")
    p.add_argument("file", help="record file (one game per line)")
    p.add_argument("--keep-going", action="store_true", help="check every record, report each bad one")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    good = bad = 0
    engines = {}
    try:
        for number, rec in read_records(args.file):
            try:
                key = repr((rec.get("variant"), rec.get("num_players"), sorted((rec.get("options") or {}).items())))
                if key not in engines:
                    engines[key] = engine_for_record(rec, number)
                replay_record(rec, number, engines[key])
                good += 1
            except (RecordError, AttributeError, TypeError) as err:
                bad += 1
                msg = err if isinstance(err, RecordError) else RecordError(f"malformed record ({err})", number)
                print(f"{args.file}: {msg}", file=sys.stderr)
                if not args.keep_going:
                    break
    except RecordError as err:  # a line that is not JSON
        bad += 1
        print(f"{args.file}: {err}", file=sys.stderr)
    print(f"{args.file}: {good} records replayed" + (f", {bad} bad" if bad else ", all good"))
    return 1 if bad else 0
