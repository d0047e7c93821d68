"""Writes agents/models/value-<variant>-4p and -6p, runs stopped by hand (BENCHMARKS_TRAIN.md, "Today's results").

Ship a value-training checkpoint of a run stopped by hand as a model of agents/models/.

The shipped model says that the run was stopped there and how to reproduce it (below). Checkpoints
of the current trainer carry their training so far (command, settings, seed, env steps, CPU time,
code version); ``--commit`` must name the commit they record. Checkpoints of runs started before
the trainer wrote that into them carry only the network's description: this script adds what the
final model of a finished run carries (algorithm, command, every setting, seed, env steps, wall
time, CPU time, code version), read from the run folder (config.yaml; metrics.csv for the CPU
minutes and wall seconds logged at the checkpoint's evaluation), plus the commit the run started
from, which the old checkpoint did not record (``--commit``), and how to reproduce it:
``--reproduce`` names the config in configs/ whose total_timesteps is the checkpoint's steps and
whose anneal_timesteps is the run's planned total, so the learning rate follows the same schedule.

    python experiments/ship_checkpoint.py runs/value-midnight_party-4p-s1 8229337 \\
        agents/models/value-midnight_party-4p --commit e4406b2 --reproduce configs/value-midnight_party-4p.yaml
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

import yaml

from midnight_env.core.engine import ENGINE_VERSION
from midnight_env.training.logger import read_metrics


def at_step(series: dict, name: str, step: int) -> float:
    steps, values = series[name]
    if step not in steps:
        raise SystemExit(f"metrics.csv has no {name} at step {step}: it was logged at {steps}")
    return values[steps.index(step)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="the run folder (config.yaml, metrics.csv, checkpoints/)")
    p.add_argument("step", type=int, help="the checkpoint's env steps (checkpoints/step<STEP>.npz)")
    p.add_argument("out", help="model path without suffix, e.g. agents/models/value-midnight_party-4p")
    p.add_argument("--commit", required=True, help="the commit of the code the run started from")
    p.add_argument("--reproduce", required=True, help="the config in configs/ that reproduces the checkpoint")
    a = p.parse_args()
    run = Path(a.run)
    stem = run / "checkpoints" / f"step{a.step}"
    meta = json.loads(stem.with_suffix(".json").read_text())
    config = yaml.safe_load((run / "config.yaml").read_text())
    series = read_metrics(run / "metrics.csv")
    iterations = series["losses/value_loss"][0].index(a.step) + 1
    cpu_seconds = at_step(series, "charts/cpu_minutes", a.step) * 60
    evaluation = {k.removeprefix("eval/"): at_step(series, k, a.step) for k in series if k.startswith("eval/")}
    reproduce = yaml.safe_load(Path(a.reproduce).read_text())
    if (reproduce["total_timesteps"], reproduce.get("anneal_timesteps", 0)) != (a.step, config["total_timesteps"]):
        raise SystemExit(f"{a.reproduce} must have total_timesteps: {a.step} and anneal_timesteps: "
                         f"{config['total_timesteps']} to reproduce the checkpoint")
    if "training" not in meta:  # a checkpoint of an older trainer: its record from the run folder
        created = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(stem.with_suffix(".npz").stat().st_mtime))
        meta["training"] = {
            "algorithm": "value_iteration",
            "command": f"midnight train --algo value --config {config['config']}",
            "config": config, "seed": config["seed"],
            "training_time_s": round(_wall(run, a.step), 1),
            "cpu_time_s": round(cpu_seconds, 1), "env_steps": a.step, "engine_version": ENGINE_VERSION,
            "git_commit": a.commit, "uncommitted_changes": None, "created": created,
            "machine": f"{os.uname().machine} Linux, {os.cpu_count()} CPUs",
            "cpu_minutes": round(cpu_seconds / 60, 1), "iterations": iterations}
    elif not meta["training"]["git_commit"].startswith(a.commit):  # the full hash or its abbreviation
        raise SystemExit(f"{stem}.json was trained at commit {meta['training']['git_commit']}, not {a.commit}")
    meta["training"] |= {
        "stopped": (f"stopped by hand after iteration {iterations}, at {a.step:,} of its {config['total_timesteps']:,} "
                    "env steps; this is that iteration's checkpoint"),
        "reproduce": {"command": f"midnight train --algo value --config {a.reproduce}",
                      "note": f"total_timesteps {a.step} ends the run at this checkpoint; anneal_timesteps "
                              f"{config['total_timesteps']} keeps the learning rate's schedule of the stopped run"},
        "evaluation": {"deals": config["eval_deals"], "field": config["eval_field"], **evaluation},
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(stem.with_suffix(".npz"), out.with_suffix(".npz"))
    out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{out}.npz/.json: {a.step:,} env steps, {cpu_seconds / 60:.1f} CPU-minutes, iteration {iterations}")


def _wall(run: Path, step: int) -> float:
    """Wall seconds at ``step``, its evaluation included: the last of metrics.csv's rows of that step."""
    import csv

    with open(run / "metrics.csv", newline="", encoding="utf-8") as f:
        seconds = [float(row["seconds"]) for row in csv.DictReader(f) if int(row["step"]) == step]
    if not seconds:
        raise SystemExit(f"metrics.csv has no row at step {step}")
    return max(seconds)


if __name__ == "__main__":
    main()
