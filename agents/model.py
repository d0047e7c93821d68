"""The model format: a small MLP stored as ``NAME.npz`` (weights) + ``NAME.json`` (metadata).

Every trainer writes models through :func:`save_model` and every player reads them through
:class:`PolicyModel` or :class:`ValueModel` (:func:`load_model` tells them apart); nothing else
knows the files. The forward pass is numpy only, so playing a model needs neither torch nor
stable-baselines3.

Two kinds, named by the metadata's ``format``. A **policy** (``midnight-ppo/1``), as the weight
names in the ``.npz`` say (``W`` stored as torch does, ``(out, in)``)::

    h = act(shared.0(obs)) ... act(shared.k(...))          shared trunk (may be empty)
    logits = policy.m(act(... act(policy.0(h))))           last layer linear, A outputs
    value  = value.m(act(... act(value.0(h))))             last layer linear, 1 output

An **afterstate value** (``midnight-value/1``): ``value.m(act(... act(value.0(obs))))``, last
layer linear with N outputs, read at the position right after a player's decision, seen by that
player: the spooky points each player (that player first, then clockwise) will still book until
the game ends, divided by the metadata's ``points_scale``. An **ensemble** of such networks, trained
apart, is one file too: member 0 under ``value.*``, member i under ``member<i>.value.*``, the
metadata's ``members`` listing each one's training; it predicts the mean of its members' outputs
(independent fits err apart, so their mean errs less: :func:`ensemble_model`). Its metadata's
``play`` (optional) holds the value agent's default options for it: ``others``, the weight of the
others' points in its choices.

Metadata (``.json``): ``format``, ``variant``, ``num_players``, ``num_actions``,
``observation_size``, ``observation_layout`` (a fingerprint of every observation index's name
and scale), ``options``, ``activation`` and ``training`` (algorithm, command, config, seed, wall
and CPU time, env steps, engine and code version; :func:`midnight_env.training.runs.training_metadata`).
A model is refused, with the file and the mismatch named, by an engine of another variant,
player count, action count or observation layout.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

from midnight_env.infra import checks

MODEL_FORMAT = "midnight-ppo/1"  # a policy network (and its PPO value head)
VALUE_FORMAT = "midnight-value/1"  # an afterstate value network: every player's points still to come
FORMATS = (MODEL_FORMAT, VALUE_FORMAT)
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0, out=x),
}
PLAY_OPTIONS = ("others",)  # what a value model's metadata may set of the value agent's options
SETUP_FIELDS = ("variant", "num_players", "num_actions", "observation_size", "observation_layout")


class ModelError(ValueError):
    """A model file that is missing, unreadable or made for another game set-up."""


def observation_fingerprint(engine) -> str:
    """12 hex digits naming the observation layout: every index's name plus the scales."""
    from midnight_env.core.observation import observation_layout

    lay = observation_layout(engine)
    text = "\n".join(lay.names) + f"\n{lay.points_scale!r} {lay.inv_guests!r}"
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def model_paths(path: str | Path) -> tuple[Path, Path]:
    """(weights .npz, metadata .json) of a model given as either file or their common stem."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".npz", ".json") else path
    return stem.with_name(stem.name + ".npz"), stem.with_name(stem.name + ".json")


def engine_description(engine) -> dict[str, Any]:
    """The set-up fields a model must match (:data:`SETUP_FIELDS`), as stored in its metadata."""
    from midnight_env.core.observation import observation_size

    return {"variant": engine.variant, "num_players": engine.num_players, "num_actions": engine.num_actions,
            "observation_size": observation_size(engine), "observation_layout": observation_fingerprint(engine)}


def model_meta(engine, activation: str = "tanh", training: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metadata of a model for ``engine``'s game: its set-up, rule options, activation and training."""
    meta = {**engine_description(engine), "options": dict(engine.config.options), "activation": activation}
    if training is not None:
        meta["training"] = training
    return meta


