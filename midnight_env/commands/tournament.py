"""``midnight tournament``: a balanced tournament between agents, results in SQLite, a leaderboard.

With no arguments it runs the default: every registered agent that can play the game (all but
slow ones) on midnight_party with 4 players, about 1,000 games (complete schedule cycles), into
``midnight_tournament.sqlite`` in the working directory, and prints the leaderboard. ``--agents all``
takes every agent that can play the game asked for, slow ones included, and says on stderr which
ones it left out and why.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from midnight_env.commands.common import UsageError, check_batch_size, parse_set_options
from midnight_env.core.config import VARIANTS
from midnight_env.tournament import (
    DEFAULT_DB,
    DEFAULT_GAMES,
    DEFAULT_PLAYERS,
    DEFAULT_VARIANT,
    TournamentError,
    default_games,
    leaderboard_paths,
    make_tournament_config,
    print_table,
    run_tournament,
    write_leaderboard,
)
from midnight_env.tournament.run import BACKENDS
from midnight_env.tournament.store import check_database_path, database_files, same_file, tournament_keys


def add_parser(sub) -> None:
    p = sub.add_parser(
        "tournament", help="play a balanced tournament between agents and print the leaderboard",
        description="Play a tournament: deals of seat-rotated copies with identical dice, every agent on every "
                    "seat equally often; results go to SQLite (resumable after a kill); the leaderboard "
                    "(Plackett-Luce ratings, mean spooky points with 95% intervals, win rate, mean rank) is "
                    "printed and written as Markdown, CSV and PNG. With no arguments: every registered agent "
                    f"that can play the game on {DEFAULT_VARIANT}, {DEFAULT_PLAYERS} players, about "
                    f"{DEFAULT_GAMES} games.")
    p.add_argument("--variant", default=DEFAULT_VARIANT,
                   help=f"rule set: {', '.join(VARIANTS)} (default: {DEFAULT_VARIANT})")
    p.add_argument("--players", type=int, default=DEFAULT_PLAYERS,
                   help=f"players per game 1..8 (default {DEFAULT_PLAYERS})")
    p.add_argument("--agents", help="comma-separated agent specs, at least as many as players; 'all': every "
                                    "registered agent that can play the game, slow ones included (the ones "
                                    "left out are named on stderr), e.g. all,search:budget=6000 "
                                    "(default: every registered agent that can play the game, except slow ones)")
    p.add_argument("--games", type=int, help=f"games to play (default: {DEFAULT_GAMES} rounded up to complete "
                                             "cycles of the schedule, every agent set once)")
    p.add_argument("--seed", type=int, default=0,
                   help="tournament seed: the schedule and every game's dice (default 0)")
    p.add_argument("--db", default=DEFAULT_DB, help=f"SQLite results file (default ./{DEFAULT_DB})")
    p.add_argument("--resume", action="store_true",
                   help="continue an unfinished run in --db, or add this tournament to a database holding others")
    p.add_argument("--records", metavar="FILE", help="also write every game as a midnight-record/1 line to FILE")
    p.add_argument("--batch-size", type=int, default=256,
                   help="games played at once (default 256); with --backend ray, the games of one Ray task")
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local: play here, one batch after the other (default); ray: play the batches as Ray tasks, "
                        "on this machine's cores or a cluster's (pip install 'midnight-env[ray]')")
    p.add_argument("--address", help="with --backend ray: the Ray cluster to use, as `ray start --head` printed it "
                                     "(default: a Ray instance of this machine, started for the run)")
    p.add_argument("--workers", type=int, help="with --backend ray: batches played at once (default: two per CPU "
                                               "of the cluster); without --address also the CPUs of the instance")
    p.add_argument("--set", dest="options", action="append", metavar="OPTION=VALUE",
                   help="rule option, e.g. --set rounds=players (repeatable)")
    p.add_argument("--out", metavar="DIR", help="where the leaderboard files go (default: the database's folder)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(run=run)


# the library's parameters (TournamentError.parameter) as this command's flags
FLAGS = {"seed": "--seed", "games": "--games", "batch_size": "--batch-size", "records": "--records",
         "db": "--db", "resume": "--resume", "backend": "--backend", "address": "--address", "workers": "--workers"}


def _in_flag_words(err: TournamentError) -> TournamentError:
    """The library's error in the words the user typed: ``seed=-1 is out of range`` becomes
    ``--seed -1 is out of range``, ``pass resume=True`` becomes ``pass --resume``."""
    flag = FLAGS.get(err.parameter)
    if flag is None:
        return err
    text = str(err)
    if err.parameter == "resume":  # a consent, written resume=True
        text = text.replace("resume=True", flag)
    else:  # a bad value, written name=value
        text = text.replace(f"{err.parameter}=", f"{flag} ", 1)
    return TournamentError(text, err.parameter)


def _leaderboard_folder(args: argparse.Namespace) -> Path:
    """Where the leaderboard files go, checked before any game is played: a folder (made if
    missing) that can be written, and none of the files there is the database."""
    out = Path(args.out) if args.out else Path(args.db).resolve().parent
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a file: allowed is a folder (it receives the leaderboard files)")
    existing = next((f for f in [out, *out.parents] if f.exists()), None)
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--out {str(out)!r} cannot be written (folder {str(existing)!r} is not writable)")
    for path in leaderboard_paths(out, Path(args.db).stem).values():
        if any(same_file(path, f) for f in database_files(args.db)):
            raise UsageError(f"--out {str(out)!r} would write {path.name} over the database {args.db!r}")
    return out


def run(args: argparse.Namespace) -> int:
    try:
        check_database_path(args.db)  # before the leaderboard folder (the database's) is judged
    except TournamentError as err:
        raise _in_flag_words(err) from None
    out = _leaderboard_folder(args)
    try:
        config = make_tournament_config(args.variant, args.players, args.agents, args.seed,
                                        parse_set_options(args.options, args.variant))
        for name, why in config.left_out:
            print(f"midnight tournament: left out {name}: {why}", file=sys.stderr)
        games = args.games if args.games is not None else default_games(config)
        if args.batch_size >= 1:  # (below 1: run_tournament's own words) a batch that cannot fit in memory
            check_batch_size("--batch-size", args.batch_size, config.engine())

        def say_where() -> None:  # once every input is checked, before the first game: the defaults write here
            print(f"{games} games of {len(config.agents)} agents; results to "
                  f"{Path(args.db).resolve()} (an interrupted run resumes), leaderboard files to {out.resolve()}",
                  flush=True)

        run_ = run_tournament(config, games, db=args.db, resume=args.resume, batch_size=args.batch_size,
                              records=args.records, progress=not args.no_progress, backend=args.backend,
                              address=args.address, workers=args.workers, on_start=say_where)
    except TournamentError as err:
        raise _in_flag_words(err) from None
    results = run_.results
    if run_.started_beside:
        print(f"note: {args.db} held no game of this configuration: a new tournament was started beside its "
              f"{len(run_.started_beside)} other(s) (a changed option, agent or seed makes a new one)")
    if run_.played:
        rate = run_.played / max(run_.elapsed, 1e-9)
        where = " on Ray" if run_.backend == "ray" else ""
        print(f"played {run_.played} games{where} in {run_.elapsed:.1f} s ({rate:.1f} games/s)")
    else:
        print(f"all {games} games were already in {args.db}")
    title = (f"{config.variant}, {config.num_players} players, {results.num_games} games, seed {config.seed}")
    print_table(run_.standings, title)
    db = Path(args.db)
    command = "midnight " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["tournament"] else None
    # one database may hold several tournaments: then each writes files of its own
    stem = db.stem if len(tournament_keys(db)) <= 1 else f"{db.stem}_{config.key}"
    paths = write_leaderboard(run_.standings, results, out, stem, command)
    print("written: " + ", ".join(str(p) for p in paths.values()))
    if args.records:
        missing = results.num_games - (run_.records_written or 0)
        print(f"records: {run_.records_written} games written to {args.records}"
              + (f" ({missing} games were played earlier without --records and have none)" if missing else ""))
    return 0
