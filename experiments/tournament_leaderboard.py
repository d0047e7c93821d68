"""Writes LEADERBOARD.md: both variants at 2, 3, 4 and 6 players, each in two 1,000-game tournaments.

For every set-up, the **full field** (every agent of ``midnight agents`` that can play it without
options: the default tournament's agents plus the trained ones; not ``openspiel_mcts``, too slow,
see ``TOO_SLOW``; the set-up's champion inside the search at search's default budget, the same
positions per decision as ``search``) and, where a trained champion is shipped
(``value-<variant>-<N>p`` in agents/models/), the **strong field**: the champion playing one ply and
inside the search at search's default budget, ``search``, ``search`` at 4x its default budget,
``expert`` and the previous trained champions where there are any; with 6 players, whose tournaments
need 6 agents, also ``search`` at 16x. A set-up without a champion has no strong field yet, and
LEADERBOARD.md says so.

Runs ``midnight tournament`` once per tournament (as a sub-process: the command written into
LEADERBOARD.md is exactly the one that ran), ``--jobs`` at a time, with databases, logs and
per-run leaderboards under ``--out``; then writes LEADERBOARD.md from the databases. Rerunning
resumes unfinished runs (``--resume``) and re-plays nothing already stored.

    python experiments/tournament_leaderboard.py --out results/leaderboard --jobs 2
    python experiments/tournament_leaderboard.py --out results/leaderboard --only midnight_party-4p
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
SETUPS = [(variant, players) for variant in ("midnight_party", "hidden_castle") for players in (2, 3, 4, 6)]
FIELDS = ("full", "strong")
DEFAULT_BUDGET = 1500  # search's default: the strong field holds it at 4x (and 16x with 6 players)
# left out of the full field: OpenSpiel's MCTS in Python with random rollouts decides about two
# moves per CPU-second (BENCHMARKS.md), hours of the machine for each 1,000-game tournament
TOO_SLOW = ("openspiel_mcts",)


@dataclass
class Args:
    out: str = "results/leaderboard"  # databases, logs and per-run leaderboard files
    jobs: int = 2  # tournaments run at once
    min_games: int = 1000  # at least this many games, rounded up to complete schedule cycles
    seed: int = 2024  # tournament seed of every run
    batch_size: int = 256  # games per batch (and per database transaction)
    only: str = ""  # comma-separated set-ups (midnight_party-4p) or tournaments (midnight_party-4p-strong)
    write_only: bool = False  # only write LEADERBOARD.md from the databases


def champion(variant: str, players: int) -> str | None:
    """The set-up's shipped value model, or None where none is shipped yet."""
    from midnight_env.arena.registry import list_agents

    name = f"value-{variant}-{players}p"
    return name if name in dict(list_agents()) else None


def searching(champ: str) -> str:
    """The champion inside the search, at search's default budget."""
    return f"{champ}:budget={DEFAULT_BUDGET}"


def previous_champion(variant: str, players: int) -> list[str]:
    """The set-up's earlier trained champions still shipped: the PPO policy, and the value networks
    a hardened champion replaced (``value-<variant>-<N>p-v1``, ``-v2`` ...: the name's older holders)."""
    import re

    from midnight_env.arena.registry import list_agents

    shipped = dict(list_agents())
    older = sorted((n for n in shipped if re.fullmatch(rf"value-{variant}-{players}p-v\d+", n)),
                   key=lambda n: int(n.rsplit("-v", 1)[1]))
    return [n for n in [f"ppo-{variant}-{players}p"] if n in shipped] + older


def games_for(players: int, agents: int, minimum: int) -> int:
    """Smallest multiple of a full cycle (every agent set once, N copies each) >= minimum."""
    cycle = math.comb(agents, players) * players
    return cycle * math.ceil(minimum / cycle)


def agents_for(variant: str, players: int, field: str) -> list[str]:
    """The agents of one tournament (see the module doc)."""
    from midnight_env.tournament.config import playable_agents

    if field == "strong":
        champ = champion(variant, players)
        agents = [champ, searching(champ), "search", f"search:budget={4 * DEFAULT_BUDGET}", "expert",
                  *previous_champion(variant, players)]
        if players == 6:
            agents += [f"search:budget={16 * DEFAULT_BUDGET}"]
        return agents
    names = [n for n in playable_agents(variant, players)[0] if n not in TOO_SLOW]
    champ = champion(variant, players)
    # among the weak agents the one-ply network gains less on `search` than inside it (LEADERBOARD.md)
    return [searching(champ) if name == champ else name for name in names]


def tournaments(args: Args) -> list[tuple[str, int, str]]:
    wanted = {w for w in args.only.split(",") if w}
    out = []
    for variant, players in SETUPS:
        for field in FIELDS:
            setup = f"{variant}-{players}p"
            if field == "strong" and champion(variant, players) is None:
                continue  # no trained champion to measure among the strong yet
            if not wanted or setup in wanted or f"{setup}-{field}" in wanted:
                out.append((variant, players, field))
    return out


