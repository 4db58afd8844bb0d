"""Each query's best database entries from a score matrix on the GPU (the hit order of
``wavedp.ranking``: score descending, then index ascending), copying back only those."""

from __future__ import annotations

import numpy as np

from ....ranking import Candidates
from ..hostmem import settle

#: entries per chunk of a row in :func:`select`
SELECT_CHUNK = 256

#: scores (bytes) :func:`select` takes at once (its temporaries are about twice as many)
SELECT_BYTES = 1 << 30

#: the key of no entry (below the threshold, or past the row's end)
_NO_KEY = np.iinfo(np.int64).min


def select_all(scores, thresholds: list[int | None]) -> list[Candidates]:
    """Every entry of each row of a device score matrix at or above the row's threshold, as
    host (indices, scores) per row, best first (ties: smaller index): one pass, one copy."""
    import cupy

    keep = scores >= cupy.asarray(_floors(thresholds).astype(np.int32))[:, None]
    settle()
    rows, cols = cupy.nonzero(keep)
    vals = scores[rows, cols].get().astype(np.int32)
    rows, cols = rows.get(), cols.get().astype(np.int64)
    bounds = np.searchsorted(rows, np.arange(len(thresholds) + 1))
    out = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        idx, sc = cols[a:b], vals[a:b]
        order = np.lexsort((idx, -sc.astype(np.int64)))
        out.append((idx[order], sc[order]))
    return out


def select(scores, k: int, thresholds: list[int | None]) -> list[Candidates]:
    """Each row's ``k`` best entries (0 < k < row length; else :func:`select_all`) of a score
    matrix (device, or host for the tests) at or above the row's threshold, as host
    (indices, scores), best first (ties: smaller index). Ranked by the unique key (score,
    -index), a row's k best lie in the k chunks of SELECT_CHUNK entries with the best
    largest keys: one pass over the matrix finds each chunk's largest (its first maximum),
    one sort of k chunks per row ranks them; rows are taken SELECT_BYTES of scores at a
    time."""
    xp = _module(scores)
    rows, n = scores.shape
    c = SELECT_CHUNK
    chunks = -(-n // c)
    kk = min(k, chunks)
    floor = xp.asarray(_floors(thresholds).astype(np.int32))
    low = np.iinfo(np.int32).min
    step = max(1, SELECT_BYTES // (4 * chunks * c))
    spans = xp.arange(chunks, dtype=np.int64)[None, :] * c
    within = xp.arange(c, dtype=np.int64)
    out: list[Candidates] = []
    for a in range(0, rows, step):
        part, lim = scores[a:a + step], floor[a:a + step, None]
        r = part.shape[0]
        padded = xp.full((r, chunks * c), low, np.int32)
        padded[:, :n] = xp.where(part >= lim, part, low)
        blocks = padded.reshape(r, chunks, c)
        first = blocks.argmax(axis=2)
        largest = xp.take_along_axis(blocks, first[:, :, None], 2)[:, :, 0]
        keys = _keys(xp, largest, spans + first, lim, n)
        best = xp.argsort(keys, axis=1)[:, chunks - kk:]
        cols = (best * c)[:, :, None] + within
        cand = padded[xp.arange(r)[:, None, None], cols]
        ranked = xp.sort(_keys(xp, cand, cols, lim[:, :, None], n).reshape(r, -1), axis=1)
        top = ranked[:, -k:]
        if xp is not np:
            settle()
            top = top.get()
        for key in top[:, ::-1]:
            key = key[key > _NO_KEY]
            out.append((0xFFFFFFFF - (key & 0xFFFFFFFF), (key >> 32).astype(np.int32)))
    return out


def _floors(thresholds: list[int | None]) -> np.ndarray:
    floor = np.array([-(1 << 31) if t is None else t for t in thresholds], np.int64)
    return np.clip(floor, -(1 << 31), (1 << 31) - 1)


def _keys(xp, values, cols, floor, n: int):
    """The ranking keys (int64: score x 2^32 + 0xFFFFFFFF - column) of ``values`` at columns
    ``cols``; _NO_KEY where a value is below ``floor`` or a column past ``n``."""
    key = values.astype(np.int64) * (1 << 32) + (0xFFFFFFFF - cols)
    return xp.where((values >= floor) & (cols < n), key, _NO_KEY)


def _module(a):
    """numpy for a host array, else cupy."""
    if isinstance(a, np.ndarray):
        return np
    import cupy

    return cupy
