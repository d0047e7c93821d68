"""Trained policies as agents: a small MLP stored as ``NAME.npz`` (weights) + ``NAME.json`` (metadata).

The network reads the deciding seat's observation (``midnight_env.observation``) and scores every
action; illegal actions are masked out and the best legal one is played (``sample=true``: drawn
from the masked softmax with the game's own random stream). Inference is numpy only, batched over
all the games an agent decides at once, so playing needs neither torch nor stable-baselines3.

Network, as the weight names in the ``.npz`` say (``W`` stored as torch does, ``(out, in)``)::

    h = act(shared.0(obs)) ... act(shared.k(...))          shared trunk (may be empty)
    logits = policy.m(act(... act(policy.0(h))))           last layer linear, A outputs
    value  = value.m(act(... act(value.0(h))))             last layer linear, 1 output

Metadata (``.json``): ``format``, ``variant``, ``num_players``, ``num_actions``,
``observation_size``, ``observation_layout`` (a fingerprint of every observation index's name
and scale), ``activation`` and ``training`` (command, config, seed, training time, env steps).
A model is refused, with the file and the mismatch named, by an engine of another variant,
player count, action count or observation layout.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from midnight_env.agent import Agent, Decisions
from midnight_env.registry import AgentInfo

MODEL_FORMAT = "midnight-ppo/1"
MODELS_DIR = Path(__file__).resolve().parent / "models"  # models shipped with the package
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0, out=x),
}


class ModelError(ValueError):
    """A model file that is missing, unreadable or made for another game set-up."""


def observation_fingerprint(engine) -> str:
    """12 hex digits naming the observation layout: every index's name plus the scales."""
    from midnight_env.observation import observation_layout

    lay = observation_layout(engine)
    text = "\n".join(lay.names) + f"\n{lay.points_scale!r} {lay.inv_guests!r}"
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def model_paths(path: str | Path) -> tuple[Path, Path]:
    """(weights .npz, metadata .json) of a model given as either file or their common stem."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".npz", ".json") else path
    return stem.with_name(stem.name + ".npz"), stem.with_name(stem.name + ".json")


def engine_description(engine) -> dict[str, Any]:
    """The set-up fields a model must match, as stored in its metadata."""
    from midnight_env.observation import observation_size

    return {"variant": engine.variant, "num_players": engine.num_players, "num_actions": engine.num_actions,
            "observation_size": observation_size(engine), "observation_layout": observation_fingerprint(engine)}


def save_model(path: str | Path, weights: dict[str, np.ndarray], meta: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``path``.npz and ``path``.json; ``meta`` needs the :func:`engine_description` fields."""
    npz, js = model_paths(path)
    missing = [k for k in ("variant", "num_players", "num_actions", "observation_size", "observation_layout")
               if k not in meta]
    if missing:
        raise ModelError(f"model metadata for {npz} lacks {', '.join(missing)}")
    npz.parent.mkdir(parents=True, exist_ok=True)
    np.savez(npz, **{k: np.asarray(v, np.float32) for k, v in weights.items()})
    js.write_text(json.dumps({"format": MODEL_FORMAT, "activation": "tanh", **meta}, indent=2, default=str) + "\n")
    return npz, js


