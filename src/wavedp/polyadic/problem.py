"""Validation and encoding of a polyadic problem, once, above the engines.

Engines see one min-plus problem in *gap coordinates*: position ``a`` lies before item ``a``,
and the interval of items ``i..j`` is the table cell ``T[i][j + 1]``. Then
``T[a][c] = min_{a < b < c} T[a][b] + T[b][c] + (D[a] * D[c]) * D[b]``, which blocks
cleanly: the split point ``b`` of a cell of block ``(A, C)`` lies in block ``A``, in block
``C`` or in a block strictly between them (the far part, a rectangular product of finished
blocks). The product weight depends on the split point, so it is added to every term, far
and near. A table weight ``W[a][c]`` and the pairing term ``p(a, c - 1) + T[a + 1][c - 1]``
do not: they are added once, when the cell is finalized, after every split (the pairing
term then replaces the split optimum only when strictly better, and records k = j). Its
interval ``T[a + 1][c - 1]`` lies in block (A, C), (A + 1, C), (A, C - 1) or
(A + 1, C - 1): an earlier cell of the same block in its finalization order, or a block
finished in an earlier phase; ``T[x][x] = 0`` is the empty interval. A max problem is handed
over negated (max-plus is min-plus on negated values, exactly, ties included) and the table
is negated back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

OPTS = ("min", "max")
SCHEDULES = ("iterative", "divide-and-conquer")
DTYPES = tuple(np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64))
#: "worse than any value": accumulators start here and a forbidden pair scores it
BIG = {np.dtype(np.int32): 1 << 30, np.dtype(np.int64): 1 << 62}
#: every partial sum of an int32 (int64) problem stays inside +-LIMIT, so BIG cannot overflow
LIMIT = {np.dtype(np.int32): (1 << 29) - 1, np.dtype(np.int64): (1 << 61) - 1}
#: int32 problems within this bound run the GPU's packed product: value * 32 + 5 tie bits
PACK_LIMIT = (1 << 26) - 1
#: the K entry of a cell whose far accumulator holds nothing yet
NO_K = np.iinfo(np.int32).max


@dataclass(frozen=True)
class Pairs:
    """A pairing term by residue class: ``p(i, j) = table[codes[i], codes[j]]``, allowed when
    ``j - i > min_loop``; entries that are masked or the opt's worse infinity (``inf`` for
    min, ``-inf`` for max) forbid the pair."""

    codes: np.ndarray
    table: np.ndarray
    min_loop: int = 0


@dataclass
class Problem:
    """One encoded min-plus problem: padded to ``size`` positions, a multiple of ``block``."""

    n: int
    block: int
    size: int
    dtype: np.dtype
    sign: int  # 1: min; -1: max (every value below is negated)
    bound: float  # no partial sum exceeds this in magnitude
    diag: np.ndarray  # (size,) leaves: T[a][a + 1]
    wkind: int  # 0 none, 1 product, 2 table
    dvec: np.ndarray  # (size,) product weight D (zeros past n)
    wtab: np.ndarray  # (size, size) table weight in gap coordinates, or (1, 1)
    paired: bool
    codes: np.ndarray  # (size,) int32 residue classes (na - 1 past n: never pairs)
    ptab: np.ndarray  # (na * na,) pairing scores, BIG where forbidden
    na: int
    min_loop: int

    @property
    def blocks(self) -> int:
        return self.size // self.block

    @property
    def big(self):
        """The engines' "worse than anything" of this dtype, as a scalar of it."""
        return self.dtype.type(BIG.get(self.dtype, math.inf))

    @property
    def pack(self) -> bool:
        return self.dtype == np.int32 and self.bound <= PACK_LIMIT

    def table_bytes(self) -> int:
        """Memory of the value and choice tables (and a table weight) an engine allocates."""
        cells = self.size * self.size
        return cells * (self.dtype.itemsize + 4) + self.wtab.nbytes


