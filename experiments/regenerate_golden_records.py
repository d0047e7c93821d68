"""Writes tests/golden/*.jsonl, the games tests/core/test_golden.py replays, after an intended rule change.

    python experiments/regenerate_golden_records.py

Plays a few seeded games of random agents per variant and player count, with the engine as it
is now, and writes them as midnight-record/1 lines. tests/core/test_golden.py replays them; a diff of
this directory in review shows exactly which games the change altered. Bump ENGINE_VERSION in
midnight_env/core/engine.py with any such change.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from midnight_env import Engine
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import make_agent
from midnight_env.core.records import write_records

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden"
SETUPS = [
    ("midnight_party", 2, {}),
    ("midnight_party", 4, {}),
    ("midnight_party", 6, {"pass_rule": "always"}),
    ("midnight_party", 8, {"rounds": "players"}),
    ("hidden_castle", 1, {}),
    ("hidden_castle", 3, {}),
    ("hidden_castle", 5, {}),
    ("hidden_castle", 8, {}),
]
GAMES_PER_SETUP = 3


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for variant, players, options in SETUPS:
        engine = Engine(variant, players, **options)
        seeds = np.arange(GAMES_PER_SETUP) + 1000 * players
        res = play_batch(engine, [make_agent("random")], np.zeros((len(seeds), players), int), seeds, record=True)
        path = GOLDEN / f"{variant}_{players}p.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            write_records(res.records, out)
        print(f"wrote {path.relative_to(GOLDEN.parents[1])}: {len(res.records)} games")


if __name__ == "__main__":
    main()
