"""Run folders: every training run writes its resolved config and its metadata first.

``runs/<name>/`` holds ``config.yaml`` (every setting, defaults included), ``metrics.csv``,
``tensorboard/`` (when TensorBoard is installed), ``checkpoints/`` (models in the ``midnight_agents.model``
format, playable as ``ppo:path=...``), ``model.npz``/``model.json`` (the final policy) and
``learning_curve.png``.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from midnight_env.core.engine import ENGINE_VERSION
from midnight_env.infra.provenance import code_commit


def make_run_dir(root: str | Path, name: str) -> Path:
    """``root/name``, or ``root/name-2``, ``-3``... when it exists already (runs are never overwritten)."""
    root = Path(root)
    path = root / name
    k = 2
    while path.exists():
        path = root / f"{name}-{k}"
        k += 1
    path.mkdir(parents=True)
    (path / "checkpoints").mkdir()
    return path


def command_line() -> str:
    """How this process was started, for the model's metadata: ``midnight train ...`` for the
    installed command, ``python SCRIPT ...`` for a script."""
    first = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    script = first is None or first.suffix == ".py" or not first.is_file()  # not a console script
    words = [Path(sys.executable).name, *sys.argv] if script else [first.name, *sys.argv[1:]]
    return " ".join(shlex.quote(a) for a in words)


def code_version() -> dict[str, Any]:
    """The commit the code came from and whether it had uncommitted changes (call it at the start)."""
    commit = code_commit()
    return {"git_commit": commit.removesuffix("+dirty") if commit else None,
            "uncommitted_changes": commit.endswith("+dirty") if commit else None}


def write_config(run_dir: Path, config: dict[str, Any]) -> Path:
    path = run_dir / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def training_metadata(algorithm: str, config: dict[str, Any], seed: int, seconds: float, env_steps: int, *,
                      cpu_seconds: float, command: str | None = None, code: dict[str, Any] | None = None
                      ) -> dict[str, Any]:
    """The ``training`` section of a model's JSON: what trained it (algorithm, command, every setting,
    seed, engine and code version) and what it cost (wall-clock ``seconds``, ``cpu_seconds`` of the
    process, all its threads, and env steps). ``code``: :func:`code_version` taken when the run started."""
    import os
    import platform

    return {"algorithm": algorithm, "command": command or command_line(), "config": config, "seed": seed,
            "training_time_s": round(seconds, 1), "cpu_time_s": round(cpu_seconds, 1), "env_steps": int(env_steps),
            "engine_version": ENGINE_VERSION,
            **(code if code is not None else code_version()), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "machine": f"{platform.machine()} {platform.processor() or platform.system()}, {os.cpu_count()} CPUs"}


class RunFolder:
    """A training run's folder, opened when the run starts: its config.yaml written first, its metrics
    log, its clocks (wall and CPU, a resumed run's time before included) and the code version; the
    models it writes (checkpoints, the final model) and what it closes with (the learning curve)."""

    def __init__(self, run_dir: Path, config: dict[str, Any], *, append_to_step: int | None = None,
                 seconds: float = 0.0, cpu_seconds: float = 0.0):
        from midnight_env.training.logger import MetricLogger

        self.run_dir, self.config = run_dir, config
        write_config(run_dir, config)
        self.logger = MetricLogger(run_dir, append_to_step=append_to_step, seconds=seconds)
        self.code = code_version()
        self.start = time.perf_counter() - seconds
        self.cpu_start = time.process_time() - cpu_seconds

    @classmethod
    def new(cls, settings) -> RunFolder:
        """A new folder <run_dir>/<run name> (-2, -3 ... where it exists) for ``settings``."""
        return cls(make_run_dir(settings.run_dir, settings.run_name()), settings.as_mapping())

    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def cpu_seconds(self) -> float:
        return time.process_time() - self.cpu_start

    def log(self, step: int, metrics: dict[str, Any]) -> None:
        self.logger.log(step, metrics)

    def training(self, algorithm: str, seed: int, steps: int, command: str | None = None, *,
                 seconds: float | None = None, cpu_seconds: float | None = None) -> dict[str, Any]:
        """The ``training`` section of a model's metadata (:func:`training_metadata`), the time so far by default."""
        return training_metadata(algorithm, self.config, seed, self.seconds() if seconds is None else seconds, steps,
                                 cpu_seconds=self.cpu_seconds() if cpu_seconds is None else cpu_seconds,
                                 command=command, code=self.code)

    def checkpoint(self, step: int, weights: dict, meta: dict[str, Any]) -> None:
        """checkpoints/step<step>.npz/.json: a model like the final one, playable."""
        from midnight_agents.model import save_model

        save_model(self.run_dir / "checkpoints" / f"step{step}", weights, meta)

    def save(self, weights: dict, meta: dict[str, Any], also: str = "") -> None:
        """The final model, model.npz/.json, and at ``also`` too (``save_model``) where one is given."""
        from midnight_agents.model import save_model

        save_model(self.run_dir / "model", weights, meta)
        if also:
            save_model(also, weights, meta)

    def close(self, title: str) -> None:
        """The metrics closed and drawn as learning_curve.png."""
        from midnight_env.training.logger import plot_learning_curve

        self.logger.close()
        plot_learning_curve(self.run_dir / "metrics.csv", self.run_dir / "learning_curve.png", title)
