"""What several sub-commands share: their errors, the game set-up and agent line-ups."""

from __future__ import annotations

import argparse
import os

import numpy as np

from midnight_env.arena.registry import make_agent, split_specs
from midnight_env.core.config import VARIANTS, ConfigError, check_option_names
from midnight_env.core.engine import Engine
from midnight_env.infra import checks


class UsageError(ValueError):
    """Bad command-line input that no other error type names."""


def check_count(flag: str, value: int, least: int = 1) -> int:
    """A count given on the command line (games, batch size ...): UsageError unless >= ``least``."""
    return checks.integer(flag, value, least, allowed=f"{least} or more", error=UsageError)


def parse_set_options(pairs: list[str] | None, variant: str | None = None) -> dict:
    """``--set key=value`` pairs as a dict; values stay strings (make_config converts them). Only
    the rule options of ``variant`` are allowed (the variant, the player count and the board have
    their own flags, or are not for the command line)."""
    options = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UsageError(f"--set {pair!r} must be option=value")
        if key in options:
            raise UsageError(f"--set {key}=... is given twice: give each option once")
        options[key] = value.strip()
    if variant is not None and variant not in VARIANTS:  # named before its options (--set variant=x)
        raise ConfigError(f"unknown variant {variant!r}: allowed are {', '.join(VARIANTS)}")
    if variant is not None:
        check_option_names(variant, options)
    return options


def parse_overrides(pairs: list[str] | None) -> dict[str, str]:
    """``--override KEY=VALUE`` pairs as a dict (values as given); UsageError for a pair without ``=``."""
    overrides = {}
    for pair in pairs or []:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"--override {pair!r} must be key=value")
        overrides[key.strip()] = value.strip()
    return overrides


def add_game_arguments(parser: argparse.ArgumentParser, players_default: int = 4) -> None:
    parser.add_argument("--variant", default="midnight_party",
                        help=f"rule set: {', '.join(VARIANTS)} (default: midnight_party)")
    parser.add_argument("--players", default=players_default, type=int,
                        help=f"number of players 1..8 (default: {players_default})")
    parser.add_argument("--set", dest="options", action="append", metavar="OPTION=VALUE",
                        help="rule option, e.g. --set rounds=players --set pass_rule=always (repeatable)")


def engine_from_args(args: argparse.Namespace) -> Engine:
    return Engine(args.variant, args.players, **parse_set_options(args.options, args.variant))


def seat_agents(spec: str, num_players: int) -> list[str]:
    """``random`` for every seat, or one agent spec per seat: ``random,expert,random,runner``."""
    names = split_specs(spec) if spec else []
    if len(names) == 1:
        return names * num_players
    if len(names) != num_players:
        raise UsageError(f"--agents {spec!r} names {len(names)} agents: give one for every seat or "
                         f"exactly {num_players} (one per seat)")
    return names


def seat_lineup(spec: str, num_players: int):
    """Agents of ``--agents`` built once each, and the line-up indexing them per seat.

    Returns (agents, lineup, names): ``agents[lineup[seat]]`` plays ``seat``; ``names`` lists
    the distinct specs in the order of ``agents``."""
    per_seat = seat_agents(spec, num_players)
    names = sorted(set(per_seat), key=per_seat.index)
    agents = [make_agent(n) for n in names]
    return agents, np.array([names.index(n) for n in per_seat]), names


GAME_MEMORY_FACTOR = 4  # a game in play takes about this many times its state's arrays (the agents' views, masks)


def check_batch_size(flag: str, value: int, engine: Engine) -> int:
    """Games played at once (--batch-size, --batches): UsageError unless 1 to as many games of
    ``engine``'s set-up as this machine's memory holds (a larger batch cannot fit: numpy would fail
    allocating it)."""
    check_count(flag, value)
    per_game = GAME_MEMORY_FACTOR * sum(getattr(a, "nbytes", 0) for a in engine.new_games([0]))
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): a large machine's
        memory = 2**40
    most = max(1, memory // per_game)
    return checks.integer(flag, value, 1, most, error=UsageError, allowed=f"1 to {most} (games of about {per_game:,} "
                          f"bytes each in this machine's {memory / 2**30:.0f} GiB of memory)")
