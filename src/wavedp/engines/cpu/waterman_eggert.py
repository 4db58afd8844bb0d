"""Waterman-Eggert non-intersecting local alignments of one pair (docs/design.md, "Non-intersecting
hits"): a scalar row kernel with forbidden cells, recomputed band by band.

A cell an earlier hit paired (= or X) is forbidden: the diagonal move into it is not allowed
(the SIMD kernels of ``wavefront.py`` have no such cells, hence a kernel of its own; it runs
two rows at a time, the second a column behind). Rows are computed in bands of K rows; H and
F of each band's top row (checkpoints) and each band's best cell are kept, so the next end
cell is the best of the band bests. After a hit, its pairs are forbidden and the bands are
recomputed from the one holding its first row down: once a recomputed checkpoint equals the
stored one below the hit's last row, nothing further down can change (a row depends only on
H and F of the row above), and the recomputation stops there. Beyond the first pass, a hit
costs about ``(rows it spans + 2K) * n`` cells, plus its traceback.

When the direction bytes of the whole matrix fit ``FULL_MATRIX_BYTES`` they are kept (and
rewritten with every recomputed band): traceback reads them directly, K is
``FULL_BAND_ROWS``. Otherwise only the checkpoints are kept (K ~ sqrt(8m)) and traceback
recomputes, as ``rows.trace`` does, the band between the checkpoint above the current cell
and that cell with one direction byte per cell (about ``(rows it spans + K) * n`` cells);
memory is then ``8 (m/K + 1)(n + 1) + K n`` bytes, about ``2 n sqrt(8m)``, plus 16 to 32
bytes per forbidden pair.
"""
from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from numba import get_num_threads, njit

from ...threads import pool as thread_pool
from ..common import DIR_DIAG, DIR_E, DIR_F, DIR_ZERO, E_OPEN, F_OPEN, LOCAL, NEG
from .compile import SECONDS, notice
from .rows import walk_skewed
from .simd import LANES
from .wavefront import skewed_index, skewed_size

#: direction bytes of the whole matrix are kept when they fit (one byte per cell); larger
#: pairs take the linear-memory path
FULL_MATRIX_BYTES = 64 << 20
#: band height while the whole matrix's direction bytes are kept (a multiple of LANES)
FULL_BAND_ROWS = 64

_EQ, _X, _I = ord("="), ord("X"), ord("I")

RawHit = tuple[int, int, int, int, int, np.ndarray]


@njit(cache=True, nogil=True)
def _max(a, b):
    """max of two int64 without a branch (LLVM turns selects on the critical path into
    unpredictable branches)."""
    d = a - b
    return a - (d & (d >> 63))


@njit(cache=True, nogil=True)
def _cell(diag, s, forbidden, hleft, e, up, fup, gap_open, gap_extend, emit):
    """One cell of the recurrence from its neighbours; returns (H, E, F, direction byte)."""
    e_ext = e - gap_extend
    e_open = hleft - gap_open
    e = _max(e_ext, e_open)
    f_ext = fup - gap_extend
    f_open = up - gap_open
    f = _max(f_ext, f_open)
    dg = NEG if forbidden else diag + s
    h = _max(_max(dg, e), _max(f, 0))
    d = 0
    if emit:  # docs/design.md's preferences without branches: zero, diagonal, E, F
        src = DIR_F - (DIR_F - DIR_E) * (h == e)
        src -= (src - DIR_DIAG) * (h == dg)
        src -= (src - DIR_ZERO) * (h == 0)
        d = src + E_OPEN * (e_open >= e_ext) + F_OPEN * (f_open >= f_ext)
    return h, e, f, d


@njit(cache=True, nogil=True)
def _copy(dst, src, count):
    """dst[:count] = src[:count], as a loop (Numba's slice assignment compiles its shape
    checks and their error messages: a second of compile time)."""
    for j in range(count):
        dst[j] = src[j]


@njit(cache=True, nogil=True)
def _equal(a, b):
    """Whether the arrays a and b, of one size, hold the same values."""
    for j in range(a.size):
        if a[j] != b[j]:
            return False
    return True