def command(variant: str, players: int, field: str, args: Args) -> list[str]:
    db = Path(args.out) / f"{variant}-{players}p-{field}.sqlite"
    agents = agents_for(variant, players, field)
    return ["midnight", "tournament", "--variant", variant, "--players", str(players), "--agents", ",".join(agents),
            "--games", str(games_for(players, len(agents), args.min_games)), "--seed", str(args.seed),
            "--batch-size", str(args.batch_size), "--db", str(db), "--out", str(Path(args.out)), "--no-progress"]


def run_one(variant: str, players: int, field: str, args: Args) -> tuple[str, float, int]:
    cmd = command(variant, players, field, args)
    log = Path(args.out) / f"{variant}-{players}p-{field}.log"
    start = time.time()
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {shlex.join(cmd)} --resume\n")
        f.flush()
        code = subprocess.run([sys.executable, "-m", "midnight_env.cli", *cmd[1:], "--resume"], cwd=ROOT,
                              stdout=f, stderr=subprocess.STDOUT).returncode
    return f"{variant}-{players}p-{field}", time.time() - start, code


@dataclass
class Row:
    """One agent's line of a leaderboard table, as :func:`summary_cells` reads it."""

    agent: str
    mean_points: float
    points_ci: float


def table_rows(section: str) -> list[Row]:
    """The agents of the Markdown table in a section of LEADERBOARD.md (``markdown_table``'s
    columns: rank, agent, games, rating, ±, mean points, ±, win rate, mean rank)."""
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0].isdigit():
            rows.append(Row(cells[1], float(cells[5]), float(cells[6])))
    return rows


def summary_cells(standings, champ: str | None) -> list[str]:
    """The champion's best form and its points, the best other agent and its points, and whether
    the champion is first with its interval clear of every other agent's: its forms (one ply, and
    inside the search: ``champ:budget=N``) count as one player, the best of them compared with every
    agent that is not a form of the champion."""
    by_points = sorted(standings, key=lambda s: s.mean_points)
    forms = [s for s in by_points if champ and (s.agent == champ or s.agent.startswith(f"{champ}:"))]
    rivals = [s for s in by_points if s not in forms]
    if not forms:
        best = by_points[0]
        return ["none", "", f"`{best.agent}`", f"{best.mean_points:.2f} ± {best.points_ci:.2f}", "no champion"]
    mine, rival = forms[0], rivals[0]
    if by_points[0] is not mine:
        word = "**not first**"
    elif all(mine.mean_points + mine.points_ci < s.mean_points - s.points_ci for s in rivals):
        word = "**first, clear**"
    else:
        word = "first, overlapping"
    return [f"`{mine.agent}`", f"{mine.mean_points:.2f} ± {mine.points_ci:.2f}", f"`{rival.agent}`",
            f"{rival.mean_points:.2f} ± {rival.points_ci:.2f}", word]


def sections(text: str) -> dict[str, str]:
    """The tables of a LEADERBOARD.md by their heading line (``## variant, N players, field field``):
    the text under each, up to the next heading."""
    out, heading, body = {}, None, []
    for line in text.splitlines():
        if line.startswith("## "):
            if heading:
                out[heading] = "\n".join(body).strip()
            heading, body = line, []
        elif heading:
            body.append(line)
    if heading:
        out[heading] = "\n".join(body).strip()
    return out


def same_games(section: str, cmd: list[str]) -> bool:
    """Whether a section of LEADERBOARD.md was played by ``cmd``: the same agents, games, seed and
    batches (where its database and logs went does not matter)."""
    def games_only(words: list[str]) -> list[str]:  # without --db and --out and their values
        return [w for i, w in enumerate(words)
                if w not in ("--db", "--out") and not (i > 0 and words[i - 1] in ("--db", "--out"))]

    first = section.lstrip().splitlines()[0] if section.strip() else ""
    if not (first.startswith("`midnight tournament ") and first.endswith("`")):
        return False
    return games_only(shlex.split(first.strip("`"))) == games_only(cmd)


