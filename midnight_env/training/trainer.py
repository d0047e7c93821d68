"""What ``midnight train`` asks of a trainer, written once: the :class:`Trainer` protocol that
:mod:`~midnight_env.training.native`, :mod:`~midnight_env.training.sb3`,
:mod:`~midnight_env.training.rllib_ppo` and :mod:`~midnight_env.training.value` satisfy (each a
module: its ``Args``, ``load_config``, ``train`` and ``SEEDS``), and the :class:`TrainResult`
each ``train`` returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from midnight_env.training.args import Settings


@dataclass
class TrainResult:
    """One training run, as its ``train`` returns it."""

    run_dir: Path
    """the run folder (config.yaml, metrics.csv, checkpoints/, model.npz/.json, learning_curve.png)"""
    steps: int
    """steps trained: env steps (native, rllib, value) or the learner's decisions (sb3)"""
    seconds: float
    """wall-clock seconds of training (a resumed run's time before included)"""
    eval: dict[str, float]
    """the final evaluation: ``eval/points``, ``eval/points_ci``, ``eval/win_rate`` at least"""
    metrics: dict[str, float] = field(default_factory=dict)
    """the last training metrics logged (``charts/…``, ``losses/…``)"""
    cpu_seconds: float = 0.0
    """CPU-seconds of the process while it trained (every thread's)"""
    model: Any = None
    """the trained network: a torch module (native, value), the MaskablePPO (sb3), None (rllib)"""
    members: list[TrainResult] = field(default_factory=list)
    """an ensemble's runs, one a member (value with ``members``)"""

    def __getitem__(self, key: str) -> Any:
        """``result["run_dir"]``: callers written when ``train`` returned a dict read on unchanged."""
        return getattr(self, key)


@runtime_checkable
class Trainer(Protocol):
    """A training module as ``midnight train --algo ...`` calls it."""

    Args: type[Settings]
    """its settings"""
    SEEDS: tuple[int, str]
    """its seeds: below the limit, and why (checked as ``--seed``)"""

    def load_config(self, path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> Settings:
        """Its settings from a YAML file (or the defaults) with ``overrides`` applied."""

    def train(self, args: Any, command: str | None = None) -> TrainResult:
        """One training run of those settings."""
