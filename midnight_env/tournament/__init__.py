"""Tournaments between agents: a balanced schedule, batched play, results in SQLite, a leaderboard.

==============  =======================================================================================
``config``      what a tournament is (game, agents, seed), validated, and its key (a hash of it)
``schedule``    deals of seat-rotated copies with identical dice; every seat and opponent equally often
``store``       the SQLite results: one row per game, a transaction per batch, safe against kill -9
``ratings``     Plackett-Luce ratings, mean spooky points with intervals by deal, win rate, mean rank
``report``      the leaderboard as a text, rich or Markdown table, CSV and PNG
``chunk``       a chunk of games played, and its outcome as the store takes it (either backend)
``run``         the games missing from the database, played batch by batch, then the leaderboard
``ray_backend`` the same batches as Ray tasks, on this machine's cores or a cluster (``backend="ray"``)
==============  =======================================================================================

A tournament is a :class:`TournamentConfig` (:func:`make_tournament_config` validates one) and a
number of games: :func:`run_tournament` plays the ones its database lacks and returns the
standings. Its errors (:class:`TournamentError`) name the library's own parameters
(``games=0``, ``resume=True``); ``midnight tournament`` words them as its flags.
"""

from midnight_env.tournament.config import (
    ALL_AGENTS,
    DEFAULT_PLAYERS,
    DEFAULT_VARIANT,
    FORMAT,
    SLOW_AGENTS,
    TournamentConfig,
    TournamentError,
    default_agents,
    fit_error,
    make_tournament_config,
    playable_agents,
)
from midnight_env.tournament.ratings import (
    RATING_ORDERS,
    Standing,
    leaderboard,
    points_interval,
    points_intervals,
)
from midnight_env.tournament.report import (
    format_table,
    leaderboard_paths,
    markdown_table,
    plot_ratings,
    print_table,
    write_leaderboard,
)
from midnight_env.tournament.run import TournamentRun, run_tournament
from midnight_env.tournament.schedule import DEFAULT_GAMES, MAX_COMBINATIONS, Schedule, default_games
from midnight_env.tournament.store import DEFAULT_DB, Results, ResultStore

# ``ratings`` (the rating function) stays in its module: here the name is the module itself.
__all__ = [
    "ALL_AGENTS", "DEFAULT_DB", "DEFAULT_GAMES", "DEFAULT_PLAYERS", "DEFAULT_VARIANT", "FORMAT", "MAX_COMBINATIONS",
    "RATING_ORDERS", "SLOW_AGENTS", "ResultStore", "Results", "Schedule", "Standing", "TournamentConfig",
    "TournamentError", "TournamentRun", "default_agents", "default_games", "fit_error", "format_table",
    "leaderboard", "leaderboard_paths", "make_tournament_config", "markdown_table", "playable_agents", "plot_ratings",
    "points_interval", "points_intervals", "print_table", "run_tournament", "write_leaderboard",
]
