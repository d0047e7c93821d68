"""One check for each fact a user can get wrong: an integer in a range, a number in a range, one of
a set of choices, a path. Each raises the house message, one line naming the value and what is
allowed::

    seed -1 is out of range: allowed are integers 0..4294967295
    players 2.5 is not a whole number: allowed are 1..8
    variant 'chess' is not allowed: allowed are midnight_party, hidden_castle

The caller names the value as the user wrote it (``--seed``, ``seed=``, ``players``) and the
exception type its layer raises (UsageError for a flag, ConfigFileError for a setting, WebError
for a request; or a function of the message making one): the message is the same everywhere. A
bool is never a number here (``True`` is 1 to Python, not to a user), and nothing is rounded or
cast silently.
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

# an exception type, or a function making one from the message (``partial(TournamentError, parameter="seed")``)
Raiser = Callable[[str], Exception]

__all__ = ["shown", "given", "integer", "integers", "number", "choice", "path"]


def shown(value: Any, most: int = 40) -> str:
    """``repr(value)`` cut to ``most`` characters, for a message (a string keeps its quotes; a numpy
    scalar shows as its Python value: ``2.5``, not ``np.float64(2.5)``)."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= most else text[:most - 1] + "\u2026"


def given(name: str, value: Any) -> str:
    """How a message quotes a value: ``--seed -1`` for a flag, ``seed=-1`` for a setting (a name
    ending in ``=``), else ``players -1``."""
    if name.endswith("="):
        return f"{name}{shown(value)}"
    return f"{name} {shown(value)}"


def _integer_range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"integers {low}..{high}"
    if low is not None:
        return f"integers {low} or more"
    if high is not None:
        return f"integers up to {high}"
    return "integers"


def integer(name: str, value: Any, low: int | None = None, high: int | None = None, *,
            allowed: str | None = None, error: Raiser = ValueError) -> int:
    """``value`` as an int in ``low..high`` (None: unbounded that side), else ``error`` naming
    ``name``, the value and ``allowed`` (default: the range). A numpy integer is accepted; a float
    that is not whole, a bool, a string or any other value is refused by name."""
    allowed = allowed or _integer_range(low, high)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]  # a 0-d array (what a Gymnasium caller may pass as one action): its one value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Number):
        raise error(f"{given(name, value)} is not an integer: allowed are {allowed}")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
            raise error(f"{given(name, value)} is a float, not an integer: allowed are {allowed}")
        raise error(f"{given(name, value)} is not a whole number: allowed are {allowed}")
    whole = int(value)
    if (low is not None and whole < low) or (high is not None and whole > high):
        raise error(f"{given(name, whole)} is out of range: allowed are {allowed}")
    return whole


def integers(name: str, values: Any, low: int | None = None, high: int | None = None, *,
             allowed: str | None = None, error: Raiser = ValueError) -> Any:
    """``values``, an array of integers (game indices, seats; not converted), if every one is in
    ``low..high``, else ``error`` naming ``name`` and the first one outside, as :func:`integer` does."""
    values = np.asarray(values)
    if low is None and high is None:
        return values
    if low is None or high is None:
        outside = values < low if high is None else values > high
    else:
        outside = (values < low) | (values > high)
    if outside.any():
        first = values[outside][0]
        raise error(f"{given(name, int(first))} is out of range: allowed are {allowed or _integer_range(low, high)}")
    return values


def number(name: str, value: Any, low: float | None = None, high: float | None = None, *,
           low_open: bool = False, high_open: bool = False, allowed: str | None = None,
           error: Raiser = ValueError) -> float:
    """``value`` as a finite float in ``[low, high]`` (``low_open``/``high_open`` exclude an end;
    None: unbounded that side), else ``error`` naming it and ``allowed``. NaN and infinities are
    outside every range; a bool or a string is not a number."""
    if allowed is None:
        if low is not None and high is not None:
            allowed = f"numbers in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        elif low is not None:
            allowed = f"numbers above {low:g}" if low_open else f"numbers {low:g} or more"
        elif high is not None:
            allowed = f"numbers below {high:g}" if high_open else f"numbers up to {high:g}"
        else:
            allowed = "finite numbers"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise error(f"{given(name, value)} is not a number: allowed are {allowed}")
    real = float(value)
    inside = math.isfinite(real)
    if inside and low is not None:
        inside = real > low if low_open else real >= low
    if inside and high is not None:
        inside = real < high if high_open else real <= high
    if not inside:
        raise error(f"{given(name, value)} is out of range: allowed are {allowed}")
    return real


def choice(name: str, value: Any, options: Iterable[Any], *, error: Raiser = ValueError) -> Any:
    """``value`` if it is one of ``options``, else ``error`` naming it and listing the options."""
    options = list(options)
    if value not in options:
        raise error(f"{given(name, value)} is not allowed: allowed are "
                    f"{', '.join(str(option) for option in options)}")
    return value


def path(name: str, value: Any, *, must_exist: bool = True, kind: str = "file",
         inside: Path | None = None, error: Raiser = ValueError) -> Path:
    """``value`` as a Path, else ``error`` naming it: one that must exist and does not, one that is
    not a ``kind`` (``"file"``: a regular file; ``"folder"``: a directory; ``"any"``), or one that
    leads outside the folder ``inside`` (symbolic links resolved)."""
    if not isinstance(value, (str, os.PathLike)) or str(value) == "":
        raise error(f"{given(name, value)} is not a path: allowed are the path of a {kind}")
    where = Path(value)
    if inside is not None:
        root = Path(inside).resolve()
        resolved = where.resolve()
        if resolved != root and root not in resolved.parents:
            raise error(f"{given(name, str(where))} leads to '{resolved}', outside '{root}': allowed are paths "
                        f"inside it")
    if not where.exists():
        if must_exist:
            raise error(f"{given(name, str(where))} does not exist: allowed are the path of an existing {kind}")
        return where
    if kind == "file" and not where.is_file():
        raise error(f"{given(name, str(where))} is not a regular file: allowed are the path of a file")
    if kind == "folder" and not where.is_dir():
        raise error(f"{given(name, str(where))} is not a folder: allowed are the path of a folder")
    return where
