"""The leaderboard: ratings and statistics of each agent over the stored games.

Plackett-Luce ratings (openskill) on each game's finishing order (ties share a rank), averaged
over shuffled game orders so that no game counts more than another; mean spooky points with
95 % confidence intervals clustered by deal (the copies of a deal are correlated), win rate (a
shared win counts) and mean rank.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from midnight_env.tournament.store import Results


@dataclass
class Standing:
    agent: str
    games: int
    mu: float  # Plackett-Luce rating
    sigma: float
    mean_points: float
    points_ci: float  # half-width of the 95 % interval
    win_rate: float
    mean_rank: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


def _clustered_mean(values: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-width with a cluster-robust standard error (clusters: deals)."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan")
    mean = float(values.mean())
    ids, inv = np.unique(clusters, return_inverse=True)
    if len(ids) < 2:
        return mean, float("nan")
    resid = np.bincount(inv, weights=values - mean)
    se = math.sqrt(len(ids) / (len(ids) - 1) * float((resid ** 2).sum())) / n
    return mean, 1.96 * se


RATING_ORDERS = 8  # shuffled game orders the ratings are averaged over


def ratings(results: Results, orders: int = RATING_ORDERS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Plackett-Luce (openskill) rating mu and sigma per agent, independent of the game order.

    openskill updates one game at a time, so a single pass weighs the early games more than the
    late ones (its sigma shrinks as it goes). The passes here run over ``orders`` shuffled game
    orders, each from the same prior, and are averaged: mu is the mean of the passes, sigma
    combines each pass's sigma with the spread of mu between passes.
    """
    from openskill.models import PlackettLuce

    names = results.config.agents
    model = PlackettLuce(tau=0.0)  # the agents do not change during a tournament
    rng = np.random.default_rng(seed)
    mus = np.zeros((orders, len(names)))
    sigmas = np.zeros((orders, len(names)))
    for o in range(orders):
        current = [model.rating(name=name) for name in names]
        for g in rng.permutation(results.num_games):
            lineup = results.lineups[g]
            new = model.rate([[current[k]] for k in lineup], ranks=[int(r) for r in results.ranks[g]])
            for k, team in zip(lineup, new):
                current[k] = team[0]
        mus[o] = [r.mu for r in current]
        sigmas[o] = [r.sigma for r in current]
    spread = mus.var(axis=0, ddof=1) if orders > 1 else 0.0
    return mus.mean(axis=0), np.sqrt((sigmas ** 2).mean(axis=0) + spread)


def leaderboard(results: Results) -> list[Standing]:
    """Standings, best rating (mu - 3 sigma) first. Solo games (one player against Hugo) have no
    finishing order to rate: their standings have no rating (nan) and go by mean points, fewest first."""
    names = results.config.agents
    solo = results.config.num_players == 1
    if solo:
        mu = sigma = np.full(len(names), np.nan)
    else:
        mu, sigma = ratings(results)
    standings = []
    seats_deal = np.repeat(results.deals, results.config.num_players)
    for k, name in enumerate(names):
        mask = (results.lineups == k).reshape(-1)
        pts = results.points.reshape(-1)[mask].astype(np.float64)
        rks = results.ranks.reshape(-1)[mask]
        mean, half = _clustered_mean(pts, seats_deal[mask])
        standings.append(Standing(agent=name, games=int(mask.sum()), mu=float(mu[k]),
                                  sigma=float(sigma[k]), mean_points=mean, points_ci=half,
                                  win_rate=float((rks == 1).mean()) if len(rks) else float("nan"),
                                  mean_rank=float(rks.mean()) if len(rks) else float("nan")))
    standings.sort(key=(lambda s: s.mean_points) if solo else (lambda s: -s.ordinal))
    return standings

