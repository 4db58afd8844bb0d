"""Inter-sequence SIMD database search (SWIPE / Opal technique): score only, exact.

Each of the ``LANES`` = 32 vector lanes holds a *different* database sequence; one vector is
the cell (i, j) of 32 independent DP matrices. Per database column the kernel looks up, for
every letter a of the alphabet, the vector sub[a, residue of lane l] (``lookup``: two
``vpshufb`` and a blend), then sweeps the query rows i = 1..m. H and E of the last column
live interleaved in a buffer of (m + 1) x 2 vectors; H of the row above and F are carried
in registers; two columns are computed per pass, so the buffer is read and written once
per two columns. When a lane's sequence ends it is finished and refilled with the next one
(sequences sorted by length); all lanes advance together between such events, and the first
column after one starts the refilled lanes from the boundary through a masked blend (a
separate sweep, so the plain ones carry no blend). Chunks of the sorted database run in
parallel (``threads.spread``).

Widths are one implementation: the element type (int8 or int16) comes from the buffers, the
arithmetic saturates. Local scores are stored biased by lo (score 0 = lo, as Opal does): the
saturation at lo is the floor at 0 (no max with zero) and the range is 0 .. hi - lo. A lane
that may have saturated is flagged and its pair rescored at the next width; 32 bits is
``score_only`` itself, so results never differ from it. Why the flags suffice (open, ext,
every substitution score and, in global mode, every boundary value are representable:
checked before a width runs):
- saturation at hi: H is a max of terms one of which is the saturated sum, so H == hi
  shows it (E and F never exceed max H - open).
- local: stored E and F equal max(true value, score 0) by induction, wrong only where the
  true value is negative, which never wins against the floor. So best < hi means exact.
- global/semiglobal (unbiased): stored E, F = max(true, lo) likewise; an H stored > lo is
  then exact (its winning term is exact), and an H clamped at lo reads exactly lo. So every
  H inside (lo, hi) means exact: the flag is min H == lo or max H == hi, no extra margin.

Floor (AMD Zen 3, AVX2): per cell-vector (one row, one column, 32 lanes) the local pass
needs 9 vector ALU ops: 1 adds, 3 subs, 5 max (diagonal vs E, vs F, the running best, and
the new E and F); the pair loop adds per row 1 scalar load (the query letter's profile
offset), 2 vector loads and 2 stores for two cell-vectors (the profile loads fold into the
adds). The generated loop is exactly that (36 ALU ops per 2 rows x 2 columns, no spills).
With 4 vector ALU pipes that is >= 2.25 cycles per 32 cells: <= 14 cells per cycle, 35
GCUPS per core at 2.45 GHz; Opal's loop needs 11 ALU ops per cell-vector. Per column the
lookup adds ~5 vector ops per letter and ~6 scalar ops per lane (~10% at m = 144, < 1% for
m > 1000). Prediction: ~25-30 GCUPS on one thread, ~1.2-1.5x Opal. Measured (one thread,
BLOSUM62 11/1, 512-residue database): 25-29 GCUPS against pyopal's 15-17. This machine's two
vCPUs share one core's vector units: two threads add only ~20-30% (pyopal's as well).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ..common import GLOBAL, LOCAL, SEMIGLOBAL, own_rows, query_type
from .compile import SECONDS, Call, notice
from .score import score_only
from .simd16 import LANES, adds, blend, codes, ge_mask, lane, load, lookup, splat, store, subs
from .simd16 import vmax as _max
from .simd16 import vmin as _min
from .threads import spread

W = LANES
#: widths a search can start at ("auto": 8 for local, else 16; 32 = ``score_only`` per pair)
WIDTHS = (8, 16, 32)
_DTYPES = {8: np.int8, 16: np.int16}
_BIG = 1 << 62
#: end cells: a column's running maximum is kept every MARK rows (``_events`` finds the block
#: of a lane's maximum from them, then its row within the block)
MARK = 16


@njit(cache=True, nogil=True, inline="always")
def _edge(k, glob, gap_open, gap_extend):
    if glob and k > 0:
        return -(gap_open + (k - 1) * gap_extend)
    return 0


@njit(cache=True, nogil=True, inline="always")
def _finish(he, o, h, e, f, best, vopen, vext):
    """Store H and the next column's E of one cell-vector; F of the row below."""
    best = _max(best, h)
    store(he, o, h)
    hg = subs(h, vopen)
    store(he, o + W, _max(subs(e, vext), hg))
    return best, _max(subs(f, vext), hg)


