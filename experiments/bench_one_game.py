"""BENCHMARKS.md, "One game at a time (issue 43)": one game at a time, this tree against another.

    PYTHONPATH=. python experiments/bench_one_game.py              # against HEAD (git archive), 5 rounds
    PYTHONPATH=. python experiments/bench_one_game.py --old cd0dc158   # against the rates issue 43 started from
    PYTHONPATH=. python experiments/bench_one_game.py --old /path/to/old/tree --rounds 5 --seconds 2

Times, per CPU-second of the process (``time.process_time``, so that a shared machine counts
what one core gives), with random legal play and games restarted:

1. the batch-1 engine: ``engine.step(state, engine.random_actions(state, rng))`` on a batch of
   one (checked, the default), and the same with ``check=False``;
2. the PettingZoo env ``env()`` with its checks: ``last()`` (observation and mask) then
   ``step(random legal action)`` every decision, as ``experiments/bench_env.py`` does; and
   ``step()`` alone, on games recorded first (the caller's part of the loop left out); and the
   Gymnasium ``SingleAgentEnv``'s learner steps against three random opponents;
3. OpenSpiel's backgammon (``pyspiel.load_game("backgammon")``, C++), random play: states per
   second (every ``apply_action``, chance outcomes drawn by their probabilities) and decisions
   per second with ``observation_tensor()`` and ``legal_actions()`` at every decision.

The old tree (a folder, or a commit unpacked by ``git archive``; default HEAD) and this one run
alternately in fresh processes, round after round, so that both see the same load; each figure
is the median of the rounds.
Prints a Markdown table with the ratios new / old.

    PYTHONPATH=. python experiments/bench_one_game.py --parts      # where a decision of 2. goes, this tree

``--parts`` times the pieces of the env loop one by one (the best of 5 each, microseconds per
decision): the caller's part against a stub env, ``step()`` on replayed games against its
compiled call alone (and what two fresh arrays a step would add), ``last()``, ``agent_iter``'s next, and per
game ``reset`` and the end (the last step and every agent leaving).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# -- the measurements (run in a worker process, with the tree to measure on PYTHONPATH) ---------------


def engine_rate(seconds: float, check: bool, variant: str = "midnight_party") -> float:
    import numpy as np

    from midnight_env import Engine, agent_streams

    eng = Engine(variant, 4)
    made, seed = 0, 0
    cpu = time.process_time()
    deadline = cpu + seconds
    while time.process_time() < deadline:
        state = eng.new_games([seed])
        rng = agent_streams(np.array([seed]))
        while state.phase[0] != 3:
            eng.step(state, eng.random_actions(state, rng), check=check)
            made += 1
        seed += 1
    return made / (time.process_time() - cpu)


def env_rate(seconds: float, variant: str = "midnight_party") -> float:
    import midnight_env

    env = midnight_env.env(variant, 4)
    pick = random.Random(0).random
    steps, game = 0, 0
    cpu = time.process_time()
    deadline = cpu + seconds
    while time.process_time() < deadline:
        env.reset(seed=game)
        game += 1
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            env.step(int(legal[int(pick() * len(legal))]))
            steps += 1
    return steps / (time.process_time() - cpu)


def recorded_games(env, count: int = 20) -> list[list[int]]:
    """The actions of ``count`` games of random legal play (game k: seed k, its choices drawn from
    ``random.Random(k)``), for timing replays of ``env.step()`` alone."""
    games = []
    for seed in range(count):
        env.reset(seed=seed)
        pick, actions = random.Random(seed).random, []
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                break
            legal = obs["action_mask"].nonzero()[0]
            actions.append(int(legal[int(pick() * len(legal))]))
            env.step(actions[-1])
        games.append(actions)
    return games


def env_step_rate(seconds: float, variant: str = "midnight_party") -> float:
    """Decisions per CPU-second of ``env.step()`` alone: games recorded first, then replayed with
    only the steps timed (no ``last()``, no choosing)."""
    import midnight_env

    env = midnight_env.env(variant, 4)
    games = recorded_games(env)
    steps, spent = 0, 0.0
    while spent < seconds:
        for seed, actions in enumerate(games):
            env.reset(seed=seed)
            step = env.step
            cpu = time.process_time()
            for a in actions:
                step(a)
            spent += time.process_time() - cpu
            steps += len(actions)
    return steps / spent


def single_agent_rate(seconds: float, variant: str = "midnight_party") -> float:
    """Learner steps per CPU-second of the Gymnasium ``SingleAgentEnv`` (4 players): the learner
    picks uniformly among its legal actions, the three others play ``Decisions.random_choice``
    (an agent defined here, so that an old tree's env takes it without the plugins)."""
    import numpy as np

    from midnight_env.arena.agent import Agent
    from midnight_env.envs.gym_env import SingleAgentEnv

    class Uniform(Agent):
        name = "uniform"

        def act(self, decisions):
            return decisions.random_choice()

    env = SingleAgentEnv(variant, 4, opponents=[Uniform()])
    pick = random.Random(0).random
    obs, info = env.reset(seed=0)
    steps = 0
    cpu = time.process_time()
    deadline = cpu + seconds
    while time.process_time() < deadline:
        legal = np.flatnonzero(info["action_mask"])
        obs, reward, terminated, truncated, info = env.step(int(legal[int(pick() * len(legal))]))
        steps += 1
        if terminated or truncated:
            obs, info = env.reset()
    return steps / (time.process_time() - cpu)


def backgammon_rates(seconds: float) -> tuple[float, float]:
    """(states per CPU-second of random play, decisions per CPU-second with an observation tensor
    and the legal actions at every decision)."""
    import pyspiel

    game = pyspiel.load_game("backgammon")
    rnd = random.Random(0).random

    def play(observe: bool) -> tuple[float, float]:
        states = decisions = 0
        cpu = time.process_time()
        deadline = cpu + seconds
        while time.process_time() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    u, k = rnd(), 0
                    while k < len(outcomes) - 1 and u >= outcomes[k][1]:
                        u -= outcomes[k][1]
                        k += 1
                    action = outcomes[k][0]
                else:
                    if observe:
                        state.observation_tensor()
                    legal = state.legal_actions()
                    action = legal[int(rnd() * len(legal))]
                    decisions += 1
                state.apply_action(action)
                states += 1
        elapsed = time.process_time() - cpu
        return states / elapsed, decisions / elapsed

    return play(False)[0], play(True)[1]


def worker(seconds: float, spiel: bool) -> dict:
    engine_rate(0.3, True)  # compile (or load the cache) and warm up
    engine_rate(0.3, False)
    env_rate(0.3)
    single_agent_rate(0.3)
    out = {"engine": engine_rate(seconds, True), "engine_unchecked": engine_rate(seconds, False),
           "env": env_rate(seconds), "env_step": env_step_rate(seconds), "single_agent": single_agent_rate(seconds)}
    if spiel:
        out["backgammon_states"], out["backgammon_observed"] = backgammon_rates(seconds)
    return out


def env_parts() -> None:
    """``--parts``: the env loop's time per decision, piece by piece (microseconds, best of 5)."""
    import timeit

    import numpy as np

    import midnight_env

    env = midnight_env.env("midnight_party", 4)
    games = recorded_games(env)
    per_game = statistics.mean(map(len, games))
    env.reset(seed=0)
    for a in games[0][:30]:
        env.step(a)
    seen = env.last()

    class Stub:  # the caller's part of the loop: last() and step() cost a call and nothing more
        def last(self):
            return seen

        def step(self, action):
            pass

    def caller(n: int = 100_000) -> float:
        stub, pick = Stub(), random.Random(0).random
        start = time.perf_counter()
        for _ in range(n):
            obs, reward, terminated, truncated, info = stub.last()
            if terminated or truncated:
                stub.step(None)
                continue
            legal = obs["action_mask"].nonzero()[0]
            stub.step(int(legal[int(pick() * len(legal))]))
        return (time.perf_counter() - start) / n

    def replay(kind: str) -> float:  # the steps of the recorded games: env.step, or its compiled call
        spent, steps = 0.0, 0
        d, a_size = env.obs_size, env.num_actions
        f32, i8 = np.dtype(np.float32), np.dtype(np.int8)  # as the env allocates them
        for seed, actions in enumerate(games):
            env.reset(seed=seed)
            kernel, ref, step = env._step_kernel, env._ref, env.step
            obs, mask = np.empty(d, f32), np.empty(a_size, i8)
            start = time.perf_counter()
            if kind == "step":
                for a in actions:
                    step(a)
            elif kind == "kernel":
                for a in actions:
                    kernel(ref, a, obs, mask)
            else:
                for a in actions:
                    kernel(ref, a, np.empty(d, f32), np.empty(a_size, i8))
            spent += time.perf_counter() - start
            steps += len(actions)
        return spent / steps

    def ends() -> tuple[float, float]:  # (reset, the last step and every agent leaving) of one game
        actions = games[0]
        env.reset(seed=0)
        start = time.perf_counter()
        env.reset(seed=0)
        reset = time.perf_counter() - start
        for a in actions[:-1]:
            env.step(a)
        start = time.perf_counter()
        env.step(actions[-1])
        for _agent in env.agent_iter():
            env.last()
            env.step(None)
        return reset, time.perf_counter() - start

    def best(f, *args) -> float:
        return min(f(*args) for _ in range(5)) * 1e6

    env.reset(seed=5)
    calls = {"env": env, "it": iter(env.agent_iter()), "mask": seen[0]["action_mask"]}
    one = {stmt: min(timeit.repeat(stmt, globals=calls, number=100_000, repeat=5)) / 100_000 * 1e6
           for stmt in ("env.last()", "next(it)", "mask.nonzero()[0]")}
    step, kernel, filled = best(replay, "step"), best(replay, "kernel"), best(replay, "kernel+arrays")
    reset, end = (min(x) * 1e6 for x in zip(*(ends() for _ in range(20))))
    rows = [("the caller's part (a stub env)", best(caller)),
            ("  of which `mask.nonzero()[0]`", one["mask.nonzero()[0]"]),
            ("`step()`: its compiled call", kernel),
            ("`step()`: its Python (the arrays, the rewards, the next agent)", step - kernel),
            ("  two fresh arrays a step would cost (it reuses those nobody holds)", filled - kernel),
            ("`last()`", one["env.last()"]),
            ("`agent_iter`'s next", one["next(it)"]),
            (f"per game / {per_game:.0f} decisions: `reset` {reset:.1f} µs, the end {end:.1f} µs",
             (reset + end) / per_game)]
    print("| part of a decision (midnight_party, 4 players) | µs |\n|---|---:|")
    for label, value in rows:
        print(f"| {label} | {value:.2f} |")
    print(f"| the sum, the nested line left out | {sum(v for label, v in rows if not label.startswith(' ')):.2f} |")
    print(f"\nthe whole loop (best of 3): {min(1e6 / env_rate(1.0) for _ in range(3)):.2f} µs a decision")


# -- the driver -------------------------------------------------------------------------------------


def run_worker(tree: Path, seconds: float, spiel: bool) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--seconds", str(seconds)]
    if spiel:
        cmd.append("--spiel")
    out = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def old_tree(where: str | None) -> Path:
    """The old code: a folder holding its ``midnight_env/``, or a commit of this repository (default
    HEAD) unpacked into a fresh folder."""
    if where and Path(where).is_dir():
        return Path(where)
    target = Path(tempfile.mkdtemp(prefix="midnight_old_"))
    archive = subprocess.run(["git", "archive", where or "HEAD", "midnight_env"], cwd=ROOT, capture_output=True,
                             check=True)
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="the old code: a folder holding midnight_env/, or a commit; default: git HEAD")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of each timed run")
    parser.add_argument("--parts", action="store_true", help="time the env loop's parts in this tree, and stop")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--spiel", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.seconds, args.spiel)))
        return
    if args.parts:
        env_parts()
        return
    old = old_tree(args.old)
    loads = [os.getloadavg()[0]]
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for name, tree in (("old", old), ("new", ROOT)) if r % 2 == 0 else (("new", ROOT), ("old", old)):
            runs[name].append(run_worker(tree, args.seconds, spiel=name == "new"))
            loads.append(os.getloadavg()[0])
            print(f"round {r + 1} {name}: " + ", ".join(f"{k} {v:,.0f}" for k, v in runs[name][-1].items()),
                  file=sys.stderr, flush=True)

    def med(name: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[name])

    print(f"\n{time.strftime('%Y-%m-%d')}, median of {args.rounds} rounds of {args.seconds:g} CPU-s each, old and new "
          f"alternating; load average {min(loads):.1f}..{max(loads):.1f} on {os.cpu_count()} cores; "
          f"before: {args.old or 'git HEAD'}\n")
    print("| one game at a time, per CPU-second | before | now | now / before |")
    print("|---|---:|---:|---:|")
    rows = [("batch-1 engine: `step(random_actions)`, checked", "engine"),
            ("batch-1 engine: the same, `check=False`", "engine_unchecked"),
            ("PettingZoo `env()`: `last()` + `step()`, with observations", "env"),
            ("PettingZoo `env()`: `step()` alone (replayed games)", "env_step"),
            ("Gymnasium `SingleAgentEnv`: learner steps, three random opponents", "single_agent")]
    for label, key in rows:
        before, now = med("old", key), med("new", key)
        print(f"| {label} | {before:,.0f} | {now:,.0f} | **{now / before:.2f}x** |")
    states, observed = med("new", "backgammon_states"), med("new", "backgammon_observed")
    print(f"| OpenSpiel backgammon (C++), random play: states | | {states:,.0f} | |")
    print(f"| OpenSpiel backgammon: decisions with `observation_tensor()` | | {observed:,.0f} | |")
    engine, env = med("new", "engine"), med("new", "env")
    print(f"\nbatch-1 engine / backgammon states: {engine / states:.2f}x; PettingZoo env / backgammon observed "
          f"decisions: {env / observed:.2f}x")


if __name__ == "__main__":
    main()
