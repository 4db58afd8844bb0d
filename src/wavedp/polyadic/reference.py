"""The plain O(n^3) oracle of docs/design.md's recurrence, in table coordinates, for tiny inputs.

``m[i][j] = opt_{i<=k<j} m[i][k] + m[k+1][j] + w(i, k, j)``, then ``+ W[i][j]`` for a table
weight, then the pairing term ``p(i, j) + m[i+1][j-1]`` (the empty interval counting 0) when
it is strictly better. Ties keep the smallest k; the pairing term records k = j; leaves
and cells below the diagonal record -1 (their values: the diagonal, and 0).
Arithmetic is done in ``dtype``, in the order written: ``(m[i][k] + m[k+1][j]) +
(d[i] * d[j+1]) * d[k+1]``.
"""

from __future__ import annotations

import numpy as np

from .problem import pairing


def solve(diagonal, *, opt: str = "min", weight=None, pair=None,
          dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """(table, choice) of the recurrence, computed cell by cell."""
    dt = np.dtype(dtype)
    diag = np.asarray(diagonal).astype(dt)
    n = diag.size
    better = (lambda x, y: x < y) if opt == "min" else (lambda x, y: x > y)
    product = isinstance(weight, tuple)
    d = np.asarray(weight[1]).astype(dt) if product else None
    table = None if weight is None or product else np.asarray(weight).astype(dt)
    pairs = pairing(pair, n, opt)
    m = np.zeros((n, n), dt)
    choice = np.full((n, n), -1, np.int32)
    for i in range(n):
        m[i, i] = diag[i]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            best, arg = None, -1
            for k in range(i, j):
                v = m[i, k] + m[k + 1, j]
                if product:
                    v = v + (d[i] * d[j + 1]) * d[k + 1]
                if best is None or better(v, best):
                    best, arg = v, k
            if table is not None:
                best = best + table[i, j]
            if pairs is not None:
                codes, values, allowed, min_loop = pairs
                ci, cj = codes[i], codes[j]
                if allowed[ci, cj] and j - i > min_loop:
                    inner = m[i + 1, j - 1] if i + 1 <= j - 1 else dt.type(0)
                    v = dt.type(values[ci, cj]) + inner
                    if better(v, best):
                        best, arg = v, j
            m[i, j] = best
            choice[i, j] = arg
    return m, choice
