"""The serial-or-threaded choice of the kernels (``midnight_env.infra.threads``, issue 43) and the
vector env's observation space held once, not once a game."""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest
from gymnasium.vector.utils import batch_space

import midnight_env.infra.threads as threads
from midnight_env import Engine
from midnight_env.core.dice import agent_streams
from midnight_env.core.observation import encode_observations
from midnight_env.envs.vector import VectorEnv, batched_space


class FakeClock:
    """``threads._clock`` (``time.perf_counter``): each kernel call advances it by its given cost."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def kernels(clock: FakeClock, serial_cost: float, threaded_cost: float, calls: list[str]):
    def serial(x):
        calls.append("S")
        clock.now += serial_cost
        return x + 1

    def parallel(x, size):
        calls.append("T")
        clock.now += threaded_cost
        return x + 1

    return serial, parallel


class FakeLoad:
    """``threads._cores_taken``: whether other work holds the cores, as the test says, and how often asked."""

    def __init__(self):
        self.taken = False
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.taken


@pytest.fixture
def auto(monkeypatch):
    """Measuring on (whatever ``MIDNIGHT_PARALLEL_FROM`` says here), threads from 1,024 games, a fake
    clock (``auto.load``: the machine's load as the test sets it, idle to begin with)."""
    monkeypatch.setattr(threads, "AUTO", True)
    monkeypatch.setattr(threads, "PARALLEL_FROM", 1024)
    monkeypatch.setattr(threads, "_forked_after_threads", False)
    clock = FakeClock()
    monkeypatch.setattr(threads, "_clock", clock)
    clock.load = FakeLoad()
    monkeypatch.setattr(threads, "_cores_taken", clock.load)
    return clock


def test_the_serial_kernel_is_kept_where_threads_are_measured_slower(auto):
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.002, 0.015, calls)  # threads on a busy machine: 15 ms a step
    site = threads.Site("test")
    for i in range(54):
        assert site.run(4096, serial, parallel, i) == i + 1
    # a warm-up pair, then one of each: threads far slower (DECISIVE), the probe ends there
    assert "".join(calls) == "STST" + "S" * 50
    assert "serial" in repr(site)
    auto.now += threads.REPROBE_MAX_S  # later: a re-probe, which keeps the serial kernel
    calls.clear()
    for _ in range(22):
        site.run(4096, serial, parallel, 0)
    assert "".join(calls) == "ST" + "S" * 20


def test_a_close_call_is_probed_in_full(auto):
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.002, 0.003, calls)  # threads slower, but not by DECISIVE
    site = threads.Site("test")
    for _ in range(len(threads.FIRST_PROBE) + 10):
        site.run(4096, serial, parallel, 0)
    assert "".join(calls) == threads.FIRST_PROBE + "S" * 10, "the first calls alternate both kernels"


def test_threads_are_kept_where_they_are_faster_and_dropped_when_the_load_comes(auto):
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.004, 0.0015, calls)  # an idle machine: threads 2.6x faster
    site = threads.Site("test")
    for _ in range(len(threads.FIRST_PROBE) + 10):
        site.run(2000, serial, parallel, 0)
    assert calls[-10:] == ["T"] * 10
    serial, parallel = kernels(auto, 0.004, 0.015, calls)  # other work took the cores
    calls.clear()
    for _ in range(threads.WATCH + 2 + 10):
        site.run(2000, serial, parallel, 0)
    # the kept threads turned slower than the serial kernel was: re-probed at once, not at the next due time
    assert "".join(calls) == "T" * threads.WATCH + "ST" + "S" * 10


