"""Row-major scalar kernels: forward sweep with checkpoint rows, band recompute, traceback.

Linear-space traceback: the forward sweep keeps H and F of every K-th row (checkpoints).
Tracing back from the end cell, the band of rows between the checkpoint below the current
cell and the cell itself is recomputed with one direction byte per cell, the path is
followed up to the checkpoint row, and the next band takes over. Each band is recomputed
once, so traceback costs at most one extra pass over the matrix; memory is
``8 (m/K + 1)(n + 1) + K n`` bytes, about ``2 n sqrt(8 m)`` for the K chosen here.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..common import (
    DIR_DIAG,
    DIR_E,
    DIR_F,
    DIR_ZERO,
    E_OPEN,
    F_OPEN,
    GLOBAL,
    LOCAL,
    NEG,
    SEMIGLOBAL,
)

#: below this many cells the whole matrix of direction bytes is kept (no checkpoints)
FULL_MATRIX_CELLS = 1 << 25

_EQ, _X, _I, _D = ord("="), ord("X"), ord("I"), ord("D")


@njit(cache=True, nogil=True, inline="always")
def edge(k, mode, gap_open, gap_extend):
    """H on row 0 or column 0 at distance k from the origin."""
    if mode == GLOBAL and k > 0:
        return -(gap_open + (k - 1) * gap_extend)
    return 0


@njit(cache=True, nogil=True)
def top_row(n, mode, gap_open, gap_extend, H, F):
    """Fill H and F with row 0."""
    for j in range(n + 1):
        H[j] = edge(j, mode, gap_open, gap_extend)
        F[j] = NEG


@njit(cache=True, nogil=True)
def sweep(q, t, sub, gap_open, gap_extend, mode, K, ckH, ckF):
    """Full forward pass: returns (score, end_i, end_j); saves rows 0, K, 2K, ... when K > 0."""
    m, n = q.size, t.size
    H = np.empty(n + 1, np.int32)
    F = np.empty(n + 1, np.int32)
    top_row(n, mode, gap_open, gap_extend, H, F)
    if K > 0:
        ckH[0, :] = H
        ckF[0, :] = F
    local = mode == LOCAL
    zero = np.int32(0 if local else NEG)
    gap_open, gap_extend = np.int32(gap_open), np.int32(gap_extend)
    best, bi, bj = 0, 0, 0
    if mode == SEMIGLOBAL:
        if m == 0:
            best = H[0]
        else:
            best, bi, bj = H[n], 0, n
    for i in range(1, m + 1):
        srow = sub[q[i - 1]]
        diag = H[0]
        hleft = np.int32(edge(i, mode, gap_open, gap_extend))
        H[0] = hleft
        e = np.int32(NEG)
        rbest, rj = np.int32(0), 0
        for j in range(1, n + 1):
            e = max(e - gap_extend, hleft - gap_open)
            hup = H[j]
            f = max(F[j] - gap_extend, hup - gap_open)
            h = max(max(diag + srow[t[j - 1]], e), max(f, zero))
            diag = hup
            H[j] = h
            F[j] = f
            hleft = h
            if h > rbest:
                rbest, rj = h, j
        if local:
            if rbest > best:
                best, bi, bj = rbest, i, rj
        elif mode == SEMIGLOBAL:
            if i < m:
                if H[n] > best:
                    best, bi, bj = H[n], i, n
            else:
                for j in range(n + 1):
                    if H[j] > best:
                        best, bi, bj = H[j], i, j
        if K > 0 and i % K == 0:
            ckH[i // K, :] = H
            ckF[i // K, :] = F
    if mode == GLOBAL:
        return H[n], m, n
    if mode == SEMIGLOBAL and m == 0:
        for j in range(n + 1):
            if H[j] > best:
                best, bi, bj = H[j], 0, j
    return best, bi, bj


@njit(cache=True, nogil=True)
def band(q, t, sub, gap_open, gap_extend, mode, r0, r1, c1, Htop, Ftop, H, F, dirs):
    """Recompute rows r0+1..r1, columns 1..c1 from row r0 (Htop, Ftop); write direction bytes.

    ``dirs`` row ``i - r0 - 1`` holds columns 1..c1 at offsets 0..c1-1 (row stride c1).
    """
    H[: c1 + 1] = Htop[: c1 + 1]
    F[: c1 + 1] = Ftop[: c1 + 1]
    local = mode == LOCAL
    zero = np.int32(0 if local else NEG)
    gap_open, gap_extend = np.int32(gap_open), np.int32(gap_extend)
    for i in range(r0 + 1, r1 + 1):
        srow = sub[q[i - 1]]
        base = (i - r0 - 1) * c1 - 1
        diag = H[0]
        hleft = np.int32(edge(i, mode, gap_open, gap_extend))
        H[0] = hleft
        e = np.int32(NEG)
        for j in range(1, c1 + 1):
            e_ext = e - gap_extend
            e_open = hleft - gap_open
            d = 0
            if e_open >= e_ext:
                e = e_open
                d = E_OPEN
            else:
                e = e_ext
            hup = H[j]
            f_ext = F[j] - gap_extend
            f_open = hup - gap_open
            if f_open >= f_ext:
                f = f_open
                d |= F_OPEN
            else:
                f = f_ext
            dg = diag + srow[t[j - 1]]
            h = max(max(dg, e), max(f, zero))
            if local and h == 0:
                d |= DIR_ZERO
            elif h == dg:
                d |= DIR_DIAG
            elif h == e:
                d |= DIR_E
            else:
                d |= DIR_F
            dirs[base + j] = d
            diag = hup
            H[j] = h
            F[j] = f
            hleft = h


@njit(cache=True, nogil=True)
def walk(q, t, mode, dirs, r0, c0, width, i, j, state, ops, k):
    """Follow the traceback inside the block of rows > r0 and columns > c0, whose direction
    bytes ``dirs`` have row stride ``width``, until the path leaves the block or stops.

    ``state`` is 0 (H), 1 (E) or 2 (F); ops are appended reversed from index ``k``.
    Returns (i, j, state, k, stopped).
    """
    local = mode == LOCAL
    while i > r0 and j > c0:
        d = dirs[(i - r0 - 1) * width + (j - c0 - 1)]
        if state == 0:
            src = d & 3
            if local and src == DIR_ZERO:
                return i, j, state, k, True
            if src == DIR_DIAG:
                ops[k] = _EQ if q[i - 1] == t[j - 1] else _X
                i -= 1
                j -= 1
                k += 1
            elif src == DIR_E:
                state = 1
            else:
                state = 2
        elif state == 1:
            ops[k] = _D
            k += 1
            if d & E_OPEN:
                state = 0
            j -= 1
        else:
            ops[k] = _I
            k += 1
            if d & F_OPEN:
                state = 0
            i -= 1
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
def trace(q, t, sub, gap_open, gap_extend, mode, ei, ej, K, ckH, ckF, ops):
    """Trace back from (ei, ej) through recomputed bands; ops are written reversed.

    Returns (start_i, start_j, number of ops).
    """
    n = t.size
    H = np.empty(n + 1, np.int32)
    F = np.empty(n + 1, np.int32)
    dirs = np.empty(max(1, K * ej), np.uint8)
    i, j, state, k = ei, ej, 0, 0
    while True:
        if i == 0 or j == 0:
            return finish(mode, i, j, ops, k)
        c = (i - 1) // K
        r0 = c * K
        c1 = j
        band(q, t, sub, gap_open, gap_extend, mode, r0, i, c1, ckH[c], ckF[c], H, F, dirs)
        i, j, state, k, stopped = walk(q, t, mode, dirs, r0, 0, c1, i, j, state, ops, k)
        if stopped:
            return i, j, k


def checkpoint_interval(m: int, n: int) -> int:
    """Rows between checkpoints: all rows when the direction bytes are small, else ~sqrt(8m)."""
    if m * n <= FULL_MATRIX_CELLS or m <= 1:
        return max(m, 1)
    return max(1, min(m, math.isqrt(8 * m) + 1))


@njit(cache=True, nogil=True)
def align_trace(q, t, sub, gap_open, gap_extend, mode, K, ops):
    """Score, end cell, start cell and reversed ops of one pair, in linear-ish memory."""
    m, n = q.size, t.size
    rows = m // K + 1
    ckH = np.empty((rows, n + 1), np.int32)
    ckF = np.empty((rows, n + 1), np.int32)
    score, ei, ej = sweep(q, t, sub, gap_open, gap_extend, mode, K, ckH, ckF)
    if local_empty(mode, score):
        return 0, 0, 0, 0, 0, 0
    si, sj, k = trace(q, t, sub, gap_open, gap_extend, mode, ei, ej, K, ckH, ckF, ops)
    return score, si, ei, sj, ej, k


@njit(cache=True, nogil=True, inline="always")
def local_empty(mode, score):
    """A local alignment scoring 0 is the empty alignment."""
    return mode == LOCAL and score == 0