class PolicyModel:
    """A model's network (numpy forward pass) and the metadata it was saved with."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], source: str = "<memory>"):
        self.source = source
        self.meta = meta
        if meta.get("format", MODEL_FORMAT) != MODEL_FORMAT:
            raise ModelError(f"model {source} has format {meta.get('format')!r}: this version reads {MODEL_FORMAT!r}")
        act = meta.get("activation", "tanh")
        if act not in ACTIVATIONS:
            raise ModelError(f"model {source}: activation {act!r} is not one of {', '.join(ACTIVATIONS)}")
        self.activation = ACTIVATIONS[act]
        self.layers = {part: self._stack(arrays, part) for part in ("shared", "policy", "value")}
        if not self.layers["policy"] or not self.layers["value"]:
            raise ModelError(f"model {source} has no policy.0 or value.0 layer")
        first = self.layers["shared"] or self.layers["policy"]
        width, outputs = first[0][0].shape[0], self.layers["policy"][-1][0].shape[1]
        if width != meta.get("observation_size") or outputs != meta.get("num_actions"):
            raise ModelError(f"model {source}: its network reads {width} inputs and scores {outputs} actions, "
                             f"its metadata says {meta.get('observation_size')} and {meta.get('num_actions')}")
        self._checked: set[int] = set()

    @classmethod
    def load(cls, path: str | Path) -> PolicyModel:
        """Read ``path`` (``NAME.npz``, ``NAME.json`` or ``NAME``); ModelError names a missing or bad file."""
        npz, js = model_paths(path)
        for p in (npz, js):
            if not p.is_file():
                raise ModelError(f"model file {p} does not exist (a model is NAME.npz with NAME.json beside it)")
        try:
            meta = json.loads(js.read_text())
        except (OSError, json.JSONDecodeError) as err:
            raise ModelError(f"model file {js} is not readable JSON: {err}") from None
        if not isinstance(meta, dict):
            raise ModelError(f"model file {js} does not hold a JSON object")
        try:
            with np.load(npz) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as err:
            raise ModelError(f"model file {npz} is not a readable .npz: {err}") from None
        model = cls(arrays, meta, source=str(npz))
        model.npz_path, model.json_path = npz, js
        return model

    def _stack(self, arrays: dict[str, np.ndarray], part: str) -> list[tuple[np.ndarray, np.ndarray]]:
        layers = []
        while f"{part}.{len(layers)}.weight" in arrays:
            k = len(layers)
            w = np.ascontiguousarray(arrays[f"{part}.{k}.weight"].T, dtype=np.float32)  # (in, out): x @ w
            layers.append((w, arrays[f"{part}.{k}.bias"].astype(np.float32)))
        return layers

    @property
    def name(self) -> str:
        return Path(self.source).stem

    @property
    def num_parameters(self) -> int:
        return sum(w.size + b.size for part in self.layers.values() for w, b in part)

    def check_engine(self, engine) -> None:
        """ModelError naming this file and every field where ``engine`` differs from the model."""
        if id(engine) in self._checked:
            return
        want = engine_description(engine)
        wrong = [f"{k} {self.meta.get(k)!r} (the game has {v!r})" for k, v in want.items() if self.meta.get(k) != v]
        if wrong:
            raise ModelError(f"model {self.source} does not fit this game: it was trained for "
                             + ", ".join(wrong))
        self._checked.add(id(engine))

    def _mlp(self, x: np.ndarray, layers) -> np.ndarray:
        for k, (w, b) in enumerate(layers):
            x = x @ w
            x += b
            if k < len(layers) - 1:
                x = self.activation(x)
        return x

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits (n, A), values (n,)) for observations (n, D)."""
        h = np.asarray(obs, np.float32)
        for w, b in self.layers["shared"]:
            h = h @ w
            h += b
            h = self.activation(h)
        return self._mlp(h, self.layers["policy"]), self._mlp(h, self.layers["value"])[:, 0]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        h = np.asarray(obs, np.float32)
        for w, b in self.layers["shared"]:
            h = h @ w
            h += b
            h = self.activation(h)
        return self._mlp(h, self.layers["policy"])


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

    def __init__(self, path: str | Path | None = None, sample: bool = False, model: PolicyModel | None = None):
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


def shipped_models() -> list[tuple[str, Path, dict]]:
    """(name, stem path, metadata) of every model in ``models/`` beside this module."""
    found = []
    for js in sorted(MODELS_DIR.glob("*.json")):
        try:
            meta = json.loads(js.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if meta.get("format") == MODEL_FORMAT:
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


def shipped_factory(stem: Path):
    def factory(sample: bool = False) -> PPOAgent:
        return PPOAgent(stem, sample=sample)

    return factory


# the shipped models as agents, named like their files (an entry point in pyproject.toml)
SHIPPED_AGENTS = [AgentInfo(name, shipped_factory(stem), shipped_description(meta))
                  for name, stem, meta in shipped_models()]


__all__ = ["PPOAgent", "PolicyModel", "ModelError", "save_model", "model_paths", "masked_choice",
           "engine_description", "observation_fingerprint", "shipped_models", "SHIPPED_AGENTS", "MODEL_FORMAT", "MODELS_DIR"]
