"""Launcher of the per-anti-diagonal strategy (``kernels/diagonal.cu``), score-only.

Xiao, Aji and Feng's design: one kernel launch per anti-diagonal, the launch boundary being
the only synchronisation; anti-diagonal-major buffers whose rows start on 64-byte
boundaries.
"""

from __future__ import annotations

import numpy as np

from ..common import GLOBAL, LOCAL, NEG
from .module import function
from .multipass import EDGES, ROWS_BEST, Pair, best_cell, scratch

BLOCK = 256


def _rows(count: int, length: int, fill: int):
    import cupy

    padded = -(-length // 16) * 16  # 16 int32 = 64 bytes: every row starts 64-byte aligned
    return cupy.full((count, padded), fill, dtype=cupy.int32)


def score(p: Pair) -> tuple[int, int, int]:
    """(score, end_i, end_j) of one pair, one launch per anti-diagonal."""
    import cupy

    m, n = p.m, p.n
    kernel = function("diagonal.cu", f"diagonal<{p.mode}>")
    H, E, F = _rows(3, m + 1, 0), _rows(2, m + 1, NEG), _rows(2, m + 1, NEG)
    rowbest = cupy.zeros(m + 1, dtype=cupy.int32)
    rowcol = cupy.zeros(m + 1, dtype=cupy.int32)
    lastcol = scratch(m + 1, np.int32)
    lastrow = scratch(n + 1, np.int32)
    fixed = (p.q, p.t, p.sub, np.int32(p.alphabet), np.int32(p.gap_open),
             np.int32(p.gap_extend), np.int32(m), np.int32(n))
    for d in range(1, m + n + 1):
        ilo, ihi = max(0, d - n), min(m, d)
        count = ihi - ilo + 1
        kernel(((count + BLOCK - 1) // BLOCK,), (BLOCK,), fixed + (
            np.int32(d), np.int32(ilo), np.int32(ihi), H[(d - 2) % 3], H[(d - 1) % 3], H[d % 3],
            E[(d - 1) % 2], E[d % 2], F[(d - 1) % 2], F[d % 2], rowbest, rowcol, lastcol,
            lastrow))
    if p.mode == LOCAL:  # per-row bests, each at the row's first column reaching it
        score, i, j = best_cell(ROWS_BEST, rowbest, rowcol, count=m + 1)
        return (0, 0, 0) if score <= 0 else (score, i, j)
    if p.mode == GLOBAL:
        return int(lastrow[n:n + 1].get()[0]), m, n
    return best_cell(EDGES, lastcol[1:], lastrow[1:], m, n, m + n + 1)  # indexed from 1
