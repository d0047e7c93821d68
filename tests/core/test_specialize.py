"""Kernels compiled for one rule set (``midnight_env.core.specialize``): what the copies contain, what
their names are a hash of, which modules are refused, where the copies go, which old ones are
pruned, and the fallback to the generic kernels. That a specialized kernel steps exactly like the
generic one is checked in test_vector.py (threaded against serial, game by game)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import textwrap
import time

import pytest

from midnight_env import Engine, VectorEnv, agent_streams, specialize, vector_kernels
from midnight_env.core.config import Rules
from midnight_env.core.random_choice import random_legal_choices
from midnight_env.core.specialize import SpecializeError


def _copies(variant="midnight_party", num_players=4, **options):
    return specialize.specialized_sources(Engine(variant, num_players, **options).rules)


def _fields_read(text):
    """The fields read as R.<field> in the code of ``text``."""
    return {node.attr for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "R"}


def test_copies_hold_the_rule_numbers_as_constants():
    rules = Engine("midnight_party", 4).rules
    sources = specialize.specialized_sources(rules)
    (rules_name, rules_text), (vector_name, vector_text) = sources.items()
    assert rules_name.endswith("_rules") and vector_name.endswith("_vector_kernels")
    scalars = set(specialize.rule_constants(rules))
    assert {"castle", "num_players", "num_squares", "num_rooms", "max_turns"} <= scalars
    for text in sources.values():
        assert _fields_read(text) <= set(Rules._fields) - scalars, "only arrays stay in R"
    assert {"door", "kind", "room_at"} <= _fields_read(rules_text)
    assert "for p in range(4):" in rules_text and "legal[i, 509 - 1] = 1" in rules_text
    assert f"from {rules_name} import advance_games, reset_game" in vector_text  # the copies call each other
    assert "from midnight_env.core.rules import" not in vector_text


def test_each_rule_set_has_its_own_copies():
    four = _copies()
    assert _copies().keys() == four.keys()  # the same rules: the same files, reused
    for other in (_copies(num_players=3), _copies("hidden_castle"), _copies(max_turns=77)):
        assert not other.keys() & four.keys()


# -- what the names are a hash of


def test_the_code_hash_covers_the_modules_the_copies_import_transitively():
    closure = specialize.module_closure()
    # threads only through observation, which vector_kernels imports, and from another layer's package
    assert {"core.rules", "core.vector_kernels", "core.board", "core.config", "core.dice", "core.state",
            "core.observation", "infra.threads"} <= set(closure)
    assert not {"core.engine", "envs.vector", "core.specialize", "core", ""} & set(closure), \
        "nothing the kernels do not import"
    assert closure["infra.threads"] == specialize.PACKAGE_DIR / "infra" / "threads.py"


def _package_copy(tmp_path):
    package = tmp_path / "midnight_env"
    shutil.copytree(specialize.PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_a_change_to_a_module_in_the_closure_changes_the_hash_and_one_outside_does_not(tmp_path):
    package = _package_copy(tmp_path)
    before = specialize.code_hash(package)
    assert before == specialize.code_hash(specialize.PACKAGE_DIR)
    with open(package / "core" / "engine.py", "a") as f:
        f.write("\nX = 1\n")
    assert specialize.code_hash(package) == before, "engine.py: no copy imports it"
    with open(package / "infra" / "threads.py", "a") as f:
        f.write("\nX = 1\n")
    assert specialize.code_hash(package) != before, "threads.py: observation imports it"


def test_a_new_dependency_joins_the_closure_by_being_imported(tmp_path):
    package = _package_copy(tmp_path)
    (package / "core" / "lookup.py").write_text("TABLE = (1, 2, 3)\n")
    before = specialize.code_hash(package)
    with open(package / "core" / "lookup.py", "a") as f:
        f.write("TABLE2 = (4,)\n")
    assert specialize.code_hash(package) == before, "nothing imports lookup yet"
    with open(package / "core" / "dice.py", "a") as f:  # a relative import, in a function
        f.write("\n\ndef _table():\n    from .lookup import TABLE\n    return TABLE\n")
    assert "core.lookup" in specialize.module_closure(package_dir=package)
    after = specialize.code_hash(package)
    with open(package / "core" / "lookup.py", "a") as f:
        f.write("TABLE3 = (5,)\n")
    assert specialize.code_hash(package) != after


def test_imports_of_names_from_the_package_count_its_init_and_of_modules_only_them(tmp_path):
    package = _package_copy(tmp_path)
    (package / "core" / "rules.py").write_text("from midnight_env.core import dice\n"
                                              "from midnight_env.core.board import GREEN\n")
    (package / "core" / "vector_kernels.py").write_text("from ..infra import threads\nfrom numpy.random import state\n")
    assert set(specialize.module_closure(package_dir=package)) == {"core.rules", "core.vector_kernels", "core.dice",
                                                                  "core.board", "infra.threads", "infra.seeds",
                                                                  "infra.checks"}
    (package / "core" / "vector_kernels.py").write_text("from midnight_env.infra import threads\n"
                                                       "from midnight_env import Engine\n")
    assert "" in specialize.module_closure(package_dir=package), "Engine comes from the package's __init__"


# -- the substitution, over the syntax tree


def _specialize(body, **constants):
    text = "from midnight_env.core.config import Rules\nfrom midnight_env.core.rules import helper\n\n\n" + textwrap.dedent(body)
    return specialize.specialize_module(text, "core.vector_kernels", constants or {"num_players": 4, "castle": True},
                                        {"core.rules": "K_rules", "core.vector_kernels": "K_vector_kernels"},
                                        {"core.vector_kernels": {}, "core.rules": {"helper": ["s", "R", "i"]}})


def test_fields_of_r_become_constants_and_arrays_stay():
    text = _specialize("""
        def f(s, R, i):
            R = Rules(*R)
            for p in range(R.num_players):
                s[i] += R.door[p] if R.castle else 0
            return helper(s, R, i) + helper(s, Rules(*R), i=i) + helper(s=s, R=R, i=i)
        """)
    assert "for p in range(4):" in text and "R.door[p] if True else 0" in text
    assert "from K_rules import helper" in text and "midnight_env.core.rules" not in text


@pytest.mark.parametrize("body, message", [
    ("def f(s, R):\n    rules = R\n    return rules\n", "bound to a name other than R"),
    ("def f(s, rules):\n    return rules.num_players\n", "field 'num_players' of the rules is read from something"),
    ("def f(s, R):\n    return getattr(R, 'castle')\n", "handed to getattr, which is no midnight_env function"),
    ("def f(s, R):\n    return R[0]\n", "used other than as R.<field>"),
    ("def f(s, R):\n    castle, *rest = R\n", "bound to a name other than R"),
    ("def f(s, R):\n    return R.squares\n", "'squares' is no field of the rules"),
    ("def f(s, R):\n    R.castle = False\n", "a field of the rules is assigned"),
    ("def f(s):\n    return R.castle\n", "read in a function that has no parameter R"),
    ("def f(s, R):\n    return helper(R, s, 0)\n", "helper takes the rules as parameter 's'"),
    ("def f(s, R):\n    return helper(s, rules=R, i=0)\n", "helper takes the rules as parameter 'rules'"),
    ("def f(s, R):\n    R = s\n", "R is bound to something other than the rules"),
    ("def f(s, rules: Rules):\n    return 0\n", "takes the rules as parameter 'rules'"),
    ("import midnight_env.core.rules\n", "a copied module is imported as a module"),
    ("from midnight_env.core import rules\n", "a copied module is imported as a module"),
])
def test_a_module_that_reaches_the_rules_another_way_is_refused(body, message):
    with pytest.raises(SpecializeError, match=rf"midnight_env/core/vector_kernels.py line \d+: .*{re.escape(message)}"):
        _specialize(body)


def test_a_copied_module_that_reads_the_rules_another_way_fails_when_specializing(monkeypatch, tmp_path):
    package = _package_copy(tmp_path)
    text = (package / "core" / "rules.py").read_text()
    assert "def _next_seat(R, p):\n    return p + 1 if p + 1 < R.num_players else 0" in text
    text = text.replace("def _next_seat(R, p):\n    return p + 1 if p + 1 < R.num_players else 0",
                        "def _next_seat(rules, p):\n    return p + 1 if p + 1 < rules.num_players else 0")
    (package / "core" / "rules.py").write_text(text)
    monkeypatch.setattr(specialize, "PACKAGE_DIR", package)
    with pytest.raises(SpecializeError, match="rules.py line .*'num_players' of the rules is read from something"):
        specialize.specialized(Engine("midnight_party", 4).rules)


# -- the kernel directory


def test_copies_are_written_to_the_kernel_dir_and_loaded_once(monkeypatch, tmp_path):
    """The copies are written to MIDNIGHT_KERNEL_DIR and imported from there (a rule set no other
    test uses, so that this process has not loaded it yet)."""
    monkeypatch.setenv("MIDNIGHT_KERNEL_DIR", str(tmp_path))
    rules = Engine("midnight_party", 2, max_turns=61).rules
    copy = specialize.specialized(rules, "rules")
    names = list(specialize.specialized_sources(rules))
    assert sorted(p.name for p in tmp_path.glob("*.py")) == sorted(f"{n}.py" for n in names)
    assert (tmp_path / f"{names[0].removesuffix('_rules')}.used").exists(), "the time it was last used"
    assert copy.__file__ == str(tmp_path / f"{copy.__name__}.py")
    assert specialize.specialized(rules, "rules") is copy  # loaded once per process
    with pytest.raises(ValueError, match="module 'engine' is not allowed: allowed are rules, vector_kernels"):
        specialize.specialized(rules, "engine")


HOUR, DAY = 3600, 86400
NOW = 1_800_000_000.0


def _old_copy(directory, prefix, age, legacy=False, now=NOW):
    """The files of a copy last used ``age`` seconds before ``now``."""
    cache = directory / "__pycache__"
    cache.mkdir(exist_ok=True)
    names = [f"{prefix}_rules.py", f"{prefix}_vector_kernels.py",
             f"__pycache__/{prefix}_rules.advance_games-423.py311.nbi",
             f"__pycache__/{prefix}_vector_kernels.cpython-311.pyc"] + ([] if legacy else [f"{prefix}.used"])
    for name in names:
        (directory / name).write_text("x")
        os.utime(directory / name, (now - age, now - age))
    return {directory / name for name in names}


def test_pruning_removes_stale_copies_only(tmp_path):
    r, other_r, code, old_code, older_code = "a" * 12, "b" * 12, "c" * 12, "d" * 12, "e" * 12
    current = f"midnight_kernels_{r}_{code}"
    kept = _old_copy(tmp_path, current, 30 * DAY)  # this code's own: kept however old
    superseded = _old_copy(tmp_path, f"midnight_kernels_{r}_{old_code}", 2 * HOUR)  # same rules, other code
    kept |= _old_copy(tmp_path, f"midnight_kernels_{r}_{older_code}", HOUR / 2)  # ... maybe in use right now
    kept |= _old_copy(tmp_path, f"midnight_kernels_{other_r}_{old_code}", 2 * DAY)  # other rules: another checkout?
    unused = _old_copy(tmp_path, f"midnight_kernels_{other_r}_{older_code}", 8 * DAY)
    legacy = _old_copy(tmp_path, "midnight_kernels_0123456789abcdef0123", 8 * DAY, legacy=True)
    kept |= _old_copy(tmp_path, "midnight_kernels_fedcba9876543210fedc", DAY, legacy=True)
    (tmp_path / "notes.txt").write_text("not a copy")
    kept.add(tmp_path / "notes.txt")
    removed = specialize.prune(tmp_path, current, now=NOW)
    assert set(removed) == superseded | unused | legacy
    assert {p for p in tmp_path.rglob("*") if p.is_file()} == kept


def test_a_new_copy_prunes_stale_ones(monkeypatch, tmp_path):
    monkeypatch.setenv("MIDNIGHT_KERNEL_DIR", str(tmp_path))
    rules = Engine("midnight_party", 2, max_turns=63).rules  # a rule set no other test uses
    r, now = specialize.rules_hash(rules), time.time()
    stale = _old_copy(tmp_path, f"midnight_kernels_{r}_{'0' * 12}", 2 * HOUR, now=now)
    recent = _old_copy(tmp_path, f"midnight_kernels_{r}_{'1' * 12}", HOUR / 2, now=now)
    specialize.specialized(rules, "rules")
    assert not any(p.exists() for p in stale) and all(p.exists() for p in recent)


# -- turned off, or no kernel directory


def test_an_unwritable_kernel_dir_falls_back_to_the_generic_kernels(monkeypatch, tmp_path):
    import midnight_env.infra.threads as threads

    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MIDNIGHT_KERNEL_DIR", str(blocker / "kernels"))
    monkeypatch.setattr(specialize, "_warned", False)
    b = max(threads.PARALLEL_FROM, 130)
    venv = VectorEnv(b, "midnight_party", 2, seed=1, max_turns=62)  # rules no other test loads
    with pytest.warns(UserWarning, match="cannot use .*kernels for specialized kernels .*MIDNIGHT_KERNEL_DIR"):
        obs, _ = venv.reset()
    assert venv._step_module is vector_kernels
    streams = agent_streams(range(b))
    for _ in range(3):
        obs, *_ = venv.step(random_legal_choices(obs["action_mask"], streams))


def test_midnight_specialize_turns_it_off_and_is_checked(monkeypatch):
    import midnight_env.infra.threads as threads

    b = max(threads.PARALLEL_FROM, 130)
    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "0")
    venv = VectorEnv(b, "midnight_party", 3, seed=1)
    venv.reset()
    assert venv._step_module is vector_kernels
    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "yes")
    with pytest.raises(ValueError, match="MIDNIGHT_SPECIALIZE='yes' is not allowed: allowed are auto .*, 0 .* and 1"):
        VectorEnv(b, "midnight_party", 3, seed=1).reset()


@pytest.mark.parametrize("variant, players, expected", [("hidden_castle", 3, True), ("midnight_party", 2, True),
                                                         ("midnight_party", 3, False), ("midnight_party", 4, False)])
def test_auto_specializes_only_where_it_was_measured_to_pay(monkeypatch, variant, players, expected):
    rules = Engine(variant, players).rules
    monkeypatch.delenv("MIDNIGHT_SPECIALIZE", raising=False)
    assert specialize.enabled(rules) is expected
    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "1")
    assert specialize.enabled(rules) is True
    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "0")
    assert specialize.enabled(rules) is False


@pytest.mark.slow
def test_ab_benchmark_script_runs():
    """Smoke test of experiments/bench_ab.py with a tiny budget (it measures, never asserts speed)."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "experiments" / "bench_ab.py"
    done = subprocess.run([sys.executable, str(script), "--a", "MIDNIGHT_SPECIALIZE=0", "--b", "MIDNIGHT_SPECIALIZE=1",
                           "--variants", "midnight_party", "--players", "2", "--batch", "64", "--rounds", "1",
                           "--decisions", "1280", "--repeats", "1"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert re.search(r"\n    0 midnight_party     A .* midnight_env\.core\.vector_kernels\n", done.stdout), done.stdout
    assert re.search(r"\nmidnight_party +[\d,]+ +[\d,]+ +\d+\.\d{3}", done.stdout), done.stdout
