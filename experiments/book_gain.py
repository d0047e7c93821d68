"""What the placement book is worth to the champion (issue 41, item 2): ``value-<variant>-<N>p:book=shipped``
against the plain ``value-<variant>-<N>p``, on paired deals.

The book (docs/placement_book.json, :mod:`midnight_agents.book`) gives the best square for seat 0's
first guest with everything else played by the champion; ``book=shipped`` plays it there, at the
game's first placement, and nowhere else. Duplicate deals: for every deal ``d`` (one game seed, so
the same dice) the plain champion plays all seats once (game ``R_d``), and for every seat ``r`` the
booked champion takes seat ``r`` against plain copies (game ``C_{d,r}``). The two games are the
same up to the booked seat's use of the book (seat 0's first guest; a later seat never uses it, so
its games are ``R_d`` again and gain exactly 0). With the margin

    m_r(G) = seat r's final spooky points - the others' mean in game G    (fewer is better)

the gain in seat ``r`` of deal ``d`` is ``g_{d,r} = m_r(R_d) - m_r(C_{d,r})`` (positive: the book helps),
and the gain of the deal its mean over the seats. Each figure is the mean over deals with a 95 %
normal interval (``mean ± 1.96 s / sqrt(deals)``); a set-up whose games are all the same as without
the book (the book's square is the champion's own, or taken before the seat places) gains exactly 0.

    python experiments/book_gain.py --set-ups midnight_party-2 --deals 4000 --out runs/book_gain/midnight_party-2p.json
    python experiments/book_gain.py --set-ups midnight_party-4 --deals 2500 --out runs/book_gain/midnight_party-4p.json
    python experiments/book_gain.py --set-ups midnight_party-6 --deals 600 --out runs/book_gain/midnight_party-6p.json
    python experiments/book_gain.py --set-ups midnight_party-3,hidden_castle-2,hidden_castle-3,hidden_castle-4,\
hidden_castle-6 --deals 100

Measured 2026-12-05 (seed 0): midnight_party 2 players +1.43 ± 0.84 points a game in seat 0 (4000 deals),
+0.71 ± 0.42 over the seats; 4 players +0.29 ± 0.64 in seat 0 (2500 deals); 6 players -0.01 ± 1.05 (600
deals); midnight_party 3 players and hidden_castle 2, 3, 4 and 6 players 0 exactly (the champion's own
opening square is the book's). The book at every seat's first guest (the first form of the option) lost:
2 players seat 1 -1.40 ± 0.82 (4000 deals); 4 players -0.90 ± 0.33 over the seats (1200 deals).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from midnight_env.arena.registry import make_agent
from midnight_env.core.engine import Engine
from midnight_env.infra.seeds import derived_seed
from midnight_env.training.evaluate import mean_ci, play_every_seat


@dataclass
class Args:
    set_ups: str = "midnight_party-2,hidden_castle-2"
    """set-ups as variant-players, comma-separated"""
    deals: int = 2000
    """deals (game seeds) per set-up; each plays 1 + players games"""
    seed: int = 0
    """deal d's game seed is derived_seed('book_gain', seed, d)"""
    batch: int = 512
    """games played at once"""
    out: str | None = None
    """also write the figures as JSON here"""


def gain_of_book(variant: str, players: int, deals: int, seed: int, batch: int) -> dict:
    """The figures of one set-up (module docstring)."""
    start = time.process_time()
    engine = Engine(variant, players)
    champion = f"value-{variant}-{players}p"
    plain, booked = make_agent(champion), make_agent(f"{champion}:book=shipped")
    seeds = np.array([derived_seed("book_gain", seed, d) for d in range(deals)], np.int64)
    # the plain champion in every seat: one game per deal serves as every seat's reference
    reference = play_every_seat(engine, plain, [plain], seeds, batch, seats=[0]).points.astype(np.float64)
    ref_margin = reference - (reference.sum(axis=1, keepdims=True) - reference) / (players - 1)  # (deals, N)
    candidate = play_every_seat(engine, booked, [plain], seeds, batch)
    gains = ref_margin - candidate.agent_margins()  # (deals, N): seat r's gain
    differ = (candidate.points.reshape(deals, players, players) != reference[:, None, :]).any(axis=2)
    per_seat = [mean_ci(gains[:, r]) for r in range(players)]
    overall = mean_ci(gains.mean(axis=1))
    return {"set_up": f"{variant} {players} players", "champion": champion, "deals": deals, "seed": seed,
            "games": deals * (1 + players), "gain": overall[0], "half_width": overall[1],
            "seats": [{"seat": r, "gain": g, "half_width": h, "games_differ": float(differ[:, r].mean())}
                      for r, (g, h) in enumerate(per_seat)],
            "cpu_s": round(time.process_time() - start, 1)}


def row(result: dict) -> str:
    def cell(g: float, h: float) -> str:
        return "0 (exact)" if g == 0 and h == 0 else f"{g:+.2f} ± {h:.2f}"

    seats = "; ".join(f"seat {s['seat']} {cell(s['gain'], s['half_width'])} ({100 * s['games_differ']:.0f} % differ)"
                      for s in result["seats"])
    return (f"| {result['set_up']} | {result['deals']} | {cell(result['gain'], result['half_width'])} | {seats} "
            f"| {result['cpu_s']:.0f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in vars(Args()).items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default) if default is not None else str,
                       default=default)
    a = Args(**vars(p.parse_args(argv)))
    print("| set-up | deals | gain of book=shipped (points a game, 95 %) | per seat | CPU-s |", flush=True)
    print("|---|---:|---:|---|---:|", flush=True)
    results = []
    for item in a.set_ups.split(","):
        variant, players = item.strip().rsplit("-", 1)
        results.append(gain_of_book(variant, int(players), a.deals, a.seed, a.batch))
        print(row(results[-1]), flush=True)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        command = "python experiments/book_gain.py " + " ".join(argv if argv is not None else sys.argv[1:])
        Path(a.out).write_text(json.dumps({"command": command, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