def test_no_threaded_call_while_other_work_holds_the_cores_and_a_probe_once_it_leaves(auto):
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.004, 0.0015, calls)  # threads would pay on an idle machine
    site = threads.Site("test")
    auto.load.taken = True  # but the cores are taken from the start
    for _ in range(400):  # 1.6 s of 4 ms calls
        site.run(4096, serial, parallel, 0)
    assert calls == ["S"] * 400, "not one threaded call (each would wait for the cores)"
    looks = 1.6 / max(threads.LOOK_S, 0.004)  # at most one look a call
    assert 0.8 * looks <= auto.load.asked <= looks + 1, "looked again every LOOK_S"
    auto.load.taken = False  # the load left
    calls.clear()
    for _ in range(len(threads.FIRST_PROBE) + 60):
        site.run(4096, serial, parallel, 0)
    assert "".join(calls[:len(threads.FIRST_PROBE)]) == threads.FIRST_PROBE, "probed within LOOK_S"
    assert calls[-50:] == ["T"] * 50
    asked = auto.load.asked
    auto.load.taken = True  # the load came back: kept threads run on until their next probe falls due,
    calls.clear()
    for _ in range(10):
        site.run(4096, serial, parallel, 0)
    assert calls == ["T"] * 10 and auto.load.asked == asked
    auto.now += threads.REPROBE_MAX_S  # which then sees the load and keeps the serial kernel, without a threaded call
    for _ in range(20):
        site.run(4096, serial, parallel, 0)
    assert calls[10:] == ["S"] * 20 and auto.load.asked > asked


def test_the_machines_load_is_seen_where_every_core_is_taken():
    if not threads._LOAD_SEEN:
        pytest.skip("the machine's runnable tasks cannot be read here (not Linux, or confined to some cores)")
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(threads._CORES)]
    try:
        time.sleep(0.5)  # let them take the cores
        seen = [threads._cores_taken() for _ in range(9)]
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert sum(seen) >= 7, f"a spinning process per core, yet the cores were seen free {seen.count(False)} of 9 times"


def test_threads_must_be_clearly_faster(auto):
    """Within ``MARGIN`` of the serial kernel, the serial one: threads must pay for what they risk."""
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.004, 0.004 * (threads.MARGIN + 0.05), calls)
    site = threads.Site("test")
    for _ in range(len(threads.FIRST_PROBE) + 5):
        site.run(1500, serial, parallel, 0)
    assert calls[-5:] == ["S"] * 5


def test_batch_size_classes_are_measured_apart_and_small_batches_stay_serial(auto):
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.004, 0.001, calls)
    site = threads.Site("test")
    for _ in range(30):
        site.run(1023, serial, parallel, 0)
    assert calls == ["S"] * 30, "below PARALLEL_FROM: never threads, never timed"
    calls.clear()
    for _ in range(len(threads.FIRST_PROBE)):
        site.run(1024, serial, parallel, 0)
    site.run(5000, serial, parallel, 0)
    assert calls == list(threads.FIRST_PROBE) + ["S"], "another size class starts its own probe"


def test_the_users_setting_turns_measuring_off(monkeypatch):
    monkeypatch.setenv("MIDNIGHT_PARALLEL_FROM", "512")
    assert threads._parallel_from() == (512, True)
    monkeypatch.delenv("MIDNIGHT_PARALLEL_FROM")
    assert threads._parallel_from() == (threads.DEFAULT_PARALLEL_FROM, False)
    monkeypatch.setenv("MIDNIGHT_PARALLEL_FROM", "lots")
    with pytest.warns(RuntimeWarning, match="MIDNIGHT_PARALLEL_FROM='lots' is not allowed"):
        assert threads._parallel_from() == (threads.DEFAULT_PARALLEL_FROM, False)
    monkeypatch.setattr(threads, "AUTO", False)
    monkeypatch.setattr(threads, "PARALLEL_FROM", 512)
    monkeypatch.setattr(threads, "_forked_after_threads", False)
    calls: list[str] = []
    serial, parallel = kernels(FakeClock(), 0.001, 1.0, calls)
    site = threads.Site("test")
    for b in (511, 512, 512, 512, 10_000):
        site.run(b, serial, parallel, 0)
    assert calls == ["S", "T", "T", "T", "T"], "threads from MIDNIGHT_PARALLEL_FROM games, however slow"


