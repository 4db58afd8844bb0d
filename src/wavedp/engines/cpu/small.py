"""Small calls' traceback: the SIMD kernels' recurrence, tie rules and direction bytes
(``wavefront._step``, ``wavefront._end_cell``) one cell at a time, row by row, the whole
matrix kept. It compiles in about a second where ``rows.align_whole`` takes seven or more on
a 2-core machine, so a call of few cells (a search of the examples) does not wait for the
SIMD kernels; a call over :data:`SMALL_CELLS` takes those."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..common import DIR_DIAG, DIR_E, DIR_F, DIR_ZERO, E_OPEN, F_OPEN, GLOBAL, LOCAL, NEG
from .rows import finish, pair_of, put_row, step_back
from .wavefront import edge, empty_end

#: a traceback call of at most this many cells (its pairs' m x n summed) runs here: at a
#: few hundred million cells a second a core, under about 15 ms
SMALL_CELLS = 1 << 22


@njit(cache=True, nogil=True)
def align_small(q, t, sub, gap_open, gap_extend, mode, ops):
    """(score, query start, query end, target start, target end, ops written) of q against
    t, the ops reversed into ``ops``: ``rows.align_whole``'s results."""
    m, n = q.size, t.size
    local = mode == LOCAL
    if m == 0 or n == 0:
        score, ei, ej = empty_end(m, n, mode, gap_open, gap_extend)
        if local and score == 0:
            return 0, 0, 0, 0, 0, 0
        si, sj, k = finish(mode, ei, ej, ops, 0)
        return score, si, ei, sj, ej, k
    zero = 0 if local else NEG
    dirs = np.empty(m * n, np.uint8)
    h = np.empty(n + 1, np.int64)  # row i - 1, then row i, as the sweep goes
    f = np.empty(n + 1, np.int64)
    for j in range(n + 1):
        h[j] = edge(j, mode, gap_open, gap_extend)
        f[j] = NEG
    best, bi, bj = 0, 0, 0  # local: the first cell of the largest H; semiglobal: row m's
    col, ci = 0, 0  # semiglobal: the first largest H of column n above row m (row 0: 0)
    for i in range(1, m + 1):
        diag = h[0]
        h[0] = edge(i, mode, gap_open, gap_extend)
        e = NEG
        row = sub[q[i - 1]]
        rowbest, rowj = 0, 0
        at = (i - 1) * n
        for j in range(1, n + 1):
            e_ext, e_open = e - gap_extend, h[j - 1] - gap_open
            e = max(e_ext, e_open)
            f_ext, f_open = f[j] - gap_extend, h[j] - gap_open
            fv = max(f_ext, f_open)
            dg = diag + row[t[j - 1]]
            hv = max(max(dg, e), max(fv, zero))
            d = DIR_DIAG if hv == dg else (DIR_E if hv == e else DIR_F)
            if hv == zero:
                d = DIR_ZERO
            if e_open >= e_ext:
                d |= E_OPEN
            if f_open >= f_ext:
                d |= F_OPEN
            dirs[at + j - 1] = d
            diag = h[j]
            h[j] = hv
            f[j] = fv
            if hv > rowbest:
                rowbest, rowj = hv, j
        if (local or i == m) and rowbest > best:
            best, bi, bj = rowbest, i, rowj
        if i < m and h[n] > col:
            col, ci = h[n], i
    if mode == GLOBAL:
        score, ei, ej = h[n], m, n
    elif local or best > col:
        score, ei, ej = best, bi, bj
    else:
        score, ei, ej = col, ci, n
    if local and score == 0:
        return 0, 0, 0, 0, 0, 0
    i, j, state, k = ei, ej, 0, 0
    stopped = False
    while i > 0 and j > 0:
        i, j, state, k, stopped = step_back(q, t, local, dirs[(i - 1) * n + j - 1], i, j, state,
                                        ops, k)
        if stopped:
            break
    if not stopped:
        i, j, k = finish(mode, i, j, ops, k)
    return score, i, ei, j, ej, k


@njit(cache=True, nogil=True)
def small_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend,
                mode, opoff, ops, out):
    """Pairs sel[first::step] by :func:`align_small` (``whole_pairs``' arguments)."""
    for x in range(first, sel.size, step):
        p = sel[x]
        q, t = pair_of(qcat, qoff, tcat, toff, pairs, p)
        put_row(out, p, align_small(q, t, sub, gap_open, gap_extend, mode,
                                    ops[opoff[p]:opoff[p + 1]]))
