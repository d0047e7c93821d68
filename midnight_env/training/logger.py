"""Metrics of a training run: one CSV row per value, TensorBoard when installed, a learning curve.

Names follow cleanrl: ``charts/…`` (episodes, speed), ``losses/…`` (the update), ``eval/…``
(games against fixed heuristics; ``eval/points`` is the policy's mean spooky points, lower is
better, ``eval/points/<agent>`` each heuristic's in the same games).
"""

from __future__ import annotations

import csv
import math
import time
from collections import defaultdict
from pathlib import Path


class MetricLogger:
    """``log(step, {"losses/value_loss": 0.3, ...})`` appends to ``metrics.csv`` (step, seconds, name, value)."""

    def __init__(self, run_dir: str | Path, tensorboard: bool = True, append_to_step: int | None = None,
                 seconds: float = 0.0):
        """``append_to_step``: a resumed run keeps the rows of an existing ``metrics.csv`` up to that
        step and writes on after them; ``seconds``: the time already spent (the seconds column
        goes on from there)."""
        self.path = Path(run_dir) / "metrics.csv"
        kept = []
        if append_to_step is not None and self.path.is_file():
            with open(self.path, newline="", encoding="utf-8") as f:
                kept = [row for row in csv.DictReader(f) if int(row["step"]) <= append_to_step]
        self._file = open(self.path, "w", newline="", encoding="utf-8")
        self._csv = csv.writer(self._file)
        self._csv.writerow(["step", "seconds", "name", "value"])
        for row in kept:
            self._csv.writerow([row["step"], row["seconds"], row["name"], row["value"]])
        self._start = time.perf_counter() - seconds
        self.tb = None
        if tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:  # tensorboard not installed: the CSV is the log
                SummaryWriter = None
            if SummaryWriter is not None:
                self.tb = SummaryWriter(str(Path(run_dir) / "tensorboard"))

    def log(self, step: int, metrics: dict[str, float]) -> None:
        seconds = round(time.perf_counter() - self._start, 2)
        for name, value in metrics.items():
            value = float(value)
            self._csv.writerow([int(step), seconds, name, f"{value:.6g}"])
            if self.tb is not None:
                self.tb.add_scalar(name, value, int(step))
        self._file.flush()

    def close(self) -> None:
        self._file.close()
        if self.tb is not None:
            self.tb.close()


def read_metrics(path: str | Path) -> dict[str, tuple[list[int], list[float]]]:
    """{name: (steps, values)} from a ``metrics.csv``."""
    series: dict[str, tuple[list[int], list[float]]] = defaultdict(lambda: ([], []))
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            steps, values = series[row["name"]]
            steps.append(int(row["step"]))
            values.append(float(row["value"]))
    return dict(series)


def plot_learning_curve(metrics_csv: str | Path, png: str | Path, title: str = "") -> Path:
    """Three panels: evaluation points against the heuristics, training episodes, losses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = read_metrics(metrics_csv)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    if "eval/points" in series:
        steps, values = series["eval/points"]
        ax.plot(steps, values, "o-", color="black", lw=2, label="policy")
        if "eval/points_ci" in series:
            half = series["eval/points_ci"][1]
            ax.fill_between(steps, [v - h for v, h in zip(values, half)], [v + h for v, h in zip(values, half)],
                            color="black", alpha=0.15)
        for name in sorted(n for n in series if n.startswith("eval/points/")):
            s, v = series[name]
            ax.plot(s, v, ".--", lw=1, label=name.split("/", 2)[2])
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    ax.set_title("evaluation: mean spooky points (lower is better)")
    ax.set_xlabel("env steps")
    ax = axes[1]
    for name in ("charts/episodic_points", "charts/win_rate"):
        if name in series:
            s, v = series[name]
            ax.plot(s, v, lw=1, label=name)
    ax.set_title("training games")
    ax.set_xlabel("env steps")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    ax = axes[2]
    for name in sorted(n for n in series if n.startswith("losses/")):
        s, v = series[name]
        if all(math.isfinite(x) for x in v):
            ax.plot(s, v, lw=1, label=name.split("/", 1)[1])
    ax.set_title("losses")
    ax.set_xlabel("env steps")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png
