"""Farrar's striped query-profile kernel: score and end cell, no traceback.

Query row ``i = lane * seg + s + 1`` lives in lane ``lane`` of segment ``s``. Every segment is
one ``LANES`` x int32 vector: the kernel works on LLVM vector values (``<LANES x i32>``, two
AVX2 registers for 16 lanes) through a handful of Numba intrinsics, so the carried vectors
stay in registers. Per target column, a first pass assumes no vertical gap enters a lane
from the lane before. Within a lane F then decays by at most ``min(open, ext)`` per row, so
the F entering every lane is a short prefix over lanes, and one lazy-F pass raises H and E
until no lane's F rises any more: exact for any gap_open, gap_extend >= 0, never a second
pass. Rows past ``m`` (padding) score ``NEG`` against everything and never feed real rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..common import GLOBAL, LOCAL, NEG
from .simd import LANES
from .simd import add as _add
from .simd import any_gt as _any_gt
from .simd import lane as _lane
from .simd import lane_carries as _lane_carries
from .simd import load as _load
from .simd import shift as _shift
from .simd import splat as _splat
from .simd import store as _store
from .simd import sub as _sub
from .simd import vmax as _max
from .simd import vmin as _min
from .wavefront import edge


@njit(cache=True, nogil=True, inline="always")
def _hmax(v):
    best = _lane(v, 0)
    for k in range(1, LANES):
        best = max(best, _lane(v, k))
    return best


@njit(cache=True, nogil=True)
def _profile(q, sub, seg):
    """Striped query profile, flat int32 [A, seg, LANES] (A the table's columns, the
    target's letters); padding rows score NEG."""
    m = q.size
    prof = np.empty(sub.shape[1] * seg * LANES, np.int32)
    for c in range(sub.shape[1]):
        for s in range(seg):
            base = (c * seg + s) * LANES
            for lane in range(LANES):
                i = lane * seg + s
                prof[base + lane] = sub[q[i], c] if i < m else NEG
    return prof


@njit(cache=True, nogil=True)
def _first_row(h, seg, vmax, value, limit):
    """Smallest 0-based query row below limit whose H in the striped column h equals value.

    vmax is the column's lane-wise maximum and value its largest lane, so only the first
    lane holding value is scanned. Returns limit when no such row lies below it.
    """
    for lane in range(LANES):
        if _lane(vmax, lane) == value:
            for s in range(min(seg, limit - lane * seg)):
                if h[s * LANES + lane] == value:
                    return lane * seg + s
            return limit
    return limit


@njit(cache=True, nogil=True)
def striped_score(q, t, sub, gap_open, gap_extend, mode):
    """(score, end_i, end_j) of the best alignment under docs/design.md's recurrence and tie rules.

    q, t: uint8 codes; sub: int32 [A, A]; mode: LOCAL, GLOBAL or SEMIGLOBAL.
    """
    m = q.size
    n = t.size
    if m == 0 or n == 0:
        if mode == GLOBAL:
            return edge(m + n, mode, gap_open, gap_extend), m, n
        return 0, 0, 0
    local = mode == LOCAL
    seg = (m + LANES - 1) // LANES
    prof = _profile(q, sub, seg)
    # h: H of the current column (in place); e: E for the next column; f: first-pass F
    h = np.empty(seg * LANES, np.int32)
    e = np.empty(seg * LANES, np.int32)
    f = np.empty(seg * LANES, np.int32)
    for s in range(seg):
        for lane in range(LANES):
            h0 = edge(lane * seg + s + 1, mode, gap_open, gap_extend)
            h[s * LANES + lane] = h0
            e[s * LANES + lane] = h0 - gap_open
    # lanes holding no query row never receive a vertical gap
    cap = np.empty(LANES, np.int32)
    for lane in range(LANES):
        cap[lane] = 1 << 30 if lane * seg < m else NEG
    vcap = _load(cap, 0)
    d = min(gap_open, gap_extend)
    lane_step = min(seg * d, 1 << 30)
    vopen = _splat(gap_open)
    vext = _splat(gap_extend)
    vd = _splat(d)
    zero = _splat(0)
    neg = _splat(NEG)
    last = ((m - 1) % seg) * LANES + (m - 1) // seg
    best = 0
    best_i = 0 if local else m
    best_j = 0
    thresh = zero
    for j in range(1, n + 1):
        top = edge(j, mode, gap_open, gap_extend)
        vh = _shift(_load(h, (seg - 1) * LANES), edge(j - 1, mode, gap_open, gap_extend))
        vf = _shift(neg, top - gap_open)
        pofs = np.int64(t[j - 1]) * seg * LANES
        vmax = zero
        # first pass: no vertical gap crosses from one lane into the next
        for s in range(seg):
            o = s * LANES
            old = _load(h, o)
            ev = _load(e, o)
            x = _max(_max(_add(vh, _load(prof, pofs + o)), ev), vf)
            if local:
                x = _max(x, zero)
                vmax = _max(vmax, x)
            _store(h, o, x)
            _store(f, o, vf)
            xo = _sub(x, vopen)
            _store(e, o, _max(_sub(ev, vext), xo))
            vf = _max(_sub(vf, vext), xo)
            vh = old
        # lazy F: within a lane F[k + 1] = max(F[k] - d, H1[k] - open) with d = min(open, ext)
        # and H1 the first pass's H, so F = max(F1[k], c - k d) for c the F entering the lane;
        # the entering F of every lane is a prefix over lanes. Stop once no lane's F rises.
        c = _shift(vf, NEG)
        if _any_gt(c, _load(f, 0)):
            c = _min(_lane_carries(c, lane_step), vcap)
            for s in range(seg):
                o = s * LANES
                if not _any_gt(c, _load(f, o)):
                    break
                x = _max(_load(h, o), c)
                _store(h, o, x)
                _store(e, o, _max(_load(e, o), _sub(x, vopen)))
                if local:
                    vmax = _max(vmax, x)
                c = _max(_sub(c, vd), neg)
        if local:
            if _any_gt(vmax, thresh):
                colmax = _hmax(vmax)
                thresh = _splat(colmax - 1)
                if colmax > best:
                    best = colmax
                    best_i = _first_row(h, seg, vmax, colmax, m) + 1
                    best_j = j
                else:
                    row = _first_row(h, seg, vmax, colmax, best_i - 1)
                    if row + 1 < best_i:
                        best_i = row + 1
                        best_j = j
        elif mode != GLOBAL and h[last] > best:
            best = h[last]
            best_j = j
    if mode == GLOBAL:
        return np.int64(h[last]), m, n
    if mode == LOCAL:
        return np.int64(best), best_i, best_j
    # semiglobal: (0, n) .. (m - 1, n) come before (m, 0) .. (m, n); boundary cells score 0
    col_best = 0
    col_i = 0
    for i in range(1, m):
        v = h[((i - 1) % seg) * LANES + (i - 1) // seg]
        if v > col_best:
            col_best = v
            col_i = i
    if best > col_best:
        return np.int64(best), best_i, best_j
    return np.int64(col_best), col_i, n
