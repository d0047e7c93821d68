"""The leaderboard shown and written: a plain-text, rich or Markdown table, CSV, and a PNG of the
ratings with their 95 % intervals."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import numpy as np

from midnight_env.tournament.ratings import Standing
from midnight_env.tournament.store import Results

_HEADER = ("rank", "agent", "games", "rating", "± 95%", "mean points", "± 95%", "win rate", "mean rank")


def _number(value: float, digits: int) -> str:
    return "-" if np.isnan(value) else f"{value:.{digits}f}"  # no rating: solo games


def _rows(standings: list[Standing]) -> list[tuple[str, ...]]:
    return [(str(i + 1), s.agent, str(s.games), _number(s.mu, 2), _number(1.96 * s.sigma, 2),
             f"{s.mean_points:.2f}", _number(s.points_ci, 2), f"{s.win_rate:.3f}", f"{s.mean_rank:.3f}")
            for i, s in enumerate(standings)]


# the terminal's table: two header lines, a rating and a mean with their intervals in one column each,
# so that it fits 80 columns; agent names too long for their column wrap onto a second line
_TERMINAL_HEADER = (("", "rank"), ("", "agent"), ("", "games"), ("rating", "± 95%"), ("mean points", "± 95%"),
                    ("win", "rate"), ("mean", "rank"))


def _terminal_rows(standings: list[Standing]) -> list[tuple[str, ...]]:
    return [(r[0], r[1], r[2], f"{r[3]} ± {r[4]}" if r[3] != "-" else "-", f"{r[5]} ± {r[6]}", r[7], r[8])
            for r in _rows(standings)]


def _wrap_name(name: str, width: int) -> list[str]:
    """An agent name cut into lines of at most ``width``, after a '-', ':', ',' or '=' where one is near."""
    lines = []
    while len(name) > width:
        cut = max((name.rfind(c, 0, width) + 1 for c in "-:,="), default=0)
        cut = cut if cut > width // 2 else width
        lines.append(name[:cut])
        name = name[cut:]
    return lines + [name]


def format_table(standings: list[Standing], width: int | None = 80) -> str:
    """Plain-text table, aligned and at most ``width`` columns wide: every figure in full, agent
    names that do not fit their column wrapped onto the next line (``width=None``: every name on
    one line, however wide). Ranked by rating (``leaderboard``)."""
    rows = _terminal_rows(standings)
    columns = range(len(_TERMINAL_HEADER))
    widths = [max([len(h) for h in _TERMINAL_HEADER[c]] + [len(r[c]) for r in rows]) for c in columns]
    others = sum(widths) - widths[1] + 2 * (len(widths) - 1)
    if width is not None:
        widths[1] = max(12, min(widths[1], width - others))  # the agent column takes what is left

    def line(cells):
        return "  ".join(x.ljust(w) if c == 1 else x.rjust(w) for c, (x, w) in enumerate(zip(cells, widths))).rstrip()

    lines = [line([h[0] for h in _TERMINAL_HEADER]), line([h[1] for h in _TERMINAL_HEADER]),
             "  ".join("-" * w for w in widths)]
    for r in rows:
        name = _wrap_name(r[1], widths[1])
        lines.append(line((r[0], name[0]) + r[2:]))
        lines += [line(("", more) + ("",) * (len(r) - 2)) for more in name[1:]]
    return "\n".join(lines)


def print_table(standings: list[Standing], title: str = "") -> None:
    """The standings on stdout as :func:`format_table`, as wide as the terminal; a pipe or a file
    gets every agent name on one line (scripts read them). The Markdown and CSV files keep every
    column on its own."""
    width = max(60, shutil.get_terminal_size((80, 24)).columns) if sys.stdout.isatty() else None
    if title:
        print(title)
    print(format_table(standings, width))
    if standings and not np.isnan(standings[0].mu):
        print("ranked by rating (Plackett-Luce, ± 1.96 sigma); mean points ± 95 % by deal")


def markdown_table(standings: list[Standing]) -> str:
    align = "|".join(":---" if c == 1 else "---:" for c in range(len(_HEADER)))  # agent names left, numbers right
    lines = ["| " + " | ".join(_HEADER) + " |", "|" + align + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(standings)]
    return "\n".join(lines)


def leaderboard_paths(out_dir: str | Path, stem: str) -> dict[str, Path]:
    """The files :func:`write_leaderboard` writes."""
    out_dir = Path(out_dir)
    return {"markdown": out_dir / f"{stem}_leaderboard.md", "csv": out_dir / f"{stem}_leaderboard.csv",
            "png": out_dir / f"{stem}_ratings.png"}


def write_leaderboard(standings: list[Standing], results: Results, out_dir: str | Path, stem: str,
                      command: str | None = None) -> dict[str, Path]:
    """Markdown, CSV and PNG (ratings with 95 % intervals) of the standings; returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = results.config
    paths = leaderboard_paths(out_dir, stem)
    head = [f"# Leaderboard: {cfg.variant}, {cfg.num_players} players", "",
            f"- games: {results.num_games} (deals of {cfg.num_players} seat-rotated copies with identical dice)",
            f"- agents: {', '.join(cfg.agents)}",
            f"- rule options: {', '.join(f'{k}={v}' for k, v in sorted(cfg.options.items()))}",
            f"- seed: {cfg.seed}; engine {cfg.engine_version}; configuration {cfg.key}"]
    if command:
        head.append(f"- command: `{command}`")
    head += ["", "Rating: openskill Plackett-Luce on finishing orders (mean ± 1.96 sigma). Points: mean spooky "
             "points with a 95 % interval clustered by deal, stratified by agent set when every set was dealt "
             "twice or more. Win rate counts shared wins.", ""]
    paths["markdown"].write_text("\n".join(head) + markdown_table(standings) + "\n", encoding="utf-8")
    with open(paths["csv"], "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["agent", "games", "rating_mu", "rating_sigma", "rating_low", "rating_high", "mean_points",
                    "points_low", "points_high", "win_rate", "mean_rank"])
        for s in standings:
            w.writerow([s.agent, s.games, f"{s.mu:.4f}", f"{s.sigma:.4f}", f"{s.mu - 1.96 * s.sigma:.4f}",
                        f"{s.mu + 1.96 * s.sigma:.4f}", f"{s.mean_points:.4f}", f"{s.mean_points - s.points_ci:.4f}",
                        f"{s.mean_points + s.points_ci:.4f}", f"{s.win_rate:.4f}", f"{s.mean_rank:.4f}"])
    plot_ratings(standings, paths["png"], f"{cfg.variant}, {cfg.num_players} players, {results.num_games} games")
    return paths


def plot_ratings(standings: list[Standing], path: str | Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = standings[::-1]  # best at the top
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(order) + 1.2))
    y = np.arange(len(order))
    if all(np.isnan(s.mu) for s in order):  # solo games: points against Hugo, no rating
        ax.errorbar([s.mean_points for s in order], y, xerr=[s.points_ci for s in order], fmt="o", capsize=4)
        ax.set_xlabel("mean spooky points against Hugo (± 95 %), fewer is better")
    else:
        ax.errorbar([s.mu for s in order], y, xerr=[1.96 * s.sigma for s in order], fmt="o", capsize=4)
        ax.set_xlabel("Plackett-Luce rating (mean ± 1.96 sigma)")
    ax.set_yticks(y, [s.agent for s in order])
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