INTRO = (
    "Both variants at 2, 3, 4 and 6 players, each in two balanced tournaments of 1,000 games or a little "
    "more (complete cycles of all agent sets): the **full field**, every agent of `midnight agents` that "
    "can play the game (the trained ones fit only the game they were trained for; the set-up's champion "
    f"inside the search at search's default budget, `:budget={DEFAULT_BUDGET}`), "
    "and, where a trained "
    "champion is shipped, the **strong field**: the set-up's champion `value-<variant>-<N>p` playing one "
    f"ply and inside the search at search's default budget (`:budget={DEFAULT_BUDGET}`), `search` at its "
    f"default budget and at 4x it (`search:budget={4 * DEFAULT_BUDGET}`), `expert`, and the previous "
    "trained champions where there are any (`ppo-<variant>-4p`; `value-<variant>-<N>p-v1`, the network a "
    "hardened champion replaced); a 6-player tournament needs 6 agents, so "
    f"there also `search:budget={16 * DEFAULT_BUDGET}`. "
    "Deals of seat-rotated copies share one game seed (identical dice), every agent on every seat "
    "equally often and meeting every other equally often. Points: mean spooky points (fewer is better) "
    "with a 95 % interval clustered by deal and stratified by agent set (the schedule fixes how often "
    "each set is dealt, so the spread between sets is no noise: BENCHMARKS.md, \"Tournament intervals\"); "
    "the verdicts read them. Rating: openskill "
    "Plackett-Luce on finishing orders (mean ± 1.96 sigma; the rank column sorts by it, mu - 3 sigma); "
    "win rate counts shared wins.")


def write_markdown(args: Args) -> Path:
    """LEADERBOARD.md: today's verdicts, one row per tournament, then each tournament's command and
    table (from its database where there is one, else as the page had it while its command is the
    same), then the hand-written notes kept from the page as it was."""
    from midnight_env.tournament import ResultStore, leaderboard, make_tournament_config, markdown_table

    path = ROOT / "LEADERBOARD.md"
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    old_sections = sections(old[:old.index(NOTES)] if NOTES in old else old)
    summary, body = [], []
    for variant, players, field in tournaments(Args(out=args.out, seed=args.seed, min_games=args.min_games,
                                                    batch_size=args.batch_size)):
        cmd = command(variant, players, field, args)
        config = make_tournament_config(variant, players, cmd[cmd.index("--agents") + 1], args.seed)
        db = Path(cmd[cmd.index("--db") + 1])
        heading = f"## {variant}, {players} players, {field} field"
        body += [heading, ""]
        if not db.exists():
            # played elsewhere (another --out, another machine): its section stays while its command does
            kept = old_sections.get(heading, "")
            kept = "\n".join(line for line in kept.splitlines() if not line.startswith("**"))  # a verdict of before
            text = kept.strip() if same_games(kept, cmd) else "(not run yet)"
        else:
            store = ResultStore(db, config)
            try:
                results = store.results(int(cmd[cmd.index("--games") + 1]))
                commit = store.conn.execute("SELECT code_commit, MIN(finished_at), MAX(finished_at) FROM games "
                                            "WHERE config_hash = ?", (config.key,)).fetchone()
            finally:
                store.close()
            text = "\n\n".join([f"`{shlex.join(cmd)}`",
                                 f"{results.num_games} games, engine {config.engine_version}, code {commit[0]}, "
                                 f"played {commit[1]} .. {commit[2]}",
                                 markdown_table(leaderboard(results))])
        body += [text, ""]
        rows = table_rows(text)
        games = next((line.split()[0] for line in text.splitlines() if " games, engine " in line), "")
        anchor = heading[3:].lower().replace(",", "").replace(" ", "-")
        cells = summary_cells(rows, champion(variant, players)) if rows else ["not run yet", "", "", "", ""]
        summary.append(" | ".join([f"| [{variant}, {players} players](#{anchor})", field, games, *cells]) + " |")
    shipped = [f"`{champion(v, n)}`" for v, n in SETUPS if champion(v, n)]
    missing = [f"{v} {n}p" for v, n in SETUPS if not champion(v, n)]
    lines = ["# Leaderboard", "",
             "Where each set-up's trained champion stands among all agents (full field) and among the strong "
             "ones (strong field), by mean spooky points a game (fewer is better) with 95 % intervals; "
             "how the tournaments are made is below the table.", "",
             "## Today's results", "",
             "| set-up | field | games | the champion's best form | points | best other agent | points | verdict |",
             "|:---|:---|---:|:---|---:|:---|---:|:---|", *summary, "",
             "Verdict: *first, clear* where the champion's interval lies below every other agent's (its forms, "
             "one ply and inside the search, count as one player).", "",
             f"Produced by `python experiments/tournament_leaderboard.py --out {args.out}`, which runs the "
             "commands below (each with `--resume`, so an interrupted run continues), every table from a "
             "committed tree (its code hash; `tests/project/test_documents.py` refuses one with uncommitted changes).",
             "", INTRO, "",
             f"Trained champions shipped: {', '.join(shipped) or 'none'}."
             + (f" **No trained champion yet** for {', '.join(missing)}: those set-ups have the full field only."
                if missing else ""), "", *body]
    if NOTES in old:  # keep the hand-written notes (the analysis of the results) below the tables
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
            for name, seconds, code in pool.map(lambda c: run_one(*c, args), tournaments(args)):
                print(f"{name}: exit {code} after {seconds:.0f} s", flush=True)
    print(f"written {write_markdown(args)}")


if __name__ == "__main__":
    main()
