"""Bring your own agent: a bot in a temporary module plays by ``module:Attribute``, a packaged one
is found through its entry point, and a broken or cheating bot is named without losing results."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from midnight_env import Engine
from midnight_env.arena.agent import Agent, Decisions, decide
from midnight_env.arena.registry import AgentError, AgentInfo, make_agent, parse_spec, split_specs
from midnight_env.cli import main
from midnight_env.core.dice import agent_streams

DOC = Path(__file__).resolve().parents[2] / "docs" / "AGENTS.md"


def example_bot_source() -> str:
    """The example bot of docs/AGENTS.md, as written there."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## An example bot"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def bots(tmp_path, monkeypatch):
    """A package ``mybots`` on the path: the docs' Greedy, a bot that cheats in its 2nd call, one that crashes."""
    package = tmp_path / "mybots"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "greedy.py").write_text(example_bot_source())
    (package / "bad.py").write_text(textwrap.dedent('''
        import numpy as np
        from midnight_env.arena.agent import Agent

        CHEAT_SEEDS = set()  # games (by seed) in which Cheat makes an illegal choice

        class Cheat(Agent):
            """plays legally, but in the games of CHEAT_SEEDS chooses an illegal action"""

            def act(self, decisions):
                choice = decisions.random_choice()
                for k, i in enumerate(decisions.games):
                    if int(decisions.seeds[i]) in CHEAT_SEEDS:
                        choice[k] = np.flatnonzero(decisions.legal[k] == 0)[0]
                return choice

        class Crash(Agent):
            def act(self, decisions):
                return {}[int(decisions.games[0])]

        def broken_import():
            raise RuntimeError("never reached")
        '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "mybots" or m.startswith("mybots.")]:
        monkeypatch.delitem(sys.modules, name)
    return tmp_path


def test_a_bot_from_a_temporary_module_plays_a_tournament(bots, tmp_path, capsys):
    db = tmp_path / "t.sqlite"
    code = main(["tournament", "--agents", "mybots.greedy:Greedy,expert,runner,random", "--games", "8",
                 "--db", str(db), "--out", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "mybots.greedy:Greedy" in out
    with sqlite3.connect(db) as conn:
        seats = conn.execute("SELECT COUNT(*) FROM seats WHERE agent = 'mybots.greedy:Greedy'").fetchone()[0]
    assert seats == 8  # 8 games of 4 seats among 4 agents: every agent sits in every game


def test_module_agent_options_and_names(bots):
    agent = make_agent("mybots.greedy:Greedy:prefer_green=false")
    assert agent.prefer_green is False and agent.name == "mybots.greedy:Greedy:prefer_green=false"
    assert parse_spec("mybots.greedy:Greedy:prefer_green=false") == ("mybots.greedy:Greedy", {"prefer_green": False})
    with pytest.raises(AgentError, match=r"unknown option .depth.: mybots.greedy:Greedy takes prefer_green"):
        make_agent("mybots.greedy:Greedy:depth=2")
    with pytest.raises(AgentError, match=r"module 'mybots.nothere' cannot be imported"):
        make_agent("mybots.nothere:Greedy")
    with pytest.raises(AgentError, match=r"module 'mybots.greedy' has no attribute 'Nobody'"):
        make_agent("mybots.greedy:Nobody")


def test_the_example_bot_plays_legally_everywhere(bots):
    from mybots.greedy import Greedy

    for variant, n in [("midnight_party", 4), ("hidden_castle", 3)]:
        engine = Engine(variant, n)
        state = engine.new_games(range(16))
        rng = agent_streams(range(16))
        bot = Greedy()
        while not state.done.all():
            deciding = np.flatnonzero(state.legal.sum(axis=1) > 0)
            actions = np.full(16, -1, np.int64)
            actions[deciding] = decide(bot, Decisions(engine, state, deciding, rng))
            engine.step(state, actions)


def test_a_bot_that_cheats_is_named_with_game_and_action_and_the_stored_games_stay(bots, tmp_path, capsys):
    import mybots.bad

    from midnight_env.tournament import Schedule, make_tournament_config

    config = make_tournament_config("midnight_party", 2, "mybots.bad:Cheat,random,runner", seed=0)
    mybots.bad.CHEAT_SEEDS.update(int(x) for x in Schedule(config).games(range(6, 12))[1])  # the 2nd batch
    db = tmp_path / "t.sqlite"
    code = main(["tournament", "--agents", "mybots.bad:Cheat,random,runner", "--players", "2", "--games", "12",
                 "--batch-size", "6", "--db", str(db), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert re.search(r"agent 'mybots.bad:Cheat' chose an illegal action in the game seeded \d+: action \d+ "
                     r"\(.+\) is not legal for player \d; legal: g\d+, ", err), err
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    assert stored == 6  # the batch before the cheat is kept


def test_a_bot_that_crashes_is_named_and_its_error_chained(bots):
    engine = Engine("midnight_party", 2)
    state = engine.new_games([5])
    crash = make_agent("mybots.bad:Crash")
    with pytest.raises(AgentError, match=r"agent 'mybots.bad:Crash' failed to act \(KeyError: 0\) in the game "
                                         r"seeded 5") as caught:
        decide(crash, Decisions(engine, state, np.array([0]), agent_streams([5]), np.array([5])))
    assert isinstance(caught.value.__cause__, KeyError)


def test_a_bot_that_returns_the_wrong_shape_is_named():
    class Short(Agent):
        name = "short"

        def act(self, decisions):
            return np.zeros(len(decisions) + 1, np.int64)

    engine = Engine("midnight_party", 2)
    state = engine.new_games(range(3))
    with pytest.raises(AgentError, match=r"agent 'short': got actions of shape \(4,\) for 3 games: give one per game"):
        decide(Short(), Decisions(engine, state, np.arange(3), agent_streams(range(3))))


@pytest.fixture
def installed_plugin(tmp_path):
    """A distribution ``mybots`` installed as pip would (a dist-info with entry points) in a folder
    that a subprocess gets on its PYTHONPATH: one good agent, one whose module fails to import."""
    (tmp_path / "mybots_pkg.py").write_text(example_bot_source())
    (tmp_path / "mybots_broken.py").write_text("import no_such_module_anywhere\n")
    info = tmp_path / "mybots-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mybots\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[midnight_env.agents]\ngreedy = mybots_pkg:Greedy\n"
                                           "fragile = mybots_broken:Bot\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return env


# slow: pip installs a plugin into a fresh folder (5-8 s)
@pytest.mark.slow
def test_an_installed_plugin_is_listed_and_plays(installed_plugin, tmp_path):
    listing = subprocess.run([sys.executable, "-m", "midnight_env.cli", "agents"], env=installed_plugin,
                             capture_output=True, text=True, timeout=300)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].startswith("random  ")  # the built-in agents come first
    assert any(re.fullmatch(r"greedy  enters a room .*; plays: every set-up \(the agent does not say; it refuses "
                            r"none\) \[plugin mybots 0\.1\]", line) for line in lines), lines
    assert "agent plugin 'fragile' (entry point 'fragile = mybots_broken:Bot' of mybots 0.1) failed to load: " \
           "ModuleNotFoundError" in listing.stderr
    run = subprocess.run([sys.executable, "-m", "midnight_env.cli", "simulate", "--agents", "greedy,expert",
                          "--players", "2", "--games", "4", "--no-progress"], env=installed_plugin,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^\s+0\s+greedy\s", run.stdout, re.M), run.stdout
    broken = subprocess.run([sys.executable, "-m", "midnight_env.cli", "simulate", "--agents", "fragile",
                             "--games", "2", "--no-progress"], env=installed_plugin, capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert broken.returncode == 2 and "agent plugin 'fragile'" in broken.stderr and "Traceback" not in broken.stderr


@pytest.mark.parametrize("text, specs", [
    ("random", ["random"]),
    ("search:budget=10,turns=2,expert", ["search:budget=10,turns=2", "expert"]),
    ("ppo:path=runs/x.npz,sample=true, random", ["ppo:path=runs/x.npz,sample=true", "random"]),
    ("mybots.greedy:Greedy:prefer_green=false,depth=1,coward", ["mybots.greedy:Greedy:prefer_green=false,depth=1",
                                                               "coward"]),
    ("expert,runner,,random", ["expert", "runner", "random"]),
])
def test_line_ups_split_into_specs(text, specs):
    assert split_specs(text) == specs


def test_every_documented_spec_is_accepted_on_every_command(tmp_path, capsys):
    """The option examples `midnight agents` and docs give, with two options, on each command."""
    spec = "search:budget=10,turns=2"
    model = Path(__file__).resolve().parents[2] / "agents" / "models" / "ppo-midnight_party-4p"
    ppo = f"ppo:path={model},sample=true"
    assert main(["simulate", "--agents", f"{spec},{ppo},expert,random", "--games", "2", "--no-progress"]) == 0
    assert main(["render", "--agents", f"{spec},{ppo},random,random", "--seed", "1", "--no-color"]) == 0
    assert main(["tournament", "--agents", f"{spec},{ppo},expert,random", "--games", "4", "--db",
                 str(tmp_path / "t.sqlite"), "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert spec in out and ppo in out
    with pytest.raises(AgentError, match="option budget='abc' is not allowed: allowed are integers"):
        make_agent("search:budget=abc")
    with pytest.raises(AgentError, match="unknown option 'bogus'"):
        make_agent("search:bogus=1")


def test_midnight_agents_lists_the_built_in_agents_in_order(capsys):
    assert main(["agents"]) == 0
    names = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()]
    assert names[:9] == ["random", "runner", "coward", "green_hunter", "placer", "expert", "card", "search", "ppo"]
    assert {"ppo-midnight_party-4p", "ppo-hidden_castle-4p"} <= set(names)


def test_midnight_agents_says_which_set_ups_each_agent_plays(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MIDNIGHT_SOLUTIONS", str(tmp_path))  # an empty solution folder
    assert main(["agents"]) == 0
    lines = {line.split("  ")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["value-hidden_castle-4p"].endswith("; plays: hidden_castle 4 players")  # its model's set-up
    assert lines["ppo-midnight_party-4p"].endswith("; plays: midnight_party 4 players")
    assert lines["value-midnight_party-6p"].endswith("; plays: midnight_party 6 players")
    for name in ("random", "runner", "coward", "green_hunter", "placer", "expert", "search"):
        assert lines[name].endswith("; plays: every set-up"), lines[name]
    assert lines["ppo"].endswith("; plays: the set-up of its model file (ppo:path=FILE.npz)")
    assert lines["value"].endswith("; plays: the set-up of its model file (value:path=FILE.npz)")
    assert f"; plays: the saved solutions: none yet in {tmp_path} (midnight solve ... --save)" in lines["optimal"]
    # one solution saved: optimal names its set-up (the options that are not the defaults) and objective
    assert main(["solve", "--set", "guests_per_player=1", "--set", "rounds=1", "--save", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["agents", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert list(rows) == list(lines)
    assert rows["optimal"]["plays"] == (f"the saved solutions in {tmp_path}: midnight_party 1 player, "
                                        "guests_per_player=1, rounds=1 (points)")
    value = rows["value-hidden_castle-4p"]
    assert value["plays"] == "hidden_castle 4 players" and value["source"] == "midnight-env"
    assert value["description"].startswith("shipped ensemble of 2 afterstate value networks for hidden_castle")


def test_an_agent_that_does_not_say_which_set_ups_it_plays():
    class Quiet(Agent):
        def act(self, decisions):
            return decisions.random_choice()

    class Picky(Quiet):
        def check_engine(self, engine):
            raise ValueError("only on Tuesdays")

    class Says(Quiet):
        plays = "midnight_party 2 players"

    def broken():
        raise RuntimeError("no folder")

    assert AgentInfo("quiet", Quiet).setups() == "every set-up (the agent does not say; it refuses none)"
    assert AgentInfo("quiet", Quiet).setups(default=False) == ""
    assert AgentInfo("picky", Picky).setups() == "not said (a tournament asks the agent before its first game)"
    assert AgentInfo("made", lambda: Quiet()).setups() == AgentInfo("picky", Picky).setups()  # a factory: unknown
    assert AgentInfo("says", Says).setups() == "midnight_party 2 players"
    assert AgentInfo("told", Quiet, plays="hidden_castle 3 players").setups() == "hidden_castle 3 players"
    assert AgentInfo("broken", Quiet, plays=broken).setups() == "unknown (RuntimeError: no folder)"


def test_records_name_module_agents(bots, tmp_path):
    out = tmp_path / "r.jsonl"
    assert main(["simulate", "--agents", "mybots.greedy:Greedy,random", "--players", "2", "--games", "2",
                 "--record", str(out), "--no-progress"]) == 0
    record = json.loads(out.read_text().splitlines()[0])
    assert record["agents"] == ["mybots.greedy:Greedy", "random"]
