"""BENCHMARKS.md, "Exact solver": the solver's states per second and bytes per state, by set-up.

    python experiments/bench_solve.py                          # the solo ladder and the two-player set-ups
    python experiments/bench_solve.py --set-ups solo-mp-r1-g1,solo-mp-r1-g2
    python experiments/bench_solve.py --quick                  # smoke test: two tiny set-ups
    python experiments/bench_solve.py --solvers whole,layered --set-ups duo-hc-tiny-g1-win   # the two solvers

``--solvers whole,layered`` runs each set-up with both solvers, one after the other
(``solve``, and ``solve_layered``: one layer in memory, the rest in a temporary work directory),
so that the two are compared on the same set-up under the same load; a layered row adds its
layers, its largest layer and the disk its layers took.

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
from midnight_env.solve import solve
from midnight_env.solve.layered import solve_layered
from midnight_env.solve.setups import SET_UPS
name, solver = json.loads(sys.argv[1])
setup = SET_UPS[name]
wall, cpu = time.perf_counter(), time.process_time()
m = (solve if solver == "whole" else solve_layered)(setup.config(), objective=setup.objective).meta
extra = {k: m[k] for k in ("layers", "largest_layer", "disk_bytes") if k in m}
print(json.dumps({"value": m["value"], "states": m["states"], "edges": m["edges"], "residual": m["residual"],
                  "sweeps": m["sweeps"], "most_sweeps": m["most_sweeps"], "seconds_states": m["seconds_states"],
                  "seconds_values": m["seconds_values"], "wall": time.perf_counter() - wall,
                  "cpu": time.process_time() - cpu, "array_bytes": m["memory_bytes"],
                  "peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, **extra}))
"""
SOLVERS = ("whole", "layered")


def run_one(name: str, timeout: float, solver: str = "whole") -> dict:
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps([name, solver])],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": name, "solver": solver, "error": f"over {timeout:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"name": name, "solver": solver, "error": last}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["name"] = name
    result["solver"] = solver
    result["process_seconds"] = time.perf_counter() - started
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set-ups", default=",".join(DEFAULT), help=f"comma-separated, of: {', '.join(SET_UPS)}")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per set-up (default 1800)")
    parser.add_argument("--out", help="append one JSON line per set-up to this file")
    parser.add_argument("--quick", action="store_true", help="two tiny set-ups: checks that the script runs")
    parser.add_argument("--solvers", default="whole",
                        help=f"comma-separated, of: {', '.join(SOLVERS)} (default whole; both: each set-up twice)")
    args = parser.parse_args(argv)
    names = QUICK if args.quick else [n.strip() for n in args.set_ups.split(",") if n.strip()]
    unknown = [n for n in names if n not in SET_UPS]
    if unknown:
        parser.error(f"unknown set-up {unknown[0]!r}: allowed are {', '.join(SET_UPS)}")
    solvers = [s.strip() for s in args.solvers.split(",") if s.strip()]
    if not solvers or any(s not in SOLVERS for s in solvers):
        parser.error(f"--solvers {args.solvers!r}: allowed are {', '.join(SOLVERS)}")
    layered = "layered" in solvers
    print(f"{'set-up':<22}" + (f"{'solver':>9}" if layered else "") + f"{'states':>13}{'transitions':>14}"
          f"{'value':>11}{'residual':>10}{'sweeps':>8}{'states s':>10}{'values s':>10}{'CPU s':>8}"
          f"{'states/CPU-s':>14}{'B/state':>9}{'peak MiB':>10}"
          + (f"{'peak B/state':>14}{'layers':>8}{'largest':>12}{'disk B/state':>14}" if layered else ""))
    for name in names:
        for solver in solvers:
            r = run_one(name, args.timeout, solver)
            if args.out:
                with open(args.out, "a", encoding="utf-8") as f:
                    f.write(json.dumps(r) + "\n")
            head = f"{name:<22}" + (f"{solver:>9}" if layered else "")
            if "error" in r:
                print(f"{head}  failed: {r['error']}")
                continue
            n = r["states"]
            line = (f"{head}{n:>13,}{r['edges']:>14,}{r['value']:>11.4f}{r['residual']:>10.1e}{r['sweeps']:>8.1f}"
                    f"{r['seconds_states']:>10.1f}{r['seconds_values']:>10.1f}{r['cpu']:>8.1f}"
                    f"{n / r['cpu']:>14,.0f}{r['array_bytes'] / n:>9.0f}{r['peak_bytes'] / 2**20:>10,.0f}")
            if layered:
                line += f"{r['peak_bytes'] / n:>14.1f}"
                line += (f"{r['layers']:>8}{r['largest_layer']:>12,}{r['disk_bytes'] / n:>14.1f}" if "layers" in r
                         else f"{'':>8}{'':>12}{'':>14}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
