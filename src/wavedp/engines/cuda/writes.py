"""A one-to-one chunk's four arrays (residues, sides) written into their page-locked slot
by one call of a Numba ``parallel`` kernel: piece k of every array on one of its threads,
which start without the interpreter's lock (the writers' Python threads each take it to
start a piece, and in a call the last of 16 pieces started 1-3 ms late). Only for writes of
at least ``LEAST`` elements a piece, where Numba's threading layer may be called from two
threads at once (OpenMP, TBB: not its workqueue) and not in a child forked after a write
(GNU OpenMP is not fork-safe); :func:`write` answers False where the caller writes instead.
The kernels are imported on a chunk's first write (Numba costs 0.2 s of a command's start).
"""

from __future__ import annotations

import os
import threading

import numpy as np
from numba import njit, prange

#: whether large writes go to the parallel kernel (a switch for the benchmarks)
PARALLEL = 1
#: the fewest elements a piece worth the parallel kernel
LEAST = 1 << 20

_lock = threading.Lock()
_process: list[int | None] = [None]  # the process whose threading layer was tried
_safe: list[bool] = [False]  # whether that layer may be called from two threads at once


@njit(nogil=True, boundscheck=False, cache=True)
def pack(src, dst):  # pragma: no cover - compiled
    """``src``'s codes (below 16) two a byte into ``dst``: letter k in the low (k even) or
    high nibble of byte k // 2 (a loop from 0, which LLVM vectorises)."""
    half = src.size // 2
    for k in range(half):
        dst[k] = src[2 * k] | (src[2 * k + 1] << 4)
    if src.size % 2:
        dst[half] = src[src.size - 1]


@njit(nogil=True, boundscheck=False, cache=True)
def _copy(src, dst):  # pragma: no cover - compiled
    """``dst[:] = src`` (slice assignment would make a temporary first)."""
    for k in range(src.size):
        dst[k] = src[k]


@njit(nogil=True, boundscheck=False, cache=True)
def _piece(src, dst, packed, k, pieces):  # pragma: no cover - compiled
    """Piece k of ``pieces`` of ``dst`` written from ``src`` (``packed``: two a byte)."""
    step = (dst.size + pieces - 1) // pieces
    a = min(k * step, dst.size)
    b = min(a + step, dst.size)
    if packed:
        pack(src[2 * a:min(2 * b, src.size)], dst[a:b])
    else:
        _copy(src[a:b], dst[a:b])


@njit(parallel=True, nogil=True, cache=True)
def _four(s0, d0, s1, d1, s2, d2, s3, d3, packed, pieces):  # pragma: no cover - compiled
    """The four arrays' pieces, piece k of each on one thread; the first two ``packed``."""
    for k in prange(pieces):
        _piece(s0, d0, packed, k, pieces)
        _piece(s1, d1, packed, k, pieces)
        _piece(s2, d2, False, k, pieces)
        _piece(s3, d3, False, k, pieces)


def write(views: list[np.ndarray], sources: list[np.ndarray], packed: bool,
          pieces: int) -> bool:
    """Each source into its view (the first two ``packed`` two letters a byte) in ``pieces``
    pieces by the parallel kernel; False, nothing written, where it does not serve."""
    if not PARALLEL or len(views) != 4 or sum(s.size for s in sources) < pieces * LEAST:
        return False
    if not _ready():
        return False
    _four(*(a for pair in zip(sources, views, strict=True) for a in pair), packed, pieces)
    return True


def _ready() -> bool:
    """Whether this process may call the parallel kernel (tried once, on tiny arrays)."""
    with _lock:
        if _process[0] is None:
            import numba

            # the types of a call's arrays: letters, and sides read-only int64 (the records'
            # lengths) written as int32, so that the first chunk compiles nothing more
            one, out = np.zeros(2, np.uint8), np.zeros(2, np.uint8)
            sides, into = np.zeros(1, np.int64), np.zeros(2, np.int32)
            sides.flags.writeable = False
            _four(one, out[:1], one, out[1:], sides, into[:1], sides, into[1:], True, 1)
            _process[0] = os.getpid()
            _safe[0] = numba.threading_layer() in ("omp", "tbb")
        return _safe[0] and _process[0] == os.getpid()
