"""torch networks (stable-baselines3's, RLlib's) as the named weight arrays of the model format
(:mod:`midnight_agents.model`).

Only the conversion lives here; :func:`midnight_agents.model.save_model` writes the files.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

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


def rllib_weights(module) -> tuple[dict[str, np.ndarray], str]:
    """Weights of RLlib's default PPO module (``DefaultPPOTorchRLModule`` and its action-masking
    subclass): an actor MLP and a critic MLP (or one shared MLP, ``vf_share_layers``), each with
    its activation after every layer, then the linear ``pi`` and ``vf`` heads."""
    encoder = module.encoder
    if hasattr(encoder, "actor_encoder"):  # vf_share_layers=False: the policy and the value have an MLP each
        shared = []
        policy = linears_of(encoder.actor_encoder) + linears_of(module.pi)
        value = linears_of(encoder.critic_encoder) + linears_of(module.vf)
    else:
        shared, policy, value = linears_of(encoder.encoder), linears_of(module.pi), linears_of(module.vf)
    weights = {**linear_weights("shared", shared), **linear_weights("policy", policy),
               **linear_weights("value", value)}
    return weights, activation_of(module)
