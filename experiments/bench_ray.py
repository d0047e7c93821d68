"""BENCHMARKS.md, "Ray": tournaments on Ray, a chunk's cost, RLlib's env steps/s, the rollout on Ray actors.

Ray: tournaments local vs Ray, the cost of a chunk, RLlib's env steps/s beside the native trainer's,
and the native trainer's rollout on Ray actors.

    python experiments/bench_ray.py                 # every part (about 15 minutes on 2 loaded cores)
    python experiments/bench_ray.py --quick         # smoke test: tiny budgets
    python experiments/bench_ray.py --parts tournament,chunk

1. ``tournament``: games/s of ``run_tournament`` with the local backend and with the ray backend
   on a Ray instance of 1 and of 2 workers (CPUs), for heuristic agents and for a line-up with
   ``search``. Play time only (Ray's start is reported apart); each run stores into a fresh
   database, as ``midnight tournament`` does.
2. ``chunk``: the cost of a chunk on Ray: chunks of one game of random agents, one worker, against
   the same games played locally one batch of one at a time; the difference per chunk is what a
   chunk costs (task dispatch, the result's transfer, its transaction).
3. ``rllib``: env steps/s of RLlib's PPO (``midnight_env.training.rllib_ppo``: sampling and
   learning, its default network) with 0 (sampling in the driver), 1 and 2 env runners; beside
   it the native trainer's (``midnight_env.training.native``) at its shipped settings' batch,
   with its rollout's share.
4. ``rollout``: the native trainer's rollout (VectorEnv steps, the network's sampling, storage)
   on Ray actors, each stepping its own VectorEnv: env steps/s in this process, and with 1 and 2
   actors, the rollout's buffers sent back to the driver as the learner would need them.

Every figure comes with the load average when it was taken: this machine's 2 cores are shared,
and a loaded one shows less than it would give alone. Prints Markdown tables (BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def ray_instance(workers: int):
    """A Ray instance of ``workers`` CPUs (loopback), replacing any this script started before."""
    import ray

    from midnight_env.infra.ray_cluster import start_local_ray

    if ray.is_initialized():
        ray.shutdown()
    start = time.perf_counter()
    start_local_ray(workers)
    return time.perf_counter() - start


# -- 1. tournaments ---------------------------------------------------------------------------------


def bench_tournament(quick: bool) -> None:
    import ray

    from midnight_env.tournament import make_tournament_config, run_tournament

    line_ups = {"heuristics": (["random", "runner", "coward", "green_hunter", "placer", "expert"],
                               80 if quick else 3000, 256),
                "with search": (["random", "runner", "expert", "search"], 8 if quick else 96, 8)}
    print("\n### Tournaments: games/s, local vs Ray\n")
    print("| line-up (midnight_party, 4 players) | games | batch | backend | games/s | load |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for label, (agents, games, batch) in line_ups.items():
            config = make_tournament_config("midnight_party", 4, agents, seed=3)
            run_tournament(config, 2 * batch, db=Path(folder) / "warm.sqlite", batch_size=batch, progress=False,
                           resume=True)  # compiles what the agents use, here (the workers load the cache)
            for backend, workers in (("local", None), ("ray", 1), ("ray", 2)):
                name = "local" if backend == "local" else f"ray, {workers} worker{'s' * (workers > 1)}"
                if backend == "ray":
                    started = ray_instance(workers)
                    name += f" (Ray started in {started:.1f} s)"
                    # every worker loads the kernels once: a first small run, not timed
                    run_tournament(config, 2 * workers * batch, db=Path(folder) / f"w{workers}{label}.sqlite",
                                   batch_size=batch, progress=False, backend="ray")
                db = Path(folder) / f"{label}-{backend}-{workers}.sqlite"
                run = run_tournament(config, games, db=db, batch_size=batch, progress=False, backend=backend)
                print(f"| {label}: {', '.join(agents)} | {games} | {batch} | {name} | "
                      f"{run.played / run.elapsed:.1f} | {load()} |", flush=True)
    if ray.is_initialized():
        ray.shutdown()


# -- 2. the cost of a chunk -------------------------------------------------------------------------


def bench_chunk(quick: bool) -> None:
    import ray

    from midnight_env.arena.registry import make_agent
    from midnight_env.tournament import make_tournament_config, run_tournament
    from midnight_env.tournament.chunk import play_chunk
    from midnight_env.tournament.ray_backend import tournament_chunk
    from midnight_env.tournament.schedule import Schedule
    from midnight_env.tournament.store import ResultStore

    config = make_tournament_config("midnight_party", 2, ["random", "runner"], seed=5)
    agents = [make_agent(a) for a in config.agents]
    games = 40 if quick else 600
    print("\n### The cost of a chunk on Ray\n")
    print("| chunks of one game (random vs runner, midnight_party, 2 players) | chunks | ms per chunk | load |")
    print("|---|---|---|---|")
    schedule, engine = Schedule(config), config.engine()
    with tempfile.TemporaryDirectory() as folder:
        play_chunk(config, agents, np.arange(4), schedule=schedule, engine=engine)
        start = time.perf_counter()
        for g in range(games):
            play_chunk(config, agents, np.array([g]), schedule=schedule, engine=engine)
        print(f"| played here (`play_chunk`), nothing stored | {games} | "
              f"{(time.perf_counter() - start) / games * 1e3:.2f} | {load()} |", flush=True)
        run_tournament(config, 4, db=Path(folder) / "warm.sqlite", batch_size=1, progress=False)
        local = run_tournament(config, games, db=Path(folder) / "local.sqlite", batch_size=1, progress=False)
        print(f"| local backend: played and stored | {games} | {local.elapsed / games * 1e3:.2f} | {load()} |",
              flush=True)
        chunk = play_chunk(config, agents, np.arange(games, games + 256), schedule=schedule, engine=engine)
        store = ResultStore.open(Path(folder) / "store.sqlite", config, 10**6)
        start = time.perf_counter()
        store.add(chunk.indices, chunk.deals, chunk.seeds, chunk.lineups, chunk.points, chunk.ranks, chunk.rolls,
                  chunk.decisions, chunk.truncated, None)
        print(f"| storing a chunk of 256 games (one transaction), per game | 256 | "
              f"{(time.perf_counter() - start) / 256 * 1e3:.3f} | {load()} |", flush=True)
        store.close()
        ray_instance(1)
        task = ray.remote(num_cpus=1)(tournament_chunk)
        config_ref, agents_ref = ray.put(config), ray.put(agents)
        ray.get([task.remote(config_ref, agents_ref, np.array([g]), False) for g in range(4)])
        start = time.perf_counter()
        for g in range(games):
            ray.get(task.remote(config_ref, agents_ref, np.array([g]), False))
        print(f"| a Ray task's round trip, one at a time, 1 worker, nothing stored | {games} | "
              f"{(time.perf_counter() - start) / games * 1e3:.2f} | {load()} |", flush=True)
        for workers, label in ((1, "one chunk in flight"), (None, "two chunks in flight (default)")):
            run = run_tournament(config, games, db=Path(folder) / f"ray{workers}.sqlite", batch_size=1,
                                 progress=False, backend="ray", workers=workers)
            print(f"| ray backend, 1 worker, {label}: played and stored | {games} | "
                  f"{run.elapsed / games * 1e3:.2f} | {load()} |", flush=True)
    ray.shutdown()


# -- 3. RLlib beside the native trainer ----------------------------------------------------------------


def bench_rllib(quick: bool) -> None:
    import ray

    from midnight_env.training import native
    from midnight_env.training.rllib_ppo import load_config, train

    print("\n### Training: env steps/s, RLlib's PPO beside the native trainer\n")
    print("| trainer (midnight_party, 4 players) | env steps | env steps/s | sampling alone | learning alone | load |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        batch = 400 if quick else 4000
        for runners in (0, 1, 2):
            ray_instance(max(1, runners) + (runners > 0))  # the driver's learner, and a CPU per runner
            config = load_config(ROOT / "configs" / "rllib-midnight_party-4p.yaml",
                                 {"run_dir": folder, "total_timesteps": 3 * batch, "train_batch_size": batch,
                                  "num_env_runners": runners, "num_envs_per_env_runner": 8 if runners else 1,
                                  "eval_every": 0, "eval_games": 10, "progress": False, "threads": 1})
            start = time.perf_counter()
            result = train(config)
            whole = result["steps"] / (time.perf_counter() - start)
            m = result["metrics"]
            print(f"| RLlib PPO, {runners} env runners{' (sampling in the driver)' * (runners == 0)}, "
                  f"[256, 128] tanh, batch {batch} | {result['steps']} | {m['charts/SPS']:.0f} ({whole:.0f} with "
                  f"RLlib's start and the evaluation) | {batch / m['charts/sampling_seconds']:.0f} | "
                  f"{batch / m['charts/learning_seconds']:.0f} | {load()} |", flush=True)
            ray.shutdown()
        args = native.load_config(ROOT / "configs" / "native-midnight_party-4p.yaml",
                                  {"run_dir": folder, "total_timesteps": (2 if quick else 4) * 512 * 64,
                                   "num_envs": 64 if quick else 512, "eval_every": 0, "eval_games": 10,
                                   "progress": False, "threads": 1})
        result = native.train(args)
        m = result["metrics"]
        rollout, whole = m["charts/rollout_SPS"], m["charts/SPS"]
        print(f"| native PPO, shipped settings ({args.num_envs} games x 64 steps, [256, 128]), 1 torch thread | "
              f"{result['steps']} | {whole:.0f} | {rollout:.0f} | {1 / (1 / whole - 1 / rollout):.0f} (the rest) | "
              f"{load()} |", flush=True)


# -- 4. the native rollout on Ray actors -------------------------------------------------------------------


class Rollout:
    """The native trainer's rollout of self-play games (every seat the network): VectorEnv steps,
    the network's sampling over legal slots, the buffers the update reads."""

    def __init__(self, num_envs: int, seed: int, hidden: list[int]):
        import torch

        from midnight_env import VectorEnv
        from midnight_env.training.native import Network

        torch.set_num_threads(1)
        self.envs = VectorEnv(num_envs, "midnight_party", 4, seed=seed, copy=False)
        self.envs.reset(seed=seed)
        self.net = Network(self.envs.obs_size, self.envs.num_actions, hidden)
        self.gen = torch.Generator().manual_seed(seed)

    def set_weights(self, state) -> None:
        self.net.load_state_dict(state)

    def run(self, steps: int) -> dict:
        import torch

        from midnight_env.training.native import legal_slots, sample

        B, D = self.envs.num_envs, self.envs.obs_size
        out = {"obs": np.empty((steps, B, D), np.float32), "slots": np.empty((steps, B, 32), np.int64),
               "open": np.empty((steps, B, 32), bool), "actions": np.empty((steps, B), np.int64),
               "logp": np.empty((steps, B), np.float32), "values": np.empty((steps, B), np.float32),
               "rewards": np.empty((steps, B, 4), np.float32), "dones": np.empty((steps, B), bool)}
        for t in range(steps):
            obs = self.envs.observations()
            slots, open_ = legal_slots(obs["action_mask"], 32)
            x = torch.from_numpy(obs["observation"])
            with torch.no_grad():
                logits, value = self.net(x, slots, open_)
                a = sample(logits, self.gen)
                out["logp"][t] = torch.log_softmax(logits, 1).gather(1, a[:, None]).squeeze(1).numpy()
            actions = slots.gather(1, a[:, None]).squeeze(1).numpy()
            out["obs"][t], out["slots"][t], out["open"][t] = obs["observation"], slots.numpy(), open_.numpy()
            out["actions"][t], out["values"][t] = actions, value.numpy()
            rewards, term, trunc, _ = self.envs.advance(actions)
            out["rewards"][t], out["dones"][t] = rewards, term | trunc
        return out


