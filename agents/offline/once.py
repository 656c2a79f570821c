"""`computed_once`: functools.lru_cache whose misses are computed once when threads ask together.

lru_cache does not hold a caller back while another computes the same arguments, so the panel's critics, which watch
concurrently, each read the idea and each load WordNet's tables on a panel's first watch. Measured, the 8 built-in
critics on a 4-shot film: 8.7 s concurrently against 3.1 s one after another, before this lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def computed_once(maxsize: int) -> Callable[[F], F]:
    """lru_cache(maxsize) behind one lock per function: a caller waits while another computes, then reads the cache.
    For loaders and whole readings, where a wait is cheaper than computing again; not for functions that call
    back into themselves through another thread."""

    def wrap(fn: F) -> F:
        cached = lru_cache(maxsize=maxsize)(fn)
        lock = threading.RLock()

        @wraps(fn)
        def call(*args, **kwargs):
            with lock:
                return cached(*args, **kwargs)

        call.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return wrap