def _numeric(value, what: str, ndim: int) -> np.ndarray:
    if isinstance(value, np.ma.MaskedArray):
        value = value.filled(0)
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be a numeric array ({exc})") from None
    if arr.dtype.kind not in "biuf":
        raise InputError(f"{what} must be numeric, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise InputError(f"{what} must have {ndim} dimension(s), got shape {arr.shape}")
    return arr.astype(np.int64) if arr.dtype.kind in "bu" else arr


def _finite(arr: np.ndarray, what: str) -> None:
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))[0]
        where = np.unravel_index(bad, arr.shape)
        raise InputError(f"{what} must be finite, got {arr.ravel()[bad]} at index "
                         f"{tuple(int(x) for x in where)}")


def _weight(weight, n: int) -> tuple[int, np.ndarray | None]:
    """(kind, values): kind 0 none, 1 product (d of length n + 1), 2 table (n x n)."""
    if weight is None:
        return 0, None
    if isinstance(weight, tuple):
        if len(weight) != 2 or weight[0] != "product":
            raise InputError("weight must be None, ('product', d) or an n x n table")
        d = _numeric(weight[1], "the product weight d", 1)
        if d.size != n + 1:
            raise InputError(f"the product weight d needs n + 1 = {n + 1} values, got {d.size}")
        _finite(d, "the product weight d")
        return 1, d
    w = _numeric(weight, "the weight table", 2)
    if w.shape != (n, n):
        raise InputError(f"the weight table must be {n} x {n}, got {w.shape}")
    _finite(w, "the weight table")
    return 2, w