@njit(cache=True, nogil=True)
def _mark(head, nxt, col, mask, i, bit):
    """Toggle ``bit`` in mask at the forbidden columns of row i (each is listed once)."""
    k = head[i]
    while k >= 0:
        mask[col[k]] ^= bit
        k = nxt[k]


@njit(cache=True, nogil=True, inline="always")
def _rows(q, t, sub, gap_open, gap_extend, r0, r1, c1, hrow, frow, head, nxt, col, mask,
          dirs, emit):
    """Rows r0+1..r1, columns 1..c1 from row r0's H and F in hrow, frow (which end up holding
    row r1's), every cell on the row lists head/nxt/col forbidden; emit: skewed direction
    bytes of those rows into dirs. Returns the best cell (score, i, j), ties to the smallest
    i then j; (0, 0, 0) when no H is positive.

    Rows go in pairs, the second one column behind the first, so the two dependency chains
    (E along each row) overlap."""
    best, bi, bj = 0, 0, 0
    for a in range(r0 + 1, r1 + 1, 2):
        two = a < r1
        _mark(head, nxt, col, mask, a, 1)
        if two:
            _mark(head, nxt, col, mask, a + 1, 2)
        sa = sub[q[a - 1]]
        sb = sub[q[a if two else a - 1]]
        diag_a, hleft_a, e_a = np.int64(hrow[0]), np.int64(0), np.int64(NEG)
        diag_b, hleft_b, e_b = np.int64(0), np.int64(0), np.int64(NEG)
        hup_b, fup_b = np.int64(0), np.int64(NEG)  # row a at the column row b computes
        best_a, ja, best_b, jb = 0, 0, 0, 0
        da = skewed_index(r0, c1, a, 0)  # + LANES * j: cell (a, j)'s direction byte
        db = skewed_index(r0, c1, a + 1, 0) if two else da
        h, f = hup_b, fup_b  # typed before the loop; set at every column of row a
        for j in range(1, c1 + 2):
            if j <= c1:  # row a, column j
                up = np.int64(hrow[j])
                h, e_a, f, d = _cell(diag_a, sa[t[j - 1]], mask[j] & 1, hleft_a, e_a, up,
                                     np.int64(frow[j]), gap_open, gap_extend, emit)
                if emit:
                    dirs[da + LANES * j] = d
                if h > best_a:
                    best_a, ja = h, j
                diag_a, hleft_a = up, h
            if two and j > 1:  # row b, column j - 1
                hb, e_b, fb, d = _cell(diag_b, sb[t[j - 2]], mask[j - 1] & 2, hleft_b, e_b,
                                       hup_b, fup_b, gap_open, gap_extend, emit)
                if emit:
                    dirs[db + LANES * (j - 1)] = d
                if hb > best_b:
                    best_b, jb = hb, j - 1
                hrow[j - 1] = hb
                frow[j - 1] = fb
                diag_b, hleft_b = hup_b, hb
            if j <= c1:
                if two:
                    hup_b, fup_b = h, f
                else:
                    hrow[j] = h
                    frow[j] = f
        _mark(head, nxt, col, mask, a, 1)
        if two:
            _mark(head, nxt, col, mask, a + 1, 2)
        if best_a > best:
            best, bi, bj = best_a, a, ja
        if best_b > best:
            best, bi, bj = best_b, a + 1, jb
    return best, bi, bj


@njit(cache=True, nogil=True)
def _band(q, t, sub, gap_open, gap_extend, r0, r1, c1, hrow, frow, head, nxt, col, mask):
    """``_rows`` without direction bytes."""
    return _rows(q, t, sub, gap_open, gap_extend, r0, r1, c1, hrow, frow, head, nxt, col,
                 mask, np.empty(0, np.uint8), False)


@njit(cache=True, nogil=True)
def _band_dirs(q, t, sub, gap_open, gap_extend, r0, r1, c1, hrow, frow, head, nxt, col, mask,
               dirs):
    """``_rows`` writing direction bytes."""
    return _rows(q, t, sub, gap_open, gap_extend, r0, r1, c1, hrow, frow, head, nxt, col,
                 mask, dirs, True)


