"""Numba ``parallel`` loops over the host's arrays, and whether they may run here: under
OpenMP or TBB, which may be called from two threads at once (not Numba's workqueue), and not
in a child forked after the first call (GNU OpenMP is not fork-safe). Imported where first
needed: Numba costs 0.2 s of a command's start."""

from __future__ import annotations

import os
import threading

import numpy as np
from numba import njit, prange

from ..threads import cores

_lock = threading.Lock()
_process: list[int | None] = [None]  # the process whose threading layer was tried
_safe: list[bool] = [False]  # whether that layer may be called from two threads at once


def ready() -> bool:
    """Whether this process may call the parallel loops (tried once, on tiny arrays)."""
    with _lock:
        if _process[0] is None:
            import numba

            _extremes(np.zeros(3, np.int64), 2)
            _process[0] = os.getpid()
            _safe[0] = numba.threading_layer() in ("omp", "tbb")
        return _safe[0] and _process[0] == os.getpid()


def extremes(offsets: np.ndarray) -> tuple[int, int]:
    """The least and the most of ``offsets[k + 1] - offsets[k]`` (at least one), a piece on
    each core (call only where :func:`ready`)."""
    lo, hi = _extremes(offsets, max(1, min(64, cores())))
    return int(lo), int(hi)


@njit(parallel=True, nogil=True, cache=True)
def _extremes(offsets, pieces):  # pragma: no cover - compiled
    count = offsets.size - 1
    step = (count + pieces - 1) // pieces
    lows = np.full(pieces, np.iinfo(np.int64).max, np.int64)
    highs = np.full(pieces, np.iinfo(np.int64).min, np.int64)
    for k in prange(pieces):
        a = min(k * step, count)
        part = offsets[a:min(a + step, count) + 1]
        low, high = lows[k], highs[k]
        for i in range(part.size - 1):  # from 0: vectorised
            d = part[i + 1] - part[i]
            low = min(low, d)
            high = max(high, d)
        lows[k], highs[k] = low, high
    return lows.min(), highs.max()
