"""The leaderboard: ratings and statistics of each agent over the stored games.

Plackett-Luce ratings (openskill) on each game's finishing order (ties share a rank), averaged
over shuffled game orders so that no game counts more than another; mean spooky points with
95 % confidence intervals by deal (the copies of a deal are correlated), stratified by the deal's
agent set where the schedule repeats every set (see :func:`points_interval`), win rate (a shared
win counts) and mean rank.
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


def points_interval(values: np.ndarray, deals: np.ndarray,
                    strata: np.ndarray | None = None) -> tuple[float, float]:
    """Mean of one agent's points and the 95 % half-width of its interval.

    Deals, not games, are the independent units: the copies of a deal share their dice. The
    standard error is cluster-robust by deal, and with ``strata`` (the agent set of each value's
    deal) stratified by set: each deal's total is compared only with the deals of the same set.
    The balanced schedule fixes how often every set is dealt, so the spread *between* sets (with
    `random` in it a castle game ends early, at 46 points, and everyone scores less) is the same in
    every run of the tournament and no part of its uncertainty; counting it, as the unstratified
    error does, made a full field's intervals up to twice as wide (BENCHMARKS.md, "Tournament
    intervals"). A set needs two deals for its spread to be measured: if any of the agent's sets
    has one (under two schedule cycles, or random sets) the unstratified error is used.
    """
    n = len(values)
    if n == 0:
        return float("nan"), float("nan")
    mean = float(values.mean())
    ids, first, inv = np.unique(deals, return_index=True, return_inverse=True)
    if len(ids) < 2:
        return mean, float("nan")
    total = np.bincount(inv, weights=values)  # points per deal
    count = np.bincount(inv).astype(np.float64)  # the agent's games per deal (its seats)
    if strata is not None:
        of_deal = np.unique(strata[first], return_inverse=True)[1]  # each deal's set
        deals_per_set = np.bincount(of_deal)
        if deals_per_set.min() >= 2:
            set_mean = np.bincount(of_deal, weights=total) / np.bincount(of_deal, weights=count)
            resid = total - count * set_mean[of_deal]
            scale = deals_per_set / (deals_per_set - 1)
            var = float((scale * np.bincount(of_deal, weights=resid ** 2)).sum())
            return mean, 1.96 * math.sqrt(var) / n
    resid = total - count * mean
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


def agent_sets(results: Results) -> np.ndarray:
    """Per game, a number naming its set of agents (seats ignored): equal for the copies of a deal."""
    members = np.sort(results.lineups, axis=1)
    return np.unique(members, axis=0, return_inverse=True)[1].reshape(-1)


def points_intervals(results: Results, stratified: bool = True) -> list[tuple[float, float]]:
    """Every agent's mean points and 95 % half-width (:func:`points_interval`), in the order of
    ``results.config.agents``; ``stratified=False`` gives the interval clustered by deal only."""
    n = results.config.num_players
    deals = np.repeat(results.deals, n)
    sets = np.repeat(agent_sets(results), n) if stratified else None
    points = results.points.reshape(-1).astype(np.float64)
    out = []
    for k in range(len(results.config.agents)):
        mask = (results.lineups == k).reshape(-1)
        out.append(points_interval(points[mask], deals[mask], None if sets is None else sets[mask]))
    return out


def leaderboard(results: Results) -> list[Standing]:
    """Standings, best rating first: ranked by the rating the leaderboard shows (mu), ties by mean
    points. (Ranking by mu - 3 sigma, as openskill's ordinal does, ranked agents against the figure
    printed beside them; every agent of a balanced schedule plays as often, so their sigmas are alike.)
    Solo games (one player against Hugo) have no finishing order to rate: their standings have no
    rating (nan) and go by mean points, fewest first."""
    names = results.config.agents
    solo = results.config.num_players == 1
    if solo:
        mu = sigma = np.full(len(names), np.nan)
    else:
        mu, sigma = ratings(results)
    standings = []
    for k, (name, (mean, half)) in enumerate(zip(names, points_intervals(results))):
        mask = (results.lineups == k).reshape(-1)
        rks = results.ranks.reshape(-1)[mask]
        standings.append(Standing(agent=name, games=int(mask.sum()), mu=float(mu[k]),
                                  sigma=float(sigma[k]), mean_points=mean, points_ci=half,
                                  win_rate=float((rks == 1).mean()) if len(rks) else float("nan"),
                                  mean_rank=float(rks.mean()) if len(rks) else float("nan")))
    standings.sort(key=(lambda s: s.mean_points) if solo else (lambda s: (-s.mu, s.mean_points)))
    return standings

