"""First use of each command: wall time with a cold kernel cache (nothing compiled) and a warm one.

Every command compiles the numba kernels it needs the first time it runs on a machine (numba's
cache, ``NUMBA_CACHE_DIR``; the rule-set copies, ``MIDNIGHT_KERNEL_DIR``). Each command here runs
in a fresh process: once with both caches empty (cold), then ``--warm`` times with them filled by
that run (warm, median reported). The caches are the command's own, so each cold time is what a
user meets when that command is the first thing they run.

    python experiments/bench_first_use.py [--warm 3] [--only simulate,analyze] [--fast-tier]

``--fast-tier`` also times ``python -m pytest -m "not slow"`` cold and warm (minutes).
Prints a Markdown table for BENCHMARKS.md ("First use").
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICK_START_PETTINGZOO = """
import numpy as np
from midnight_env import midnight_v0
env = midnight_v0.env(variant="midnight_party", num_players=4)
env.reset(seed=42)
rng = np.random.default_rng(0)
for agent in env.agent_iter():
    obs, reward, termination, truncation, info = env.last()
    env.step(None if termination or truncation else rng.choice(np.flatnonzero(obs["action_mask"])))
"""
QUICK_START_VECTOR = """
import numpy as np
from midnight_env import VectorEnv
envs = VectorEnv(256, "hidden_castle", num_players=4, seed=0)
obs, info = envs.reset()
rng = np.random.default_rng(0)
for _ in range(500):
    obs, *_ = envs.step(np.argmax(rng.random(obs["action_mask"].shape) * obs["action_mask"], axis=1))
"""


def commands(folder: Path) -> dict[str, list[str]]:
    midnight = [sys.executable, "-m", "midnight_env.cli"]
    record = str(folder / "game.jsonl")
    return {
        "midnight tournament --games 36 (the main job's field)": midnight + [
            "tournament", "--games", "36", "--db", str(folder / "t.sqlite"), "--no-progress"],
        "midnight simulate --games 8": midnight + ["simulate", "--games", "8", "--no-progress"],
        "midnight analyze (a 4-player game)": midnight + ["analyze", record],
        "midnight render --record (a 4-player game)": midnight + ["render", "--record", record, "--line", "1"],
        "midnight solve (one guest, one round)": midnight + ["solve", "--set", "guests_per_player=1",
                                                             "--set", "rounds=1", "--no-progress"],
        "quick start 1 (PettingZoo, one game)": [sys.executable, "-c", QUICK_START_PETTINGZOO],
        "quick start 3 (VectorEnv, 256 games, 500 steps)": [sys.executable, "-c", QUICK_START_VECTOR],
        "midnight compile (every feature)": midnight + ["compile"],
    }


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--warm", type=int, default=3, help="warm runs per command (median)")
    p.add_argument("--only", default="", help="comma-separated words: only the commands whose name holds one")
    p.add_argument("--fast-tier", action="store_true", help="also the fast test tier, cold and warm")
    args = p.parse_args()
    base = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "MIDNIGHT_KERNEL_DIR")}
    rows = []
    with tempfile.TemporaryDirectory(prefix="first-use-") as tmp:
        folder = Path(tmp)
        setup = {**base, "NUMBA_CACHE_DIR": str(folder / "setup-numba"), "MIDNIGHT_KERNEL_DIR": str(folder / "setup-k")}
        subprocess.run([sys.executable, "-m", "midnight_env.cli", "simulate", "--players", "4", "--games", "1",
                        "--record", str(folder / "game.jsonl"), "--no-progress"], env=setup, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, argv in commands(folder).items():
            if args.only and not any(w in name for w in args.only.split(",")):
                continue
            cache = folder / f"cache-{len(rows)}"
            env = {**base, "NUMBA_CACHE_DIR": str(cache / "numba"), "MIDNIGHT_KERNEL_DIR": str(cache / "k")}
            for db in folder.glob("t.sqlite*"):
                db.unlink()
            cold = timed(argv, env, folder)
            warm = []
            for _ in range(args.warm):
                for db in folder.glob("t.sqlite*"):
                    db.unlink()
                warm.append(timed(argv, env, folder))
            rows.append((name, cold, statistics.median(warm)))
            print(f"{name}: cold {cold:.1f} s, warm {statistics.median(warm):.1f} s", flush=True)
            shutil.rmtree(cache, ignore_errors=True)
        if args.fast_tier:
            env = {**base, "NUMBA_CACHE_DIR": str(folder / "tier-numba"), "MIDNIGHT_KERNEL_DIR": str(folder / "tier-k")}
            tier = [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider"]
            cold = timed(tier, env, ROOT)
            warm = timed(tier, env, ROOT)
            rows.append(('python -m pytest -m "not slow" (the fast tier)', cold, warm))
            print(f"fast tier: cold {cold:.0f} s, warm {warm:.0f} s", flush=True)
    print(f"\n{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"load average at the end {os.getloadavg()[0]:.1f}\n")
    print(f"| command | cold cache (s) | warm cache (s, median of {args.warm}) |")
    print("|---|---:|---:|")
    for name, cold, warm in rows:
        print(f"| {name} | {cold:.1f} | {warm:.1f} |")


if __name__ == "__main__":
    main()
