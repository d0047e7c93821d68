"""``midnight serve``: the web page on this machine (watch, play, leaderboards), until Ctrl-C."""

from __future__ import annotations

import argparse
import ipaddress
import socket
import sys

from midnight_env.analysis.judge import CHAMPION_BUDGET
from midnight_env.commands.common import UsageError
from midnight_env.infra import checks
from midnight_env.web.checks import MAX_ANALYSES, MAX_EVALUATOR_BUDGET

DESCRIPTION = """\
Serve a web page to watch, play and compare, on this machine, until Ctrl-C:

  Watch        open a record file of the data folder (or upload one), a tournament database's
               stored games, or a new game between agents; step through it on the board (every
               roll, the legal moves and the one made, the points); a link opens a given game
               at a given event
  Play         take a seat against any registered agents (midnight agents, plugins included)
               on either variant: click a guest, then where it goes (or type the move); the
               finished game is written to DIR/played.jsonl
  Leaderboard  a tournament database's standings and ratings plot

Only files inside --data are read (record files *.jsonl, *.json; databases *.sqlite, *.sqlite3,
*.db), and only DIR/played.jsonl is written (a link named so that leads outside --data is
refused). Databases are only read, and no file is created beside them: SQLite's -wal and -shm
files are read where a running tournament keeps them, and only files SQLite left half-way (a -wal
without its -shm, a -journal beside a WAL database) get the missing ones. Uploads stay in memory.
The page loads nothing from the network. Bound to 127.0.0.1 (this machine only) unless --host says
otherwise.

Limits: an analysis's evaluator searches at most --max-budget positions a decision (a request
asking more gets a 400 naming the limit); at most --max-analyses analyses run at once (another
gets a 503 "busy"); an analysis whose client has gone stops."""


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="a web page to watch records, play against agents and see leaderboards",
                       description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0: any free port)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 serves the network)")
    p.add_argument("--data", default=".", metavar="DIR",
                   help="folder of record files and tournament databases to show, and where played games are "
                        "written (default: the current folder)")
    p.add_argument("--max-budget", type=int, default=MAX_EVALUATOR_BUDGET, metavar="N",
                   help=f"most positions a decision an analysis may search (evaluator budget=N; default "
                        f"{MAX_EVALUATOR_BUDGET}, at least {CHAMPION_BUDGET}: the default evaluator's)")
    p.add_argument("--max-analyses", type=int, default=MAX_ANALYSES, metavar="N",
                   help=f"analyses run at once; another is answered 503 busy (default {MAX_ANALYSES})")
    p.set_defaults(run=run)


def _address(host: str, port: int) -> tuple:
    """(family, type, protocol, address) to listen on; UsageError for a host that is not one."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as err:
        raise UsageError(f"--host {host!r} is not an address of this machine ({err.strerror})") from None
    return family, kind, proto, address


def _listen(family, kind, proto, address) -> socket.socket:
    """A socket listening on ``address``; OSError (named) when the address cannot be had."""
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as err:
        sock.close()
        raise OSError(err.errno, f"cannot listen on {address[0]} port {address[1]}: {err.strerror} (another server "
                                 f"there? choose another --port)") from None
    sock.listen(128)
    return sock


def run(args: argparse.Namespace) -> int:
    checks.integer("--port", args.port, 0, 65535, allowed="0..65535 (0: any free port)", error=UsageError)
    checks.integer("--max-budget", args.max_budget, CHAMPION_BUDGET, error=UsageError,
                   allowed=f"{CHAMPION_BUDGET} or more (the default evaluator searches {CHAMPION_BUDGET} positions "
                           "a decision)")
    checks.integer("--max-analyses", args.max_analyses, 1, allowed="1 or more", error=UsageError)
    try:
        import uvicorn

        from midnight_env.web.app import LOOPBACK_HOSTS, create_app
    except ImportError as err:
        raise UsageError(f"midnight serve needs the web extra ({err.name} is missing): "
                         "python -m pip install -e \".[web]\"") from None
    family, kind, proto, address = _address(args.host, args.port)
    loopback = ipaddress.ip_address(address[0].split("%")[0]).is_loopback
    app = create_app(args.data, hosts=LOOPBACK_HOSTS if loopback else None, max_budget=args.max_budget,
                     max_analyses=args.max_analyses)  # a bad --data (or its played.jsonl): refused here
    sock = _listen(family, kind, proto, address)
    try:
        bound, port = sock.getsockname()[:2]
        shown = f"[{bound}]" if ":" in bound else bound
        print(f"midnight serve: http://{shown}:{port}/  (data folder {app.state.data_folder}; Ctrl-C stops it)",
              flush=True)
        if not loopback:
            print(f"midnight serve: listening on {bound}, not this machine only: whoever reaches it can read the "
                  "data folder's games and play", file=sys.stderr, flush=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
