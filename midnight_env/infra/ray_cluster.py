"""Ray for the tournament backend and the RLlib training: joined at an address, or started here.

Only this module (and those that run on Ray) imports ray, and only when asked: Ray is an extra
(``pip install 'midnight-env[ray]'``). :func:`ray_session` is how a run gets its Ray:

- Ray already started in this process (by a test, a notebook, the caller): used as it is;
- an ``address`` (what ``ray start --head`` printed), or else ``RAY_ADDRESS`` (as ``ray job
  submit`` sets it for the jobs it runs): that cluster is joined;
- neither: a Ray instance is started on this machine's cores (:func:`start_local_ray`), bound to
  the loopback address and sending no usage statistics, and stopped when the run ends. Never
  another one: ``ray.init()`` alone would join whatever cluster ``ray start`` last started on
  the machine, anyone's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager


class RayUnavailable(ValueError):
    """Ray is not installed, or no cluster answers at the address given; ``parameter`` names the
    argument at fault (``backend`` or ``address``), as the callers' own errors do."""

    def __init__(self, message: str, parameter: str):
        super().__init__(message)
        self.parameter = parameter


def require_ray(what: str = "backend='ray'", module: str = "ray", extra: str = "ray") -> None:
    """RayUnavailable (``backend``) when ``module`` (ray, or ray.rllib) is not installed; ``what``
    names what needs it, ``extra`` the extra that installs it."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise RayUnavailable(f"{what} needs {'RLlib' if 'rllib' in module else 'Ray'}, which is not installed: "
                             f"pip install 'midnight-env[{extra}]'", "backend") from None


@contextmanager
def _loopback():
    """Ray's settings, while an instance starts, for one that only this machine can reach.

    Ray binds a new instance to the address other machines would reach it by, unless its
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is false (what it does on a laptop): then to 127.0.0.1.
    Its processes read the variables when they start, and the driver reads the setting once when
    ray is imported, hence the constant too. Restored afterwards: a later ``ray.init(address=...)``
    of this process must find its own address again.
    """
    from ray._private import ray_constants

    saved_env = {k: os.environ.get(k) for k in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED")}
    saved_constant = ray_constants.ENABLE_RAY_CLUSTER
    os.environ.update(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved_constant
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start_local_ray(num_cpus: int | None = None) -> None:
    """Start Ray in this process on this machine alone: ``num_cpus`` CPUs (default: every core),
    listening on the loopback address only, no dashboard, no usage statistics."""
    import ray

    with _loopback():
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING)


def check_address(address: str, timeout: float = 5.0) -> None:
    """RayUnavailable (``address``) unless something accepts connections at ``address`` (``host:port``,
    also ``ray://host:port``; other forms, such as ``auto``, are left to Ray). Ray itself keeps
    trying an address where nothing answers for many minutes. A name of this machine
    (``localhost``, ``127.0.0.1``) is tried as Ray will connect to it: at the machine's address."""
    import socket

    from ray.util import get_node_ip_address

    host, colon, port = address.split("://")[-1].rpartition(":")
    if not colon or not port.isdigit():
        return
    host = host.strip("[]")
    if host in ("localhost", "127.0.0.1", "::1"):
        host = get_node_ip_address()
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise RayUnavailable(f"address={address!r}: no Ray cluster answers there ({err}); allowed is the address "
                             "`ray start --head` printed, e.g. 127.0.0.1:6379", "address") from None


def connect(address: str) -> None:
    """Join the Ray cluster at ``address``; RayUnavailable (``address``) naming it when none answers."""
    import ray

    check_address(address)
    try:
        ray.init(address=address, logging_level=logging.WARNING)
    except (ConnectionError, ValueError, RuntimeError) as err:
        # Ray turns token authentication on for the clusters it starts, but a driver given an
        # address uses it only when told to
        hint = ("; a cluster with token authentication (Ray's default) is joined with RAY_AUTH_MODE=token and its "
                "token (RAY_AUTH_TOKEN, or ~/.ray/auth_token)" if "RAY_AUTH_MODE" not in os.environ else "")
        raise RayUnavailable(f"address={address!r}: no Ray cluster could be joined there ({err}){hint}",
                             "address") from None


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[None]:
    """Ray for the duration of a run (see the module docstring); stops only what it started.
    ``num_cpus`` sizes an instance started here."""
    import ray

    started = False
    address = address or os.environ.get("RAY_ADDRESS") or None
    if not ray.is_initialized():
        if address is not None:
            connect(address)
        else:
            start_local_ray(num_cpus)
        started = True
    try:
        yield
    finally:
        if started:
            ray.shutdown()


__all__ = ["RayUnavailable", "check_address", "connect", "ray_session", "require_ray", "start_local_ray"]
