"""BENCHMARKS.md, "Search strength against its budget"; LEADERBOARD.md, "`search` against its budget, every set-up".

How much better than a reference agent is a candidate, in a given field? Duplicate games, paired.

For every deal (one game seed) and every seat r, the candidate plays seat r against the field in
the other seats, and so does the reference agent: the same dice (the engine's die faces depend on
the game seed alone) and the same opponents, so the difference of their points in seat r is a
paired measurement with most of the luck taken out (``training.evaluate.paired_games``; a
field larger than the seats left takes turns, the next N - 1 of its agents per deal, so a full
field can be probed too). Prints, per candidate, its mean points, the reference's, their
difference with a 95 % interval over deals, and the candidate's decisions per CPU-second (the
process's CPU time inside its own ``act``, games batched ``--batch`` at a time).

    python experiments/probe_strength.py --players 4 --deals 100 --field expert --reference expert \
        --agents search:budget=250,search,search:budget=4000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from midnight_env.arena.registry import make_agent, split_specs
from midnight_env.core.engine import Engine
from midnight_env.infra.seeds import derived_seed
from midnight_env.training.evaluate import mean_ci, paired_games, play_every_seat


class Timed:
    """An agent wrapper that adds up the CPU time and the decisions of its ``act``."""

    def __init__(self, agent):
        self.agent, self.name, self.seconds, self.decisions = agent, agent.name, 0.0, 0

    def act(self, decisions):
        start = time.process_time()
        out = self.agent.act(decisions)
        self.seconds += time.process_time() - start
        self.decisions += len(decisions)
        return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", default="midnight_party")
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--agents", required=True, help="candidate specs, comma-separated")
    p.add_argument("--field", default="expert", help="specs of the other seats (in order, cycled; a larger "
                   "field: the next N-1 per deal)")
    p.add_argument("--reference", default="expert")
    p.add_argument("--deals", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=int, default=256)
    a = p.parse_args()
    engine = Engine(a.variant, a.players)
    seeds = np.array([derived_seed("probe", a.seed, d) for d in range(a.deals)], np.int64)
    field = [make_agent(s) for s in split_specs(a.field)]
    ref = Timed(make_agent(a.reference))
    reference = play_every_seat(engine, ref, field, seeds, a.batch)
    base = reference.agent_points()
    print(f"{a.variant} {a.players}p, field {a.field}, {a.deals} deals x {a.players} seats, seed {a.seed}")
    print(f"reference {a.reference}: {base.mean():.2f} points, {ref.decisions / max(ref.seconds, 1e-9):.0f} dec/s")
    for spec in split_specs(a.agents):
        cand = Timed(make_agent(spec))
        start = time.process_time()
        paired = paired_games(engine, cand, reference, field, seeds, batch=a.batch)
        pts = paired.candidate.agent_points()
        diff, half = mean_ci(paired.points_difference())
        print(f"{spec:40s} {pts.mean():7.2f} points  diff {diff:+.2f} ± {half:.2f}  "
              f"{cand.decisions / max(cand.seconds, 1e-9):8.0f} dec/s  ({time.process_time() - start:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
