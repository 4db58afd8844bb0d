"""Explicit ``<LANES x i32>`` LLVM vector operations for Numba kernels.

Plain Numba loops over small arrays do not vectorize reliably; these intrinsics hand LLVM
vector values directly (two AVX2 registers per 16-lane operation), so carried vectors stay in
registers. Masks are int32 vectors of 0 / -1, as the comparisons return them. Shared by the
striped kernel (``striped.py``) and the wavefront kernels (``wavefront.py``). Numba's
on-disk cache tracks only the file of each jitted function: after editing this module, clear
the ``__pycache__`` of this package (or touch those two files).
"""

from __future__ import annotations

import platform

from llvmlite import binding, ir
from numba import types
from numba.core import config
from numba.extending import intrinsic, models, register_model

from ..common import NEG

#: int32 values per vector (16 = two AVX2 registers per operation)
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


def _mask(values):
    return ir.Constant(ir.VectorType(_I32, len(values)), values)


def _splat_ir(builder, scalar, lanes=LANES):
    vec = ir.VectorType(_I32, lanes)
    one = builder.insert_element(ir.Constant(vec, None), scalar, ir.Constant(_I32, 0))
    return builder.shuffle_vector(one, ir.Constant(vec, None), _mask([0] * lanes))


def _i32(context, builder, value, ty):
    return context.cast(builder, value, ty, types.int32)


def _elem_ptr(context, builder, arrty, arr, idxty, idx):
    data = context.make_array(arrty)(context, builder, arr).data
    return builder.gep(data, [context.cast(builder, idx, idxty, types.intp)])


def _vec_ptr(context, builder, arrty, arr, idxty, idx):
    ptr = _elem_ptr(context, builder, arrty, arr, idxty, idx)
    return builder.bitcast(ptr, _VEC.as_pointer())


def avx2_host() -> bool:
    """Whether the code is built for an x86-64 host with AVX2 (ymm registers for asm,
    ``vpshufb`` on ymm)."""
    try:
        return (platform.machine().lower() in ("x86_64", "amd64") and not config.CPU_NAME
                and bool(binding.get_host_cpu_features().get("avx2")))
    except Exception:  # feature query unavailable: the portable code, same results
        return False


_BARRIER = avx2_host()


def _opaque(builder, v):
    """v unchanged, hidden from LLVM's shuffle combining by an empty inline asm (x86 with
    AVX2; elsewhere v itself: the same values, only the instruction choice may differ).
    ``v`` must fit one ymm register (<= 8 int32)."""
    if not _BARRIER:
        return v
    asm = ir.InlineAsm(ir.FunctionType(v.type, [v.type]), "", "=x,0")
    return builder.call(asm, [v])


def _binary(op):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            return op(builder, args[0], args[1])
        return _vec(a, b), codegen
    return fn


def _compare(pred):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            return builder.sext(builder.icmp_signed(pred, args[0], args[1]), _VEC)
        return _vec(a, b), codegen
    return fn


add = _binary(lambda b, x, y: b.add(x, y))
sub = _binary(lambda b, x, y: b.sub(x, y))
vand = _binary(lambda b, x, y: b.and_(x, y))
vor = _binary(lambda b, x, y: b.or_(x, y))
vmax = _binary(lambda b, x, y: b.select(b.icmp_signed(">", x, y), x, y))
vmin = _binary(lambda b, x, y: b.select(b.icmp_signed("<", x, y), x, y))
#: lane-wise comparisons: -1 where true, 0 where false
eq = _compare("==")
gt = _compare(">")
ge = _compare(">=")


@intrinsic
def load(typingctx, arr, idx):
    """arr[idx : idx + LANES] (int32) as a vector."""
    def codegen(context, builder, sig, args):
        ptr = _vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        return builder.load(ptr, align=4)
    return _vec(arr, idx), codegen


@intrinsic
def store(typingctx, arr, idx, v):
    """arr[idx : idx + LANES] = v (int32)."""
    def codegen(context, builder, sig, args):
        ptr = _vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        builder.store(args[2], ptr, align=4)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


@intrinsic
def store_bytes(typingctx, arr, idx, v):
    """arr[idx : idx + LANES] = the low byte of every lane of v (arr: uint8).

    v is computed in 32-bit lanes and narrowed here, once (left alone, LLVM narrows every
    comparison feeding v separately: several pack sequences instead of one).
    """
    def codegen(context, builder, sig, args):
        half = LANES // 2
        bytes_ty = ir.VectorType(ir.IntType(8), LANES)
        ptr = _elem_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        parts = [_opaque(builder, builder.shuffle_vector(args[2], args[2],
                                                         _mask(list(range(k, k + half)))))
                 for k in (0, half)]
        v = builder.shuffle_vector(parts[0], parts[1], _mask(list(range(LANES))))
        builder.store(builder.trunc(v, bytes_ty), builder.bitcast(ptr, bytes_ty.as_pointer()),
                      align=1)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


#: steps of scores per ``columns8`` call
BLOCK = 8


