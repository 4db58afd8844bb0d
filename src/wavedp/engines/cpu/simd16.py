"""Saturating ``<LANES x i8>`` / ``<LANES x i16>`` LLVM vector operations for Numba kernels.

The element width is a parameter: every vector takes its type from the array it is loaded
from or splat like (int8 or int16 buffers), so one kernel source serves both widths
(``intersequence.py``). ``LANES`` = 32: one AVX2 register of 8-bit lanes, two of 16-bit
lanes. Additions and subtractions saturate (``llvm.sadd.sat`` / ``llvm.ssub.sat``:
``vpaddsb/w``, ``vpsubsb/w``). ``lookup`` is a 32-entry table lookup per lane (two
``vpshufb`` and a blend on x86 with AVX2; a scalar gather elsewhere, same values).
Numba's on-disk cache tracks only the file of each jitted function: after editing this
module, clear the ``__pycache__`` of this package (or touch ``intersequence.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

from .simd import avx2_host

#: database sequences per vector (lanes)
LANES = 32
#: bytes per letter in a ``lookup`` table: [sub 0..15] x 2, [sub 16..31] x 2
TABLE_STRIDE = 64


class IntVec(types.Type):
    """An LLVM ``<lanes x i{bits}>`` value."""

    def __init__(self, bits: int, lanes: int):
        self.bits = bits
        self.lanes = lanes
        super().__init__(name=f"Int{bits}x{lanes}")


@register_model(IntVec)
class _IntVecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.VectorType(ir.IntType(fe_type.bits), fe_type.lanes))


def _vec_of(arrty) -> IntVec:
    return IntVec(arrty.dtype.bitwidth, LANES)


def _ir(vt: IntVec):
    return ir.VectorType(ir.IntType(vt.bits), vt.lanes)


def const_mask(values):
    """A shuffle mask (an LLVM <n x i32> constant) of ``values``."""
    return ir.Constant(ir.VectorType(ir.IntType(32), len(values)), values)


_PSHUFB = avx2_host()


def vec_ptr(context, builder, arrty, arr, idxty, idx, elem):
    """A pointer of type ``elem`` (an LLVM vector type) to ``arr[idx]``."""
    data = context.make_array(arrty)(context, builder, arr).data
    ptr = builder.gep(data, [context.cast(builder, idx, idxty, types.intp)])
    return builder.bitcast(ptr, elem.as_pointer())


def splat_ir(builder, scalar, vty):
    """The LLVM vector of type ``vty`` with ``scalar`` in every lane."""
    one = builder.insert_element(ir.Constant(vty, None), scalar, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(vty, None), const_mask([0] * vty.count))


def _sat(name):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            vty = args[0].type
            fnty = ir.FunctionType(vty, [vty, vty])
            f = cgutils.get_or_insert_function(
                builder.module, fnty, f"llvm.{name}.sat.v{vty.count}i{vty.element.width}")
            return builder.call(f, [args[0], args[1]])
        return a(a, b), codegen
    return fn


def _pick(pred):
    @intrinsic
    def fn(typingctx, a, b):
        def codegen(context, builder, sig, args):
            x, y = args
            return builder.select(builder.icmp_signed(pred, x, y), x, y)
        return a(a, b), codegen
    return fn


#: saturating lane-wise a + b and a - b
adds = _sat("sadd")
subs = _sat("ssub")
vmax = _pick(">")
vmin = _pick("<")


def splat_of(vec_of: Callable[[types.Type], IntVec]):
    """``splat(like, x)``: every lane = x, clamped to the range of like's dtype, in vectors
    of ``vec_of(like)``'s type (each module's own lane count)."""
    @intrinsic
    def splat(typingctx, like, x):
        vt = vec_of(like)

        def codegen(context, builder, sig, args):
            i64 = ir.IntType(64)
            v = context.cast(builder, args[1], sig.args[1], types.int64)
            hi = ir.Constant(i64, (1 << (vt.bits - 1)) - 1)
            lo = ir.Constant(i64, -(1 << (vt.bits - 1)))
            v = builder.select(builder.icmp_signed(">", v, hi), hi, v)
            v = builder.select(builder.icmp_signed("<", v, lo), lo, v)
            return splat_ir(builder, builder.trunc(v, ir.IntType(vt.bits)), _ir(vt))
        return vt(like, x), codegen
    return splat


def load_of(vec_of: Callable[[types.Type], IntVec], aligned: bool):
    """``load(arr, idx)``: arr[idx : idx + lanes] as a vector of ``vec_of(arr)``'s type
    (``aligned``: the address a multiple of the element size, else of one byte)."""
    @intrinsic
    def load(typingctx, arr, idx):
        vt = vec_of(arr)

        def codegen(context, builder, sig, args):
            ptr = vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1], _ir(vt))
            return builder.load(ptr, align=vt.bits // 8 if aligned else 1)
        return vt(arr, idx), codegen
    return load


#: every lane = x, clamped to like's dtype (int8/int16); arr[idx : idx + LANES] (int8/int16)
splat = splat_of(_vec_of)
load = load_of(_vec_of, aligned=False)


@intrinsic
def store(typingctx, arr, idx, v):
    """arr[idx : idx + LANES] = v, sign-extended to arr's dtype when v is narrower."""
    def codegen(context, builder, sig, args):
        vt = _vec_of(sig.args[0])
        value = args[2]
        if v.bits < vt.bits:
            value = builder.sext(value, _ir(vt))
        ptr = vec_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1], _ir(vt))
        builder.store(value, ptr, align=1)
        return context.get_dummy_value()
    return types.none(arr, idx, v), codegen