@njit(cache=True, nogil=True, inline="always")
def _sweep(he, prof, qoff, m, hd, f, best, low, vopen, vext, local, marks):
    """One database column over all query rows, no lane starting a sequence. Two loops
    (local: the floor at 0 is the saturation at lo, see ``_chunk``; else: track the
    minimum) so neither carries a branch. ``marks``: the running maximum kept every MARK
    rows (end cells; None: not kept, pruned by Numba)."""
    if local:
        for i in range(1, m + 1):
            o = i * 2 * W
            hl = load(he, o)
            e = load(he, o + W)
            h = _max(_max(adds(hd, load(prof, qoff[i - 1])), e), f)
            best, f = _finish(he, o, h, e, f, best, vopen, vext)
            if marks is not None and i % MARK == 0:
                store(marks, (i // MARK - 1) * W, best)
            hd = hl
    else:
        for i in range(1, m + 1):
            o = i * 2 * W
            hl = load(he, o)
            e = load(he, o + W)
            h = _max(_max(adds(hd, load(prof, qoff[i - 1])), e), f)
            low = _min(low, h)
            best, f = _finish(he, o, h, e, f, best, vopen, vext)
            hd = hl
    return best, low


@njit(cache=True, nogil=True, inline="always")
def _step(hd, pv, e, f, best, vopen, vext):
    """H of the first column of a pair (not stored), the second column's E and the F of
    the row below."""
    h = _max(_max(adds(hd, pv), e), f)
    best = _max(best, h)
    hg = subs(h, vopen)
    return h, _max(subs(e, vext), hg), _max(subs(f, vext), hg), best


@njit(cache=True, nogil=True, inline="always")
def _sweep2(he, hc, marks, prof, prof2, qoff, m, hd, f, hd2, f2, best, best2, low, vopen,
            vext, local):
    """Two database columns per pass over the query rows (the buffer is read and written
    once for both). Returns (the first column's running maximum from ``best``, the
    second's from ``best2``, low, H of row m in the first column); ``hc``: the first
    column's H kept there and ``marks`` the two columns' running maxima every MARK rows
    (end cells: the second column's from ``marks.size // 2``), None: not kept (pruned by
    Numba). The loop is
    written twice so that local sweeps carry no minimum (``low`` is for global/semiglobal
    flags)."""
    h = hd
    if local:
        for i in range(1, m + 1):
            o = i * 2 * W
            p = qoff[i - 1]
            hl = load(he, o)
            h, e, f, best = _step(hd, load(prof, p), load(he, o + W), f, best, vopen, vext)
            if hc is not None:
                store(hc, i * W, h)
            h2 = _max(_max(adds(hd2, load(prof2, p)), e), f2)
            best2, f2 = _finish(he, o, h2, e, f2, best2, vopen, vext)
            if marks is not None and i % MARK == 0:
                store(marks, (i // MARK - 1) * W, best)
                store(marks, marks.size // 2 + (i // MARK - 1) * W, best2)
            hd = hl
            hd2 = h
    else:
        for i in range(1, m + 1):
            o = i * 2 * W
            p = qoff[i - 1]
            hl = load(he, o)
            h, e, f, best = _step(hd, load(prof, p), load(he, o + W), f, best, vopen, vext)
            h2 = _max(_max(adds(hd2, load(prof2, p)), e), f2)
            low = _min(_min(low, h), h2)
            best2, f2 = _finish(he, o, h2, e, f2, best2, vopen, vext)
            hd = hl
            hd2 = h
    return best, best2, low, h


@njit(cache=True, nogil=True, inline="always")
def _column(prof, lane_seq, lane_pos, lane_j, residues, cod, table, nletters, glob, hd0, f0,
            lo, gap_open, gap_extend):
    """Advance every live lane by one residue and build the column's profile (prof[a] =
    sub[a, residue of each lane]); global mode also fills row 0 (hd0: H[0][j - 1], f0:
    F[1][j]) per lane."""
    for ln in range(W):
        if lane_seq[ln] >= 0:
            cod[ln] = residues[lane_pos[ln]]
            lane_pos[ln] += 1
            lane_j[ln] += 1
            if glob:
                j = lane_j[ln]
                hd0[ln] = max(lo, _edge(j - 1, glob, gap_open, gap_extend))
                f0[ln] = max(lo, _edge(j, glob, gap_open, gap_extend) - gap_open)
        else:
            cod[ln] = 0
    cv = codes(cod)
    for a in range(nletters):
        store(prof, a * W, lookup(table, a, cv))


@njit(cache=True, nogil=True)
def _sweep_reset(he, prof, qoff, m, hd, f, best, low, vopen, vext, local, glob, rmv,
                 base, gap_open, gap_extend, marks):
    """As ``_sweep``, but lanes set in rmv start a sequence: column 0 is the boundary."""
    for i in range(1, m + 1):
        o = i * 2 * W
        bound = splat(he, base + _edge(i, glob, gap_open, gap_extend))
        hl = blend(rmv, bound, load(he, o))
        e = blend(rmv, subs(bound, vopen), load(he, o + W))
        h = _max(_max(adds(hd, load(prof, qoff[i - 1])), e), f)
        if not local:
            low = _min(low, h)
        best, f = _finish(he, o, h, e, f, best, vopen, vext)
        if marks is not None and i % MARK == 0:
            store(marks, (i // MARK - 1) * W, best)
        hd = hl
    return best, low


@njit(cache=True, nogil=True, inline="always")
def _events(col, rows, back, m, cm, bits, cmax, marks, moff, lane_seq, lane_j, lane_best,
            lane_bi, lane_bj):
    """End cells (local): after a column whose H ``col`` holds (row i's at i * rows; the
    lanes' column is ``back`` before their current one) and whose per-lane maximum is
    ``cm``, each live lane of the mask ``bits`` (its maximum reaches its best so far and is
    above 0: found by vector compares, ``ge_mask``) takes the
    column's first row holding it when it beats the best, or ties it in an earlier row
    (docs/design.md: the maximum H, smallest i, then smallest j; columns come in order).
    The column's running maxima every MARK rows (``marks`` from ``moff``) say in which
    block of rows the search starts."""
    if bits == 0:
        return
    store(cmax, 0, cm)
    while bits:
        ln = trailing_zeros(bits)
        bits &= bits - 1
        c = np.int64(cmax[ln])
        if lane_seq[ln] < 0:
            continue
        stop = m if c > lane_best[ln] else lane_bi[ln]  # a tie counts in an earlier row
        b = 0
        while b < m // MARK and np.int64(marks[moff + b * W + ln]) < c:
            b += 1
        i = b * MARK + 1
        while i < stop and np.int64(col[i * rows + ln]) != c:
            i += 1
        if i < stop or c > lane_best[ln]:
            lane_best[ln] = c
            lane_bi[ln] = i
            lane_bj[ln] = lane_j[ln] - back


@njit(cache=True, nogil=True)
def _chunk(qoff, m, residues, offsets, seqs, table, nletters, gap_open, gap_extend, mode,
           he, hc, marks, prof, prof2, out, flags, ends):
    """Score the query (profile offsets qoff, length m >= 1) against seqs (all non-empty),
    W lanes refilled as sequences end; out[k] = score, flags[k] = 1 where it may have
    saturated. Local mode with ``ends`` (int64 [n, 2], else None): ends[k] = the end cell
    (i, j), (0, 0) for a score of 0, from each column's maximum and H (``_events``; hc holds
    the first column of a pair). With ``ends`` None Numba prunes every branch of it: the
    scan compiles as it did without (a first search's compile was 4 s longer with them)."""
    local = mode == LOCAL
    glob = mode == GLOBAL
    hi = (1 << (8 * he.itemsize - 1)) - 1
    lo = -hi - 1
    # local scores are stored biased by lo (score 0 = lo, as Opal does): the saturation at
    # lo is the floor at 0, and the range covers 0 .. hi - lo
    base = lo if local else 0
    lane_seq = np.full(W, -1, np.int64)
    lane_pos = np.zeros(W, np.int64)
    lane_left = np.zeros(W, np.int64)
    lane_j = np.zeros(W, np.int64)
    rm = np.zeros(W, he.dtype)
    hd0 = np.zeros(W, he.dtype)
    f0 = np.zeros(W, he.dtype)
    cod = np.zeros(W, np.uint8)
    lane_best = np.zeros(W, np.int64)  # track: each lane's best (biased), its end cell
    lane_bi = np.zeros(W, np.int64)
    lane_bj = np.zeros(W, np.int64)
    cmax = np.empty(W, he.dtype)
    vopen = splat(he, gap_open)
    vext = splat(he, gap_extend)
    zero = splat(he, base)
    vlo = splat(he, lo)
    vpos = splat(he, lo + 1)  # local: a score above 0
    vhi = splat(he, hi)
    best = vlo
    low = vhi
    rowbest = zero
    rows = 2 * W
    nxt = 0
    while True:
        any_reset = False
        steps = _BIG
        for ln in range(W):
            if lane_left[ln] == 0:
                if lane_seq[ln] >= 0:
                    k = lane_seq[ln]
                    if local:
                        score = lane(best, ln) - base
                        flag = lane(best, ln) >= hi
                    else:
                        flag = lane(low, ln) <= lo or lane(best, ln) >= hi
                        if glob:
                            score = np.int64(he[m * rows + ln])
                        else:
                            score = max(np.int64(0), lane(rowbest, ln))
                            for i in range(1, m + 1):
                                score = max(score, np.int64(he[i * rows + ln]))
                    out[k] = score
                    flags[k] = flag
                    if ends is not None:
                        ends[k, 0] = lane_bi[ln] if score > 0 else 0
                        ends[k, 1] = lane_bj[ln] if score > 0 else 0
                if nxt < seqs.size:
                    k = seqs[nxt]
                    nxt += 1
                    lane_seq[ln] = k
                    lane_pos[ln] = offsets[k]
                    lane_left[ln] = offsets[k + 1] - offsets[k]
                    lane_j[ln] = 0
                    lane_best[ln] = lo
                    lane_bi[ln] = 0
                    lane_bj[ln] = 0
                    rm[ln] = -1
                    any_reset = True
                else:
                    lane_seq[ln] = -1
                    rm[ln] = 0
            else:
                rm[ln] = 0
            if lane_seq[ln] >= 0:
                steps = min(steps, lane_left[ln])
        if steps == _BIG:
            break
        rmv = load(rm, 0)
        if any_reset:
            best = blend(rmv, vlo, best)
            low = blend(rmv, vhi, low)
            rowbest = blend(rmv, zero, rowbest)
        # the first column of a round may start sequences; then pairs; then a last single
        s = 0
        while s < steps:
            pair = steps - s >= 2 and not (s == 0 and any_reset)
            _column(prof, lane_seq, lane_pos, lane_j, residues, cod, table, nletters, glob,
                    hd0, f0, lo, gap_open, gap_extend)
            hd = load(hd0, 0) if glob else zero
            f = load(f0, 0) if glob else subs(zero, vopen)
            if pair:
                _column(prof2, lane_seq, lane_pos, lane_j, residues, cod, table, nletters,
                        glob, hd0, f0, lo, gap_open, gap_extend)
                hd2 = load(hd0, 0) if glob else zero
                f2 = load(f0, 0) if glob else subs(zero, vopen)
                if ends is not None:  # each column's own maximum, its H kept in hc
                    top, top2, low, h = _sweep2(he, hc, marks, prof, prof2, qoff, m, hd, f,
                                                hd2, f2, vlo, vlo, low, vopen, vext, local)
                    _events(hc, W, 1, m, top, ge_mask(top, _max(best, vpos)), cmax, marks, 0,
                            lane_seq, lane_j, lane_best, lane_bi, lane_bj)
                    best = _max(best, top)
                    _events(he, 2 * W, 0, m, top2, ge_mask(top2, _max(best, vpos)), cmax,
                            marks, marks.size // 2, lane_seq, lane_j, lane_best, lane_bi,
                            lane_bj)
                    best = _max(best, top2)
                else:
                    top, top2, low, h = _sweep2(he, None, None, prof, prof2, qoff, m, hd, f,
                                                hd2, f2, best, best, low, vopen, vext, local)
                    best = _max(top, top2)
                if mode == SEMIGLOBAL:
                    rowbest = _max(rowbest, h)
                s += 2
            else:
                # tracking ends: the column's own maximum, then the running best
                start = best if ends is None else vlo
                if s == 0 and any_reset:
                    top, low = _sweep_reset(he, prof, qoff, m, hd, f, start, low, vopen, vext,
                                            local, glob, rmv, base, gap_open, gap_extend,
                                            marks)
                else:
                    top, low = _sweep(he, prof, qoff, m, hd, f, start, low, vopen, vext, local,
                                      marks)
                if ends is not None:
                    _events(he, 2 * W, 0, m, top, ge_mask(top, _max(best, vpos)), cmax, marks,
                            0, lane_seq, lane_j, lane_best, lane_bi, lane_bj)
                    best = _max(best, top)
                else:
                    best = top
                s += 1
            if mode == SEMIGLOBAL:
                rowbest = _max(rowbest, load(he, m * rows))
        for ln in range(W):
            if lane_seq[ln] >= 0:
                lane_left[ln] -= steps


@njit(cache=True, nogil=True)
def scan_slice(first, step, qoff, m, residues, offsets, seqs, bounds, table, nletters, gap_open,
         gap_extend, mode, proto, out, flags, ends):
    """Chunks first, first + step, ... of seqs (``bounds``), each by ``_chunk`` in buffers
    of proto's dtype (``ends``: see ``_chunk``)."""
    for c in range(first, bounds.size - 1, step):
        he = np.empty((m + 1) * 2 * W, proto.dtype)
        prof = np.empty(max(nletters, 1) * W, proto.dtype)
        prof2 = np.empty(max(nletters, 1) * W, proto.dtype)
        chunk = seqs[bounds[c]:bounds[c + 1]]
        if ends is None:  # the buffers of end cells are None: Numba prunes their code
            _chunk(qoff, m, residues, offsets, chunk, table, nletters, gap_open, gap_extend,
                   mode, he, None, None, prof, prof2, out, flags, None)
        else:
            hc = np.empty((m + 1) * W, proto.dtype)
            marks = np.empty(2 * (m // MARK + 1) * W, proto.dtype)
            _chunk(qoff, m, residues, offsets, chunk, table, nletters, gap_open, gap_extend,
                   mode, he, hc, marks, prof, prof2, out, flags, ends)


@njit(cache=True, nogil=True)
def _run32(first, step, query, residues, offsets, seqs, sub, gap_open, gap_extend, mode, out,
           ends):
    """seqs[first::step] by ``score_only`` (``ends``: see ``_chunk``)."""
    for p in range(first, seqs.size, step):
        k = seqs[p]
        t = residues[offsets[k]:offsets[k + 1]]
        score, ei, ej = score_only(query, t, sub, gap_open, gap_extend, mode)
        out[k] = score
        if ends is not None:
            ends[k, 0] = ei
            ends[k, 1] = ej


def _table(sub: np.ndarray) -> np.ndarray | None:
    """The ``lookup`` table of sub (int8, TABLE_STRIDE bytes per query letter), or None where
    sub has more than 32 letters or scores outside int8."""
    size = sub.shape[1]
    if size > 32 or sub.min() < -127 or sub.max() > 127:
        return None
    padded = np.zeros((sub.shape[0], 32), np.int8)
    padded[:, :size] = sub
    halves = [padded[:, :16], padded[:, :16], padded[:, 16:], padded[:, 16:]]
    return np.ascontiguousarray(np.concatenate(halves, axis=1)).reshape(-1)


def _fits(bits: int, sub: np.ndarray, gap_open: int, gap_extend: int) -> bool:
    hi = (1 << (bits - 1)) - 1
    return max(gap_open, gap_extend, int(np.abs(sub).max())) < hi


def _chunks(seqs: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Boundaries splitting seqs (sorted by length) into runs of about equal residues."""
    threads = numba.get_num_threads()
    count = int(min(max(1, seqs.size // (4 * W)), 8 * threads))
    cum = np.cumsum(lengths[seqs])
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, count) / count)
    return np.unique(np.concatenate(([0], cuts, [seqs.size]))).astype(np.int64)


def _scan_calls(args: tuple, bits: int, mode: int) -> list[Call]:
    """The ``scan_slice`` calls of ``args`` at ``bits`` and, from 8 bits in local mode, at 16 (the
    lanes flagged at 8 bits usually move up): what a first search compiles."""
    widths = (8, 16) if bits == 8 and mode == LOCAL else (bits,)
    return [(scan_slice, (0, 1, *args[:-4], np.zeros(1, _DTYPES[b]), *args[-3:]),
             SECONDS["scan"]) for b in widths]


def _check_width(width: int | str) -> None:
    if width not in ("auto", *WIDTHS):
        raise ValueError(f"width must be 'auto', 8, 16 or 32, got {width!r}")


def scores_many(queries: list[np.ndarray], residues: np.ndarray, offsets: np.ndarray,
                sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                width: int | str = "auto") -> np.ndarray:
    """int32 [len(queries), n]: the optimal score of every query against every database
    sequence k = residues[offsets[k]:offsets[k + 1]], exactly as ``score_only`` scores it.

    width: lane width the search starts at ("auto", 8, 16 or 32); flagged lanes move up.
    """
    _check_width(width)
    residues = np.ascontiguousarray(residues, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    sub = np.ascontiguousarray(sub, dtype=np.int32)
    gap_open, gap_extend, mode = int(gap_open), int(gap_extend), int(mode)
    n = offsets.size - 1
    lengths = np.diff(offsets)
    out = np.zeros((len(queries), n), np.int32)
    order = np.argsort(lengths, kind="stable")
    order = order[lengths[order] > 0]
    table = sub
    for qi, query in enumerate(queries):
        query, sub = own_rows(np.asarray(query), table)
        query = np.ascontiguousarray(query, dtype=query_type(sub))
        m = query.size
        row = out[qi]
        if mode == GLOBAL:  # an empty query or sequence: one gap over the other
            edge = np.where(lengths + m > 0, -(gap_open + (lengths + m - 1) * gap_extend), 0)
            row[(lengths == 0) | (m == 0)] = edge[(lengths == 0) | (m == 0)]
        if m:
            _scan(query, residues, offsets, order, sub, gap_open, gap_extend, mode, width=width,
                  row=row, ends=None)
    return out


def local_ends(query: np.ndarray, residues: np.ndarray, offsets: np.ndarray,
               subjects: np.ndarray | None, sub: np.ndarray, gap_open: int, gap_extend: int,
               width: int | str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """(int32 scores [n], int64 end cells [n, 2]) of the local alignments of ``query``
    against the database sequences ``subjects`` (indices, None: all; the others are left
    0): what ``score_only`` returns for each, tie rules included, from the inter-sequence
    kernel with each lane's end cell tracked (``_chunk``)."""
    _check_width(width)
    residues = np.ascontiguousarray(residues, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    query, sub = own_rows(np.asarray(query), np.ascontiguousarray(sub, dtype=np.int32))
    query = np.ascontiguousarray(query, dtype=query_type(sub))
    n = offsets.size - 1
    out = np.zeros(n, np.int32)
    ends = np.zeros((n, 2), np.int64)
    lengths = np.diff(offsets)
    subjects = (np.arange(n, dtype=np.int64) if subjects is None else
                np.unique(np.asarray(subjects, np.int64)))
    order = subjects[np.argsort(lengths[subjects], kind="stable")]
    order = order[lengths[order] > 0]
    if query.size and order.size:
        _scan(query, residues, offsets, order, np.ascontiguousarray(sub, dtype=np.int32),
              int(gap_open), int(gap_extend), LOCAL, width=width, row=out, ends=ends)
    return out, ends


def _scan(query: np.ndarray, residues: np.ndarray, offsets: np.ndarray, order: np.ndarray,
          sub: np.ndarray, gap_open: int, gap_extend: int, mode: int, *, width: int | str,
          row: np.ndarray, ends: np.ndarray | None) -> None:
    """Scores (into ``row``) and, with ``ends`` of n rows (else None), end cells of
    ``query`` (m >= 1) against the sequences ``order`` (non-empty, by length), from the
    first width up: the lanes flagged at a width move up to the next."""
    n, m = offsets.size - 1, query.size
    lengths = np.diff(offsets)
    first = (8 if mode == LOCAL else 16) if width == "auto" else width
    table = _table(sub)
    pending = order
    for bits in WIDTHS:
        if pending.size == 0:
            break
        if bits < first or (bits < 32 and not _fits(bits, sub, gap_open, gap_extend)):
            continue
        if bits == 32 or table is None:
            args = (query, residues, offsets, pending, sub, gap_open, gap_extend, mode, row,
                    ends)
            notice([(_run32, (0, 1, *args), SECONDS["scan32"])])
            spread(_run32, pending.size, *args)
            break
        hi = (1 << (bits - 1)) - 1
        if mode == GLOBAL:  # boundary values must be representable
            span = np.maximum(lengths[pending], m)
            ok = gap_open + (span - 1) * gap_extend < hi
            later, pending = pending[~ok], pending[ok]
        else:
            later = pending[:0]
        if pending.size:
            flags = np.zeros(n, np.uint8)
            qoff = query.astype(np.int64) * W
            bounds = _chunks(pending, lengths)
            args = (qoff, m, residues, offsets, pending, bounds, table, sub.shape[0],
                    gap_open, gap_extend, mode, np.zeros(1, _DTYPES[bits]), row, flags, ends)
            notice(_scan_calls(args, bits, mode))
            spread(scan_slice, bounds.size - 1, *args)
            pending = pending[flags[pending] != 0]
        pending = np.sort(np.concatenate((later, pending)))
        pending = pending[np.argsort(lengths[pending], kind="stable")]


def scores(query: np.ndarray, residues: np.ndarray, offsets: np.ndarray, sub: np.ndarray,
           gap_open: int, gap_extend: int, mode: int, width: int | str = "auto") -> np.ndarray:
    """int32 [n]: the optimal score of query against every database sequence (see
    ``scores_many``)."""
    return scores_many([query], residues, offsets, sub, gap_open, gap_extend, mode, width)[0]
