"""Golden records (tests/golden/, made by experiments/regenerate_golden_records.py) replay exactly.

They are the project's playthroughs: a rule change that alters any of these games shows up here
and must be intended (then regenerate them and bump ENGINE_VERSION).
"""

from pathlib import Path

import numpy as np
import pytest

from midnight_env import Engine
from midnight_env.play import play_batch
from midnight_env.records import read_records, replay_record
from midnight_env.registry import make_agent

GOLDEN = Path(__file__).parents[1] / "golden"
FILES = sorted(GOLDEN.glob("*.jsonl"))


def test_golden_files_cover_both_variants_and_several_player_counts():
    names = [f.stem for f in FILES]
    assert any(n.startswith("midnight_party") for n in names)
    assert any(n.startswith("hidden_castle") for n in names)
    assert len({n.split("_")[-1] for n in names}) >= 4


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_golden_records_replay(path):
    for number, rec in read_records(path):
        result = replay_record(rec, number)
        assert result.decisions > 0 and result.rolls > 0


@pytest.mark.parametrize("path", FILES[:2] + FILES[-2:], ids=lambda p: p.stem)
def test_engine_still_plays_the_golden_games(path):
    """Re-playing the same seeds with the same agents gives the same records, event for event."""
    recs = [rec for _, rec in read_records(path)]
    engine = Engine(recs[0]["variant"], recs[0]["num_players"], **recs[0]["options"])
    seeds = np.array([r["seed"] for r in recs])
    res = play_batch(engine, [make_agent("random")], np.zeros((len(seeds), engine.num_players), int), seeds,
                     record=True)
    for old, new in zip(recs, res.records):
        assert new["events"] == old["events"]
        assert new["final_points"] == old["final_points"]
