"""The documents are for readers: each results page opens with today's results on its first
screen, the README stays a front page, and every leaderboard table was played by committed code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRST_SCREEN = 60  # lines
RESULT_PAGES = ("BENCHMARKS.md", "BENCHMARKS_TRAIN.md", "LEADERBOARD.md", "docs/RESEARCH.md")


@pytest.mark.parametrize("page", RESULT_PAGES)
def test_a_results_page_opens_with_todays_results(page):
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    heading = next((i for i, line in enumerate(lines) if line.startswith("## Today's results")), None)
    assert heading is not None and heading < FIRST_SCREEN, f"{page}: no '## Today's results' in its first screen"
    table = next((i for i in range(heading, len(lines)) if lines[i].startswith("|")), None)
    assert table is not None and table < heading + 15, f"{page}: today's results hold no table"


def test_every_leaderboard_table_was_played_by_committed_code():
    text = (ROOT / "LEADERBOARD.md").read_text(encoding="utf-8")
    codes = re.findall(r" games, engine [\d.]+, code (\S+), played ", text)
    assert len(codes) >= 16, "a line 'N games, engine E, code C, played ...' under every table"
    bad = [code for code in codes if not re.fullmatch(r"[0-9a-f]{40}", code)]
    assert not bad, f"tables played from a tree with uncommitted changes or no commit: {bad}"


def test_the_readme_is_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 180, "README.md: about 150 lines; the rest belongs in docs/"
    assert 'python -m pytest -m "not slow"' in text, "the README names the fast tier"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci.split("&& ", 1)[1] in text, "the README's test command is the one .ci/run runs"


def test_every_relative_link_of_the_documents_resolves():
    broken = []
    for page in [ROOT / "README.md", *ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md")]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
