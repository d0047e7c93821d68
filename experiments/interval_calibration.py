"""BENCHMARKS.md, "Tournament intervals": observed over predicted variance of the agents' means.

Do a tournament's points intervals say how far its means move from one run to the next?

Splits one long tournament of a database into ``--replicates`` consecutive tournaments of whole
schedule cycles (each agent set dealt equally often in each, as in a tournament of that size), and
compares, per agent, the variance of its mean points across the replicates with the variance its
interval predicts (the half-width over 1.96, squared, averaged over the replicates): the interval
stratified by agent set (what the leaderboard reports) and the unstratified one, clustered by deal
only. A ratio near 1 is a calibrated interval; each agent's ratio has only ``replicates - 1``
degrees of freedom, so the pooled ratio (summed over the agents) is the one to read.

    python experiments/interval_calibration.py runs/hc3.sqlite --replicates 12
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from midnight_env.tournament import TournamentError, points_intervals
from midnight_env.tournament.store import Results, read_results, read_tournaments


def replicates(results: Results, count: int) -> list[Results]:
    """``count`` consecutive tournaments of whole schedule cycles (ValueError if it cannot be done)."""
    cfg = results.config
    cycle = math.comb(len(cfg.agents), cfg.num_players) * cfg.num_players
    size = results.num_games // count
    if count < 2 or size < 2 * cycle or size % cycle:
        raise ValueError(f"--replicates {count}: each replicate must hold two or more whole schedule cycles of "
                         f"{cycle} games, and {results.num_games} games // {count} = {size} does not")
    return [Results(cfg, results.index[s], results.deals[s], results.lineups[s], results.points[s], results.ranks[s])
            for s in (slice(i * size, (i + 1) * size) for i in range(count))]


def variances(parts: list[Results]) -> list[tuple[float, float, float, float]]:
    """Per agent: (mean, variance of the replicates' means, predicted variance stratified, unstratified)."""
    strat = np.array([points_intervals(part) for part in parts])  # (replicate, agent, mean / half-width)
    plain = np.array([points_intervals(part, stratified=False) for part in parts])
    means = strat[:, :, 0]
    return list(zip(means.mean(axis=0), means.var(axis=0, ddof=1),
                    ((strat[:, :, 1] / 1.96) ** 2).mean(axis=0), ((plain[:, :, 1] / 1.96) ** 2).mean(axis=0)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", help="a tournament database (its first tournament is read)")
    ap.add_argument("--replicates", type=int, default=4)
    args = ap.parse_args(argv)
    try:
        stored = read_tournaments(args.db)
        if not stored:
            raise TournamentError(f"{args.db!r} holds no tournament")
        results = read_results(args.db, stored[0].config.key)
        parts = replicates(results, args.replicates)
    except (TournamentError, ValueError) as err:
        print(f"interval_calibration: {err}", file=sys.stderr)
        return 2
    cfg = results.config
    print(f"{cfg.variant}, {cfg.num_players} players, {results.num_games} games in {args.replicates} replicates of "
          f"{parts[0].num_games}")
    print(f"{'agent':40s} {'mean':>7s} {'observed':>9s} {'stratified':>11s} {'ratio':>6s} {'unstratified':>13s} "
          f"{'ratio':>6s}")
    rows = variances(parts)
    for name, (mean, observed, strat, plain) in sorted(zip(cfg.agents, rows), key=lambda r: r[1][0]):
        print(f"{name:40s} {mean:7.2f} {observed:9.3f} {strat:11.3f} {observed / strat:6.2f} {plain:13.3f} "
              f"{observed / plain:6.2f}")
    observed, strat, plain = (sum(r[i] for r in rows) for i in (1, 2, 3))
    print(f"pooled over the agents: observed / stratified {observed / strat:.2f}, observed / unstratified "
          f"{observed / plain:.2f} ({len(rows) * (args.replicates - 1)} degrees of freedom, the agents' means "
          "being correlated: fewer in effect)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
