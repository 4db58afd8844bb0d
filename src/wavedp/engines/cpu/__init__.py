"""CPU engine (Numba): striped SIMD score-only kernel, row kernels with linear-space traceback.

Pairs run in parallel over all cores (``threads.spread``); each pair is single-threaded.
Each kind of pair has a batch kernel of its own, so a run compiles only the kinds it meets:
traceback keeping the whole matrix's direction bytes or checkpoints, score-only through the
striped kernel or the row kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .compile import SECONDS, notice
from .rows import align_checkpointed, align_whole, checkpoint_interval, sweep, whole_matrix
from .simd import LANES
from .striped import striped_score
from .threads import spread

#: pairs smaller than this many cells use the scalar row kernel for score-only work
STRIPED_MIN_CELLS = 4096


@njit(cache=True, nogil=True)
def score_only(q, t, sub, gap_open, gap_extend, mode):
    """(score, end_i, end_j) of one pair, without traceback."""
    if q.size * t.size >= STRIPED_MIN_CELLS:
        return striped_score(q, t, sub, gap_open, gap_extend, mode)
    dummy = np.empty((1, 1), np.int32)
    return sweep(q, t, sub, gap_open, gap_extend, mode, np.int64(0), dummy, dummy)


@njit(cache=True, nogil=True)
def whole_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend,
                 mode, opoff, ops, out):
    """Pairs sel[first::step] with traceback, every direction byte kept (``align_whole``)."""
    for x in range(first, sel.size, step):
        p = sel[x]
        qi, ti = pairs[p, 0], pairs[p, 1]
        r = align_whole(qcat[qoff[qi]:qoff[qi + 1]], tcat[toff[ti]:toff[ti + 1]], sub,
                        gap_open, gap_extend, mode, ops[opoff[p]:opoff[p + 1]])
        for c in range(6):
            out[p, c] = r[c]


@njit(cache=True, nogil=True)
def _checkpointed_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open,
                        gap_extend, mode, intervals, opoff, ops, out):
    """Pairs sel[first::step] with traceback through checkpoints every intervals[p] rows."""
    for x in range(first, sel.size, step):
        p = sel[x]
        qi, ti = pairs[p, 0], pairs[p, 1]
        r = align_checkpointed(qcat[qoff[qi]:qoff[qi + 1]], tcat[toff[ti]:toff[ti + 1]], sub,
                               gap_open, gap_extend, mode, intervals[p],
                               ops[opoff[p]:opoff[p + 1]])
        for c in range(6):
            out[p, c] = r[c]


@njit(cache=True, nogil=True, inline="always")
def _score_row(out, p, score, ei, ej):
    out[p, 0] = score
    out[p, 1] = -1
    out[p, 2] = ei
    out[p, 3] = -1
    out[p, 4] = ej
    out[p, 5] = 0


@njit(cache=True, nogil=True)
def _striped_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend,
                   mode, out):
    """Pairs sel[first::step] score-only, by the striped kernel (``score_only``'s large
    pairs)."""
    for x in range(first, sel.size, step):
        p = sel[x]
        qi, ti = pairs[p, 0], pairs[p, 1]
        score, ei, ej = striped_score(qcat[qoff[qi]:qoff[qi + 1]], tcat[toff[ti]:toff[ti + 1]],
                                      sub, gap_open, gap_extend, mode)
        _score_row(out, p, score, ei, ej)


@njit(cache=True, nogil=True)
def _row_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend,
               mode, out):
    """Pairs sel[first::step] score-only, by the row kernel (``score_only``'s small pairs)."""
    dummy = np.empty((1, 1), np.int32)
    for x in range(first, sel.size, step):
        p = sel[x]
        qi, ti = pairs[p, 0], pairs[p, 1]
        score, ei, ej = sweep(qcat[qoff[qi]:qoff[qi + 1]], tcat[toff[ti]:toff[ti + 1]], sub,
                              gap_open, gap_extend, mode, np.int64(0), dummy, dummy)
        _score_row(out, p, score, ei, ej)


def _concat(codes: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(codes) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([c.size for c in codes])
    cat = np.concatenate(codes) if codes else np.empty(0, np.uint8)
    return cat.astype(np.uint8, copy=False), offsets


def align_pairs(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
                sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                traceback: bool) -> list[tuple]:
    """Align each (query index, target index) row of ``pairs``.

    Returns (score, query_start, query_end, target_start, target_end, ops) per pair; starts
    are -1 when unknown (score-only) and ops is a uint8 array of ASCII CIGAR letters or None.
    """
    qcat, qoff = _concat(qcodes)
    tcat, toff = _concat(tcodes)
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    sizes = [(qcodes[a].size, tcodes[b].size) for a, b in pairs.tolist()]
    opoff = np.zeros(len(sizes) + 1, dtype=np.int64)
    if traceback:
        opoff[1:] = np.cumsum([m + n for m, n in sizes])
    ops = np.empty(int(opoff[-1]), dtype=np.uint8)
    out = np.empty((len(sizes), 6), dtype=np.int64)
    common = (qcat, qoff, tcat, toff, pairs, np.ascontiguousarray(sub, dtype=np.int32),
              int(gap_open), int(gap_extend), int(mode))
    calls = []
    if traceback:
        intervals = np.array([checkpoint_interval(m, n) for m, n in sizes], dtype=np.int64)
        whole = np.array([whole_matrix(m, n, k) for (m, n), k in zip(sizes, intervals.tolist(),
                                                                       strict=True)], dtype=bool)
        intervals = -(-intervals // LANES) * LANES  # align_checkpointed's K
        calls += [(whole_pairs, (np.flatnonzero(whole), *common, opoff, ops, out),
                   SECONDS["whole"]),
                  (_checkpointed_pairs, (np.flatnonzero(~whole), *common, intervals, opoff,
                                         ops, out), SECONDS["checkpointed"])]
    else:
        small = np.array([m * n < STRIPED_MIN_CELLS for m, n in sizes], dtype=bool)
        calls += [(_row_pairs, (np.flatnonzero(small), *common, out), SECONDS["rows"]),
                  (_striped_pairs, (np.flatnonzero(~small), *common, out), SECONDS["striped"])]
    calls = [call for call in calls if call[1][0].size]
    notice([(kernel, (0, 1, *args), seconds) for kernel, args, seconds in calls])
    for kernel, args, _ in calls:
        spread(kernel, args[0].size, *args)
    results = []
    for p, row in enumerate(out.tolist()):
        score, qs, qe, ts, te, nops = row
        path = ops[opoff[p]:opoff[p] + nops][::-1].copy() if traceback else None
        results.append((score, qs, qe, ts, te, path))
    return results
