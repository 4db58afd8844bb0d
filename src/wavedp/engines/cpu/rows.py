"""Linear-space traceback on the SIMD wavefront kernels, and the row-major block walk.

Small matrices (``FULL_MATRIX_CELLS``) take one pass that finds the end cell and keeps every
cell's direction byte. Larger ones keep H and F of every K-th row (checkpoints, K a multiple
of the stripe height) in a forward pass; tracing back from the end cell, the band of rows
between the checkpoint above the current cell and the cell itself is recomputed with one
direction byte per cell, the path is followed up to the checkpoint row, and the next band
takes over. Each band is recomputed once, so traceback costs at most one extra pass over
the matrix; memory is ``8 (m/K + 1)(n + 1) + K n`` bytes, about ``2 n sqrt(8 m)`` for the K
chosen here, plus the target profile (4 bytes per target residue per distinct query letter).

Where that passes LEVEL_BYTES (a 1 Mbp pair: 5.7 GB), checkpoints come in levels: the band
of the level above that holds the path is recomputed keeping checkpoints of its own, and
only the deepest level's bands keep direction bytes. L levels cost L extra passes and about
``8 L n (m/8)^(1/(L+1))`` bytes (1 Mbp, four levels: 0.45 GB).

``walk`` and ``finish`` follow a path through row-major direction bytes (the CUDA engine's
traceback tiles use them too); ``walk_skewed`` reads the CPU kernels' skewed bytes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..common import DIR_DIAG, DIR_E, DIR_ZERO, E_OPEN, F_OPEN, GLOBAL, LOCAL
from .simd import LANES
from .simdw import lanes_of
from .wavefront import (
    PAD,
    band_checkpoints,
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
def step_back(q, t, local, d, i, j, state, ops, k):
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
def pair_of(qcat, qoff, tcat, toff, pairs, p):
    """Pair p's query and target codes (row p of ``pairs``: their records)."""
    qi, ti = pairs[p, 0], pairs[p, 1]
    return qcat[qoff[qi]:qoff[qi + 1]], tcat[toff[ti]:toff[ti + 1]]


@njit(cache=True, nogil=True, inline="always")
def put_row(out, p, r):
    """A traceback's six results (score, start and end cells, ops) into row p of ``out``."""
    for c in range(6):
        out[p, c] = r[c]


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
        i, j, state, k, stopped = step_back(q, t, local, d, i, j, state, ops, k)
        if stopped:
            return i, j, state, k, True
    return i, j, state, k, False


