"""CPU engine (Numba): striped SIMD score-only kernel, row kernels with linear-space traceback.

Pairs run in parallel over all cores (``threads.spread``); each pair is single-threaded.
Each kind of pair has a batch kernel of its own, so a run compiles only the kinds it meets:
traceback keeping the whole matrix's direction bytes or checkpoints, score-only through the
striped kernel or the row kernel.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from ..common import LOCAL, own_rows, query_type
from .budget import check_traceback, shapes
from .compile import SECONDS, notice
from .intersequence import local_ends
from .rows import (
    MAX_LEVELS,
    align_checkpointed,
    align_whole,
    checkpoint_levels,
    pair_of,
    put_row,
    sweep,
    whole_matrix,
)
from .score import STRIPED_MIN_CELLS
from .small import SMALL_CELLS, small_pairs
from .striped import striped_score
from .threads import spread
from .wavefront import fits16

#: a query with at least this many local score-only pairs has their end cells from the
#: inter-sequence kernel, every target at once (``intersequence.local_ends``: a search's
#: hits without traceback, 24,000 of them in 0.1 s where pair by pair took 0.8 s); fewer go
#: pair by pair
ENDS_MIN_PAIRS = 64
#: whole-matrix traceback pairs whose values fit int16 (``wavefront.fits16``) run the int16
#: kernel: stripes of 32 rows, twice the cells a vector instruction; where some pairs need
#: int32, pairs of one int32 stripe (16 rows or fewer) join them (cold, each width compiles
#: in ~8 s). False: every pair at int32 (benchmarks/pairs.py --int16 compares)
WHOLE16 = True


@njit(cache=True, nogil=True)
def whole_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend,
                 mode, opoff, ops, out):
    """Pairs sel[first::step] with traceback, every direction byte kept (``align_whole``)."""
    for x in range(first, sel.size, step):
        p = sel[x]
        q, t = pair_of(qcat, qoff, tcat, toff, pairs, p)
        put_row(out, p, align_whole(q, t, sub, gap_open, gap_extend, mode,
                                    ops[opoff[p]:opoff[p + 1]]))


@njit(cache=True, nogil=True)
def _checkpointed_pairs(first, step, sel, qcat, qoff, tcat, toff, pairs, sub, gap_open,
                        gap_extend, mode, levels, opoff, ops, out):
    """Pairs sel[first::step] with traceback through checkpoints: rows between them at each
    level in levels[p] (the levels used first, zeros after them)."""
    for x in range(first, sel.size, step):
        p = sel[x]
        q, t = pair_of(qcat, qoff, tcat, toff, pairs, p)
        count = 0
        while count < levels.shape[1] and levels[p, count] > 0:
            count += 1
        put_row(out, p, align_checkpointed(q, t, sub, gap_open, gap_extend, mode,
                                           levels[p, :count], ops[opoff[p]:opoff[p + 1]]))


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


def concat(codes: list[np.ndarray], dtype: type = np.uint8) -> tuple[np.ndarray, np.ndarray]:
    """Code arrays as one array (uint8, or ``dtype``: see ``common.query_type``) and their
    offsets (len + 1)."""
    offsets = np.zeros(len(codes) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([c.size for c in codes])
    cat = np.concatenate(codes) if codes else np.empty(0, dtype)
    return cat.astype(dtype, copy=False), offsets


def _ends_by_query(qcat: np.ndarray, qoff: np.ndarray, tcat: np.ndarray, toff: np.ndarray,
                   pairs: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int, *,
                   out: np.ndarray) -> np.ndarray:
    """Score and end cell (rows of ``out``) of the local score-only pairs of each query
    with at least ENDS_MIN_PAIRS of them, by ``local_ends``; which pairs it did."""
    done = np.zeros(len(pairs), dtype=bool)
    if len(pairs) < ENDS_MIN_PAIRS:
        return done
    order = np.argsort(pairs[:, 0], kind="stable")
    counts = np.bincount(pairs[:, 0], minlength=len(qoff) - 1)
    starts = np.concatenate(([0], np.cumsum(counts)))
    for q in np.flatnonzero(counts >= ENDS_MIN_PAIRS).tolist():
        sel = order[starts[q]:starts[q + 1]]
        targets = pairs[sel, 1]
        scores, ends = local_ends(qcat[qoff[q]:qoff[q + 1]], tcat, toff, targets, sub,
                                  gap_open, gap_extend)
        unknown = np.full(sel.size, -1, np.int64)  # the starts: score-only
        out[sel] = np.stack([scores[targets], unknown, ends[targets, 0], unknown,
                             ends[targets, 1], np.zeros(sel.size, np.int64)], axis=1)
        done[sel] = True
    return done


def align_profile_pairs(qcodes: list[np.ndarray], tcodes: list[np.ndarray],
                        pairs: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
                        mode: int, traceback: bool) -> list[tuple]:
    """:func:`align_pairs` where ``sub`` is profiles' table, the queries' codes its rows:
    each query's pairs against its own rows (``common.own_rows``; the whole table would be
    each pair's profile, and its memory)."""
    pairs = np.asarray(pairs, np.int64).reshape(-1, 2)
    out: list = [None] * len(pairs)
    for qi in np.unique(pairs[:, 0]).tolist():
        sel = np.flatnonzero(pairs[:, 0] == qi)
        codes, own = own_rows(qcodes[qi], sub)
        found = align_pairs([codes], tcodes, np.stack([np.zeros(sel.size, np.int64),
                                                       pairs[sel, 1]], axis=1),
                            own, gap_open, gap_extend, mode, traceback)
        for p, one in zip(sel.tolist(), found, strict=True):
            out[p] = one
    return out