@intrinsic
def columns8(typingctx, src, starts, offset, dst):
    """dst[k * LANES + r] = src[starts[r] + offset + k] for r < LANES, k < BLOCK (int32).

    LANES rows of BLOCK values, loaded as vectors and transposed in registers (two 8 x 8
    transposes of 24 shuffles each): a gather of BLOCK vectors at once, far cheaper than
    per-vector gathers on AMD Zen.
    """
    def codegen(context, builder, sig, args):
        src_ty, starts_ty, off_ty, dst_ty = sig.args
        half = ir.VectorType(_I32, BLOCK)
        offset = context.cast(builder, args[2], off_ty, types.intp)
        starts = context.make_array(starts_ty)(context, builder, args[1]).data
        rows = []
        for r in range(LANES):
            start = builder.load(builder.gep(starts, [ir.Constant(ir.IntType(64), r)]))
            start = context.cast(builder, start, starts_ty.dtype, types.intp)
            ptr = _elem_ptr(context, builder, src_ty, args[0], types.intp,
                            builder.add(start, offset))
            rows.append(builder.load(builder.bitcast(ptr, half.as_pointer()), align=4))

        def shuf(a, b, mask):
            return builder.shuffle_vector(a, b, _mask(mask))

        lo32, hi32 = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
        lo64, hi64 = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
        lo128, hi128 = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
        for h in range(LANES // BLOCK):
            R = rows[h * BLOCK:(h + 1) * BLOCK]
            t = []
            for k in range(0, BLOCK, 2):
                t += [shuf(R[k], R[k + 1], lo32), shuf(R[k], R[k + 1], hi32)]
            u = []
            for k in (0, 4):
                u += [shuf(t[k], t[k + 2], lo64), shuf(t[k], t[k + 2], hi64),
                      shuf(t[k + 1], t[k + 3], lo64), shuf(t[k + 1], t[k + 3], hi64)]
            cols = [shuf(u[k], u[k + 4], lo128) for k in range(4)]
            cols += [shuf(u[k], u[k + 4], hi128) for k in range(4)]
            for k, col in enumerate(cols):
                ptr = _elem_ptr(context, builder, dst_ty, args[3], types.intp,
                                ir.Constant(ir.IntType(64), k * LANES + h * BLOCK))
                builder.store(col, builder.bitcast(ptr, half.as_pointer()), align=4)
        return context.get_dummy_value()
    return types.none(src, starts, offset, dst), codegen


@intrinsic
def splat(typingctx, x):
    """Every lane = x."""
    def codegen(context, builder, sig, args):
        return _splat_ir(builder, _i32(context, builder, args[0], sig.args[0]))
    return _vec(x), codegen


@intrinsic
def select(typingctx, m, a, b):
    """a where the mask m is set (nonzero), else b."""
    def codegen(context, builder, sig, args):
        zero = ir.Constant(_VEC, [0] * LANES)
        return builder.select(builder.icmp_signed("!=", args[0], zero), args[1], args[2])
    return _vec(m, a, b), codegen


@intrinsic
def shift(typingctx, v, x):
    """Lanes moved up by one; lane 0 = x."""
    def codegen(context, builder, sig, args):
        first = _splat_ir(builder, _i32(context, builder, args[1], sig.args[1]))
        return builder.shuffle_vector(first, args[0],
                                      _mask([0] + [LANES + k for k in range(LANES - 1)]))
    return _vec(v, x), codegen


@intrinsic
def next_rows(typingctx, v, x):
    """[x, v[8..14], v[0..7]]: one row down in the interleaved layout (even rows in lanes
    0-7, odd rows in lanes 8-15), x entering as row 0.

    Lanes 8-15 are just lanes 0-7; lanes 0-7 are one ``vperm2i128`` and one ``vpalignr``
    (the single shuffle would become a slower cross-lane ``vpermd`` and blend on Zen).
    """
    def codegen(context, builder, sig, args):
        half = LANES // 2
        first = _splat_ir(builder, _i32(context, builder, args[1], sig.args[1]), half)
        odd = builder.shuffle_vector(args[0], args[0], _mask(list(range(half, LANES))))
        even = builder.shuffle_vector(args[0], args[0], _mask(list(range(half))))
        # [x x x x, odd 0..3], then per 128-bit block: the block's last lane below, 3 lanes
        t = _opaque(builder, builder.shuffle_vector(first, odd, _mask([4, 5, 6, 7, 8, 9, 10, 11])))
        low = builder.shuffle_vector(t, odd, _mask([3, 8, 9, 10, 7, 12, 13, 14]))
        return builder.shuffle_vector(low, even, _mask(list(range(LANES))))
    return _vec(v, x), codegen


@intrinsic
def store_high(typingctx, arr, idx, v):
    """arr[idx : idx + LANES / 2] = v[LANES / 2 :] (int32)."""
    def codegen(context, builder, sig, args):
        half = ir.VectorType(_I32, LANES // 2)
        ptr = _elem_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])
        high = builder.shuffle_vector(args[2], args[2], _mask(list(range(LANES // 2, LANES))))
        builder.store(high, builder.bitcast(ptr, half.as_pointer()), align=4)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


@intrinsic
def lane_carries(typingctx, x, step):
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
            moved = builder.shuffle_vector(neg, y, _mask(mask))
            moved = builder.sub(moved, _splat_ir(builder, builder.trunc(off, _I32)))
            moved = builder.select(builder.icmp_signed(">", moved, neg), moved, neg)
            y = builder.select(builder.icmp_signed(">", y, moved), y, moved)
            p *= 2
        return y
    return _vec(x, step), codegen


@intrinsic
def any_gt(typingctx, a, b):
    """True when a > b in some lane."""
    def codegen(context, builder, sig, args):
        bits = builder.bitcast(builder.icmp_signed(">", args[0], args[1]), ir.IntType(LANES))
        return builder.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(LANES), 0))
    return types.boolean(a, b), codegen


@intrinsic
def lane(typingctx, v, k):
    """Lane k of v."""
    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], _i32(context, builder, args[1], sig.args[1]))
    return types.int32(v, k), codegen
