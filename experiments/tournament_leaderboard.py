"""Published leaderboard: every built-in agent, both variants, 2, 4 and 6 players, 2,000+ games each.

Runs ``midnight tournament`` once per configuration (as a sub-process: the command written
into LEADERBOARD.md is exactly the one that ran), ``--jobs`` at a time, with databases, logs and
per-run leaderboards under ``--out``; then writes LEADERBOARD.md from the databases. Rerunning
resumes unfinished runs (``--resume``) and re-plays nothing already stored.

    python experiments/tournament_leaderboard.py --out results/leaderboard --jobs 2
    python experiments/tournament_leaderboard.py --out results/leaderboard --write-only
"""

from __future__ import annotations

import argparse
import math
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: LEADERBOARD.md goes here

NOTES = "## Notes"  # LEADERBOARD.md keeps everything from this heading on when it is rewritten
CONFIGS = [("midnight_party", 2), ("midnight_party", 4), ("midnight_party", 6),
           ("hidden_castle", 2), ("hidden_castle", 4), ("hidden_castle", 6)]


@dataclass
class Args:
    out: str = "results/leaderboard"  # databases, logs and per-run leaderboard files
    jobs: int = 2  # tournaments run at once
    min_games: int = 2000  # at least this many games, rounded up to complete schedule cycles
    seed: int = 2024  # tournament seed of every run
    batch_size: int = 256  # games per batch (and per database transaction)
    write_only: bool = False  # only write LEADERBOARD.md from the databases


def games_for(players: int, agents: int, minimum: int) -> int:
    """Smallest multiple of a full cycle (every agent set once, N copies each) >= minimum."""
    cycle = math.comb(agents, players) * players
    return cycle * math.ceil(minimum / cycle)


def agents_for(variant: str, players: int) -> list[str]:
    """Every registered agent that can play this game (trained models only fit their own)."""
    from midnight_env.tournament import default_agents

    return default_agents(variant, players)


def command(variant: str, players: int, args: Args) -> list[str]:
    db = Path(args.out) / f"{variant}-{players}p.sqlite"
    agents = agents_for(variant, players)
    return ["midnight", "tournament", "--variant", variant, "--players", str(players), "--agents", ",".join(agents),
            "--games", str(games_for(players, len(agents), args.min_games)), "--seed", str(args.seed),
            "--batch-size", str(args.batch_size), "--db", str(db), "--out", str(Path(args.out)), "--no-progress"]


def run_one(variant: str, players: int, args: Args) -> tuple[str, float, int]:
    cmd = command(variant, players, args)
    log = Path(args.out) / f"{variant}-{players}p.log"
    start = time.time()
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {shlex.join(cmd)} --resume\n")
        f.flush()
        code = subprocess.run([sys.executable, "-m", "midnight_env.cli", *cmd[1:], "--resume"], cwd=ROOT,
                              stdout=f, stderr=subprocess.STDOUT).returncode
    return f"{variant}-{players}p", time.time() - start, code


def write_markdown(args: Args) -> Path:
    from midnight_env.tournament import ResultStore, leaderboard, make_tournament_config, markdown_table

    lines = ["# Leaderboard", "",
             "Every agent of `midnight agents` that can play the game (the trained ones fit only the game they were "
             "trained for) in balanced tournaments: deals of seat-rotated copies "
             "sharing one game seed (identical dice), every agent on every seat equally often and meeting every "
             "other equally often (complete cycles of all agent sets). Rating: openskill Plackett-Luce on "
             "finishing orders (mean ± 1.96 sigma); points: mean spooky points (fewer is better) with a 95 % "
             "interval clustered by deal; win rate counts shared wins.", "",
             f"Produced by `python experiments/tournament_leaderboard.py --out {args.out}`, which "
             "runs the commands below (each with `--resume`, so an interrupted run continues).", ""]
    for variant, players in CONFIGS:
        cmd = command(variant, players, args)
        config = make_tournament_config(variant, players, cmd[cmd.index("--agents") + 1], args.seed)
        db = Path(cmd[cmd.index("--db") + 1])
        lines.append(f"## {variant}, {players} players")
        lines.append("")
        if not db.exists():
            lines += ["(not run yet)", ""]
            continue
        store = ResultStore(db, config)
        try:
            results = store.results(int(cmd[cmd.index("--games") + 1]))
            commit = store.conn.execute("SELECT code_commit, MIN(finished_at), MAX(finished_at) FROM games "
                                        "WHERE config_hash = ?", (config.key,)).fetchone()
        finally:
            store.close()
        lines.append(f"`{shlex.join(cmd)}`")
        lines.append("")
        lines.append(f"{results.num_games} games, engine {config.engine_version}, code {commit[0]}, "
                     f"played {commit[1]} .. {commit[2]}")
        lines.append("")
        lines.append(markdown_table(leaderboard(results)))
        lines.append("")
    path = ROOT / "LEADERBOARD.md"
    if path.exists():  # keep the hand-written notes (the analysis of the results) below the tables
        old = path.read_text(encoding="utf-8")
        if NOTES in old:
            lines += ["", old[old.index(NOTES):].rstrip(), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in Args().__dict__.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(default, bool):
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, type=type(default), default=default)
    args = Args(**vars(parser.parse_args()))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    if not args.write_only:
        with ThreadPoolExecutor(args.jobs) as pool:  # sub-processes: one core each
            for name, seconds, code in pool.map(lambda c: run_one(*c, args), CONFIGS):
                print(f"{name}: exit {code} after {seconds:.0f} s", flush=True)
    print(f"written {write_markdown(args)}")


if __name__ == "__main__":
    main()
