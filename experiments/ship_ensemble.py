"""Writes agents/models/value-hidden_castle-4p (BENCHMARKS_TRAIN.md, "An ensemble for `value-hidden_castle-4p`").

Ship value networks trained as separate runs as one ensemble model of agents/models/.

``midnight train --algo value --config CONFIG`` with ``members`` in CONFIG trains every member and
saves the ensemble itself. Where the members were trained before, one run each, this script joins
their model files instead (:func:`midnight_agents.model.ensemble_model`), after checking that each
one was trained with the settings CONFIG gives that member (every setting but where it was written;
a run stopped by hand as ``experiments/ship_checkpoint.py`` records it), so that CONFIG reproduces
the shipped model. Its ``training`` names CONFIG's command, the sum of the members' env steps and
CPU time, and the commit the ensemble was joined at; each member's own record is under ``members``;
the config's ``play`` becomes the model's.

    python experiments/ship_ensemble.py agents/models/value-hidden_castle-4p runs/value-hc4-own-s1/model \\
        --out agents/models/value-hidden_castle-4p --config configs/value-hidden_castle-4p.yaml
"""

from __future__ import annotations

import argparse
import json
import os
import time

from midnight_agents.model import ValueModel, ensemble_model, save_model
from midnight_env.core.engine import ENGINE_VERSION
from midnight_env.training.args import from_mapping, to_mapping
from midnight_env.training.runs import code_version
from midnight_env.training.value import NOT_MEMBER, Args, load_config, member_settings


def trained_settings(training: dict) -> dict:
    """Every setting a model was trained with (settings newer than it at their defaults, which keep
    the old behaviour), but where it was written; a run stopped by hand as its config reproduces it."""
    settings = to_mapping(from_mapping(Args, {k: v for k, v in training["config"].items() if k != "config"}))
    if "stopped" in training:
        settings["anneal_timesteps"] = settings["anneal_timesteps"] or settings["total_timesteps"]
        settings["total_timesteps"] = training["env_steps"]
    return {k: v for k, v in settings.items() if k not in NOT_MEMBER | {"progress"}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("members", nargs="+", help="the members' model files, in the order of the config's members")
    p.add_argument("--out", required=True, help="model path without suffix, e.g. agents/models/value-hidden_castle-4p")
    p.add_argument("--config", required=True, help="the config in configs/ whose members these are")
    a = p.parse_args()
    config = to_mapping(load_config(a.config))
    models = [ValueModel.load(path) for path in a.members]
    if len(models) != len(config["members"]):
        raise SystemExit(f"{a.config} has {len(config['members'])} members, {len(models)} model files were given")
    for i, model in enumerate(models):
        want = {k: v for k, v in member_settings(config, i).items() if k != "progress"}
        got = trained_settings(model.meta["training"])
        wrong = [f"{k} {got.get(k)!r} (the config gives {v!r})" for k, v in want.items() if got.get(k) != v]
        if wrong:
            raise SystemExit(f"{model.source} was not trained as member {i} of {a.config}: " + ", ".join(wrong))
    trainings = [m.meta["training"] for m in models]
    cpu_seconds = sum(t["cpu_time_s"] for t in trainings)
    training = {"algorithm": "value_iteration", "command": f"midnight train --algo value --config {a.config}",
                "config": config, "seed": config["seed"],
                "training_time_s": round(sum(t["training_time_s"] for t in trainings), 1),
                "cpu_time_s": round(cpu_seconds, 1), "env_steps": sum(t["env_steps"] for t in trainings),
                "engine_version": ENGINE_VERSION, **code_version(), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "machine": f"{os.uname().machine} Linux, {os.cpu_count()} CPUs",
                "cpu_minutes": round(cpu_seconds / 60, 1),
                "joined": "its members were trained as separate runs (members[i].command) and joined by "
                          "experiments/ship_ensemble.py; the config trains them and saves the same ensemble"}
    model = ensemble_model(models, training)
    if config["play"]:
        model.meta["play"] = dict(config["play"])
    save_model(a.out, model.weights(), model.meta)
    print(f"{a.out}.npz/.json: {len(model.members)} networks, {training['env_steps']:,} env steps, "
          f"{training['cpu_minutes']} CPU-minutes")
    print(json.dumps([t["command"] for t in trainings], indent=1))


if __name__ == "__main__":
    main()
