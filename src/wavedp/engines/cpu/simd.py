"""Explicit ``<LANES x i32>`` LLVM vector operations for Numba kernels.

Plain Numba loops over small arrays do not vectorize reliably; these intrinsics hand LLVM
vector values directly (two AVX2 registers per 16-lane operation), so carried vectors stay in
registers. Used by the striped kernel (``striped.py``); the wavefront kernels take theirs,
of either width, from ``simdw.py``. Numba's on-disk cache tracks only the file of each
jitted function: after editing this module, clear the ``__pycache__`` of this package (or
touch ``striped.py``).
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


def opaque(builder, v):
    """v unchanged, hidden from LLVM's shuffle combining by an empty inline asm (x86 with
    AVX2; elsewhere v itself: the same values, only the instruction choice may differ).
    ``v`` must fit one ymm register (<= 8 int32)."""
    if not _BARRIER:
        return v
    asm = ir.InlineAsm(ir.FunctionType(v.type, [v.type]), "", "=x,0")
    return builder.call(asm, [v])


def binary(op):
    """An element-wise vector op of two vectors of one type (``op(builder, x, y)``), which
    it returns (the wavefront kernel's vectors of either width use it too)."""
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            return op(builder, args[0], args[1])
        return a(a, b), codegen
    return fn


add = binary(lambda b, x, y: b.add(x, y))
sub = binary(lambda b, x, y: b.sub(x, y))
vmax = binary(lambda b, x, y: b.select(b.icmp_signed(">", x, y), x, y))
vmin = binary(lambda b, x, y: b.select(b.icmp_signed("<", x, y), x, y))


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
def splat(typingctx, x):
    """Every lane = x."""
    def codegen(context, builder, sig, args):
        return _splat_ir(builder, _i32(context, builder, args[0], sig.args[0]))
    return _vec(x), codegen


@intrinsic
def shift(typingctx, v, x):
    """Lanes moved up by one; lane 0 = x."""
    def codegen(context, builder, sig, args):
        first = _splat_ir(builder, _i32(context, builder, args[1], sig.args[1]))
        return builder.shuffle_vector(first, args[0],
                                      _mask([0] + [LANES + k for k in range(LANES - 1)]))
    return _vec(v, x), codegen


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