@njit(cache=True, nogil=True)
def walk_skewed(q, t, mode, dirs, r0, n, i, j, state, ops, k, like=None):
    """``walk`` over the wavefront kernels' skewed direction bytes of rows > r0 and columns
    1..n (``wavefront.skewed_index``; the kernel of like's width), until the path reaches
    row r0 or column 0 or stops."""
    local = mode == LOCAL
    while i > r0 and j > 0:
        d = dirs[skewed_index(r0, n, i, j, like)]
        i, j, state, k, stopped = step_back(q, t, local, d, i, j, state, ops, k)
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
def trace(q, t, gap_open, gap_extend, mode, ei, ej, Ks, ckH, ckF, tp, codes, width, ops):
    """Trace back from (ei, ej) through recomputed bands; ops are written reversed.

    Ks: rows between checkpoints at each level, Ks[0] those of the forward pass (ckH, ckF).
    A deeper level's checkpoints are recomputed, from the level above, for the band of the
    level above that holds the path (columns up to the path's), once per band; the deepest
    level's bands are recomputed with direction bytes and walked. Returns (start_i,
    start_j, number of ops)."""
    L = Ks.size
    revH = np.empty(ej + LANES + 1, np.int32)
    revF = np.empty(ej + LANES + 1, np.int32)
    dirs = np.empty(skewed_size(Ks[L - 1], ej), np.uint8)
    most = 1  # checkpoint rows of a deeper level: one band of the level above
    for lv in range(1, L):
        most = max(most, Ks[lv - 1] // Ks[lv] + 1)
    deepH = np.empty((max(L - 1, 1), most, ej + 1), np.int32)
    deepF = np.empty((max(L - 1, 1), most, ej + 1), np.int32)
    tops = np.full(L, -1, np.int64)  # the first row of each level's checkpoints
    tops[0] = 0
    i, j, state, k = ei, ej, np.int64(0), np.int64(0)
    while True:
        if i == 0 or j == 0:
            return finish(mode, i, j, ops, k)
        for lv in range(1, L):
            r0 = (i - 1) // Ks[lv - 1] * Ks[lv - 1]
            if tops[lv] == r0:
                continue
            x = (r0 - tops[lv - 1]) // Ks[lv - 1]
            for c in range(j + 1):
                deepH[lv - 1, 0, c] = ckH[x, c] if lv == 1 else deepH[lv - 2, x, c]
                deepF[lv - 1, 0, c] = ckF[x, c] if lv == 1 else deepF[lv - 2, x, c]
            band_checkpoints(q, tp, codes, width, gap_open, gap_extend, mode, r0, i - 1, j,
                             Ks[lv], deepH[lv - 1], deepF[lv - 1], revH, revF)
            tops[lv] = r0
            for below in range(lv + 1, L):
                tops[below] = -1
        K = Ks[L - 1]
        r0 = (i - 1) // K * K
        x = (r0 - tops[L - 1]) // K
        if L == 1:
            band_dirs(q, tp, codes, width, gap_open, gap_extend, mode, r0, i, j, ckH[x],
                      ckF[x], revH, revF, dirs)
        else:
            band_dirs(q, tp, codes, width, gap_open, gap_extend, mode, r0, i, j,
                      deepH[L - 2, x], deepF[L - 2, x], revH, revF, dirs)
        i, j, state, k, stopped = walk_skewed(q, t, mode, dirs, r0, j, i, j, state, ops, k)
        if stopped:
            return i, j, k


#: one pair's checkpoints are kept under this many bytes where up to MAX_LEVELS levels can
#: do it (each level one more pass over the matrix)
LEVEL_BYTES = 512 << 20
MAX_LEVELS = 4


def checkpoint_levels(m: int, n: int) -> tuple[int, ...]:
    """Rows between checkpoints at each level, the forward pass's first: (m,) when the
    direction bytes are small (the whole matrix), else the fewest levels whose memory is
    under LEVEL_BYTES (one level: ~sqrt(8m) rows; L levels: each ~(m/8)^(1/(L+1)) bands of
    the one below, the deepest ~8 times that many rows), multiples of the stripe height."""
    if m * n <= FULL_MATRIX_CELLS or m <= 1:
        return (max(m, 1),)
    best: tuple[int, ...] = ()
    for count in range(1, MAX_LEVELS + 1):
        c = (m / 8) ** (1 / (count + 1))
        levels = [-(-math.ceil(8 * c) // LANES) * LANES]
        for _ in range(count - 1):
            levels.insert(0, levels[0] * max(2, math.ceil(c)))
        if levels[0] >= m:
            break
        if not best or level_bytes(m, n, tuple(levels)) < level_bytes(m, n, best):
            best = tuple(levels)
        if level_bytes(m, n, best) <= LEVEL_BYTES:
            break
    return best or (m,)


def level_bytes(m: int, n: int, levels: tuple[int, ...]) -> int:
    """Bytes of the checkpoints of ``levels`` (:func:`trace`'s arrays) and of one band's
    direction bytes."""
    deeper = max((a // b + 1 for a, b in zip(levels, levels[1:], strict=False)), default=1)
    rows = m // levels[0] + 1 + (len(levels) - 1) * deeper
    return 8 * rows * (n + 1) + skewed_size(levels[-1], n)


def traceback_bytes(m: int, n: int, letters: int) -> int:
    """The most bytes one m x n pair's traceback allocates here (``letters``: the query's
    distinct letters, at most): the target profile, the reversed rows, and the whole matrix's
    direction bytes, or the checkpoints and one band's."""
    levels = checkpoint_levels(m, n)
    profile = max(letters, 1) * (n + 2 * PAD) * 4
    rows = 2 * (n + LANES + 1) * 4
    if whole_matrix(m, n, levels[0]):  # int32 or int16 stripes
        return max(skewed_size(m, n), skewed_size(m, n, 2 * LANES)) + profile + rows
    return level_bytes(m, n, levels) + profile + rows


def whole_matrix(m: int, n: int, K: int) -> bool:
    """Whether an m x n pair with K rows between (first-level) checkpoints keeps the whole
    matrix of direction bytes (``align_whole``) rather than checkpoints."""
    return m == 0 or n == 0 or -(-K // LANES) * LANES >= m


@njit(cache=True, nogil=True)
def align_trace(q, t, sub, gap_open, gap_extend, mode, K, ops):
    """Score, end cell, start cell and reversed ops of one pair, in linear-ish memory.

    K (rows between checkpoints, one level) is rounded up to a multiple of LANES; K >= m
    keeps the whole matrix of direction bytes and needs a single pass (``align_whole``),
    else ``align_checkpointed``.
    """
    K = (K + LANES - 1) // LANES * LANES
    if q.size == 0 or t.size == 0 or K >= q.size:
        return align_whole(q, t, sub, gap_open, gap_extend, mode, ops)
    return align_checkpointed(q, t, sub, gap_open, gap_extend, mode,
                              np.full(1, K, np.int64), ops)


@njit(cache=True, nogil=True)
def align_whole(q, t, sub, gap_open, gap_extend, mode, ops):
    """``align_trace`` keeping every cell's direction byte (one pass; ``skewed_size(m, n)``
    bytes), by the kernel of sub's width (int16 where ``wavefront.fits16``: 32 rows a
    stripe)."""
    m, n = q.size, t.size
    zero = np.int64(0)  # not a literal 0: one compiled walk_skewed for every caller
    if m == 0 or n == 0:
        score, ei, ej = empty_end(m, n, mode, gap_open, gap_extend)
        dirs = np.empty(0, np.uint8)
    else:
        tp, codes, width = target_profile(q, t, sub)
        dirs = np.empty(skewed_size(m, n, lanes_of(sub)), np.uint8)
        score, ei, ej = forward_dirs(q, n, tp, codes, width, gap_open, gap_extend, mode, dirs)
    if local_empty(mode, score):
        return 0, 0, 0, 0, 0, 0
    si, sj, state, k, stopped = walk_skewed(q, t, mode, dirs, zero, n, ei, ej, zero, ops, zero,
                                            sub)
    if not stopped:
        si, sj, k = finish(mode, si, sj, ops, k)
    return score, si, ei, sj, ej, k


@njit(cache=True, nogil=True)
def align_checkpointed(q, t, sub, gap_open, gap_extend, mode, Ks, ops):
    """``align_trace`` with H and F of every Ks[0]-th row kept (levels of checkpoints Ks,
    :func:`trace`; 0 < Ks[0] < m, each a multiple of the next and of LANES, n > 0): a
    forward pass, then traceback through recomputed bands."""
    m, n = q.size, t.size
    tp, codes, width = target_profile(q, t, sub)
    K = Ks[0]
    rows = m // K + 1
    ckH = np.empty((rows, n + 1), np.int32)
    ckF = np.empty((rows, n + 1), np.int32)
    score, ei, ej = forward(q, n, tp, codes, width, gap_open, gap_extend, mode, K, ckH, ckF)
    if local_empty(mode, score):
        return 0, 0, 0, 0, 0, 0
    si, sj, k = trace(q, t, gap_open, gap_extend, mode, ei, ej, Ks, ckH, ckF, tp, codes,
                      width, ops)
    return score, si, ei, sj, ej, k


@njit(cache=True, nogil=True, inline="always")
def local_empty(mode, score):
    """A local alignment scoring 0 is the empty alignment."""
    return mode == LOCAL and score == 0
