"""``midnight simulate``: play many games between agents and print a summary per seat."""

from __future__ import annotations

import argparse
import time

import numpy as np
from tqdm import tqdm

from midnight_env.arena.play import play_batch
from midnight_env.commands.common import (
    UsageError,
    add_game_arguments,
    check_batch_size,
    check_count,
    engine_from_args,
    seat_lineup,
)
from midnight_env.core.records import write_records
from midnight_env.infra.seeds import SEED_LIMIT, SEED_RANGE, check_seed


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="play games between agents and print a summary",
                       description="Play G games (batched) between agents, print mean spooky points and win "
                                   "rate per seat, mean game length and games per second.")
    add_game_arguments(p)
    p.add_argument("--games", type=int, default=1000, help="number of games (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="game j is seeded SEED+j (default 0)")
    p.add_argument("--agents", default="random", help="one agent for all seats, or one per seat, comma-separated")
    p.add_argument("--batch-size", type=int, default=1024, help="games played at once (default 1024)")
    p.add_argument("--record", metavar="FILE", help="write every game as a midnight-record/1 line to FILE")
    p.add_argument("--render", action="store_true", help="show the first game move by move (see `midnight render`)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    engine = engine_from_args(args)
    check_count("--games", args.games)
    check_batch_size("--batch-size", args.batch_size, engine)
    check_seed(args.seed, "--seed")
    if args.seed + args.games > SEED_LIMIT:
        raise UsageError(f"--seed {args.seed} with --games {args.games} seeds games up to "
                         f"{args.seed + args.games - 1}: allowed are game seeds {SEED_RANGE}")
    agents, lineup, unique = seat_lineup(args.agents, engine.num_players)
    names = [unique[k] for k in lineup]
    out = open(args.record, "w", encoding="utf-8") if args.record else None  # a bad path fails before any game
    if args.render:
        from midnight_env.commands.render import show_game

        show_game(engine, agents, lineup, args.seed, delay=0.0, color=True)
    n_players = engine.num_players
    # running sums, not per-game arrays: any number of games fits in memory
    points = np.zeros(n_players)
    squares = np.zeros(n_players)
    wins = np.zeros(n_players)
    rolls = decisions = truncated = 0
    start = time.perf_counter()
    try:
        with tqdm(total=args.games, unit="game", disable=args.no_progress, desc="simulate") as bar:
            for first in range(0, args.games, args.batch_size):
                count = min(args.batch_size, args.games - first)
                seeds = args.seed + first + np.arange(count)
                res = play_batch(engine, agents, np.tile(lineup, (count, 1)), seeds,
                                 record=out is not None, agent_names=unique)
                points += res.points.sum(axis=0)
                squares += (res.points.astype(np.float64) ** 2).sum(axis=0)
                wins += (res.ranks == 1).sum(axis=0)
                rolls += int(res.rolls.sum())
                decisions += int(res.decisions.sum())
                truncated += int(res.truncated.sum())
                if out is not None:
                    write_records(res.records, out, args.record)
                bar.update(count)
    finally:
        if out is not None:
            out.close()
    elapsed = time.perf_counter() - start
    g = args.games
    print(f"{engine.variant}, {n_players} players, {g} games, "
          f"seeds {args.seed}..{args.seed + g - 1}, "
          f"options {engine.config.options}")
    width = max(20, *(len(name) + 2 for name in names))  # a long agent spec widens its column
    print(f"{'seat':>4}  {'agent':<{width}}{'mean points':>12}{'± 95%':>8}{'win rate':>10}")
    for seat in range(n_players):
        mean = points[seat] / g
        half = 1.96 * np.sqrt(max(squares[seat] - g * mean**2, 0.0) / (g - 1) / g) if g > 1 else float("nan")
        print(f"{seat:>4}  {names[seat]:<{width}}{mean:>12.2f}{half:>8.2f}{wins[seat] / g:>10.3f}")
    print(f"mean game length: {rolls / g:.1f} rolls, {decisions / g:.1f} decisions; "
          f"truncated games: {truncated}")
    print(f"{g / elapsed:,.0f} games/s ({decisions / elapsed:,.0f} decisions/s) in {elapsed:.1f} s")
    if args.record:
        print(f"records written to {args.record}")
    return 0
