"""512-bit LLVM vector operations of any element width, for the wavefront kernels.

A vector is 512 bits of the element type of the array it comes from (``load``) or is made
like (``splat``): 16 lanes of int32 or 32 of int16, two AVX2 registers either way, so one
kernel source (``wavefront.py``) runs 16 or 32 query rows a stripe, its width given by its
arrays' dtype. Arithmetic wraps around (``add``, ``sub``): the kernel keeps its values in
range (``wavefront.fits16``); masks are vectors of 0 / -1 of the same width. The int32 code
is that of ``simd.py``'s ops of the same names. Numba's on-disk cache tracks only the file
of each jitted function: after editing this module, clear this package's ``__pycache__``.
"""

from __future__ import annotations

from llvmlite import binding, ir
from numba import types
from numba.extending import intrinsic

from ..common import NEG
from .simd import avx2_host, binary, opaque
from .simd16 import IntVec, blend, const_mask, lane, load_of, splat_ir, splat_of, vec_ptr, vmax

__all__ = ["BLOCK", "NEG16", "add", "blend", "columns", "eq", "ge", "gt", "lane", "lanes_of",
           "load", "neg_of", "next_rows", "rows_of", "splat", "store_bytes", "store_high",
           "sub", "vand", "vmax", "vor"]

#: bits of a vector
BITS = 512
#: steps of scores per ``columns`` call
BLOCK = 8
#: "minus infinity" of int16 kernels: minus a gap extension it still fits int16, and it stays
#: below every value they hold (``wavefront.fits16``)
NEG16 = -(1 << 14)


def _avx512_host() -> bool:
    """Whether 512-bit vectors are native registers here (AVX-512BW): single permutes
    across the whole vector, no ymm-halves tricks."""
    try:
        features = binding.get_host_cpu_features()
        return avx2_host() and bool(features.get("avx512bw")) and bool(features.get("avx512f"))
    except Exception:
        return False


_ZMM = _avx512_host()


def _width(ty) -> int:
    """Element bits of an array type; 32 for anything else (None: the int32 kernels)."""
    return ty.dtype.bitwidth if isinstance(ty, types.Array) else 32


def _vec(ty) -> IntVec:
    bits = _width(ty)
    return IntVec(bits, BITS // bits)


def _ir(vt: IntVec):
    return ir.VectorType(ir.IntType(vt.bits), vt.lanes)


@intrinsic
def lanes_of(typingctx, like):
    """Lanes of a vector of like's dtype (int16: 32, int32 or None: 16), a constant."""
    lanes = BITS // _width(like)

    def codegen(context, builder, sig, args):
        return ir.Constant(ir.IntType(64), lanes)
    return types.int64(like), codegen


@intrinsic
def neg_of(typingctx, like):
    """The kernels' "minus infinity" at like's width (``NEG`` or ``NEG16``), a constant."""
    value = NEG16 if _width(like) == 16 else NEG

    def codegen(context, builder, sig, args):
        return ir.Constant(ir.IntType(64), value)
    return types.int64(like), codegen


@intrinsic
def rows_of(typingctx, like):
    """The stripe row each lane holds: even rows 0, 2, .. in the low half of the lanes, odd
    rows in the high half (``wavefront.row_of_lane``)."""
    vt = _vec(like)
    half = vt.lanes // 2

    def codegen(context, builder, sig, args):
        return ir.Constant(_ir(vt), [2 * k for k in range(half)] + [2 * k + 1 for k in range(half)])
    return vt(like), codegen


#: every lane = x, clamped to like's dtype; arr[idx : idx + lanes], aligned to its elements
splat = splat_of(_vec)
load = load_of(_vec, aligned=True)


def _compare(pred):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            return builder.sext(builder.icmp_signed(pred, args[0], args[1]), args[0].type)
        return a(a, b), codegen
    return fn


add = binary(lambda b, x, y: b.add(x, y))
sub = binary(lambda b, x, y: b.sub(x, y))
vand = binary(lambda b, x, y: b.and_(x, y))
vor = binary(lambda b, x, y: b.or_(x, y))
#: lane-wise comparisons: -1 where true, 0 where false
eq = _compare("==")
gt = _compare(">")
ge = _compare(">=")


def _halves(builder, v):
    n = v.type.count // 2
    return [builder.shuffle_vector(v, v, const_mask(list(range(k, k + n)))) for k in (0, n)]


@intrinsic
def store_bytes(typingctx, arr, idx, v):
    """arr[idx : idx + lanes] = the low byte of every lane of v (arr: uint8), narrowed once
    (left alone, LLVM narrows every comparison feeding v separately)."""
    def codegen(context, builder, sig, args):
        count = args[2].type.count
        bytes_ty = ir.VectorType(ir.IntType(8), count)
        ptr = vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1], bytes_ty)
        v = args[2]
        if not _ZMM:
            lo, hi = (opaque(builder, h) for h in _halves(builder, v))
            v = builder.shuffle_vector(lo, hi, const_mask(list(range(count))))
        builder.store(builder.trunc(v, bytes_ty), ptr, align=1)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


@intrinsic
def store_high(typingctx, arr, idx, v):
    """arr[idx : idx + lanes / 2] = the high half of v's lanes."""
    def codegen(context, builder, sig, args):
        high = _halves(builder, args[2])[1]
        ptr = vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1], high.type)
        builder.store(high, ptr, align=1)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