def save_model(path: str | Path, weights: dict[str, np.ndarray], meta: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``path``.npz and ``path``.json; ``meta`` needs the :func:`engine_description` fields."""
    npz, js = model_paths(path)
    missing = [k for k in SETUP_FIELDS if k not in meta]
    if missing:
        raise ModelError(f"model metadata for {npz} lacks {', '.join(missing)}")
    npz.parent.mkdir(parents=True, exist_ok=True)
    np.savez(npz, **{k: np.asarray(v, np.float32) for k, v in weights.items()})
    js.write_text(json.dumps({"format": MODEL_FORMAT, "activation": "tanh", **meta}, indent=2, default=str) + "\n")
    return npz, js


class Model:
    """A model file's network (numpy forward pass) and the metadata it was saved with."""

    format = ""
    parts: tuple[str, ...] = ()

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], source: str = "<memory>"):
        self.source = source
        self.meta = meta
        if meta.get("format", self.format) != self.format:
            raise ModelError(f"model {source} has format {meta.get('format')!r}: this reader takes {self.format!r}")
        act = meta.get("activation", "tanh")
        if act not in ACTIVATIONS:
            raise ModelError(f"model {source}: activation {act!r} is not one of {', '.join(ACTIVATIONS)}")
        self.activation = ACTIVATIONS[act]
        self.layers = {part: self._stack(arrays, part) for part in self.parts}
        self._checked: set[int] = set()

    @classmethod
    def load(cls, path: str | Path):
        """Read ``path`` (``NAME.npz``, ``NAME.json`` or ``NAME``); ModelError names a missing or bad file."""
        arrays, meta, npz, js = read_model_files(path)
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

    def weights(self) -> dict[str, np.ndarray]:
        """The weights by their names in the ``.npz``, ``W`` as ``(out, in)`` (to start a trainer from)."""
        return {f"{part}.{k}.{name}": array for part, layers in self.layers.items()
                for k, (w, b) in enumerate(layers) for name, array in (("weight", w.T), ("bias", b))}

    def member_weights(self, k: int) -> dict[str, np.ndarray]:
        """The weights of member ``k`` of an ensemble (0: the first), named as one network's (``weights``)."""
        layers = self.layers[self.members[k]]
        return {f"value.{i}.{name}": array for i, (w, b) in enumerate(layers)
                for name, array in (("weight", w.T), ("bias", b))}

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


class PolicyModel(Model):
    """A policy network: logits over every action (and PPO's value head)."""

    format = MODEL_FORMAT
    parts = ("shared", "policy", "value")

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], source: str = "<memory>"):
        super().__init__(arrays, meta, source)
        if not self.layers["policy"] or not self.layers["value"]:
            raise ModelError(f"model {source} has no policy.0 or value.0 layer")
        first = self.layers["shared"] or self.layers["policy"]
        width, outputs = first[0][0].shape[0], self.layers["policy"][-1][0].shape[1]
        if width != meta.get("observation_size") or outputs != meta.get("num_actions"):
            raise ModelError(f"model {source}: its network reads {width} inputs and scores {outputs} actions, "
                             f"its metadata says {meta.get('observation_size')} and {meta.get('num_actions')}")

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(logits (n, A), values (n,)) for observations (n, D)."""
        h = self._trunk(obs)
        return self._mlp(h, self.layers["policy"]), self._mlp(h, self.layers["value"])[:, 0]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        return self._mlp(self._trunk(obs), self.layers["policy"])

    def _trunk(self, obs: np.ndarray) -> np.ndarray:
        h = np.asarray(obs, np.float32)
        for w, b in self.layers["shared"]:
            h = h @ w
            h += b
            h = self.activation(h)
        return h


class ValueModel(Model):
    """An afterstate value network: the points every player will still book, seen by the player
    who has just decided (that player first, then clockwise)."""

    format = VALUE_FORMAT
    parts = ("value",)

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict[str, Any], source: str = "<memory>"):
        super().__init__(arrays, meta, source)
        if not self.layers["value"]:
            raise ModelError(f"model {source} has no value.0 layer")
        width, outputs = self.layers["value"][0][0].shape[0], self.layers["value"][-1][0].shape[1]
        if width != meta.get("observation_size") or outputs != meta.get("num_players"):
            raise ModelError(f"model {source}: its network reads {width} inputs and judges {outputs} players, "
                             f"its metadata says {meta.get('observation_size')} and {meta.get('num_players')}")
        self.points_scale = checks.number(f"model {source}: points_scale", meta.get("points_scale"), 0,
                                          low_open=True, error=ModelError)
        play = meta.get("play", {})  # by hand: one message for the mapping, its keys and its values
        if not isinstance(play, dict) or set(play) - set(PLAY_OPTIONS) or any(
                isinstance(v, bool) or not isinstance(v, (int, float)) for v in play.values()):
            raise ModelError(f"model {source}: play {play!r} is not allowed: allowed are numbers for "
                             f"{', '.join(PLAY_OPTIONS)}")

        self.members = ["value"]  # the parts whose networks are averaged: value, member1.value, ...
        while f"member{len(self.members)}.value.0.weight" in arrays:
            part = f"member{len(self.members)}.value"
            self.layers[part] = self._stack(arrays, part)
            shapes = [w.shape for w, _ in self.layers[part]]
            if shapes[0][0] != width or shapes[-1][1] != outputs:
                raise ModelError(f"model {source}: its member {len(self.members)} reads {shapes[0][0]} inputs and "
                                 f"judges {shapes[-1][1]} players, member 0 {width} and {outputs}")
            self.members.append(part)

    def points_to_come(self, obs: np.ndarray) -> np.ndarray:
        """(n, N) points each player will still book, for afterstate observations (n, D): the mean of
        the members' predictions."""
        obs = np.asarray(obs, np.float32)
        total = self._mlp(obs, self.layers["value"])
        for part in self.members[1:]:
            total += self._mlp(obs, self.layers[part])
        return total * np.float32(self.points_scale / len(self.members))


