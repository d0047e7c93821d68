"""BENCHMARKS_TRAIN.md, "Afterstate value networks ...: learning curves": docs/value_learning_curves.png.

Learning curves of training runs against the strong field: mean points vs env steps and CPU-minutes.

Reads each run folder's metrics.csv (``eval/points``, ``eval/points_ci``, ``eval/points/<agent>``,
``charts/cpu_minutes``, as ``midnight train --algo value`` logs them) and draws one row per run:
the learner's mean points with its 95 % interval and each field agent's mean points in the same
games, against env steps (left) and against the CPU-minutes spent so far (right).

    python experiments/plot_learning_curves.py runs/value-midnight_party-4p-s1 ... --out docs/learning_curves.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

from midnight_env.training.logger import read_metrics


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="run folders (each with metrics.csv)")
    p.add_argument("--labels", default="", help="comma-separated titles, one per run (default: folder names)")
    p.add_argument("--out", default="learning_curves.png")
    a = p.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = a.labels.split(",") if a.labels else [Path(r).name for r in a.runs]
    fig, axes = plt.subplots(len(a.runs), 2, figsize=(11, 3.2 * len(a.runs)), squeeze=False)
    for row, (run, label) in zip(axes, zip(a.runs, labels)):
        series = read_metrics(Path(run) / "metrics.csv")
        steps, points = series["eval/points"]
        half = series.get("eval/points_ci", (steps, [0.0] * len(steps)))[1]
        minutes = dict(zip(*series["charts/cpu_minutes"]))
        for ax, xs, xlabel in ((row[0], [s / 1e6 for s in steps], "env steps (millions)"),
                               (row[1], [minutes[s] for s in steps], "CPU-minutes")):
            ax.plot(xs, points, "o-", color="black", lw=2, label="learner (one ply)")
            ax.fill_between(xs, [v - h for v, h in zip(points, half)], [v + h for v, h in zip(points, half)],
                            color="black", alpha=0.15)
            for name in sorted(n for n in series if n.startswith("eval/points/")):
                s, v = series[name]
                ax.plot([x for x, t in zip(xs, steps) if t in s], v, ".--", lw=1, label=name.split("/", 2)[2])
            ax.set_xlabel(xlabel)
            ax.set_ylabel("mean spooky points (fewer is better)")
            ax.set_title(label, fontsize=9)
            ax.grid(alpha=0.3)
        row[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out, dpi=80)
    print(f"written: {a.out}")


if __name__ == "__main__":
    main()
