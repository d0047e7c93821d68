"""Numba's on-disk kernel cache, made to survive a damaged file.

The engine's kernels are compiled with ``cache=True``: numba keeps them in ``__pycache__`` as an
index (``.nbi``) and data (``.nbc``), both pickles. A truncated or garbled file (a crash while it
was written, a full disk) makes every later call of that kernel fail with ``UnpicklingError``,
until someone deletes the file. Here a cache file that cannot be read counts as no cache: the
kernel is compiled again, with a warning naming the file, and numba writes the file afresh.

Pickles run code when read: keep cache directories writable by their user alone (README).
"""

from __future__ import annotations

import functools
import pickle
import warnings

from numba.core import caching

# what unpickling a damaged file raises
UNREADABLE = (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError, IndexError,
              KeyError, UnicodeDecodeError)


def _tolerant(method, unreadable_result, which):
    @functools.wraps(method)
    def read(self, *args):
        try:
            return method(self, *args)
        except UNREADABLE as err:
            path = getattr(self, which, None) if isinstance(which, str) else which(self, *args)
            warnings.warn(f"midnight_env: numba's cached kernel file {path} is unreadable "
                          f"({type(err).__name__}: {err}); the kernel is compiled again", RuntimeWarning, stacklevel=2)
            return unreadable_result

    read.midnight_tolerant = True
    return read


def install() -> None:
    """Make numba's cache reads tolerant (once; a numba without these internals is left as it is)."""
    cache_file = getattr(caching, "IndexDataCacheFile", None)
    if cache_file is None or getattr(getattr(cache_file, "_load_index", None), "midnight_tolerant", False):
        return
    if not hasattr(cache_file, "_load_data"):
        return
    cache_file._load_index = _tolerant(cache_file._load_index, {}, "_index_path")
    cache_file._load_data = _tolerant(cache_file._load_data, None,
                                      lambda self, name: f"{getattr(self, '_cache_path', '?')}/{name}")


install()
