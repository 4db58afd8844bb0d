"""The score and end cell of one pair without traceback: the striped SIMD kernel, or the
scalar row kernel for small pairs."""

from __future__ import annotations

import numpy as np
from numba import njit

from .rows import sweep
from .striped import striped_score

#: pairs smaller than this many cells use the scalar row kernel for score-only work
STRIPED_MIN_CELLS = 4096


@njit(cache=True, nogil=True)
def score_only(q, t, sub, gap_open, gap_extend, mode):
    """(score, end_i, end_j) of one pair, without traceback."""
    if q.size * t.size >= STRIPED_MIN_CELLS:
        return striped_score(q, t, sub, gap_open, gap_extend, mode)
    dummy = np.empty((1, 1), np.int32)
    return sweep(q, t, sub, gap_open, gap_extend, mode, np.int64(0), dummy, dummy)