def test_a_process_forked_after_threads_stays_serial(auto, monkeypatch):
    monkeypatch.setattr(threads, "_threads_used", True)
    threads._after_fork_in_child()
    assert threads._forked_after_threads
    calls: list[str] = []
    serial, parallel = kernels(auto, 0.004, 0.001, calls)
    for _ in range(20):
        threads.Site("test").run(5000, serial, parallel, 0)
    assert calls == ["S"] * 20


def _play(engine: Engine, batch: int, steps: int) -> tuple:
    """Random legal play through ``Engine.step``, ``random_actions`` and the observation encoder."""
    state = engine.new_games(np.arange(batch) + 7)
    rng = agent_streams(np.arange(batch))
    seen = []
    for _ in range(steps):
        engine.step(state, engine.random_actions(state, rng))
        seen.append(encode_observations(engine, state))
    return tuple(state), np.stack(seen)


@pytest.mark.parametrize("mode", ["serial", "threads", "auto"])
def test_games_are_the_same_whichever_kernel_runs(monkeypatch, mode):
    engine = Engine("hidden_castle", 3)
    monkeypatch.setattr(threads, "PARALLEL_FROM", 10**9)
    want_state, want_obs = _play(engine, 130, 25)
    monkeypatch.setattr(threads, "PARALLEL_FROM", {"serial": 10**9, "threads": 64, "auto": 64}[mode])
    monkeypatch.setattr(threads, "AUTO", mode == "auto")
    got_state, got_obs = _play(engine, 130, 25)
    np.testing.assert_array_equal(got_obs, want_obs)
    for got, want in zip(got_state, want_state, strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("auto", [True, False], ids=["measured", "threads"])
def test_the_vector_env_steps_the_same_games_whichever_kernel_runs(monkeypatch, auto):
    """Measuring (both kernels during the probes), or forced threads (the threaded kernel only)."""
    monkeypatch.setattr(threads, "PARALLEL_FROM", 10**9)
    serial = VectorEnv(130, "midnight_party", 4, seed=3)
    obs_a, _ = serial.reset()  # compiles its kernels: the serial ones only
    monkeypatch.setattr(threads, "PARALLEL_FROM", 64)
    monkeypatch.setattr(threads, "AUTO", auto)
    measured = VectorEnv(130, "midnight_party", 4, seed=3)
    obs_b, _ = measured.reset()
    assert measured._threaded and not serial._threaded
    rng = agent_streams(np.arange(130))
    for _ in range(2 * len(threads.FIRST_PROBE)):
        np.testing.assert_array_equal(obs_a["observation"], obs_b["observation"])
        actions = serial.engine.random_actions(serial.state, rng)
        obs_a, r_a, *_ = serial.step(actions)
        obs_b, r_b, *_ = measured.step(actions)
        np.testing.assert_array_equal(r_a, r_b)
    np.testing.assert_array_equal(measured.observations()["observation"], serial.observations()["observation"])


def test_the_batched_observation_space_holds_its_bounds_once():
    venv = VectorEnv(3, "midnight_party", 4, seed=0)
    assert venv.observation_space == batch_space(venv.single_observation_space, 3)
    obs, _ = venv.reset()
    assert venv.observation_space.contains(obs)
    assert venv.observation_space.sample()["observation"].shape == (3, venv.obs_size)

    def space_bytes(n: int) -> int:
        tracemalloc.start()
        space = batched_space(venv.single_observation_space, n)
        size = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert space["observation"].shape == (n, venv.obs_size)
        for box in space.spaces.values():
            for bounds in (box.low, box.high, box.bounded_below, box.bounded_above):
                assert bounds.strides[0] == 0 and not bounds.flags.writeable  # one row, seen n times
        return size

    assert space_bytes(65_536) < space_bytes(64) + 4096  # not 4.5 KB a game
