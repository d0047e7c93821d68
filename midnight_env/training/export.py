"""torch networks to the numpy model format of ``midnight_agents.ppo`` (so playing needs no torch)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from midnight_agents.ppo import PolicyModel, engine_description, save_model

ACTIVATION_NAMES = {"Tanh": "tanh", "ReLU": "relu"}


def linear_weights(prefix: str, linears: Iterable) -> dict[str, np.ndarray]:
    """``prefix.k.weight`` / ``prefix.k.bias`` of torch ``Linear`` layers, in order."""
    out = {}
    for k, layer in enumerate(linears):
        out[f"{prefix}.{k}.weight"] = layer.weight.detach().cpu().numpy().astype(np.float32)
        out[f"{prefix}.{k}.bias"] = layer.bias.detach().cpu().numpy().astype(np.float32)
    return out


def linears_of(module) -> list:
    import torch.nn as nn

    return [m for m in module.modules() if isinstance(m, nn.Linear)]


def activation_of(module, default: str = "tanh") -> str:
    """``tanh`` or ``relu``: the activation used in ``module`` (ValueError for anything else)."""
    import torch.nn as nn

    found = {type(m).__name__ for m in module.modules() if isinstance(m, (nn.Tanh, nn.ReLU, nn.ELU, nn.GELU,
                                                                          nn.LeakyReLU, nn.Sigmoid, nn.SiLU))}
    if not found:
        return default
    if len(found) > 1 or next(iter(found)) not in ACTIVATION_NAMES:
        raise ValueError(f"activation {', '.join(sorted(found))} cannot be exported: allowed are Tanh, ReLU")
    return ACTIVATION_NAMES[found.pop()]


def sb3_weights(policy) -> tuple[dict[str, np.ndarray], str]:
    """Weights of a (Maskable)ActorCriticPolicy with an MLP extractor on flat observations."""
    ex = policy.mlp_extractor
    weights = {}
    shared = getattr(ex, "shared_net", None)  # SB3 >= 1.8 builds none: pi and vf are separate
    weights.update(linear_weights("shared", linears_of(shared) if shared is not None else []))
    weights.update(linear_weights("policy", linears_of(ex.policy_net) + [policy.action_net]))
    weights.update(linear_weights("value", linears_of(ex.value_net) + [policy.value_net]))
    return weights, activation_of(ex)


def model_meta(engine, activation: str, training: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {**engine_description(engine), "options": dict(engine.config.options), "activation": activation}
    if training is not None:
        meta["training"] = training
    return meta


def in_memory_model(weights: dict[str, np.ndarray], engine, activation: str, name: str = "policy") -> PolicyModel:
    """A :class:`PolicyModel` of the current weights (for evaluation without a file)."""
    return PolicyModel(weights, model_meta(engine, activation), source=name)


def export_model(path: str | Path, weights: dict[str, np.ndarray], engine, activation: str,
                 training: dict[str, Any] | None = None) -> tuple[Path, Path]:
    return save_model(path, weights, model_meta(engine, activation, training))
