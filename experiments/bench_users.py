"""Where users run it (issue 43), in one run: BENCHMARKS.md, "Where users run it".

    python experiments/bench_users.py                     # about 7 minutes on 2 cores
    python experiments/bench_users.py --old cd0dc158 --rounds 11 --one-game-rounds 7

One after the other on this machine, printed as one Markdown report with the machine, the times
and the load averages:

1. ``bench_threads.py --rounds R``: the engine and the VectorEnv at 1, 256 and 4,096 games, the
   default threading against one thread and against forced threads, as found and under a load the
   script starts (a spinning process per core);
2. ``bench_one_game.py --old OLD``: the batch-1 engine and the PettingZoo env against the old code
   (default cd0dc158, the rates the issue started from), and OpenSpiel's backgammon (C++);
3. ``bench_threads.py --memory``: the VectorEnv's bytes per game, both variants, and with
   gymnasium's ``batch_space`` (the bounds once a game) for comparison.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def run(script: str, *args: str) -> str:
    """A benchmark script's standard output (its progress lines go to standard error, shown as they come)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(HERE / script), *args], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          text=True, check=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", default="cd0dc158", help="the old code for the one-game rates: a commit or a folder")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the threads table")
    parser.add_argument("--one-game-rounds", type=int, default=5, help="rounds of the one-game table")
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"# Where users run it: {time.strftime('%Y-%m-%d %H:%M')}, {platform.node() or 'this machine'}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}, at {commit.strip() or '?'}; "
          f"load average at the start {os.getloadavg()[0]:.1f}\n")
    print(f"## Threads: default, one thread, threads (`bench_threads.py --rounds {args.rounds}`)\n")
    print(run("bench_threads.py", "--rounds", str(args.rounds)))
    print(f"\n## One game at a time (`bench_one_game.py --old {args.old} --rounds {args.one_game_rounds}`)\n")
    print(run("bench_one_game.py", "--old", args.old, "--rounds", str(args.one_game_rounds)))
    print("\n## VectorEnv memory per game (`bench_threads.py --memory`)\n")
    for extra in ((), ("--variant", "hidden_castle"), ("--space", "gymnasium")):
        print(f"- {run('bench_threads.py', '--memory', *extra)}")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
