"""The compiled kernels of composition-based statistics (``composition.py`` holds the
method): residue counts per sequence, the lambda roots of a query against many
compositions, the margins of adjusted target frequencies, the letter pairs of an
alignment. Numba, nogil: a search runs them for its queries on every core."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def count(residues: np.ndarray, offsets: np.ndarray, index: np.ndarray, lut: np.ndarray,
          size: int, out: np.ndarray) -> None:
    """Row r of ``out`` += the counts of the codes (translated by ``lut``, below ``size``) of
    sequence ``index[r]``."""
    for row in range(index.size):
        k = index[row]
        for i in range(offsets[k], offsets[k + 1]):
            code = lut[residues[i]]
            if code < size:
                out[row, code] += 1


@njit(cache=True, nogil=True)
def roots(v: np.ndarray, freqs: np.ndarray, mix: np.ndarray, start: float, tol: float,
          max_iter: int, integral: bool) -> np.ndarray:
    """``composition.solve_lambda`` of each row, ``W[j] = freqs[j] @ mix`` (``integral``: v is v[0],
    v[0] + 1, ...)."""
    rows = freqs.shape[0]
    letters, size = mix.shape
    out = np.full(rows, np.nan)
    e = np.empty(size)
    w = np.empty(size)
    for j in range(rows):
        for i in range(size):
            w[i] = 0.0
        for b in range(letters):
            f = freqs[j, b]
            if f != 0.0:
                for i in range(size):
                    w[i] += f * mix[b, i]
        mean = 0.0
        top = -1
        for i in range(size):
            mean += w[i] * v[i]
            if v[i] > 0 and w[i] > 0:
                top = i
        if top < 0:
            out[j] = np.inf
            continue
        if mean >= 0:
            continue
        # hi: f(hi) >= w_top exp(hi v_top) - 1 > 0 for the largest positive score with weight
        hi = (math.log(1.0 / w[top]) + 1e-9) / v[top] + 1e-12
        lo = 0.0
        lam = hi if math.isnan(start) else min(start, hi)
        for _ in range(max_iter):
            x = lam
            if integral:
                step = math.exp(x)
                e[0] = math.exp(x * v[0])
                for i in range(1, size):
                    e[i] = e[i - 1] * step
            else:
                for i in range(size):
                    e[i] = math.exp(x * v[i])
            f = -1.0
            df = 0.0
            for i in range(size):
                f += w[i] * e[i]
                df += w[i] * e[i] * v[i]
            if f < 0:
                lo = x
            else:
                hi = x
            new = x - f / df if df != 0.0 else math.nan
            if not (lo < new <= hi):
                new = 0.5 * (lo + hi)
            lam = new
            if abs(new - x) <= tol * new or f == 0.0:
                break
        out[j] = lam
    return out


@njit(cache=True, nogil=True)
def scale(targets: np.ndarray, row: np.ndarray, column: np.ndarray, tol: float,
          max_iter: int, out: np.ndarray) -> None:
    """``out[k]``: ``targets`` scaled to the margins ``row[k]`` and ``column[k]``
    (``composition.scale_margins``)."""
    a, b = targets.shape
    sums = np.empty(max(a, b))
    for k in range(row.shape[0]):
        m = out[k]
        for i in range(a):  # element by element: an array-to-slice assignment compiles
            for j in range(b):  # Numba's shape-mismatch message (about 8 s of a first run)
                m[i, j] = targets[i, j]
        for _ in range(max_iter):
            for i in range(a):
                total = 0.0
                for j in range(b):
                    total += m[i, j]
                f = row[k, i] / total
                for j in range(b):
                    m[i, j] *= f
            for j in range(b):
                sums[j] = 0.0
            for i in range(a):
                for j in range(b):
                    sums[j] += m[i, j]
            for j in range(b):
                sums[j] = column[k, j] / sums[j]
            worst = 0.0
            for i in range(a):
                total = 0.0
                for j in range(b):
                    m[i, j] *= sums[j]
                    total += m[i, j]
                worst = max(worst, abs(total - row[k, i]))
            if worst <= tol:
                break


@njit(cache=True, nogil=True)
def pairs(query: np.ndarray, target: np.ndarray, lengths: np.ndarray, kinds: np.ndarray,
          i: int, j: int, out: np.ndarray) -> None:
    """``out[a, b]`` += each aligned pair of letters a, b of the CIGAR runs (``lengths``,
    ``kinds``: 1 aligned, 2 query only, 3 target only) from query position i, target j."""
    size = out.shape[0]
    for r in range(lengths.size):
        n = lengths[r]
        if kinds[r] == 1:
            for s in range(n):
                a = query[i + s]
                b = target[j + s]
                if a < size and b < size:
                    out[a, b] += 1
            i += n
            j += n
        elif kinds[r] == 2:
            i += n
        else:
            j += n


@njit(cache=True, nogil=True, error_model="numpy")
def profile_shift(table: np.ndarray, p: np.ndarray, lam: float, q: np.ndarray,
                  rows: np.ndarray, letters: np.ndarray, max_iter: int, tol: float) -> float:
    """``ProfileComposition.rescored``'s change of a hit's score: the rows' implied
    probabilities ``p_b exp(lam s_ib)`` (``table``: the hit's rows, float) rescaled until
    they average to ``q`` (iterative proportional fitting, to ``tol`` of each margin or
    ``max_iter`` rounds), summed over the aligned (row, letter) pairs: the adjusted score
    ``ln(Q'_ib / q_b) / lam`` less the profile's ``ln(Q_ib / p_b) / lam`` (NaN where a
    row's probabilities all underflow: the hit keeps its score)."""
    n, size = table.shape
    t = np.empty((n, size))
    for i in range(n):
        total = 0.0
        for a in range(size):
            t[i, a] = p[a] * math.exp(lam * table[i, a])
            total += t[i, a]
        for a in range(size):
            t[i, a] /= total
    r = np.ones(size)
    scaled = np.empty((n, size))
    margin = np.empty(size)
    for _ in range(max_iter):
        margin[:] = 0.0
        for i in range(n):
            total = 0.0
            for a in range(size):
                scaled[i, a] = t[i, a] * r[a]
                total += scaled[i, a]
            for a in range(size):
                scaled[i, a] /= total
                margin[a] += scaled[i, a]
        worst = 0.0
        for a in range(size):
            worst = max(worst, abs(margin[a] / n - q[a]))
        if worst < tol:
            break
        for a in range(size):
            r[a] *= q[a] / max(margin[a] / n, 1e-300)
    shift = 0.0
    for k in range(rows.size):
        i, a = rows[k], letters[k]
        shift += (math.log(max(scaled[i, a], 1e-300) / q[a]) - math.log(t[i, a] / p[a])) / lam
    return shift
