"""Trained policies as agents: ``ppo:path=FILE.npz`` and the shipped models in ``models/``.

The network reads the deciding seat's observation (``midnight_env.core.observation``) and scores every
action; illegal actions are masked out and the best legal one is played (``sample=true``: drawn
from the masked softmax with the game's own random stream). Inference is numpy only, batched over
all the games an agent decides at once. The files and the forward pass are the model format's
(:mod:`midnight_agents.model`); its names are re-exported here for the code that imports them
from this module.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from midnight_agents.model import (
    MODEL_FORMAT,
    ModelError,
    PolicyModel,
    engine_description,
    model_meta,
    model_paths,
    observation_fingerprint,
    save_model,
)
from midnight_env.arena.agent import Agent, Decisions
from midnight_env.arena.registry import AgentInfo
from midnight_env.core.config import setup_words

MODELS_DIR = Path(__file__).resolve().parent / "models"  # models shipped with the package


def masked_choice(logits: np.ndarray, legal: np.ndarray, uniforms: np.ndarray | None = None) -> np.ndarray:
    """Best legal action per row, or (``uniforms`` given) one drawn from the masked softmax."""
    scores = np.where(legal.astype(bool), logits, -np.inf)
    if uniforms is None:
        return scores.argmax(axis=1).astype(np.int64)
    scores -= scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    cum = np.cumsum(probs, axis=1)
    target = uniforms[:, None] * cum[:, -1:]
    picks = (cum <= target).sum(axis=1)
    # a float edge (target == total) must still land on a legal action: the last legal one
    last_legal = legal.shape[1] - 1 - np.argmax(legal[:, ::-1].astype(bool), axis=1)
    return np.minimum(picks, last_legal).astype(np.int64)


class PPOAgent(Agent):
    name = "ppo"
    description = ("a trained policy network loaded from a model file: ppo:path=FILE.npz "
                   "(sample=true draws from its masked softmax instead of playing its best choice)")
    plays = "the set-up of its model file (ppo:path=FILE.npz)"

    def __init__(self, path: str | Path | None = None, sample: bool = False, model: PolicyModel | None = None):
        # by hand: a bool by type (checks.choice would take 1 and 0, equal to True and False)
        if isinstance(sample, str) or not isinstance(sample, (bool, np.bool_)):
            raise ModelError(f"ppo option sample={sample!r} is not allowed: allowed are true, false")
        if (path is None) == (model is None):
            raise ModelError("a ppo agent needs its model file: ppo:path=FILE.npz")
        self.model = model if model is not None else PolicyModel.load(path)
        self.sample = bool(sample)
        self.name = self.model.name

    def act(self, decisions: Decisions) -> np.ndarray:
        self.model.check_engine(decisions.engine)
        logits = self.model.logits(decisions.observations())
        return masked_choice(logits, decisions.legal, decisions.uniforms() if self.sample else None)


def shipped_models(formats: tuple[str, ...] = (MODEL_FORMAT,)) -> list[tuple[str, Path, dict]]:
    """(name, stem path, metadata) of every model of ``formats`` in ``models/`` beside this module."""
    found = []
    for js in sorted(MODELS_DIR.glob("*.json")):
        try:
            meta = json.loads(js.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if meta.get("format") in formats:
            found.append((js.stem, js.with_suffix(""), meta))
    return found


def shipped_description(meta: dict) -> str:
    t = meta.get("training", {})
    steps = t.get("total_env_steps", t.get("env_steps"))
    minutes = t.get("total_training_time_s", t.get("training_time_s"))
    extra = []
    if steps:
        extra.append(f"{steps / 1e6:.1f}M env steps")
    if minutes:
        extra.append(f"{minutes / 60:.0f} min")
    return (f"shipped PPO policy for {meta['variant']} with {meta['num_players']} players"
            + (f" ({', '.join(extra)} of training)" if extra else "") + "; best legal choice of its network")


def model_setup(meta: dict) -> str:
    """The set-up a model was trained for, in words (``hidden_castle 4 players``): the one it plays."""
    return setup_words(meta["variant"], meta["num_players"], meta.get("options"))


def shipped_factory(stem: Path):
    def factory(sample: bool = False) -> PPOAgent:
        return PPOAgent(stem, sample=sample)

    return factory


# the shipped models as agents, named like their files (an entry point in pyproject.toml)
SHIPPED_AGENTS = [AgentInfo(name, shipped_factory(stem), shipped_description(meta), plays=model_setup(meta))
                  for name, stem, meta in shipped_models()]


__all__ = ["PPOAgent", "PolicyModel", "ModelError", "save_model", "model_meta", "model_paths", "masked_choice",
           "engine_description", "observation_fingerprint", "shipped_models", "model_setup", "SHIPPED_AGENTS",
           "MODEL_FORMAT", "MODELS_DIR"]
