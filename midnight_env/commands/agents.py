"""``midnight agents``: one agent per line, its name first, then its idea; plugins say whose they
are, and a plugin that cannot be loaded is reported on stderr."""

from __future__ import annotations

import argparse
import sys

from midnight_env.arena.registry import DISTRIBUTION, agent_infos, plugin_errors


def add_parser(sub) -> None:
    p = sub.add_parser("agents", help="list the agents, one per line: name, then a short description",
                       description="List every agent, one per line: its name, two spaces, then a short "
                                   "description of its idea; a plugin's agents end with [plugin NAME VERSION]. "
                                   "Options go after a colon: search:budget=200,turns=2. Agents of other "
                                   "packages plug in through the entry point group midnight_env.agents, and "
                                   "module:Attribute names an agent class in any importable module "
                                   "(docs/AGENTS.md).")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    for info in agent_infos():
        origin = "" if info.source == DISTRIBUTION else f" [{info.source}]"
        print(f"{info.name}  {' '.join(info.description.split())}{origin}")
    for message in plugin_errors().values():
        print(f"midnight agents: {message}", file=sys.stderr)
    return 0
