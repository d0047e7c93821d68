"""What a request may ask of the server: the type and range of every field of its JSON body or query
string (a refusal names the field, the value and what is allowed), and the work one may cost.

A number may come as a JSON integer or as a string of ASCII digits (a query string holds text, and
the page sends 63-bit seeds as text); a float that is not a whole number, a bool, a list or any
other value is refused by name. Nothing here is coerced silently (``int(2.5)`` is 2: a two-player
game asked for as 2.5 players is not started).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

from midnight_env.infra import checks
from midnight_env.web.errors import WebError

# the work one request may cost (``midnight serve --max-budget``, ``--max-analyses``)
MAX_EVALUATOR_BUDGET = 10_000  # positions a decision an analysis may search (about 4 s a game of 100 decisions)
MAX_EVALUATOR_TURNS = 4  # own turns an analysis may search through (its budget decides how many fit)
MAX_ANALYSES = 2  # analyses running at once; another is answered 503 busy
ANALYSIS_BATCH_POSITIONS = 64_000  # positions an analysis searches between two looks at its client (and its memory)

DIGITS = re.compile(r"[+-]?[0-9]+")  # a whole number as text: ASCII digits only (no "²", no "٤")


def shown(value: Any, limit: int = 30) -> str:
    """A value of a request as bounded text for a message (``repr``: a string shows its quotes)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def kind(value: Any) -> str:
    """What a JSON value is, in words (``a number``, ``text``, ``a list``, ``an object``, ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return {int: "a number", float: "a number", str: "text", list: "a list", dict: "an object"}.get(
        type(value), f"a {type(value).__name__}")


def whole(name: str, value: Any, low: int, high: int | None = None, allowed: str | None = None) -> int:
    """``value`` (field ``name``) as an int in ``low..high`` (``high`` None: no upper bound);
    WebError (400) naming the field, the value and ``allowed`` (default: the range) otherwise. JSON
    gives a whole number as a float or as digits too: read as the integer, then checked as
    everywhere (``infra.checks.integer``)."""
    allowed = allowed or (f"{low}..{high}" if high is not None else f"integers {low} or more")
    if isinstance(value, bool) or value is None:
        raise WebError(f"{name} {shown(value)} is not a number: allowed are {allowed}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise WebError(f"{name} {shown(value)} is not a whole number: allowed are {allowed}")
        number = int(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str) and DIGITS.fullmatch(value.strip()):
        try:
            number = int(value.strip())
        except ValueError:  # thousands of digits
            raise WebError(f"{name} {shown(value)} is out of range: allowed are {allowed}") from None
    elif isinstance(value, str):
        raise WebError(f"{name} {shown(value)} is not a number: allowed are {allowed}")
    else:
        raise WebError(f"{name} {shown(value)} is {kind(value)}, not a number: allowed are {allowed}")
    return checks.integer(name, number, low, high, allowed=allowed, error=WebError)


def text(name: str, value: Any, allowed: str) -> str:
    """``value`` (field ``name``) as a string; WebError (400) naming it and ``allowed`` otherwise."""
    if not isinstance(value, str):
        raise WebError(f"{name} {shown(value)} is {kind(value)}, not text: allowed are {allowed}")
    return value


def agent_names(name: str, value: Any, allowed: str) -> list[str]:
    """Agent names: one string (comma-separated names) or a list of strings; WebError (400)
    naming the field (and the entry of a list) otherwise."""
    from midnight_env.arena.registry import split_specs

    if isinstance(value, str):
        return split_specs(value)
    if not isinstance(value, list):
        raise WebError(f"{name} {shown(value)} is {kind(value)}: allowed are {allowed}")
    for k, entry in enumerate(value):
        if not isinstance(entry, str):
            raise WebError(f"{name}[{k}] {shown(entry)} is {kind(entry)}, not an agent's name: "
                           f"allowed are {allowed}")
    return [entry.strip() for entry in value]


def known_fields(body: dict, allowed: Iterable[str], where: str) -> None:
    """WebError (400) naming the first field of a JSON body that ``where`` does not take."""
    allowed = tuple(allowed)
    unknown = [key for key in body if key not in allowed]
    if unknown:
        raise WebError(f"{where}: unknown field {shown(unknown[0])}: allowed are {', '.join(allowed)}")


__all__ = ["MAX_EVALUATOR_BUDGET", "MAX_EVALUATOR_TURNS", "MAX_ANALYSES", "ANALYSIS_BATCH_POSITIONS", "DIGITS",
           "kind", "shown", "whole", "text", "agent_names", "known_fields"]
