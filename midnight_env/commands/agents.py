"""``midnight agents``: one agent per line, its name first, then its idea and the set-ups it plays;
plugins say whose they are, and a plugin that cannot be loaded is reported on stderr."""

from __future__ import annotations

import argparse
import json
import sys

from midnight_env.arena.registry import DISTRIBUTION, agent_infos, plugin_errors


def add_parser(sub) -> None:
    p = sub.add_parser("agents", help="list the agents, one per line: name, a short description, the set-ups it plays",
                       description="List every agent, one per line: its name, two spaces, a short description "
                                   "of its idea, then '; plays: ' and the set-ups it plays (every set-up, the "
                                   "set-up of a trained model, the saved solutions); a plugin's agents end with "
                                   "[plugin NAME VERSION]. Options go after a colon: search:budget=200,turns=2. "
                                   "Agents of other packages plug in through the entry point group "
                                   "midnight_env.agents, and module:Attribute names an agent class in any "
                                   "importable module (docs/AGENTS.md).")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list instead: {name, description, source, plays} per agent")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rows = [{"name": info.name, "description": " ".join(info.description.split()), "source": info.source,
             "plays": info.setups()} for info in agent_infos()]
    if args.json:
        print(json.dumps(rows, indent=1))
    for row in rows if not args.json else []:
        origin = "" if row["source"] == DISTRIBUTION else f" [{row['source']}]"
        print(f"{row['name']}  {row['description']}; plays: {row['plays']}{origin}")
    for message in plugin_errors().values():
        print(f"midnight agents: {message}", file=sys.stderr)
    return 0