@njit(cache=True, nogil=True)
def refresh(q, t, sub, gap_open, gap_extend, K, b0, last_row, ckH, ckF, best, head, nxt, col,
            keep, dirs):
    """Recompute bands b0, b0+1, ... until one's bottom row (at or below ``last_row``) equals
    its stored checkpoint; updates checkpoints, band bests and, when ``keep``, the whole
    matrix's direction bytes."""
    m, n = q.size, t.size
    hrow = np.empty(n + 1, np.int32)
    frow = np.empty(n + 1, np.int32)
    mask = np.zeros(n + 1, np.uint8)
    for b in range(b0, ckH.shape[0]):
        r0 = b * K
        r1 = min(r0 + K, m)
        _copy(hrow, ckH[b], n + 1)
        _copy(frow, ckF[b], n + 1)
        if keep:
            offset = r0 // LANES * (n + LANES - 1) * LANES
            s, i, j = _band_dirs(q, t, sub, gap_open, gap_extend, r0, r1, n, hrow, frow, head,
                                 nxt, col, mask, dirs[offset:])
        else:
            s, i, j = _band(q, t, sub, gap_open, gap_extend, r0, r1, n, hrow, frow, head, nxt,
                            col, mask)
        best[b, 0], best[b, 1], best[b, 2] = s, i, j
        if b + 1 == ckH.shape[0]:
            return
        same = _equal(hrow, ckH[b + 1]) and _equal(frow, ckF[b + 1])
        if same and r1 >= last_row:
            return
        _copy(ckH[b + 1], hrow, n + 1)
        _copy(ckF[b + 1], frow, n + 1)


