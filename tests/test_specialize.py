"""Kernels compiled for one rule set (``midnight_env.specialize``): what the copies contain, where
they go, and the fallback to the generic kernels. That a specialized kernel steps exactly like the
generic one is checked in test_vector.py (threaded against serial, game by game)."""

from __future__ import annotations

import re

import pytest

from midnight_env import Engine, VectorEnv, agent_streams, specialize, vector_kernels
from midnight_env.config import Rules
from midnight_env.random_choice import random_legal_choices


def _copies(variant="midnight_party", num_players=4, **options):
    return specialize.specialized_sources(Engine(variant, num_players, **options).rules)


def test_copies_hold_the_rule_numbers_as_constants():
    rules = Engine("midnight_party", 4).rules
    sources = specialize.specialized_sources(rules)
    (rules_name, rules_text), (vector_name, vector_text) = sources.items()
    assert rules_name.endswith("_rules") and vector_name.endswith("_vector_kernels")
    scalars = set(specialize.rule_constants(rules))
    assert {"castle", "num_players", "num_squares", "num_rooms", "max_turns"} <= scalars
    for text in sources.values():
        assert set(re.findall(r"\bR\.(\w+)", text)) <= set(Rules._fields) - scalars, "only arrays stay in R"
    assert {"door", "kind", "room_at"} <= set(re.findall(r"\bR\.(\w+)", rules_text))
    assert "for p in range(4):" in rules_text and "legal[i, 509 - 1] = 1" in rules_text
    assert f"from {rules_name} import advance_games, reset_game" in vector_text  # the copies call each other
    assert "from midnight_env.rules import" not in vector_text


def test_each_rule_set_has_its_own_copies():
    four = _copies()
    assert _copies().keys() == four.keys()  # the same rules: the same files, reused
    for other in (_copies(num_players=3), _copies("hidden_castle"), _copies(max_turns=77)):
        assert not other.keys() & four.keys()


def test_copies_are_written_to_the_kernel_dir_and_loaded_once(monkeypatch, tmp_path):
    """The copies are written to MIDNIGHT_KERNEL_DIR and imported from there (a rule set no other
    test uses, so that this process has not loaded it yet)."""
    monkeypatch.setenv("MIDNIGHT_KERNEL_DIR", str(tmp_path))
    rules = Engine("midnight_party", 2, max_turns=61).rules
    copy = specialize.specialized(rules, "rules")
    assert sorted(p.name for p in tmp_path.glob("*.py")) == sorted(f"{n}.py" for n in specialize.specialized_sources(rules))
    assert copy.__file__ == str(tmp_path / f"{copy.__name__}.py")
    assert specialize.specialized(rules, "rules") is copy  # loaded once per process
    with pytest.raises(ValueError, match="module 'engine' is not allowed: allowed are rules, vector_kernels"):
        specialize.specialized(rules, "engine")


def test_an_unwritable_kernel_dir_falls_back_to_the_generic_kernels(monkeypatch, tmp_path):
    import midnight_env.threads as threads

    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MIDNIGHT_KERNEL_DIR", str(blocker / "kernels"))
    monkeypatch.setattr(specialize, "_warned", False)
    b = max(threads.PARALLEL_FROM, 130)
    venv = VectorEnv(b, "midnight_party", 2, seed=1, max_turns=62)  # rules no other test loads
    with pytest.warns(UserWarning, match="cannot write specialized kernels to .*kernels.*MIDNIGHT_KERNEL_DIR"):
        obs, _ = venv.reset()
    assert venv._step_module is vector_kernels
    streams = agent_streams(range(b))
    for _ in range(3):
        obs, *_ = venv.step(random_legal_choices(obs["action_mask"], streams))


def test_midnight_specialize_turns_it_off_and_is_checked(monkeypatch):
    import midnight_env.threads as threads

    b = max(threads.PARALLEL_FROM, 130)
    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "0")
    venv = VectorEnv(b, "midnight_party", 3, seed=1)
    venv.reset()
    assert venv._step_module is vector_kernels
    monkeypatch.setenv("MIDNIGHT_SPECIALIZE", "yes")
    with pytest.raises(ValueError, match="MIDNIGHT_SPECIALIZE='yes' is not allowed: allowed are 0 .* and 1"):
        VectorEnv(b, "midnight_party", 3, seed=1).reset()
