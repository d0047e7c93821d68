"""The placement book (issue 41, item 2): where the first guest goes in the set-ups people play.

For each set-up it covers (variant x 2, 3, 4 and 6 players, the default guests), the book holds the
value of every gallery square ``s`` for seat 0's first guest::

    values[s] = E[ others' mean final spooky points - seat 0's | seat 0's first guest on s ]

(higher is better), the set-up's shipped champion (one ply) playing every other decision, estimated
by paired rollouts with successive halving; ``half_widths[s]`` is its 95 % normal half-width,
``rollouts[s]`` the rollouts behind it, ``best`` the better of the two squares of the last round.
``experiments/placement_book.py`` writes it to
``docs/placement_book.json``; the package ships a copy beside the models
(``models/placement/placement_book.json``, tests/agents/test_book.py checks that the two are equal), so
an installed package finds it without the docs.

The champions play it with ``value-<variant>-<N>p:book=shipped`` (:class:`midnight_agents.value.ValueAgent`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from midnight_env.core.config import ConfigError, make_config, setup_words

SHIPPED_BOOK = Path(__file__).resolve().parent / "models" / "placement" / "placement_book.json"
FORMAT = "placement_book/1"  # experiments/placement_book.py's format


class BookError(ValueError):
    """A placement book that cannot be read, or that does not cover the set-up asked for."""


def book_path(path: str | Path | None = None) -> Path:
    """``path``, or the shipped book for None and ``"shipped"``."""
    return SHIPPED_BOOK if path is None or str(path) == "shipped" else Path(path)


@lru_cache(maxsize=8)
def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise BookError(f"placement book {path} cannot be read: {err.strerror or err}") from None
    except ValueError as err:
        raise BookError(f"placement book {path} is not JSON: {err}") from None
    if not isinstance(data, dict) or not any(_is_entry(e) for e in data.values()):
        raise BookError(f"placement book {path} holds no set-up: allowed is a book of "
                        "experiments/placement_book.py (docs/placement_book.json)")
    return data


def load_book(path: str | Path | None = None) -> dict[str, Any]:
    """The placement book at ``path`` (default: the shipped one), as its JSON: ``about``, one entry
    per set-up (``midnight_party_2p``, ...) and the ``validation`` on solved set-ups. Read once
    and shared: do not change it. A :class:`BookError` where it cannot be read."""
    return _read(book_path(path).resolve())


def _is_entry(entry: Any) -> bool:
    return isinstance(entry, dict) and {"variant", "players", "values", "best"} <= entry.keys()


def _full_options(variant: str, num_players: int, options: dict | None) -> dict | None:
    """Every rule option of the set-up, defaults filled in (None: a set-up this version refuses)."""
    try:
        return dict(make_config(variant, num_players, **(options or {})).options)
    except (ConfigError, TypeError):
        return None


def book_entries(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The book's set-up entries, in its order."""
    return [e for e in load_book(path).values() if _is_entry(e)]


def book_setups(path: str | Path | None = None) -> list[str]:
    """The set-ups the book covers, in words (``midnight_party 2 players``)."""
    return [setup_words(e["variant"], e["players"], e.get("options")) for e in book_entries(path)]


def book_entry(variant: str, num_players: int, options: dict | None = None,
               path: str | Path | None = None) -> dict[str, Any] | None:
    """The book's entry of the set-up (``options``: its rule options, default the defaults; compared
    with the defaults filled in), or None where the book does not cover it."""
    want = _full_options(variant, num_players, options)
    if want is None:
        return None
    for entry in book_entries(path):
        if (entry["variant"] == variant and entry["players"] == num_players
                and _full_options(variant, num_players, entry.get("options")) == want):
            return entry
    return None


def book_square(entry: dict[str, Any]) -> int:
    """The entry's best square for the first guest (a gallery square index)."""
    best, squares = entry["best"], len(entry["values"])
    if isinstance(best, bool) or not isinstance(best, int) or not 0 <= best < squares:
        raise BookError(f"placement book entry {entry['variant']} {entry['players']} players: best square {best!r} "
                        f"is not allowed: allowed are 0..{squares - 1}")
    return best


def require_entry(variant: str, num_players: int, options: dict | None = None,
                  path: str | Path | None = None, who: str = "placement book") -> dict[str, Any]:
    """:func:`book_entry` with a best square in range, or a :class:`BookError` in one line (where the
    book does not cover the set-up, naming it and those covered)."""
    try:
        entry = book_entry(variant, num_players, options, path)
        if entry is not None:
            book_square(entry)
    except BookError as err:
        raise BookError(f"{who}: {err}") from None
    if entry is None:
        name = "the shipped placement book" if book_path(path) == SHIPPED_BOOK else f"the placement book {path}"
        raise BookError(f"{who}: {name} does not cover "
                        f"{setup_words(variant, num_players, options)}: allowed are "
                        f"{'; '.join(book_setups(path))}")
    return entry


__all__ = ["SHIPPED_BOOK", "BookError", "book_entries", "book_entry", "book_path", "book_setups", "book_square",
           "load_book", "require_entry"]
