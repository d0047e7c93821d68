"""LEADERBOARD.md, "Earlier notes (2026-11-29, ...)": search minus expert at budgets 300, 1,000, 4,000.

Does search beat the expert given enough budget? Tournaments of the expert against the search at
several budgets (plus the coward to fill four seats), both variants, 2 and 4 players.

Every game holds all the agents of its configuration (seat-rotated copies with identical dice),
so the comparison is paired. Prints each leaderboard and the search-minus-expert difference in
mean points with a 95 % interval over deals; writes a Markdown summary.

    python experiments/tournament_search_budget.py --games 400 --out results/search_budget
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import time
from pathlib import Path

import numpy as np

from midnight_env.tournament import make_tournament_config, markdown_table, run_tournament


def paired_difference(db: Path, config, a: str, b: str) -> tuple[float, float, int]:
    """Mean over deals of (b's mean points - a's mean points) and its 95 % half-width."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT deal, agents, points FROM games WHERE config_hash = ?", (config.key,)).fetchall()
    per_deal: dict[int, list[float]] = {}
    for deal, agents, points in rows:
        agents, points = json.loads(agents), json.loads(points)
        if a in agents and b in agents:
            per_deal.setdefault(deal, []).append(points[agents.index(b)] - points[agents.index(a)])
    diffs = np.array([np.mean(v) for v in per_deal.values()])
    half = 1.96 * diffs.std(ddof=1) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
    return float(diffs.mean()), half, len(diffs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per configuration")
    parser.add_argument("--budgets", default="300,1500", help="search budgets to compare")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="results/search_budget")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    searches = [f"search:budget={b}" for b in args.budgets.split(",")]
    lines = ["# Search against the expert by budget", "",
             f"`python experiments/tournament_search_budget.py --games {args.games} "
             f"--budgets {args.budgets} --seed {args.seed}`", ""]
    for variant in ("midnight_party", "hidden_castle"):
        for players in (2, 4):
            agents = ["expert"] + searches + (["coward"] if players == 4 and len(searches) < 3 else [])
            config = make_tournament_config(variant, players, agents, args.seed)
            db = out / f"{variant}-{players}p.sqlite"
            start = time.time()
            run = run_tournament(config, args.games, db=db, resume=True, progress=False)
            lines += [f"## {variant}, {players} players ({run.results.num_games} games, "
                      f"{time.time() - start:.0f} s)", "", markdown_table(run.standings), ""]
            for s in searches:
                diff, half, deals = paired_difference(db, config, "expert", s)
                lines.append(f"- {s} minus expert: {diff:+.2f} ± {half:.2f} spooky points per game "
                             f"({deals} deals; negative: search is better)")
            lines.append("")
            print("\n".join(lines[-(len(searches) + 6):]), flush=True)
    (out / "summary.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