def pairing(pair, n: int, opt: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """(codes, table values, allowed mask, min_loop) of a pairing term, validated; None when
    there is none. A dense n x n table is read as classes ``arange(n)``."""
    if pair is None:
        return None
    if not isinstance(pair, Pairs):
        if np.shape(pair) != (n, n):
            raise InputError(f"the pairing table must be {n} x {n}, got shape {np.shape(pair)}")
        pair = Pairs(np.arange(n), pair, 0)
    codes = _numeric(pair.codes, "the pairing codes", 1)
    if codes.dtype.kind != "i" or codes.size != n:
        raise InputError(f"the pairing codes must be {n} integers")
    table = pair.table
    mask = np.ma.getmaskarray(table) if isinstance(table, np.ma.MaskedArray) else None
    values = _numeric(table, "the pairing table", 2)
    if values.shape[0] != values.shape[1] or values.shape[0] == 0:
        raise InputError(f"the pairing table must be square, got shape {values.shape}")
    if codes.size and (codes.min() < 0 or codes.max() >= values.shape[0]):
        raise InputError(f"pairing codes must lie in 0..{values.shape[0] - 1}")
    allowed = np.ones(values.shape, bool) if mask is None else ~mask
    if values.dtype.kind == "f":
        worse = math.inf if opt == "min" else -math.inf
        if np.any(np.isnan(values)) or np.any(allowed & np.isinf(values) & (values != worse)):
            raise InputError(f"pairing scores must be finite or {worse} (forbidden) for "
                             f"opt={opt!r}")
        allowed &= values != worse
        values = np.where(allowed, values, 0)
    if not isinstance(pair.min_loop, (int, np.integer)) or pair.min_loop < 0:
        raise InputError(f"min_loop must be a non-negative integer, got {pair.min_loop!r}")
    return codes, values, allowed, int(pair.min_loop)


def _maxabs(arr: np.ndarray | None, exact: bool):
    if arr is None or arr.size == 0:
        return 0
    top = np.max(np.abs(arr))
    return int(top) if exact else float(top)


def _dtype(dtype) -> np.dtype | None:
    if dtype is None:
        return None
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in DTYPES:
        raise InputError(f"dtype must be one of int32, int64, float32, float64; got {dtype!r}")
    return dt


def _choose_dtype(want: np.dtype | None, exact: bool, bound) -> np.dtype:
    """The requested dtype, checked against the bound, or int32/int64/float64 by the data."""
    if want is None and not exact:
        want = np.dtype(np.float64)
    if want is None:
        for dt in DTYPES[:2]:
            if bound <= LIMIT[dt]:
                return dt
        raise InputError(f"the values can reach {bound:.3e} in magnitude: beyond int64 "
                         f"(limit {LIMIT[DTYPES[1]]:.3e})")
    if want.kind == "i" and bound > LIMIT[want]:
        raise InputError(f"the values can reach {bound:.3e} in magnitude: beyond {want} "
                         f"(limit {LIMIT[want]:.3e}); use int64 or a float dtype")
    if want.kind == "f" and float(bound) * 4 > float(np.finfo(want).max):
        raise InputError(f"the values can reach {float(bound):.3e} in magnitude: beyond {want}")
    return want


def _integral(arr: np.ndarray | None) -> bool:
    if arr is None or arr.dtype.kind == "i":
        return True
    return bool(np.all(np.abs(arr) < 2.0**62) and np.all(arr == np.round(arr)))


def _exact(arr: np.ndarray | None) -> np.ndarray | None:
    return None if arr is None else arr.astype(np.int64) if arr.dtype.kind == "f" else arr


def encode(diagonal, *, opt: str, weight, pair, dtype, block: int) -> Problem:
    """Validate every input once and build the engines' problem (InputError on bad input)."""
    if opt not in OPTS:
        raise InputError(f"opt must be 'min' or 'max', got {opt!r}")
    if (not isinstance(block, (int, np.integer)) or isinstance(block, bool)
            or block % 32 or not 32 <= block <= 256):
        raise InputError(f"block must be a multiple of 32 from 32 to 256, got {block!r}")
    diag = _numeric(diagonal, "the diagonal", 1)
    n = diag.size
    if n == 0:
        raise InputError("the diagonal is empty (n must be at least 1)")
    _finite(diag, "the diagonal")
    wkind, wval = _weight(weight, n)
    pairs = pairing(pair, n, opt)
    pval = None if pairs is None else pairs[1][pairs[2]]
    want = _dtype(dtype)
    if want is None:  # integers in, integers out (a float pairing table may hold -inf)
        exact = all(x is None or x.dtype.kind == "i" for x in (diag, wval)) and _integral(pval)
    else:
        exact = want.kind == "i"
        if exact and not all(_integral(x) for x in (diag, wval, pval)):
            raise InputError(f"dtype {want} needs whole-number inputs")
    if exact:
        diag, wval, pval = _exact(diag), _exact(wval), _exact(pval)
    maxd, maxp = _maxabs(diag, exact), _maxabs(pval, exact)
    maxw = _maxabs(wval, exact) ** (3 if wkind == 1 else 1)
    bound = n * maxd + (n // 2) * maxp + (n - 1) * maxw
    dt = _choose_dtype(want, exact, bound)
    sign = 1 if opt == "min" else -1
    size = -(-(n + 1) // block) * block
    big = BIG.get(dt, math.inf)

    def padded(values):
        out = np.zeros(size, dt)
        out[:values.size] = sign * values.astype(dt)
        return out

    dvec = padded(wval if wkind == 1 else np.zeros(0, dt))
    wtab = np.zeros((1, 1), dt)
    if wkind == 2:
        wtab = np.zeros((size, size), dt)
        wtab[:n, 1:n + 1] = sign * wval.astype(dt)
    codes = np.zeros(size, np.int32)
    ptab = np.full(1, big, dt)
    na, min_loop = 1, 0
    if pairs is not None:
        pcodes, values, allowed, min_loop = pairs
        na = values.shape[0] + 1  # the last class is padding: it pairs with nothing
        codes[:] = na - 1
        codes[:n] = pcodes
        table = np.full((na, na), big, dt)
        scores = _exact(values) if exact else values
        table[:-1, :-1] = np.where(allowed, sign * scores.astype(dt), big)
        ptab = table.ravel()
    return Problem(n=n, block=block, size=size, dtype=dt, sign=sign, bound=float(bound),
                   diag=padded(diag), wkind=wkind, dvec=dvec, wtab=wtab,
                   paired=pairs is not None, codes=codes, ptab=ptab, na=na,
                   min_loop=min_loop)

