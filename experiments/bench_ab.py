"""BENCHMARKS.md, "VectorEnv against the batch size" (kernels per rule set): A/B of two env settings.

Interleaved A/B measurement of VectorEnv throughput: two settings of the environment, alternated.

    python experiments/bench_ab.py --a MIDNIGHT_SPECIALIZE=0 --b MIDNIGHT_SPECIALIZE=1
    python experiments/bench_ab.py --a MIDNIGHT_SPECIALIZE=0,NUMBA_NUM_THREADS=1 \
                                   --b MIDNIGHT_SPECIALIZE=1,NUMBA_NUM_THREADS=1 --players 3
    python experiments/bench_ab.py --a MIDNIGHT_SPECIALIZE=0 --b MIDNIGHT_SPECIALIZE=1 --rounds 1 --decisions 20000

On a shared or noisy machine two settings measured one after the other differ by whatever else ran
meanwhile. Here every round runs the same work once per setting, each in its own process (so
nothing compiled or cached in memory by one run helps the other), and the order within a round
alternates (A B, B A, ...). Each run plays ``VectorEnv(batch, variant, players, copy=False)`` with random
legal actions drawn in numba, after a staggered start (``bench_env.staggered_start``) and an untimed
warm-up in which numba loads or compiles its kernels, and reports the median decisions/s of
``--repeats`` timed runs, per wall second and per CPU-second of its process. The script prints
every run with the load average when it ended, then per variant the medians of A and B and B/A,
both of the medians and of each round's pair. Each round's pair of processes first allocates the
same, randomly chosen padding, so that the env's arrays lie elsewhere in memory from round to round
and where they happen to lie does not favour one side in every round.

On a machine other processes keep busy, threaded runs measure mostly who held the cores (numba's
threads wait for each other at every step); there, compare one thread on each side
(``NUMBA_NUM_THREADS=1``, which still runs the threaded kernels of a large batch) and read the
rates per CPU-second.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(variant: str, players: int, batch: int, decisions: int, repeats: int, pad_kib: int) -> None:
    """One run: print {"wall": decisions/s, "cpu": decisions/s per CPU-second} as JSON. ``pad_kib``
    KiB are allocated first, so that the env's arrays land elsewhere from round to round."""
    import numpy as np

    pad = np.ones(pad_kib * 1024, np.uint8)  # noqa: F841 (held, and touched, until the end)

    from bench_env import staggered_start, vector_decisions_per_second  # beside this script, on sys.path

    from midnight_env import VectorEnv, agent_streams

    rng = agent_streams(np.arange(batch))
    actions = np.empty(batch, np.int64)
    venv = VectorEnv(batch, variant, players, seed=0, copy=False)
    obs, _ = venv.reset()
    obs = staggered_start(lambda a: venv.step(a)[0], batch, lambda r: (obs if r is None else r)["action_mask"],
                          rng, actions, seed=batch)
    steps = max(20, decisions // batch)
    _, _, obs = vector_decisions_per_second(venv, max(5, steps // 4), rng, actions, obs)  # warm caches
    runs = []
    for _ in range(repeats):
        wall, cpu, obs = vector_decisions_per_second(venv, steps, rng, actions, obs)
        runs.append((wall, cpu))
    print(json.dumps({"wall": statistics.median(r[0] for r in runs), "cpu": statistics.median(r[1] for r in runs),
                      "module": venv._step_module.__name__}))


def setting(text: str) -> dict[str, str]:
    """``NAME=VALUE[,NAME=VALUE...]`` as a dict ('' for none)."""
    out = {}
    for item in filter(None, text.split(",")):
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"setting {item!r} is not allowed: write NAME=VALUE")
        out[name] = value
    return out


def run(env: dict[str, str], variant: str, args: argparse.Namespace, pad_kib: int = 0) -> dict:
    command = [sys.executable, __file__, "--child", "--variants", variant, "--players", str(args.players),
               "--batch", str(args.batch),
               "--decisions", str(args.decisions), "--repeats", str(args.repeats), "--pad-kib", str(pad_kib)]
    done = subprocess.run(command, env={**os.environ, **env}, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"run with {env} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["load"] = os.getloadavg()[0]
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", default="", help="environment of setting A, NAME=VALUE[,NAME=VALUE...]")
    parser.add_argument("--b", default="", help="environment of setting B")
    parser.add_argument("--variants", default="midnight_party,hidden_castle")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=5, help="A/B pairs per variant")
    parser.add_argument("--decisions", type=int, default=2_000_000, help="decisions per timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per process; their median counts")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--pad-kib", type=int, default=0, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.child:
        child(ns.variants, ns.players, ns.batch, ns.decisions, ns.repeats, ns.pad_kib)
        return
    settings = {"A": setting(ns.a), "B": setting(ns.b)}
    variants = ns.variants.split(",")
    print(f"A: {settings['A'] or '(as is)'}   B: {settings['B'] or '(as is)'}   {ns.players} players, "
          f"batch {ns.batch}, {ns.decisions:,} decisions x {ns.repeats} per run; "
          f"load average at start {os.getloadavg()[0]:.2f}")
    warm_up = argparse.Namespace(players=ns.players, batch=ns.batch, decisions=ns.batch * 20, repeats=1)
    for variant in variants:  # untimed: compile (or load) every kernel of both settings once
        for key in "AB":
            run(settings[key], variant, warm_up)
    results = {(v, k): [] for v in variants for k in "AB"}
    print(f"{'round':>5} {'variant':<16}{'set':>4}{'wall/s':>12}{'per CPU-s':>12}{'load':>7}  module")
    pads = random.Random(0).choices(range(0, 4096, 4), k=ns.rounds)  # the same for A and B of a round
    for r in range(ns.rounds):
        for variant in variants:
            for key in ("AB" if r % 2 == 0 else "BA"):
                res = run(settings[key], variant, ns, pads[r])
                results[variant, key].append(res)
                print(f"{r:>5} {variant:<16}{key:>4}{res['wall']:>12,.0f}{res['cpu']:>12,.0f}{res['load']:>7.2f}  "
                      f"{res['module']}", flush=True)
    print(f"\n{'variant':<16}{'A median':>12}{'B median':>12}{'B/A':>7}{'B/A CPU':>9}   B/A per round (wall)")
    for variant in variants:
        a, b = results[variant, "A"], results[variant, "B"]
        med = {k: {m: statistics.median(x[m] for x in results[variant, k]) for m in ("wall", "cpu")} for k in "AB"}
        rounds = ", ".join(f"{y['wall'] / x['wall']:.3f}" for x, y in zip(a, b))
        print(f"{variant:<16}{med['A']['wall']:>12,.0f}{med['B']['wall']:>12,.0f}"
              f"{med['B']['wall'] / med['A']['wall']:>7.3f}{med['B']['cpu'] / med['A']['cpu']:>9.3f}   {rounds}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
