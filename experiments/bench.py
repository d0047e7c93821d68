"""BENCHMARKS.md, "Engine": decisions/s of random legal play (the same as `midnight bench`).

    python experiments/bench.py [--batches 1,256,4096] [--repeats 5]

Prints decisions per wall-clock second and per CPU-second, median of the runs, compilation
excluded. Results are recorded in BENCHMARKS.md with the machine they ran on.
"""

import sys

from midnight_env.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