@intrinsic
def next_rows(typingctx, v, x):
    """One row down in the interleaved layout (even rows in the low half, odd rows in the
    high half), x entering as row 0: the high half becomes the low half; the low half the
    high half moved up a lane, one ``vperm2i128`` and one ``vpalignr`` (a single shuffle
    would become a slower cross-lane permute and blend on Zen)."""
    def codegen(context, builder, sig, args):
        vty = args[0].type
        half = vty.count // 2
        q = half // 2  # lanes of a 128-bit block
        x = builder.trunc(context.cast(builder, args[1], sig.args[1], types.int64),
                          vty.element)
        first = splat_ir(builder, x, ir.VectorType(vty.element, half))
        if _ZMM:  # one two-source permute (vpermt2w / vpermt2d)
            whole = splat_ir(builder, x, vty)
            return builder.shuffle_vector(args[0], whole, const_mask(
                [2 * half, *range(half, 2 * half - 1), *range(half)]))
        even, odd = _halves(builder, args[0])
        # [x .. x, odd 0 .. q-1], then per 128-bit block: the block's last lane below the
        # odd lanes
        t = opaque(builder, builder.shuffle_vector(first, odd,
                                                    const_mask(list(range(q, q + half)))))
        low = builder.shuffle_vector(t, odd, const_mask(
            [q - 1, *range(half, half + q - 1), 2 * q - 1, *range(half + q, 2 * half - 1)]))
        return builder.shuffle_vector(low, even, const_mask(list(range(2 * half))))
    return v(v, x), codegen


def _unpack(lanes: int, size: int, high: bool) -> list[int]:
    """``punpckl/h`` of two ``lanes``-element ymm vectors, ``size`` elements a unit: within
    each 128-bit block, the low (high) units of a and b interleaved."""
    block = lanes // 2
    out = []
    for base in (0, block):
        start = base + (block // 2 if high else 0)
        for u in range(0, block // 2, size):
            out += [start + u + k for k in range(size)]
            out += [lanes + start + u + k for k in range(size)]
    return out


@intrinsic
def columns(typingctx, src, starts, offset, dst):
    """dst[k * lanes + r] = src[starts[r] + offset + k] for r < lanes, k < BLOCK.

    The lanes' rows of BLOCK values, loaded as vectors and transposed in registers by 8 x 8
    transposes (a gather of BLOCK vectors at once, far cheaper than per-vector gathers on AMD
    Zen): int32, two of 24 shuffles; int16, two pairs of 8 x 8 (lanes r and r + 8 in the two
    128-bit halves of a ymm register), 24 shuffles each pair.
    """
    bits = _width(src)

    def codegen(context, builder, sig, args):
        src_ty, starts_ty, off_ty, dst_ty = sig.args
        elem = ir.IntType(bits)
        row_ty = ir.VectorType(elem, BLOCK)
        lanes = BITS // bits
        offset = context.cast(builder, args[2], off_ty, types.intp)
        base = context.make_array(starts_ty)(context, builder, args[1]).data
        rows = []
        for r in range(lanes):
            start = builder.load(builder.gep(base, [ir.Constant(ir.IntType(64), r)]))
            start = context.cast(builder, start, starts_ty.dtype, types.intp)
            ptr = vec_ptr(context, builder, src_ty, args[0], types.intp, builder.add(start, offset),
                       row_ty)
            rows.append(builder.load(ptr, align=bits // 8))

        def shuf(a, b, mask):
            return builder.shuffle_vector(a, b, const_mask(mask))

        def put(vec, at):
            ptr = vec_ptr(context, builder, dst_ty, args[3], types.intp,
                       ir.Constant(ir.IntType(64), at), vec.type)
            builder.store(vec, ptr, align=bits // 8)

        if bits == 32:
            lo32, hi32 = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
            lo64, hi64 = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]
            lo128, hi128 = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]
            for h in range(lanes // BLOCK):
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
                    put(col, k * lanes + h * BLOCK)
            return context.get_dummy_value()
        n = 2 * BLOCK  # elements of a ymm register
        for h in range(0, lanes, n):  # lanes h .. h + 7 low, h + 8 .. h + 15 high
            R = [shuf(rows[h + r], rows[h + r + BLOCK], list(range(n))) for r in range(BLOCK)]
            t = []
            for k in range(0, BLOCK, 2):
                t += [shuf(R[k], R[k + 1], _unpack(n, 1, False)),
                      shuf(R[k], R[k + 1], _unpack(n, 1, True))]
            u = []
            for k in (0, 4):
                u += [shuf(t[k], t[k + 2], _unpack(n, 2, False)),
                      shuf(t[k], t[k + 2], _unpack(n, 2, True)),
                      shuf(t[k + 1], t[k + 3], _unpack(n, 2, False)),
                      shuf(t[k + 1], t[k + 3], _unpack(n, 2, True))]
            for k in range(4):
                put(shuf(u[k], u[k + 4], _unpack(n, 4, False)), 2 * k * lanes + h)
                put(shuf(u[k], u[k + 4], _unpack(n, 4, True)), (2 * k + 1) * lanes + h)
        return context.get_dummy_value()
    return types.none(src, starts, offset, dst), codegen


select = blend