@intrinsic
def blend(typingctx, m, a, b):
    """a where the mask vector m is nonzero, else b."""
    def codegen(context, builder, sig, args):
        zero = ir.Constant(args[0].type, None)
        return builder.select(builder.icmp_signed("!=", args[0], zero), args[1], args[2])
    return a(m, a, b), codegen


@intrinsic
def ge_mask(typingctx, a, b):
    """int64 whose bit l is set where lane l of a is at least lane l of b (a compare and a
    ``vpmovmskb``)."""
    def codegen(context, builder, sig, args):
        ge = builder.icmp_signed(">=", args[0], args[1])
        bits = builder.bitcast(ge, ir.IntType(args[0].type.count))
        return builder.zext(bits, ir.IntType(64))
    return types.int64(a, b), codegen


@intrinsic
def lane(typingctx, v, k):
    """Lane k of v as int64."""
    def codegen(context, builder, sig, args):
        k = context.cast(builder, args[1], sig.args[1], types.int32)
        return builder.sext(builder.extract_element(args[0], k), ir.IntType(64))
    return types.int64(v, k), codegen


@intrinsic
def codes(typingctx, arr):
    """arr[0 : LANES] (uint8 or int8 codes, each < 32) as an int8 vector."""
    vt = IntVec(8, LANES)

    def codegen(context, builder, sig, args):
        ptr = vec_ptr(context, builder, sig.args[0], args[0], types.intp,
                   ir.Constant(ir.IntType(64), 0), _ir(vt))
        return builder.load(ptr, align=1)
    return vt(arr), codegen


@intrinsic
def lookup(typingctx, table, a, c):
    """int8 vector: lane l = the score of letter a against code c[l] (c: ``codes``).

    table (int8, ``TABLE_STRIDE`` bytes per letter a): sub[a, 0:16] twice, then
    sub[a, 16:32] twice — the layout two ``vpshufb`` (one per 16-entry half) index directly.
    """
    def codegen(context, builder, sig, args):
        i8v = _ir(IntVec(8, LANES))
        i64 = ir.IntType(64)
        base = builder.mul(context.cast(builder, args[1], sig.args[1], types.int64),
                           ir.Constant(i64, TABLE_STRIDE))
        idx = args[2]
        if _PSHUFB and LANES == 32:
            fnty = ir.FunctionType(i8v, [i8v, i8v])
            shuf = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.avx2.pshuf.b")
            lo = builder.load(vec_ptr(context, builder, sig.args[0], args[0], types.int64, base,
                                   i8v), align=1)
            hi = builder.load(vec_ptr(context, builder, sig.args[0], args[0], types.int64,
                                   builder.add(base, ir.Constant(i64, 32)), i8v), align=1)
            high = builder.icmp_signed(">", idx, splat_ir(builder, ir.Constant(ir.IntType(8), 15),
                                                           i8v))
            return builder.select(high, builder.call(shuf, [hi, idx]),
                                  builder.call(shuf, [lo, idx]))
        data = context.make_array(sig.args[0])(context, builder, args[0]).data
        out = ir.Constant(i8v, None)
        for k in range(LANES):
            code = builder.zext(builder.extract_element(idx, ir.Constant(ir.IntType(32), k)), i64)
            # codes >= 16 live 16 bytes further on (after the duplicated low half)
            shift = builder.select(builder.icmp_unsigned(">", code, ir.Constant(i64, 15)),
                                   ir.Constant(i64, 16), ir.Constant(i64, 0))
            pos = builder.add(builder.add(base, code), shift)
            out = builder.insert_element(out, builder.load(builder.gep(data, [pos])),
                                         ir.Constant(ir.IntType(32), k))
        return out
    return IntVec(8, LANES)(table, a, c), codegen
