"""SIMD wavefront kernels: stripes of LANES query rows swept along anti-diagonals.

One source, two widths: the arrays' dtype (the substitution table's, then the profile's and
the row buffers') picks 512-bit vectors of 16 int32 lanes (LANES) or 32 int16 lanes
(``simdw.py``); every ``LANES`` below reads "lanes" at int16. int16 runs the pairs whose
values provably fit (:func:`fits16`), twice the cells a vector instruction.

A stripe holds rows ``i0+1 .. i0+LANES``, one per lane; at step ``s`` the lane of stripe row
``r`` (0-based) computes the cell (i0+1+r, s-r), so the cells of a step form an
anti-diagonal and are independent. For the cell of row r at step s (docs/design.md recurrence):

- left neighbour (H, E of column j-1, same row): its own lane at step s-1;
- upper neighbour (H, F of row i-1, column j): row r-1 at step s-1, i.e. the previous step
  moved one row down (``next_rows``), with row 0 taking the row above the stripe from a row
  buffer;
- diagonal H[i-1][j-1]: the upper-neighbour vector of step s-1, carried;
- substitution score: ``tp[c * width + PAD + j - 1]`` = ``sub[c, t[j-1]]`` from the target
  profile, one row per query code c; ``columns`` transposes 8 steps' worth at a time.

Lanes are interleaved: even stripe rows 0, 2, .., 14 in lanes 0-7, odd rows 1, 3, .., 15 in
lanes 8-15 (``LANE_OF_ROW``). Moving one row down then copies lanes 0-7 into lanes 8-15 and
shifts lanes 8-15 into lanes 0-7: two shuffles instead of four on AVX2 (one permute with
AVX-512). Row 15's H and F, which the next stripe needs, are stored by a plain store of
lanes 8-15 into row buffers kept in reverse column order (``rev[C - j]`` holds column j):
row 15 lands on its column and lanes 8-14 write garbage onto columns j+1..j+7, which later
steps overwrite before anyone reads them.

Lanes whose column is <= 0 are forced to the column-0 boundary; lanes past column n or row m
compute values that only ever feed other such lanes and are masked out of every result. The
recurrence is exact (no lazy-F correction) for any non-negative gap penalties; int16
arithmetic wraps around only in those lanes.

Direction bytes (encoding in ``common.py``) of rows ``r0+1..r1`` and columns ``1..n`` are
stored skewed, as the steps produce them: the byte of cell (i, j), with ``x = i - r0 - 1``,
is at ``((x // LANES) * (n + LANES - 1) + j + x % LANES - 1) * LANES + LANE_OF_ROW[x %
LANES]`` (``skewed_index``; ``skewed_size`` bytes in all).

Floor (Intel AVX-512, where 512-bit vector ops issue on two ports, shuffles, permutes and
mask compares on one): a step is about 30 vector ops (5 max, 4 sub, 1 add, 5 compares, the
direction byte's blends and its store, two row moves, two row-buffer stores) plus 8 of the
profile's transposes, about 20 of them on the shuffle port: ~20 cycles a step at either
width, 16 or 32 cells. Prediction: int16 halves the steps (10 stripes of 331 steps for a 300
x 300 pair against 19 of 315: 0.55x), ~1.8x the int32 kernel. Measured (one thread, 20,000
protein pairs of 300 x 300, ``align_whole``, local): compiled for a literal local mode,
int32 1.34-1.52 s, int16 1.04 s (1.4x: ~30 cycles a step, ~65 masked steps in 331 against
~35 in 315, the int16 transposes' extra inserts). With the mode a run-time value, as
``whole_pairs`` passes it (3,000 such pairs, one thread, the 2-core machine, three turns):
int16 0.137-0.153 s against int32's 0.193-0.229 s, and compiled for a literal local mode
0.134-0.164 against 0.195-0.223 s; the forward pass alone 0.120-0.173 against 0.183-0.196 s.
The mode costs nothing (an earlier 1.45x gap with it, before ``splat`` and ``load`` were
made once, does not reproduce).
"""

from __future__ import annotations

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
from .simd import LANES
from .simdw import (
    BLOCK,
    NEG16,
    add,
    columns,
    eq,
    ge,
    gt,
    lane,
    lanes_of,
    load,
    neg_of,
    next_rows,
    rows_of,
    select,
    splat,
    store_bytes,
    store_high,
    sub,
    vand,
    vmax,
    vor,
)

