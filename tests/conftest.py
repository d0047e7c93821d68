"""Shared test helpers: compare a game with the position a rule says it must be in."""

from __future__ import annotations

import pytest

from midnight_env.positions import describe_position, draw_position, legal_set


def assert_position(engine, state, i: int = 0, **expected) -> None:
    """Compare the given parts of game ``i`` (keys of ``describe_position``, plus ``legal``: a
    set of notations, ``supply``, ``truncated``) and show the drawn board when they differ."""
    __tracebackhide__ = True  # failures point at the test's line
    got = describe_position(engine, state, i)
    got["legal"] = legal_set(engine, state, i)
    got["supply"] = [int(x) for x in state.supply[i]]
    got["truncated"] = bool(state.truncated[i])
    unknown = set(expected) - set(got)
    if unknown:
        raise KeyError(f"assert_position: unknown keys {sorted(unknown)}: allowed are {sorted(got)}")
    wrong = {key: (got[key], want) for key, want in expected.items() if got[key] != want}
    lines = [f"  {key}: got {g!r}, expected {w!r}" for key, (g, w) in wrong.items()]
    if wrong:
        raise AssertionError("position differs:\n" + "\n".join(lines) + "\n" + draw_position(engine, state, i))


@pytest.fixture
def check():
    """``check(engine, state, gallery={...}, stairs={...}, spooky=[...], legal={...}, ...)``."""
    return assert_position
