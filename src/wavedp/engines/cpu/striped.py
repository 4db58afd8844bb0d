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
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, models, register_model

from ..common import GLOBAL, LOCAL, NEG

#: int32 values per segment (16 = two AVX2 registers per vector operation)
LANES = 16

_I32 = ir.IntType(32)
_VEC = ir.VectorType(_I32, LANES)


class _Int32Vec(types.Type):
    def __init__(self):
        super().__init__(name=f"Int32x{LANES}")


_vec = _Int32Vec()


@register_model(_Int32Vec)
class _Int32VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _VEC)


def _splat_ir(builder, scalar):
    one = builder.insert_element(ir.Constant(_VEC, None), scalar, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(_VEC, None),
                                  ir.Constant(ir.VectorType(_I32, LANES), [0] * LANES))


def _i32(context, builder, value, ty):
    return context.cast(builder, value, ty, types.int32)


def _vec_ptr(context, builder, arrty, arr, idxty, idx):
    data = context.make_array(arrty)(context, builder, arr).data
    ptr = builder.gep(data, [context.cast(builder, idx, idxty, types.intp)])
    return builder.bitcast(ptr, _VEC.as_pointer())


@intrinsic
def _load(typingctx, arr, idx):
    """arr[idx : idx + LANES] as a vector."""
    def codegen(context, builder, sig, args):
        ptr = _vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        return builder.load(ptr, align=4)
    return _vec(arr, idx), codegen


@intrinsic
def _store(typingctx, arr, idx, v):
    """arr[idx : idx + LANES] = v."""
    def codegen(context, builder, sig, args):
        ptr = _vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        builder.store(args[2], ptr, align=4)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


@intrinsic
def _splat(typingctx, x):
    """Every lane = x."""
    def codegen(context, builder, sig, args):
        return _splat_ir(builder, _i32(context, builder, args[0], sig.args[0]))
    return _vec(x), codegen


@intrinsic
def _add(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.add(args[0], args[1])
    return _vec(a, b), codegen


@intrinsic
def _sub(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.sub(args[0], args[1])
    return _vec(a, b), codegen


@intrinsic
def _max(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.select(builder.icmp_signed(">", args[0], args[1]), args[0], args[1])
    return _vec(a, b), codegen


@intrinsic
def _min(typingctx, a, b):
    def codegen(context, builder, sig, args):
        return builder.select(builder.icmp_signed("<", args[0], args[1]), args[0], args[1])
    return _vec(a, b), codegen


@intrinsic
def _lane_carries(typingctx, x, step):
    """Lane-wise prefix: y[l] = max over k <= l of x[k] - (l - k) * step (step <= 2^30).

    Offsets are capped at 2^30 and results floored at NEG, so nothing overflows; a capped
    term is at most -2^29 and so can never matter next to a real score.
    """
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        step = context.cast(builder, args[1], sig.args[1], types.int64)
        cap = ir.Constant(i64, 1 << 30)
        neg = _splat_ir(builder, ir.Constant(_I32, NEG))
        y = args[0]
        p = 1
        while p < LANES:
            off = builder.mul(step, ir.Constant(i64, p))
            off = builder.select(builder.icmp_signed(">", off, cap), cap, off)
            mask = [k for k in range(p)] + [LANES + k for k in range(LANES - p)]
            moved = builder.shuffle_vector(neg, y, ir.Constant(ir.VectorType(_I32, LANES), mask))
            moved = builder.sub(moved, _splat_ir(builder, builder.trunc(off, _I32)))
            moved = builder.select(builder.icmp_signed(">", moved, neg), moved, neg)
            y = builder.select(builder.icmp_signed(">", y, moved), y, moved)
            p *= 2
        return y
    return _vec(x, step), codegen


@intrinsic
def _shift(typingctx, v, x):
    """Lanes moved up by one; lane 0 = x."""
    def codegen(context, builder, sig, args):
        first = _splat_ir(builder, _i32(context, builder, args[1], sig.args[1]))
        mask = ir.Constant(ir.VectorType(_I32, LANES), [0] + [LANES + k for k in range(LANES - 1)])
        return builder.shuffle_vector(first, args[0], mask)
    return _vec(v, x), codegen


@intrinsic
def _any_gt(typingctx, a, b):
    """True when a > b in some lane."""
    def codegen(context, builder, sig, args):
        bits = builder.bitcast(builder.icmp_signed(">", args[0], args[1]), ir.IntType(LANES))
        return builder.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(LANES), 0))
    return types.boolean(a, b), codegen


@intrinsic
def _lane(typingctx, v, k):
    """Lane k of v."""
    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], _i32(context, builder, args[1], sig.args[1]))
    return types.int32(v, k), codegen


@njit(cache=True, nogil=True, inline="always")
def _hmax(v):
    best = _lane(v, 0)
    for k in range(1, LANES):
        best = max(best, _lane(v, k))
    return best


@njit(cache=True, nogil=True, inline="always")
def _edge(k, mode, gap_open, gap_extend):
    """H on row 0 or column 0 at distance k from the origin."""
    if mode == GLOBAL and k > 0:
        return -(gap_open + (k - 1) * gap_extend)
    return 0


@njit(cache=True, nogil=True)
def _profile(q, sub, seg):
    """Striped query profile, flat int32 [A, seg, LANES]; padding rows score NEG."""
    m = q.size
    prof = np.empty(sub.shape[0] * seg * LANES, np.int32)
    for c in range(sub.shape[0]):
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
    """(score, end_i, end_j) of the best alignment under DESIGN.md's recurrence and tie rules.

    q, t: uint8 codes; sub: int32 [A, A]; mode: LOCAL, GLOBAL or SEMIGLOBAL.
    """
    m = q.size
    n = t.size
    if m == 0 or n == 0:
        if mode == GLOBAL:
            return _edge(m + n, mode, gap_open, gap_extend), m, n
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
            h0 = _edge(lane * seg + s + 1, mode, gap_open, gap_extend)
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
        top = _edge(j, mode, gap_open, gap_extend)
        vh = _shift(_load(h, (seg - 1) * LANES), _edge(j - 1, mode, gap_open, gap_extend))
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
