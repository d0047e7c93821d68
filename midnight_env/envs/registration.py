"""The package's Gymnasium ids, one per variant.

==================================  =========================================================
``gymnasium.make(id, **options)``   :class:`midnight_env.envs.gym_env.SingleAgentEnv` of the variant
``gymnasium.make_vec(id, num_envs,  :class:`midnight_env.envs.vector.VectorEnv` of the variant
**options)``                        (``vector_entry_point``; ``vectorization_mode="sync"`` or
                                    ``"async"`` gives Gymnasium's own wrapper of single envs)
==================================  =========================================================

Ids: ``midnight_env/MidnightParty-v0`` (``midnight_party``), ``midnight_env/HiddenCastle-v0``
(``hidden_castle``). Options are the envs' own keywords (``num_players``, ``opponents``,
``reward``, rule options such as ``max_turns`` ...), passed through as they are; the variant is the
id's, so ``variant=`` is refused. No ``max_episode_steps``: a game ends by its rules, and the
``max_turns`` rule option truncates it (``truncated=True``), as Gymnasium expects of a time limit.
The ``v0`` is the envs' version (``midnight_env.envs.aec.ENV_VERSION``, ``vector.VECTOR_ENV_VERSION``).

Gymnasium 1.x loads no plugins from package entry points (0.x's ``gymnasium.envs`` group is gone),
so the ids exist once this module is imported, which happens when

- ``midnight_env`` is imported after ``gymnasium`` (``import gymnasium, midnight_env``): the engine
  itself never imports gymnasium, so it registers only where gymnasium is already loaded;
- any env module is imported (``midnight_env.envs.gym_env``, ``vector``, ``aec``, ``sb3_vec``: they
  import gymnasium anyway);
- Gymnasium imports it for an id with a module prefix, whatever was imported before:
  ``gymnasium.make("midnight_env.envs.registration:midnight_env/MidnightParty-v0")``.

The entry points below build the env only when made, so registering imports no env module.
"""

from __future__ import annotations

from typing import Any

import gymnasium

from midnight_env.core.config import ConfigError

NAMESPACE = "midnight_env"
VERSION = 0

# id -> variant
IDS = {
    f"{NAMESPACE}/MidnightParty-v{VERSION}": "midnight_party",
    f"{NAMESPACE}/HiddenCastle-v{VERSION}": "hidden_castle",
}
_ENTRY_POINTS = {  # variant -> (single-agent env, vector env), functions of this module
    "midnight_party": ("midnight_party_env", "midnight_party_vector_env"),
    "hidden_castle": ("hidden_castle_env", "hidden_castle_vector_env"),
}


def _options(variant: str, options: dict[str, Any]) -> dict[str, Any]:
    if "variant" in options:
        env_id = next(i for i, v in IDS.items() if v == variant)
        raise ConfigError(f"option variant={options['variant']!r} is not allowed: the id {env_id} plays "
                          f"{variant}; make the id of the variant you want ({', '.join(IDS)})")
    return options


def _single_agent_env(variant: str, options: dict[str, Any]):
    from midnight_env.envs.gym_env import SingleAgentEnv

    return SingleAgentEnv(variant, **_options(variant, options))


def _vector_env(variant: str, num_envs: int, options: dict[str, Any]):
    from midnight_env.envs.vector import VectorEnv

    return VectorEnv(num_envs, variant, **_options(variant, options))


# Named functions rather than closures: an EnvSpec's entry point is then a "module:name" string,
# which pickles for AsyncVectorEnv and serialises with EnvSpec.to_json.
def midnight_party_env(**options: Any):
    """``SingleAgentEnv("midnight_party", **options)``."""
    return _single_agent_env("midnight_party", options)


def hidden_castle_env(**options: Any):
    """``SingleAgentEnv("hidden_castle", **options)``."""
    return _single_agent_env("hidden_castle", options)


def midnight_party_vector_env(num_envs: int = 1, **options: Any):
    """``VectorEnv(num_envs, "midnight_party", **options)``."""
    return _vector_env("midnight_party", num_envs, options)


def hidden_castle_vector_env(num_envs: int = 1, **options: Any):
    """``VectorEnv(num_envs, "hidden_castle", **options)``."""
    return _vector_env("hidden_castle", num_envs, options)


def register_envs() -> None:
    """Register the ids that are not registered yet (importing this module twice, or once per
    env module, registers each once)."""
    for env_id, variant in IDS.items():
        if env_id in gymnasium.registry:
            continue
        single, vector = _ENTRY_POINTS[variant]
        gymnasium.register(id=env_id, entry_point=f"{__name__}:{single}", vector_entry_point=f"{__name__}:{vector}")


register_envs()

__all__ = ["IDS", "NAMESPACE", "register_envs", "midnight_party_env", "hidden_castle_env",
           "midnight_party_vector_env", "hidden_castle_vector_env"]