def align_pairs(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
                sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                traceback: bool) -> list[tuple]:
    """Align each (query index, target index) row of ``pairs``.

    Returns (score, query_start, query_end, target_start, target_end, ops) per pair; starts
    are -1 when unknown (score-only) and ops is a uint8 array of ASCII CIGAR letters or None.
    """
    qcat, qoff = concat(qcodes, query_type(sub))
    tcat, toff = concat(tcodes)
    out, ops, opoff = align_cat(qcat, qoff, tcat, toff, pairs, sub, gap_open, gap_extend,
                                mode=mode, traceback=traceback)
    if not traceback:
        return [(score, qs, qe, ts, te, None) for score, qs, qe, ts, te in out[:, :5].tolist()]
    return [(score, qs, qe, ts, te, ops[opoff[p]:opoff[p] + nops][::-1].copy())
            for p, (score, qs, qe, ts, te, nops) in enumerate(out.tolist())]


def align_cat(qcat: np.ndarray, qoff: np.ndarray, tcat: np.ndarray, toff: np.ndarray,
              pairs: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int, *, mode: int,
              traceback: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`align_pairs` over sequences held as one array with offsets each: (out, ops,
    opoff), out[p] = (score, query start, query end, target start, target end, letters),
    pair p's CIGAR letters reversed at ``ops[opoff[p]:opoff[p] + letters]``."""
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    qlen, tlen = np.diff(qoff)[pairs[:, 0]], np.diff(toff)[pairs[:, 1]]
    opoff = np.zeros(len(pairs) + 1, dtype=np.int64)
    if traceback:
        opoff[1:] = np.cumsum(qlen + tlen)
    ops = np.empty(int(opoff[-1]), dtype=np.uint8)
    out = np.empty((len(pairs), 6), dtype=np.int64)
    common = (qcat, qoff, tcat, toff, pairs, np.ascontiguousarray(sub, dtype=np.int32),
              int(gap_open), int(gap_extend), int(mode))
    calls = []
    if traceback:
        distinct, inverse = shapes(qlen, tlen)  # each distinct shape priced once
        check_traceback(qlen, tlen, int(sub.shape[0]), numba.get_num_threads(),
                        (distinct, inverse))
        kinds = [checkpoint_levels(m, n) for m, n in distinct.tolist()]
        table = np.zeros((len(kinds), MAX_LEVELS), np.int64)
        for row, ks in zip(table, kinds, strict=True):
            row[:len(ks)] = ks
        whole = np.array([whole_matrix(m, n, ks[0]) for (m, n), ks in
                          zip(distinct.tolist(), kinds, strict=True)], bool)[inverse]
        by_cell = int((qlen * tlen).sum()) <= SMALL_CELLS  # whole matrices, cell by cell
        narrow = np.zeros(len(pairs), bool)
        if not by_cell and WHOLE16:
            narrow = whole & fits16(qlen, tlen, sub, gap_open, gap_extend, mode)
            if (whole & ~narrow).any():  # int32 compiled anyway: it takes one stripe's rows
                narrow &= qlen > 16
        calls += [(small_pairs if by_cell else whole_pairs,
                   (np.flatnonzero(whole & ~narrow), *common, opoff, ops, out),
                   SECONDS["small" if by_cell else "whole"]),
                  (whole_pairs, (np.flatnonzero(narrow), *common[:5],
                                 common[5].astype(np.int16), *common[6:], opoff, ops, out),
                   SECONDS["whole16"]),
                  (_checkpointed_pairs, (np.flatnonzero(~whole), *common, table[inverse],
                                         opoff, ops, out), SECONDS["checkpointed"])]
    else:
        done = (_ends_by_query(qcat, qoff, tcat, toff, pairs, common[5], *common[6:8], out=out)
                if mode == LOCAL else np.zeros(len(pairs), dtype=bool))
        small = qlen * tlen < STRIPED_MIN_CELLS
        calls += [(_row_pairs, (np.flatnonzero(small & ~done), *common, out), SECONDS["rows"]),
                  (_striped_pairs, (np.flatnonzero(~small & ~done), *common, out),
                   SECONDS["striped"])]
    calls = [call for call in calls if call[1][0].size]
    notice([(kernel, (0, 1, *args), seconds) for kernel, args, seconds in calls])
    for kernel, args, _ in calls:
        spread(kernel, args[0].size, *args)
    return out, ops, opoff
