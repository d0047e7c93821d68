"""``midnight bench``: engine decisions per second with random legal play."""

from __future__ import annotations

import argparse

from midnight_env.commands.common import UsageError, check_batch_size, check_count
from midnight_env.core.bench import run_engine_bench
from midnight_env.core.config import VARIANTS
from midnight_env.core.engine import Engine


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure engine decisions per second",
                       description="Random legal play, legal masks included, at several batch sizes; "
                                   "median of several runs, compilation excluded.")
    p.add_argument("--batches", default="1,256,4096", help="batch sizes, comma-separated (default 1,256,4096)")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--decisions", type=int, default=1_000_000, help="decisions per timed run")
    p.add_argument("--repeats", type=int, default=5, help="timed runs per figure (median reported)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        batches = tuple(int(b) for b in args.batches.split(","))
    except ValueError:
        raise UsageError(f"--batches {args.batches!r} is not allowed: allowed are batch sizes, comma-separated "
                         "(e.g. 1,256,4096)") from None
    check_count("--players", args.players)
    engines = [Engine(variant, args.players) for variant in VARIANTS]  # the set-ups the bench plays
    for batch in batches:
        for engine in engines:
            check_batch_size("--batches", batch, engine)
    check_count("--decisions", args.decisions)
    check_count("--repeats", args.repeats)
    run_engine_bench(batches=batches, num_players=args.players, decisions=args.decisions, repeats=args.repeats)
    return 0
