"""CPU engine (Numba): striped SIMD score-only kernel, row kernels with linear-space traceback.

Pairs run in parallel over all cores (``numba.prange``); each pair is single-threaded.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .rows import align_trace, checkpoint_interval, sweep
from .striped import striped_score

#: pairs smaller than this many cells use the scalar row kernel for score-only work
STRIPED_MIN_CELLS = 4096


@njit(cache=True, nogil=True)
def score_only(q, t, sub, gap_open, gap_extend, mode):
    """(score, end_i, end_j) of one pair, without traceback."""
    if q.size * t.size >= STRIPED_MIN_CELLS:
        return striped_score(q, t, sub, gap_open, gap_extend, mode)
    dummy = np.empty((1, 1), np.int32)
    return sweep(q, t, sub, gap_open, gap_extend, mode, 0, dummy, dummy)


@njit(cache=True, nogil=True)
def _pair(p, qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend, mode, traceback,
          intervals, opoff, ops, out):
    qi, ti = pairs[p, 0], pairs[p, 1]
    q = qcat[qoff[qi]:qoff[qi + 1]]
    t = tcat[toff[ti]:toff[ti + 1]]
    if traceback:
        r = align_trace(q, t, sub, gap_open, gap_extend, mode, intervals[p],
                        ops[opoff[p]:opoff[p + 1]])
        for c in range(6):
            out[p, c] = r[c]
    else:
        score, ei, ej = score_only(q, t, sub, gap_open, gap_extend, mode)
        out[p, 0] = score
        out[p, 1] = -1
        out[p, 2] = ei
        out[p, 3] = -1
        out[p, 4] = ej
        out[p, 5] = 0


@njit(cache=True, parallel=True)
def _batch_parallel(*args):
    for p in prange(args[4].shape[0]):
        _pair(p, *args)


@njit(cache=True, nogil=True)
def _batch_serial(*args):
    for p in range(args[4].shape[0]):
        _pair(p, *args)


def _concat(codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(codes) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([c.size for c in codes])
    cat = np.concatenate(codes) if codes else np.empty(0, np.uint8)
    return cat.astype(np.uint8, copy=False), offsets


def align_pairs(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
                sub: np.ndarray, gap_open: int, gap_extend: int, mode: int, traceback: bool):
    """Align each (query index, target index) row of ``pairs``.

    Returns (score, query_start, query_end, target_start, target_end, ops) per pair; starts
    are -1 when unknown (score-only) and ops is a uint8 array of ASCII CIGAR letters or None.
    """
    qcat, qoff = _concat(qcodes)
    tcat, toff = _concat(tcodes)
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    sizes = [(qcodes[a].size, tcodes[b].size) for a, b in pairs.tolist()]
    intervals = np.array([checkpoint_interval(m, n) for m, n in sizes], dtype=np.int64)
    opoff = np.zeros(len(sizes) + 1, dtype=np.int64)
    if traceback:
        opoff[1:] = np.cumsum([m + n for m, n in sizes])
    ops = np.empty(int(opoff[-1]), dtype=np.uint8)
    out = np.empty((len(sizes), 6), dtype=np.int64)
    batch = _batch_parallel if len(sizes) > 1 else _batch_serial
    batch(qcat, qoff, tcat, toff, pairs, np.ascontiguousarray(sub, dtype=np.int32),
           int(gap_open), int(gap_extend), int(mode), bool(traceback), intervals, opoff, ops,
           out)
    results = []
    for p, row in enumerate(out.tolist()):
        score, qs, qe, ts, te, nops = row
        path = ops[opoff[p]:opoff[p] + nops][::-1].copy() if traceback else None
        results.append((score, qs, qe, ts, te, path))
    return results
