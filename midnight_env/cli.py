"""The ``midnight`` command: one sub-command per module of ``midnight_env.commands``.

Each module there defines ``add_parser(subparsers)``, which registers its sub-command with
``set_defaults(run=function)``; ``function(args)`` returns the exit status. Errors of bad input
(the ``ValueError`` family: unknown variant, option out of range, illegal action, bad record,
unknown agent, ...) and files that cannot be read or written (``OSError``: a missing file, a full
disk) are printed as one line and exit 2, without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# sub-command modules under midnight_env.commands, in the order `midnight --help` lists them
COMMANDS = ["simulate", "replay", "analyze", "render", "bench", "agents", "tournament", "play", "serve", "train",
            "solve", "exploit", "compile", "dataset"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="midnight",
        description="Midnight Party / Escape from the Hidden Castle: rules engine, agents, tournaments.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"midnight_env.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    command = "midnight"
    try:
        parser = build_parser()  # imports the commands: a bad MIDNIGHT_* setting is reported here
        args = parser.parse_args(argv)
        command = f"midnight {args.command}"
        from midnight_env.infra.compile_notice import compile_notice

        with compile_notice(command, announce=args.command != "compile"):  # a first use compiles kernels: say so
            code = int(args.run(args) or 0)
        sys.stdout.flush()  # here, not at exit, so that a closed pipe is caught below
        return code
    except BrokenPipeError:  # the reader went away (`midnight agents | head`): nothing to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 141 if os.name == "posix" else 1
    except (ValueError, OSError) as err:  # bad input, and files that cannot be read or written
        print(f"{command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
