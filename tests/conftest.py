"""Shared test helpers: engines of each variant, a game with the position a rule says it must be
in, and whole games played with random legal actions."""

from __future__ import annotations

import numpy as np
import pytest

from midnight_env import Engine
from midnight_env.core.positions import describe_position, draw_position, legal_set


def assert_position(engine, state, i: int = 0, **expected) -> None:
    """Compare the given parts of game ``i`` (keys of ``describe_position``, plus ``legal``: a
    set of notations, ``supply``, ``truncated``) and show the drawn board when they differ."""
    __tracebackhide__ = True  # failures point at the test's line
    got = describe_position(engine, state, i)
    got["legal"] = legal_set(engine, state, i)
    got["supply"] = [int(x) for x in state.supply[i]]
    got["truncated"] = bool(state.truncated[i])
    unknown = set(expected) - set(got)
    if unknown:
        raise KeyError(f"assert_position: unknown keys {sorted(unknown)}: allowed are {sorted(got)}")
    wrong = {key: (got[key], want) for key, want in expected.items() if got[key] != want}
    lines = [f"  {key}: got {g!r}, expected {w!r}" for key, (g, w) in wrong.items()]
    if wrong:
        raise AssertionError("position differs:\n" + "\n".join(lines) + "\n" + draw_position(engine, state, i))


@pytest.fixture
def check():
    """``check(engine, state, gallery={...}, stairs={...}, spooky=[...], legal={...}, ...)``."""
    return assert_position


@pytest.fixture
def classic():
    """``classic(num_players=2, **options)``: a midnight_party engine."""
    return lambda num_players=2, **options: Engine("midnight_party", num_players, **options)


@pytest.fixture
def castle():
    """``castle(num_players=2, **options)``: a hidden_castle engine."""
    return lambda num_players=2, **options: Engine("hidden_castle", num_players, **options)


def random_aec_game(env, seed: int, policy_seed: int = 0, record: bool = True) -> list:
    """One whole game of a PettingZoo env with uniformly random legal actions; what every
    ``last()`` showed, as (agent, obs, reward, terminated, truncated, info)."""
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    seen = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        if record:
            seen.append((agent, obs, reward, term, trunc, dict(info)))
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    return seen


@pytest.fixture
def random_game():
    """``random_game(env, seed, policy_seed=0, record=True)``: :func:`random_aec_game`."""
    return random_aec_game


@pytest.fixture
def require():
    """``require("pyspiel", extra="openspiel")``: the module, or a skip naming the extra that brings
    it. Under CI (``CI`` set) a missing module fails instead: CI installs every extra, so a skip
    there would hide an integration that stopped working."""
    import importlib
    import os

    def load(module: str, extra: str = "integrations"):
        try:
            return importlib.import_module(module)
        except ImportError as err:
            message = f"{module} is not installed ({err}): pip install -e '.[{extra}]'"
            if os.environ.get("CI"):
                pytest.fail(f"{message} -- CI installs every extra, so this must not be missing")
            pytest.skip(message)

    return load


@pytest.fixture(scope="module")
def ray_instance(request, tmp_path_factory):
    """Ray of two CPUs on the loopback address, started once for the test module as the library
    starts its own (``midnight_env.infra.ray_cluster.start_local_ray``): every run of the module finds
    it started and uses it. The module's ``RAY_WORKER_MODULES`` (name -> source) are written to a
    folder on the workers' PYTHONPATH. Ray missing: a skip, or under CI a failure."""
    import importlib.util
    import os
    import sys

    try:
        ray = importlib.import_module("ray")
    except ImportError as err:
        message = f"ray is not installed ({err}): pip install -e '.[ray]'"
        if os.environ.get("CI"):
            pytest.fail(f"{message} -- CI installs every extra, so this must not be missing")
        pytest.skip(message)
    from midnight_env.infra.ray_cluster import start_local_ray

    modules = getattr(request.module, "RAY_WORKER_MODULES", {})
    folder = tmp_path_factory.mktemp("ray_worker_modules")
    for name, source in modules.items():  # here imported from their files, there found on PYTHONPATH
        (folder / f"{name}.py").write_text(source)
        spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), saved]))  # the workers inherit it
    if ray.is_initialized():
        ray.shutdown()
    try:
        start_local_ray(2)
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    yield ray
    ray.shutdown()
    for name in modules:
        sys.modules.pop(name, None)