#: target-profile columns of padding before and after the target (read by lanes outside 1..n)
#: of the int32 kernels; ``2 * lanes`` at any width
PAD = 2 * LANES
#: stripe row held by each lane, and the lane holding each stripe row (int32 kernels)
ROW_OF_LANE = np.array([2 * k for k in range(LANES // 2)] + [2 * k + 1 for k in range(LANES // 2)],
                       np.int32)
LANE_OF_ROW = np.argsort(ROW_OF_LANE).astype(np.int32)


@njit(cache=True, nogil=True, inline="always")
def row_of_lane(p, lanes):
    """The stripe row lane p holds (``ROW_OF_LANE`` at any width)."""
    half = lanes // 2
    return 2 * p if p < half else 2 * (p - half) + 1


@njit(cache=True, nogil=True, inline="always")
def lane_of_row(r, lanes):
    """The lane holding stripe row r (``LANE_OF_ROW`` at any width)."""
    return r // 2 + (r % 2) * (lanes // 2)


@njit(cache=True, nogil=True, inline="always")
def edge(k, mode, gap_open, gap_extend):
    """H on row 0 or column 0 at distance k from the origin."""
    if mode == GLOBAL and k > 0:
        return -(gap_open + (k - 1) * gap_extend)
    return 0


@njit(cache=True, nogil=True)
def target_profile(q, t, sub_table):
    """(tp, codes, width): tp[codes[a] * width + PAD + x] = sub[a, t[x]] for the codes a
    present in q (codes[a] = -1 for the others); PAD zero columns on each side. Each entry is
    written once (no zeroing of the whole, no row views: 3.5 against 8.2 us a 300 x 300
    protein pair)."""
    codes = np.full(sub_table.shape[0], -1, np.int64)
    count = 0
    for x in q:
        if codes[x] < 0:
            codes[x] = count
            count += 1
    n = t.size
    pad = 2 * lanes_of(sub_table)
    width = n + 2 * pad
    tp = (np.zeros(width, sub_table.dtype) if count == 0
          else np.empty(count * width, sub_table.dtype))
    for a in range(sub_table.shape[0]):
        c = codes[a]
        if c >= 0:
            base = c * width
            tp[base:base + pad] = 0
            tp[base + pad + n:base + width] = 0
            for x in range(n):
                tp[base + pad + x] = sub_table[a, t[x]]
    return tp, codes, width


@njit(cache=True, nogil=True)
def skewed_size(rows, n, lanes=LANES):
    """Bytes of skewed direction storage for ``rows`` rows and ``n`` columns (stripes of
    ``lanes`` rows)."""
    return (rows + lanes - 1) // lanes * (n + lanes - 1) * lanes


@njit(cache=True, nogil=True, inline="always")
def skewed_index(r0, n, i, j, like=None):
    """Index of cell (i, j)'s byte in the skewed direction bytes of rows > r0, columns 1..n,
    of the kernel of like's width (``simdw.lanes_of``)."""
    lanes = lanes_of(like)
    x = i - r0 - 1
    r = x % lanes
    return ((x // lanes) * (n + lanes - 1) + j + r - 1) * lanes + lane_of_row(r, lanes)


@njit(cache=True, nogil=True, inline="always")
def _step(s, n, score, h, e, f, hup, revH, revF, C, vopen, vext, zero, besth, bests, dirs,
          dpos, emit, track, masked, edges, rows, neg):
    """One anti-diagonal step; returns the new (h, e, f, hup, besth, bests)."""
    hnext = next_rows(h, revH[C - s])
    fup = next_rows(f, revF[C - s])
    e_ext = sub(e, vext)
    e_open = sub(h, vopen)
    e = vmax(e_ext, e_open)
    f_ext = sub(fup, vext)
    f_open = sub(hnext, vopen)
    f = vmax(f_ext, f_open)
    dg = add(hup, score)
    hn = vmax(vmax(dg, e), vmax(f, zero))
    if emit:
        src = select(eq(hn, dg), splat(revH, DIR_DIAG),
                     select(eq(hn, e), splat(revH, DIR_E), splat(revH, DIR_F)))
        # local zero; in the other modes zero is NEG, which no H ever equals
        src = select(eq(hn, zero), splat(revH, DIR_ZERO), src)
        gaps = vor(vand(ge(e_open, e_ext), splat(revH, E_OPEN)),
                   vand(ge(f_open, f_ext), splat(revH, F_OPEN)))
        store_bytes(dirs, dpos, vor(src, gaps))
    if masked:
        force = ge(rows, splat(revH, s))  # lanes on column 0 (or left of it)
        hn = select(force, edges, hn)
        e = select(force, splat(revH, neg), e)
    if track:
        better = gt(hn, besth)
        if masked:
            better = vand(better, ge(rows, splat(revH, s - n)))  # columns <= n only
        besth = select(better, hn, besth)
        bests = select(better, splat(revH, s), bests)
    return hn, e, f, hnext, besth, bests


@njit(cache=True, nogil=True, inline="always")
def _to_row_buffers(revH, revF, C, s, h, f):
    """The last row's H and F at step s >= lanes onto column s - lanes + 1 of the reversed
    row buffers.

    The high lanes (rows 1, 3, .., lanes - 1) go to columns s - lanes/2 .. s - lanes + 1:
    the other rows' values land on columns above the last row's, which the next steps
    overwrite, after lane 0 read them."""
    lanes = lanes_of(revH)
    store_high(revH, C - s + lanes // 2, h)
    store_high(revF, C - s + lanes // 2, f)


@njit(cache=True, nogil=True)
def _stripes(q, n, tp, codes, width, gap_open, gap_extend, mode, r0, r1, revH, revF, emit,
             dirs, find_end, K, ckH, ckF, lastcol):
    """Rows r0+1..r1, columns 1..n from row r0 in the reversed row buffers (revH, revF).

    Compiled once per literal emit and K of its callers (Numba types literal arguments as
    such, and their values are constants in the compiled code): ``forward`` (no direction
    bytes, run-time K) and the two callers writing direction bytes, which pass r0 and
    find_end as run-time values so that they share one copy. (Inlined at Numba's IR level
    instead, this function's IR was copied at a cost of several seconds of compile time.)

    emit: write skewed direction bytes to dirs. find_end: return the end cell (score, i, j)
    of rows 1..r1 (r0 must be 0); lastcol receives H[i][n] for non-local modes. K > 0:
    rows r0 + K, r0 + 2K, ... go to ckH, ckF rows 1, 2, ... (each stripe's last row is one
    or none).
    """
    local = mode == LOCAL
    L = lanes_of(revH)  # a constant: 16 (int32) or 32 (int16)
    neg = neg_of(revH)
    pad = 2 * L
    C = n + L
    vopen = splat(revH, gap_open)
    vext = splat(revH, gap_extend)
    zero = splat(revH, 0 if local else neg)
    rows = rows_of(revH)
    starts = np.empty(L, np.int64)
    edge_buf = np.empty(L, revH.dtype)
    scores = np.empty(BLOCK * L, revH.dtype)
    best, bi, bj = 0, 0, 0
    steps = n + L - 1
    for i0 in range(r0, r1, L):
        for p in range(L):
            x = row_of_lane(p, L)
            i = i0 + x  # 0-based query row of lane p, which reads tp[starts[p] + s]
            starts[p] = (codes[q[i]] if i < q.size else 0) * width + pad - x - 1
            edge_buf[p] = edge(i + 1, mode, gap_open, gap_extend)
        edges = load(edge_buf, 0)
        last = i0 + L >= r1
        track = find_end and (local or (mode == SEMIGLOBAL and last))
        h = edges
        e = splat(revH, neg)
        f = splat(revH, neg)
        hup = splat(revH, revH[C])
        besth = splat(revH, 0)
        bests = splat(revH, 0)
        dbase = ((i0 - r0) // L * steps - 1) * L
        for s0 in range(1, steps + 1, BLOCK):
            columns(tp, starts, s0, scores)
            if s0 >= L and s0 + BLOCK - 1 <= n:  # every lane inside the matrix
                # the two loops differ only in a literal True/False for track: _step is
                # inlined, so each copy compiles without the other's end-cell branch
                if track:
                    for k in range(BLOCK):
                        h, e, f, hup, besth, bests = _step(
                            s0 + k, n, load(scores, k * L), h, e, f, hup, revH, revF, C,
                            vopen, vext, zero, besth, bests, dirs, dbase + (s0 + k) * L,
                            emit, True, False, edges, rows, neg)
                        _to_row_buffers(revH, revF, C, s0 + k, h, f)
                else:
                    for k in range(BLOCK):
                        h, e, f, hup, besth, bests = _step(
                            s0 + k, n, load(scores, k * L), h, e, f, hup, revH, revF, C,
                            vopen, vext, zero, besth, bests, dirs, dbase + (s0 + k) * L,
                            emit, False, False, edges, rows, neg)
                        _to_row_buffers(revH, revF, C, s0 + k, h, f)
                if find_end and not local and s0 + BLOCK - 1 == n:
                    lastcol[i0 + 1] = lane(h, 0)  # row 0 reached column n
                continue
            # some lanes left of column 1 or right of column n; the end cell tracked
            # whether needed or not (a literal: no branch in the inlined step, whose arrays
            # Numba would then reference-count at every step)
            for s in range(s0, min(s0 + BLOCK, steps + 1)):
                h, e, f, hup, besth, bests = _step(
                    s, n, load(scores, (s - s0) * L), h, e, f, hup, revH, revF, C, vopen,
                    vext, zero, besth, bests, dirs, dbase + s * L, emit, True, True,
                    edges, rows, neg)
                if s >= L:
                    _to_row_buffers(revH, revF, C, s, h, f)
                if find_end and not local and s >= n and i0 + s - n < r1:
                    lastcol[i0 + s - n + 1] = lane(h, lane_of_row(s - n, L))
        revH[C] = edge(i0 + L, mode, gap_open, gap_extend)
        if K > 0 and (i0 + L - r0) % K == 0 and i0 + L <= r1:
            for j in range(n + 1):
                ckH[(i0 + L - r0) // K, j] = revH[C - j]
                ckF[(i0 + L - r0) // K, j] = revF[C - j]
        if track:
            for r in range(min(L, r1 - i0)):
                if local or i0 + r + 1 == r1:
                    v = lane(besth, lane_of_row(r, L))
                    if v > best:
                        best, bi, bj = v, i0 + r + 1, lane(bests, lane_of_row(r, L)) - r
    return best, bi, bj


def fits16(m, n, sub_table: np.ndarray, gap_open: int, gap_extend: int,
           mode: int) -> np.ndarray:
    """Whether the int16 kernel holds every value of m x n pairs (arrays) exactly: no H
    above ``max(sub, 0) * min(m, n)``, plus a substitution score, reaches 2^15; none below
    the all-gaps path's (local: -(open + extend) - min(sub, 0); else -(3 open + extend
    (m + n + 1)) - min(sub, 0)) reaches NEG16 = -2^14, so NEG16 minus an extension loses to
    every real value and wraps nowhere; the steps n + 2 lanes fit int16."""
    top, low = max(int(sub_table.max()), 0), min(int(sub_table.min()), 0)
    m, n = np.asarray(m, np.int64), np.asarray(n, np.int64)
    high = top * np.minimum(m, n) + top
    depth = (gap_open + gap_extend - low if mode == LOCAL
             else 3 * gap_open + gap_extend * (m + n + 1) - low)
    return (high < 1 << 15) & (depth < -NEG16) & (n + 64 < 1 << 15)


@njit(cache=True, nogil=True, inline="always")
def _boundary_row(n, mode, gap_open, gap_extend, revH, revF):
    """Row 0 into the reversed row buffers."""
    L = lanes_of(revH)
    for j in range(n + 1):
        revH[n + L - j] = edge(j, mode, gap_open, gap_extend)
        revF[n + L - j] = neg_of(revH)


@njit(cache=True, nogil=True, inline="always")
def _end_cell(mode, m, n, best, bi, bj, lastcol):
    """Combine the tracked maximum with the last column (docs/design.md tie rule)."""
    if mode == GLOBAL:
        return np.int64(lastcol[m]), m, n
    if mode == LOCAL:
        return np.int64(best), bi, bj
    # semiglobal: (0, n), (1, n) .. (m - 1, n), then row m (best, bi, bj: > 0 only)
    col, ci = 0, 0
    for i in range(1, m):
        if lastcol[i] > col:
            col, ci = lastcol[i], i
    if best > col:
        return np.int64(best), bi, bj
    return np.int64(col), ci, n


@njit(cache=True, nogil=True, inline="always")
def empty_end(m, n, mode, gap_open, gap_extend):
    """Score and end cell when m or n is 0."""
    if mode == GLOBAL:
        return np.int64(edge(m + n, mode, gap_open, gap_extend)), m, n
    return np.int64(0), 0, 0


@njit(cache=True, nogil=True)
def forward(q, n, tp, codes, width, gap_open, gap_extend, mode, K, ckH, ckF):
    """Score and end cell (score, i, j) of q against the target of the profile (length n);
    saves H and F of rows 0, K, 2K, ... when K > 0 (K a multiple of LANES)."""
    m = q.size
    revH = np.empty(n + LANES + 1, np.int32)  # reversed: index n + LANES - j is column j
    revF = np.empty(n + LANES + 1, np.int32)
    _boundary_row(n, mode, gap_open, gap_extend, revH, revF)
    if K > 0:
        for j in range(n + 1):
            ckH[0, j] = revH[n + LANES - j]
            ckF[0, j] = revF[n + LANES - j]
    if m == 0 or n == 0:
        for k in range(1, m // K + 1 if K > 0 else 1):
            ckH[k, 0] = edge(k * K, mode, gap_open, gap_extend)  # rows of column 0 alone
            ckF[k, 0] = NEG
        return empty_end(m, n, mode, gap_open, gap_extend)
    lastcol = np.empty(m + 1 if mode != LOCAL else 1, np.int32)
    dirs = np.empty(1, np.uint8)
    best, bi, bj = _stripes(q, n, tp, codes, width, gap_open, gap_extend, mode, 0, m, revH,
                            revF, False, dirs, True, K, ckH, ckF, lastcol)
    return _end_cell(mode, m, n, best, bi, bj, lastcol)


@njit(cache=True, nogil=True, inline="always")
def forward_dirs(q, n, tp, codes, width, gap_open, gap_extend, mode, dirs):
    """``forward`` in one pass that also writes the whole matrix's skewed direction bytes
    (``skewed_size(m, n, lanes)``) into dirs; m, n > 0. The width is tp's: int32, or int16
    for pairs that fit it (:func:`fits16`)."""
    m = q.size
    L = lanes_of(tp)
    revH = np.empty(n + L + 1, tp.dtype)  # reversed: index n + L - j is column j
    revF = np.empty(n + L + 1, tp.dtype)
    _boundary_row(n, mode, gap_open, gap_extend, revH, revF)
    lastcol = np.empty(m + 1 if mode != LOCAL else 1, np.int32)
    ck = np.empty((1, 1), np.int32)
    best, bi, bj = _stripes(q, n, tp, codes, width, gap_open, gap_extend, mode, np.int64(0), m,
                            revH, revF, True, dirs, np.bool_(True), 0, ck, ck, lastcol)
    return _end_cell(mode, m, n, best, bi, bj, lastcol)


@njit(cache=True, nogil=True)
def band_checkpoints(q, tp, codes, width, gap_open, gap_extend, mode, r0, r1, c1, K, ckH,
                     ckF, revH, revF):
    """Recompute rows r0+1..r1, columns 1..c1 from row r0 (ckH[0], ckF[0], columns 0..c1)
    and keep H and F of rows r0 + K, r0 + 2K, ... (<= r1) in ckH, ckF rows 1, 2, ...;
    revH, revF: scratch of length >= c1 + LANES + 1."""
    for j in range(c1 + 1):
        revH[c1 + LANES - j] = ckH[0, j]
        revF[c1 + LANES - j] = ckF[0, j]
    none = np.empty(1, np.uint8)
    _stripes(q, c1, tp, codes, width, gap_open, gap_extend, mode, r0, r1, revH, revF, False,
             none, np.bool_(False), K, ckH, ckF, np.empty(1, np.int32))


@njit(cache=True, nogil=True, inline="always")
def band_dirs(q, tp, codes, width, gap_open, gap_extend, mode, r0, r1, c1, Htop, Ftop,
              revH, revF, dirs):
    """Recompute rows r0+1..r1, columns 1..c1 from row r0 (Htop, Ftop, columns 0..c1) and
    write their skewed direction bytes; revH, revF: scratch of length >= c1 + LANES + 1."""
    for j in range(c1 + 1):
        revH[c1 + LANES - j] = Htop[j]
        revF[c1 + LANES - j] = Ftop[j]
    ck = np.empty((1, 1), np.int32)
    _stripes(q, c1, tp, codes, width, gap_open, gap_extend, mode, r0, r1, revH, revF, True,
             dirs, np.bool_(False), 0, ck, ck, np.empty(1, np.int32))
