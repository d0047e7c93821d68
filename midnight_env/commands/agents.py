"""``midnight agents``: one registered agent per line, its name first, then its idea."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("agents", help="list the agents, one per line: name, then a short description",
                       description="List every registered agent, one per line: its name, two spaces, then a "
                                   "short description of its idea. Options go after a colon: "
                                   "search:budget=200,depth=6.")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from agents import list_agents

    for name, description in list_agents():
        print(f"{name}  {' '.join(description.split())}")
    return 0
