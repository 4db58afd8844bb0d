"""Linear-space traceback on the SIMD wavefront kernels, and the row-major block walk.

Small matrices (``FULL_MATRIX_CELLS``) take one pass that finds the end cell and keeps every
cell's direction byte. Larger ones keep H and F of every K-th row (checkpoints, K a multiple
of the stripe height) in a forward pass; tracing back from the end cell, the band of rows
between the checkpoint above the current cell and the cell itself is recomputed with one
direction byte per cell, the path is followed up to the checkpoint row, and the next band
takes over. Each band is recomputed once, so traceback costs at most one extra pass over
the matrix; memory is ``8 (m/K + 1)(n + 1) + K n`` bytes, about ``2 n sqrt(8 m)`` for the K
chosen here, plus the target profile (4 bytes per target residue per distinct query letter).

``walk`` and ``finish`` follow a path through row-major direction bytes (the CUDA engine's
traceback tiles use them too); ``walk_skewed`` reads the CPU kernels' skewed bytes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..common import DIR_DIAG, DIR_E, DIR_ZERO, E_OPEN, F_OPEN, GLOBAL, LOCAL
from .simd import LANES
from .wavefront import (
    PAD,
    band_dirs,
    empty_end,
    forward,
    forward_dirs,
    skewed_index,
    skewed_size,
    target_profile,
)

#: below this many cells the whole matrix of direction bytes is kept (no checkpoints)
FULL_MATRIX_CELLS = 1 << 25

_EQ, _X, _I, _D = ord("="), ord("X"), ord("I"), ord("D")


@njit(cache=True, nogil=True)
def sweep(q, t, sub, gap_open, gap_extend, mode, K, ckH, ckF):
    """Full forward pass: returns (score, end_i, end_j); saves rows 0, K, 2K, ... when K > 0
    (K a multiple of LANES)."""
    tp, codes, width = target_profile(q, t, sub)
    return forward(q, t.size, tp, codes, width, gap_open, gap_extend, mode, K, ckH, ckF)


@njit(cache=True, nogil=True, inline="always")
def _back(q, t, local, d, i, j, state, ops, k):
    """One traceback move from (i, j) in ``state`` given that cell's direction byte d.

    Returns (i, j, state, k, stopped); ops are appended reversed from index ``k``.
    """
    if state == 0:
        src = d & 3
        if local and src == DIR_ZERO:
            return i, j, state, k, True
        if src == DIR_DIAG:
            ops[k] = _EQ if q[i - 1] == t[j - 1] else _X
            return i - 1, j - 1, state, k + 1, False
        return i, j, 1 if src == DIR_E else 2, k, False
    if state == 1:
        ops[k] = _D
        return i, j - 1, 0 if d & E_OPEN else 1, k + 1, False
    ops[k] = _I
    return i - 1, j, 0 if d & F_OPEN else 2, k + 1, False


@njit(cache=True, nogil=True, inline="always")
def strip_index(a, b, cols, rpl):
    """Index of cell (a, b) (0-based within the block) in the GPU multipass kernel's direction
    bytes: strips of 32 * rpl rows, then the kernel's step (b + lane), lane, row in lane."""
    lane = a % (32 * rpl) // rpl
    return ((a // (32 * rpl) * (cols + 31) + b + lane) * 32 + lane) * rpl + a % rpl


@njit(cache=True, nogil=True)
def walk(q, t, mode, dirs, r0, c0, cols, rpl, i, j, state, ops, k):
    """Follow the traceback inside the block of rows > r0 and columns c0+1..c0+cols, whose
    direction bytes ``dirs`` the GPU wrote with rpl rows per lane (:func:`strip_index`),
    until the path leaves the block or stops.

    ``state`` is 0 (H), 1 (E) or 2 (F); ops are appended reversed from index ``k``.
    Returns (i, j, state, k, stopped).
    """
    local = mode == LOCAL
    while i > r0 and j > c0:
        d = dirs[strip_index(i - r0 - 1, j - c0 - 1, cols, rpl)]
        i, j, state, k, stopped = _back(q, t, local, d, i, j, state, ops, k)
        if stopped:
            return i, j, state, k, True
    return i, j, state, k, False


@njit(cache=True, nogil=True)
def walk_skewed(q, t, mode, dirs, r0, n, i, j, state, ops, k):
    """``walk`` over the wavefront kernels' skewed direction bytes of rows > r0 and columns
    1..n (``wavefront.skewed_index``), until the path reaches row r0 or column 0 or stops."""
    local = mode == LOCAL
    while i > r0 and j > 0:
        d = dirs[skewed_index(r0, n, i, j)]
        i, j, state, k, stopped = _back(q, t, local, d, i, j, state, ops, k)
        if stopped:
            return i, j, state, k, True
    return i, j, state, k, False


@njit(cache=True, nogil=True)
def finish(mode, i, j, ops, k):
    """The path reached row 0 or column 0: global adds the remaining gaps. Returns (i, j, k)."""
    if mode == GLOBAL:
        for _ in range(j):
            ops[k] = _D
            k += 1
        for _ in range(i):
            ops[k] = _I
            k += 1
        return 0, 0, k
    return i, j, k


@njit(cache=True, nogil=True)
def trace(q, t, gap_open, gap_extend, mode, ei, ej, K, ckH, ckF, tp, codes, width, ops):
    """Trace back from (ei, ej) through recomputed bands; ops are written reversed.

    Returns (start_i, start_j, number of ops).
    """
    revH = np.empty(ej + LANES + 1, np.int32)
    revF = np.empty(ej + LANES + 1, np.int32)
    dirs = np.empty(skewed_size(K, ej), np.uint8)
    i, j, state, k = ei, ej, np.int64(0), np.int64(0)
    while True:
        if i == 0 or j == 0:
            return finish(mode, i, j, ops, k)
        c = (i - 1) // K
        r0 = c * K
        band_dirs(q, tp, codes, width, gap_open, gap_extend, mode, r0, i, j, ckH[c], ckF[c],
                  revH, revF, dirs)
        i, j, state, k, stopped = walk_skewed(q, t, mode, dirs, r0, j, i, j, state, ops, k)
        if stopped:
            return i, j, k


def checkpoint_interval(m: int, n: int) -> int:
    """Rows between checkpoints: all rows when the direction bytes are small, else ~sqrt(8m)
    rounded up to a multiple of the stripe height."""
    if m * n <= FULL_MATRIX_CELLS or m <= 1:
        return max(m, 1)
    return min(m, -(-(math.isqrt(8 * m) + 1) // LANES) * LANES)


def traceback_bytes(m: int, n: int, letters: int) -> int:
    """The most bytes one m x n pair's traceback allocates here (``letters``: the query's
    distinct letters, at most): the target profile, the reversed rows, and the whole matrix's
    direction bytes, or the checkpoints and one band's."""
    K = checkpoint_interval(m, n)
    profile = max(letters, 1) * (n + 2 * PAD) * 4
    rows = 2 * (n + LANES + 1) * 4
    if whole_matrix(m, n, K):
        return skewed_size(m, n) + profile + rows
    K = -(-K // LANES) * LANES
    return 8 * (m // K + 1) * (n + 1) + skewed_size(K, n) + profile + rows


def whole_matrix(m: int, n: int, K: int) -> bool:
    """Whether ``align_trace`` of an m x n pair with K rows between checkpoints keeps the
    whole matrix of direction bytes (``align_whole``) rather than checkpoints."""
    return m == 0 or n == 0 or -(-K // LANES) * LANES >= m


@njit(cache=True, nogil=True)
def align_trace(q, t, sub, gap_open, gap_extend, mode, K, ops):
    """Score, end cell, start cell and reversed ops of one pair, in linear-ish memory.

    K (rows between checkpoints) is rounded up to a multiple of LANES; K >= m keeps the
    whole matrix of direction bytes and needs a single pass (``align_whole``), else
    ``align_checkpointed``.
    """
    K = (K + LANES - 1) // LANES * LANES
    if q.size == 0 or t.size == 0 or K >= q.size:
        return align_whole(q, t, sub, gap_open, gap_extend, mode, ops)
    return align_checkpointed(q, t, sub, gap_open, gap_extend, mode, K, ops)


@njit(cache=True, nogil=True)
def align_whole(q, t, sub, gap_open, gap_extend, mode, ops):
    """``align_trace`` keeping every cell's direction byte (one pass; ``skewed_size(m, n)``
    bytes)."""
    m, n = q.size, t.size
    zero = np.int64(0)  # not a literal 0: one compiled walk_skewed for every caller
    if m == 0 or n == 0:
        score, ei, ej = empty_end(m, n, mode, gap_open, gap_extend)
        dirs = np.empty(0, np.uint8)
    else:
        tp, codes, width = target_profile(q, t, sub)
        dirs = np.empty(skewed_size(m, n), np.uint8)
        score, ei, ej = forward_dirs(q, n, tp, codes, width, gap_open, gap_extend, mode, dirs)
    if local_empty(mode, score):
        return 0, 0, 0, 0, 0, 0
    si, sj, state, k, stopped = walk_skewed(q, t, mode, dirs, zero, n, ei, ej, zero, ops, zero)
    if not stopped:
        si, sj, k = finish(mode, si, sj, ops, k)
    return score, si, ei, sj, ej, k


@njit(cache=True, nogil=True)
def align_checkpointed(q, t, sub, gap_open, gap_extend, mode, K, ops):
    """``align_trace`` with H and F of every K-th row kept (0 < K < m, K a multiple of
    LANES, n > 0): a forward pass, then traceback through recomputed bands."""
    m, n = q.size, t.size
    tp, codes, width = target_profile(q, t, sub)
    rows = m // K + 1
    ckH = np.empty((rows, n + 1), np.int32)
    ckF = np.empty((rows, n + 1), np.int32)
    score, ei, ej = forward(q, n, tp, codes, width, gap_open, gap_extend, mode, K, ckH, ckF)
    if local_empty(mode, score):
        return 0, 0, 0, 0, 0, 0
    si, sj, k = trace(q, t, gap_open, gap_extend, mode, ei, ej, K, ckH, ckF, tp, codes, width,
                      ops)
    return score, si, ei, sj, ej, k


@njit(cache=True, nogil=True, inline="always")
def local_empty(mode, score):
    """A local alignment scoring 0 is the empty alignment."""
    return mode == LOCAL and score == 0
