"""experiments/placement_book.py (issue 41, item 2): paired rollouts with successive halving, run tiny.

A few rollouts per square of the two-player champion: every legal square valued, the better half
kept, a rerun resuming without replaying a game, another request in the same folder and an unknown
set-up refused in one line; and on the smallest solved two-player set-up, with exact play as the
champion, the method finds the exact best first square.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from experiment_scripts import load_script


@pytest.fixture(scope="module")
def pb():
    return load_script("placement_book")


@pytest.fixture
def counted(pb, monkeypatch):
    """The games ``play_margins`` plays, counted."""
    played = []
    real = pb.play_margins

    def counting(engine, agent, squares, seeds):
        played.append(len(squares) * len(seeds))
        return real(engine, agent, squares, seeds)

    monkeypatch.setattr(pb, "play_margins", counting)
    return played


TINY = ["run", "--variant", "midnight_party", "--players", "2", "--k0", "2"]


def test_tiny_run_halves_and_resumes(pb, counted, tmp_path, capsys):
    out = tmp_path / "run"
    book = tmp_path / "book.json"
    # two rounds: 28 squares x 2 rollouts, then the better 14 to 4 rollouts
    assert pb.main(TINY + ["--out", str(out), "--max-games", str(28 * 2 + 14 * 2), "--book", str(book),
                           "--figures", str(tmp_path)]) == 0
    assert sum(counted) == 28 * 2 + 14 * 2
    progress = json.loads((out / "progress.json").read_text())
    first, second = progress["rounds"]
    assert len(first["squares"]) == 28 and first["rollouts"] == 2
    means = {int(s): np.mean(m) for s, m in first["margins"].items()}
    better = sorted(means, key=lambda s: (-means[s], s))[:14]
    assert first["after"] == better == second["squares"]  # the better half goes on
    assert min(means[s] for s in better) >= max(means[s] for s in means if s not in better)
    entry = json.loads(book.read_text())["midnight_party_2p"]
    assert all(v is not None for v in entry["values"]) and len(entry["values"]) == 28
    assert all(h is not None and h > 0 for h in entry["half_widths"])
    assert sorted(set(entry["rollouts"])) == [2, 4] and entry["rollouts"].count(4) == 14
    assert entry["best"] in better and entry["runner_up"] in better and "difference" in entry
    assert entry["games"] == 84 and entry["cpu_s"] > 0 and entry["rollouts_per_cpu_s"] > 0
    assert entry["command"].startswith("python experiments/placement_book.py run")
    assert (tmp_path / "placement_book_midnight_party_2p.png").stat().st_size > 10_000

    # the same request again: nothing replayed; a larger budget plays the next round only
    # (7 squares to 8 rollouts: 4 more each)
    counted.clear()
    assert pb.main(TINY + ["--out", str(out), "--max-games", "84"]) == 0
    assert counted == []
    assert pb.main(TINY + ["--out", str(out), "--max-games", str(84 + 7 * 4)]) == 0
    assert counted == [7 * 4]
    assert len(json.loads((out / "progress.json").read_text())["rounds"]) == 3

    # another request in the same folder: one line naming what differs, nothing played
    counted.clear()
    capsys.readouterr()
    assert pb.main(TINY[:-1] + ["3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "k0 2 there, 3 here" in err and str(out) in err
    assert counted == []


@pytest.mark.parametrize("argv, words", [
    (["run", "--variant", "midnight_party", "--players", "5"], ["5 players", "midnight_party with 2, 3, 4, 6"]),
    (["run", "--variant", "nowhere", "--players", "2"], ["'nowhere'", "hidden_castle with"]),
    (["run", "--players", "2", "--set", "rounds=1"], ["cannot play this set-up"]),
    (["run", "--players", "2", "--k0", "1"], ["--k0 1"]),
])
def test_bad_set_up_refused_in_one_line(pb, counted, tmp_path, capsys, argv, words):
    assert pb.main(argv + ["--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("placement_book: ")
    for w in words:
        assert w in err
    assert counted == []


def test_validation_finds_the_exact_best_square(pb, tmp_path):
    report = pb.validate_one("duo-mp-r1-g1-points", 1000, 1, tmp_path, log=lambda *a: None)
    assert report["exact_best"] == [27]
    assert report["best_found"] and report["method_best"] == 27
    assert report["difference"]["separated"]
    assert report["mean_abs_error"] < report["mean_half_width"]
    assert len([v for v in report["values"] if v is not None]) == 28