@njit(cache=True, nogil=True)
def trace(q, t, sub, gap_open, gap_extend, K, ckH, ckF, head, nxt, col, keep, dirs, ei, ej,
          ops):
    """Trace back from (ei, ej) (docs/design.md's rules); ops are written reversed.

    Returns (start_i, start_j, number of ops)."""
    if keep:
        zero = np.int64(0)
        i, j, _, k, _ = walk_skewed(q, t, np.int64(LOCAL), dirs, zero, t.size, ei, ej, zero,
                                    ops, zero)
        return i, j, k
    hrow = np.empty(ej + 1, np.int32)
    frow = np.empty(ej + 1, np.int32)
    mask = np.zeros(t.size + 1, np.uint8)
    i, j, state, k = ei, ej, np.int64(0), np.int64(0)
    while i > 0 and j > 0:
        r0 = (i - 1) // K * K
        _copy(hrow, ckH[r0 // K], j + 1)
        _copy(frow, ckF[r0 // K], j + 1)
        _band_dirs(q, t, sub, gap_open, gap_extend, r0, i, j, hrow, frow, head, nxt, col,
                   mask, dirs)
        i, j, state, k, stopped = walk_skewed(q, t, np.int64(LOCAL), dirs, r0, j, i, j, state,
                                              ops, k)
        if stopped:
            break
    return i, j, k


@njit(cache=True, nogil=True)
def forbid(ops, si, sj, head, nxt, col, count):
    """Put every (i, j) the path from (si, sj) pairs (= or X; ops in forward order) on the
    row lists; returns the new number of list nodes."""
    i, j = si, sj
    for op in ops:
        if op == _EQ or op == _X:
            i += 1
            j += 1
            col[count] = j
            nxt[count] = head[i]
            head[i] = count
            count += 1
        elif op == _I:
            i += 1
        else:
            j += 1
    return count


def band_rows(m: int, n: int, budget: int) -> tuple[int, bool]:
    """(K, keep): rows per band and whether the whole matrix's direction bytes are kept."""
    if skewed_size(m, n) <= budget:
        return FULL_BAND_ROWS, True
    return min(-(-m // LANES), -(-(math.isqrt(8 * m) + 1) // LANES)) * LANES, False


def iter_hits(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int,
              gap_extend: int, fraction: float = 0.0) -> Iterator[RawHit]:
    """The non-intersecting local alignments of q and t that :func:`keeps`, best first (equal
    scores in discovery order): (score, query_start, query_end, target_start, target_end,
    ops as ASCII CIGAR letters). Work for a hit is done only when it is asked for; the first
    one rejected is not traced back."""
    m, n = q.size, t.size
    if m == 0 or n == 0:
        return
    sub = np.ascontiguousarray(sub, dtype=np.int32)
    gap_open, gap_extend = int(gap_open), int(gap_extend)
    K, keep = band_rows(m, n, FULL_MATRIX_BYTES)
    bands = -(-m // K)
    ckH = np.zeros((bands, n + 1), np.int32)
    ckF = np.full((bands, n + 1), NEG, np.int32)
    best = np.zeros((bands, 3), np.int64)
    dirs = np.empty(skewed_size(m if keep else K, n), np.uint8)
    head = np.full(m + 1, -1, np.int64)
    nxt = np.empty(0, np.int64)
    col = np.empty(0, np.int64)
    count = 0
    ops = np.empty(m + n, np.uint8)
    args = (q, t, sub, gap_open, gap_extend, K)
    first = None
    refresh(*args, 0, m, ckH, ckF, best, head, nxt, col, keep, dirs)
    while True:
        b = int(np.argmax(best[:, 0]))  # the first band holding the maximum
        score, ei, ej = (int(v) for v in best[b])
        if not keeps(score, first, fraction):
            return
        first = score if first is None else first
        si, sj, k = trace(*args, ckH, ckF, head, nxt, col, keep, dirs, ei, ej, ops)
        path = ops[:k][::-1].copy()
        yield score, si, ei, sj, ej, path
        if count + k > nxt.size:
            nxt = np.resize(nxt, 2 * (count + k))
            col = np.resize(col, 2 * (count + k))
        count = forbid(path, si, sj, head, nxt, col, count)
        refresh(*args, si // K, ei, ckH, ckF, best, head, nxt, col, keep, dirs)


def keeps(score: int, best: int | None, fraction: float) -> bool:
    """Whether a pair's next hit is reported: positive and at least ``fraction`` times the
    pair's best (``best`` None: it is the first)."""
    return score > 0 and (best is None or score >= fraction * best)


def pair_hits(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
              fraction: float, limit: int | None) -> list[RawHit]:
    """The hits of one pair that :func:`keeps`, at most ``limit`` (None: all)."""
    found: list[RawHit] = []
    for hit in iter_hits(q, t, sub, gap_open, gap_extend, fraction):
        found.append(hit)
        if len(found) == limit:
            break
    return found


def hits(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
         sub: np.ndarray, gap_open: int, gap_extend: int, fraction: float,
         limit: int | None) -> list[list[RawHit]]:
    """:func:`pair_hits` of each (query, target) index pair, pairs spread over the cores
    (the largest first, so no large one is left to run alone at the end)."""

    def one(pair: tuple[int, int]) -> list[RawHit]:
        return pair_hits(qcodes[pair[0]], tcodes[pair[1]], sub, gap_open, gap_extend,
                         fraction, limit)

    rows = [tuple(p) for p in np.asarray(pairs, dtype=np.int64).reshape(-1, 2).tolist()]
    if rows:  # refresh, trace and forbid compile together
        notice([(refresh, None, SECONDS["hits"])])
    if len(rows) <= 1:
        return [one(p) for p in rows]
    order = sorted(range(len(rows)), key=lambda k: -qcodes[rows[k][0]].size
                   * tcodes[rows[k][1]].size)
    found: list[list[RawHit]] = [[] for _ in rows]
    if not getattr(refresh, "overloads", True):
        # the first pair compiles (or loads) the kernels in this thread: compiling in a pool
        # thread took twice the time
        found[order[0]] = one(rows[order[0]])
        order = order[1:]
    with thread_pool(get_num_threads(), "wavedp-hits") as pool:
        for k, hits_of in zip(order, pool.map(one, [rows[k] for k in order]), strict=True):
            found[k] = hits_of
    return found
