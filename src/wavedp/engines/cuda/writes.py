"""A one-to-one chunk's four arrays (residues, and sides read off the offsets) written into
their page-locked slot by one call of a Numba ``parallel`` kernel: piece k of every array on
one of its threads, which start without the interpreter's lock (the writers' Python threads
each take it to start a piece, and in a call the last of 16 pieces started 1-3 ms late).
Only for writes of at least ``LEAST`` elements a piece, where the parallel loops may run
(``engines.parallel.ready``); :func:`write` answers False where the caller writes instead.
The kernels are imported on a chunk's first write (Numba costs 0.2 s of a command's start).
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit, prange

from .. import parallel

#: whether large writes go to the parallel kernel (a switch for the benchmarks)
PARALLEL = 1
#: the fewest elements a piece worth the parallel kernel
LEAST = 1 << 20

_lock = threading.Lock()
_warm: list[bool] = [False]  # whether _four ran on a call's types in this process


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
def differences(src, dst):  # pragma: no cover - compiled
    """``dst[k] = src[k + 1] - src[k]``: lengths off offsets (a loop from 0, vectorised)."""
    for k in range(dst.size):
        dst[k] = src[k + 1] - src[k]


@njit(nogil=True, boundscheck=False, cache=True)
def _piece(src, dst, how, k, pieces):  # pragma: no cover - compiled
    """Piece k of ``pieces`` of ``dst`` written from ``src``: ``how`` 0 a copy, 1 packed two
    a byte, 2 the differences of ``src``'s neighbours (one more element than ``dst``)."""
    step = (dst.size + pieces - 1) // pieces
    a = min(k * step, dst.size)
    b = min(a + step, dst.size)
    if how == 1:
        pack(src[2 * a:min(2 * b, src.size)], dst[a:b])
    elif how == 2:
        differences(src[a:b + 1], dst[a:b])
    else:
        _copy(src[a:b], dst[a:b])


@njit(parallel=True, nogil=True, cache=True)
def _four(s0, d0, s1, d1, s2, d2, s3, d3, packed, pieces):  # pragma: no cover - compiled
    """The four arrays' pieces, piece k of each on one thread: the residues (``packed``:
    two a byte), then the sides off the offsets ``s2`` and ``s3``."""
    how = 1 if packed else 0
    for k in prange(pieces):
        _piece(s0, d0, how, k, pieces)
        _piece(s1, d1, how, k, pieces)
        _piece(s2, d2, 2, k, pieces)
        _piece(s3, d3, 2, k, pieces)


def write(views: list[np.ndarray], sources: list[np.ndarray], packed: bool,
          pieces: int) -> bool:
    """A one-to-one chunk's residues (the first two ``packed`` two letters a byte) and its
    sides (the differences of the last two, offsets) into their views in ``pieces`` pieces
    by the parallel kernel; False, nothing written, where it does not serve."""
    if not PARALLEL or len(views) != 4 or sum(s.size for s in sources) < pieces * LEAST:
        return False
    if not _ready():
        return False
    _four(*(a for pair in zip(sources, views, strict=True) for a in pair), packed, pieces)
    return True


def _ready() -> bool:
    """Whether this process may call the parallel kernel (``parallel.ready``), compiled for
    a call's types on tiny arrays once, so that the first chunk compiles nothing more."""
    if not parallel.ready():
        return False
    with _lock:
        if not _warm[0]:
            one, out = np.zeros(2, np.uint8), np.zeros(2, np.uint8)
            offsets, into = np.zeros(2, np.int64), np.zeros(2, np.int32)
            offsets.flags.writeable = False  # as a Sequences' offsets may be
            _four(one, out[:1], one, out[1:], offsets, into[:1], offsets, into[1:], True, 1)
            _warm[0] = True
    return True