def ensemble_model(models: list[ValueModel], training: dict[str, Any] | None = None,
                   source: str = "<memory>") -> ValueModel:
    """One value model averaging every network of ``models`` (an ensemble among them gives all its
    members). They must be made for the same game (:data:`SETUP_FIELDS`, rule options) and share
    ``points_scale`` and activation: ModelError names the first that does not. The metadata lists
    each network's training under ``members``; ``training`` (what trained the whole, the sum of its
    cost) becomes its ``training``."""
    if not models:
        raise ModelError("an ensemble needs one value model at least")
    first = models[0]
    same = (*SETUP_FIELDS, "options", "points_scale", "activation")
    arrays: dict[str, np.ndarray] = {}
    trainings: list[Any] = []
    for model in models:
        wrong = [f"{k} {model.meta.get(k)!r} (the first has {first.meta.get(k)!r})" for k in same
                 if model.meta.get(k) != first.meta.get(k)]
        if wrong:
            raise ModelError(f"model {model.source} cannot join an ensemble with {first.source}: " + ", ".join(wrong))
        member_trainings = model.meta.get("members") or [model.meta.get("training")]
        for part, member_training in zip(model.members, member_trainings):
            prefix = "value" if not trainings else f"member{len(trainings)}.value"
            for k, (w, b) in enumerate(model.layers[part]):
                arrays[f"{prefix}.{k}.weight"], arrays[f"{prefix}.{k}.bias"] = w.T, b
            trainings.append(member_training)
    meta = {k: v for k, v in first.meta.items() if k not in ("training", "members")}
    meta["members"] = trainings
    if training is not None:
        meta["training"] = training
    return ValueModel(arrays, meta, source)


def read_model_files(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any], Path, Path]:
    """(arrays, metadata, .npz path, .json path) of a model; ModelError names a missing or bad file."""
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
    return arrays, meta, npz, js


def load_model(path: str | Path) -> Model:
    """A :class:`PolicyModel` or :class:`ValueModel`, as the file's ``format`` says."""
    arrays, meta, npz, js = read_model_files(path)
    kinds = {cls.format: cls for cls in (PolicyModel, ValueModel)}
    cls = kinds.get(meta.get("format", MODEL_FORMAT))
    if cls is None:
        raise ModelError(f"model {npz} has format {meta.get('format')!r}: allowed are {', '.join(FORMATS)}")
    model = cls(arrays, meta, source=str(npz))
    model.npz_path, model.json_path = npz, js
    return model


__all__ = ["MODEL_FORMAT", "VALUE_FORMAT", "FORMATS", "ModelError", "Model", "PolicyModel", "ValueModel",
           "load_model", "read_model_files", "ensemble_model", "save_model", "model_meta", "model_paths",
           "engine_description", "observation_fingerprint"]