def bench_rollout(quick: bool) -> None:
    import ray

    num_envs, steps, rounds = (64, 8, 2) if quick else (512, 64, 3)
    hidden = [256, 128]
    print("\n### The native rollout on Ray actors\n")
    print(f"| rollout of {num_envs} games x {steps} steps per actor, [256, 128] | env steps/s | "
          "s per round (of it: buffers back) | load |")
    print("|---|---|---|---|")
    here = Rollout(num_envs, 1, hidden)
    here.run(2)  # compiled kernels loaded
    start = time.perf_counter()
    for _ in range(rounds):
        here.run(steps)
    seconds = (time.perf_counter() - start) / rounds
    print(f"| in this process | {num_envs * steps / seconds:.0f} | {seconds:.2f} | {load()} |", flush=True)
    weights = here.net.state_dict()
    for actors in (1, 2):
        ray_instance(actors)
        remote = ray.remote(num_cpus=1)(Rollout)
        pool = [remote.remote(num_envs, 10 + k, hidden) for k in range(actors)]
        ray.get([p.run.remote(2) for p in pool])
        start = time.perf_counter()
        fetch = 0.0
        for _ in range(rounds):
            ref = ray.put(weights)  # the learner's weights out, as every iteration would send them
            ray.get([p.set_weights.remote(ref) for p in pool])
            refs = [p.run.remote(steps) for p in pool]
            ray.wait(refs, num_returns=len(refs), fetch_local=False)
            t = time.perf_counter()
            ray.get(refs)  # the buffers into this process, where the learner is
            fetch += time.perf_counter() - t
        seconds = (time.perf_counter() - start) / rounds
        print(f"| {actors} Ray actor{'s' * (actors > 1)} | {actors * num_envs * steps / seconds:.0f} | "
              f"{seconds:.2f} ({fetch / rounds:.2f}) | {load()} |", flush=True)
        ray.shutdown()


PARTS = {"tournament": bench_tournament, "chunk": bench_chunk, "rllib": bench_rllib, "rollout": bench_rollout}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny budgets: checks that the script runs")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"--parts {unknown[0]!r} is not allowed: allowed are {', '.join(PARTS)}")
    print(f"{os.cpu_count()} cores; load average {load()} at the start")
    for part in parts:
        PARTS[part](args.quick)


if __name__ == "__main__":
    main()
