"""BENCHMARKS.md, "Exact solver": the solver's states per second and bytes per state, by set-up.

    python experiments/bench_solve.py                          # the solo ladder and the two-player set-ups
    python experiments/bench_solve.py --set-ups solo-mp-r1-g1,solo-mp-r1-g2
    python experiments/bench_solve.py --quick                  # smoke test: two tiny set-ups

Every set-up is solved in a process of its own (``midnight_env.solve.solve``), so that its peak
resident memory is its own; the process reports the states and transitions, the value and the
residual reached, the wall-clock and CPU seconds of finding the states and of iterating the
values, and the peak memory. Rates are per CPU-second: on a shared machine a process gets less
than a core, and the CPU figure is what the solver costs. ``B/state`` counts the solution's
arrays (graph, values, actions); the peak resident memory adds the interpreter and numba (about
170 MiB) and the solver's passing needs (the hash table while states are found, array growth,
Tarjan's stacks). Results are printed as a table (and written as JSON lines with ``--out``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from midnight_env.solve.setups import SET_UPS  # the set-ups by name

# the largest last; duo-mp-r1-g2 and solo-mp-r1-g5 need some 10 GiB
DEFAULT = ["solo-mp-r1-g1", "solo-mp-r1-g2", "solo-mp-r1-g3", "solo-mp-r3-g1", "solo-mp-r3-g2", "solo-mp-r3-g3",
           "solo-hc-g1", "solo-hc-g2", "duo-mp-r1-g1-win", "duo-mp-r1-g1-points", "duo-hc-tinyplain-g1-win",
           "duo-hc-tiny-g1-win", "duo-mp-r3-g1-win", "duo-mp-r3-g1-points", "solo-mp-r1-g4", "duo-mp-r1-g2-win",
           "solo-mp-r1-g5"]
QUICK = ["solo-mp-r1-g1", "solo-mp-r1-g2"]

# one set-up, in the child process: prints one JSON line
CHILD = """
import json, resource, sys, time
from midnight_env.core.board import board_from_dict
from midnight_env.core.config import make_config
from midnight_env.solve import solve
variant, players, objective, options = json.loads(sys.argv[1])
board = board_from_dict(options.pop("board")) if "board" in options else None
config = make_config(variant, players, board=board, **options)
wall, cpu = time.perf_counter(), time.process_time()
sol = solve(config, objective=objective)
m = sol.meta
print(json.dumps({"value": m["value"], "states": m["states"], "edges": m["edges"], "residual": m["residual"],
                  "sweeps": m["sweeps"], "most_sweeps": m["most_sweeps"], "seconds_states": m["seconds_states"],
                  "seconds_values": m["seconds_values"], "wall": time.perf_counter() - wall,
                  "cpu": time.process_time() - cpu, "array_bytes": m["memory_bytes"],
                  "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def run_one(name: str, timeout: float) -> dict:
    variant, players, objective, options = SET_UPS[name]
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([variant, players, objective, options])],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "error": f"over {timeout:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"name": name, "error": last}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["name"] = name
    result["process_seconds"] = time.perf_counter() - started
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set-ups", default=",".join(DEFAULT), help=f"comma-separated, of: {', '.join(SET_UPS)}")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per set-up (default 1800)")
    parser.add_argument("--out", help="append one JSON line per set-up to this file")
    parser.add_argument("--quick", action="store_true", help="two tiny set-ups: checks that the script runs")
    args = parser.parse_args(argv)
    names = QUICK if args.quick else [n.strip() for n in args.set_ups.split(",") if n.strip()]
    unknown = [n for n in names if n not in SET_UPS]
    if unknown:
        parser.error(f"unknown set-up {unknown[0]!r}: allowed are {', '.join(SET_UPS)}")
    print(f"{'set-up':<22}{'states':>13}{'transitions':>14}{'value':>11}{'residual':>10}{'sweeps':>8}"
          f"{'states s':>10}{'values s':>10}{'CPU s':>8}{'states/CPU-s':>14}{'B/state':>9}{'peak MiB':>10}")
    for name in names:
        r = run_one(name, args.timeout)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(r) + "\n")
        if "error" in r:
            print(f"{name:<22}  failed: {r['error']}")
            continue
        n = r["states"]
        print(f"{name:<22}{n:>13,}{r['edges']:>14,}{r['value']:>11.4f}{r['residual']:>10.1e}{r['sweeps']:>8.1f}"
              f"{r['seconds_states']:>10.1f}{r['seconds_values']:>10.1f}{r['cpu']:>8.1f}{n / r['cpu']:>14,.0f}"
              f"{r['array_bytes'] / n:>9.0f}{r['peak_bytes'] / 2**20:>10,.0f}", flush=True)


if __name__ == "__main__":
    main()
