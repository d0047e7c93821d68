"""``midnight simulate``: play many games between agents and print a summary per seat."""

from __future__ import annotations

import argparse
import time

import numpy as np
from tqdm import tqdm

from midnight_env.commands.common import add_game_arguments, engine_from_args, seat_lineup
from midnight_env.play import play_batch
from midnight_env.records import write_records


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
    if args.games < 1:
        raise ValueError(f"--games {args.games} is out of range: allowed are 1 or more")
    if args.batch_size < 1:
        raise ValueError(f"--batch-size {args.batch_size} is out of range: allowed are 1 or more")
    agents, lineup, unique = seat_lineup(args.agents, engine.num_players)
    names = [unique[k] for k in lineup]
    if args.render:
        from midnight_env.commands.render import show_game

        show_game(engine, agents, lineup, args.seed, delay=0.0, color=True)
    n_players = engine.num_players
    points = np.zeros((args.games, n_players))
    wins = np.zeros((args.games, n_players))
    rolls = np.zeros(args.games)
    decisions = np.zeros(args.games)
    truncated = 0
    out = open(args.record, "w", encoding="utf-8") if args.record else None
    start = time.perf_counter()
    try:
        with tqdm(total=args.games, unit="game", disable=args.no_progress, desc="simulate") as bar:
            for first in range(0, args.games, args.batch_size):
                count = min(args.batch_size, args.games - first)
                seeds = args.seed + first + np.arange(count)
                res = play_batch(engine, agents, np.tile(lineup, (count, 1)), seeds,
                                 record=out is not None, agent_names=unique)
                sl = slice(first, first + count)
                points[sl] = res.points
                wins[sl] = res.ranks == 1
                rolls[sl] = res.rolls
                decisions[sl] = res.decisions
                truncated += int(res.truncated.sum())
                if out is not None:
                    write_records(res.records, out)
                bar.update(count)
    finally:
        if out is not None:
            out.close()
    elapsed = time.perf_counter() - start
    print(f"{engine.variant}, {n_players} players, {args.games} games, "
          f"seeds {args.seed}..{args.seed + args.games - 1}, "
          f"options {engine.config.options}")
    print(f"{'seat':>4}  {'agent':<20}{'mean points':>12}{'± 95%':>8}{'win rate':>10}")
    for seat in range(n_players):
        half = 1.96 * points[:, seat].std(ddof=1) / np.sqrt(args.games) if args.games > 1 else float("nan")
        print(f"{seat:>4}  {names[seat]:<20}{points[:, seat].mean():>12.2f}{half:>8.2f}{wins[:, seat].mean():>10.3f}")
    print(f"mean game length: {rolls.mean():.1f} rolls, {decisions.mean():.1f} decisions; "
          f"truncated games: {truncated}")
    print(f"{args.games / elapsed:,.0f} games/s ({decisions.sum() / elapsed:,.0f} decisions/s) in {elapsed:.1f} s")
    if args.record:
        print(f"records written to {args.record}")
    return 0
