"""The leaderboard shown and written: a plain-text, rich or Markdown table, CSV, and a PNG of the
ratings with their 95 % intervals."""

from __future__ import annotations

import csv
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


def format_table(standings: list[Standing]) -> str:
    """Plain-text table (aligned columns)."""
    rows = [_HEADER] + _rows(standings)
    widths = [max(len(r[c]) for r in rows) for c in range(len(_HEADER))]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(x.ljust(w) if c == 1 else x.rjust(w) for c, (x, w) in enumerate(zip(r, widths))))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_table(standings: list[Standing], title: str = "") -> None:
    """The standings on stdout: a rich table on a terminal, aligned plain text otherwise (pipes and
    files get every agent name in full)."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich is optional
        Console = None
    console = Console() if Console is not None else None
    if console is None or not console.is_terminal:
        if title:
            print(title)
        print(format_table(standings))
        return
    table = Table(title=title or None)
    longest = max((len(s.agent) for s in standings), default=5)
    for c, head in enumerate(_HEADER):
        table.add_column(head, justify="left" if c == 1 else "right", no_wrap=True,
                         min_width=longest if c == 1 else None)
    for row in _rows(standings):
        table.add_row(*row)
    console.print(table)


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

