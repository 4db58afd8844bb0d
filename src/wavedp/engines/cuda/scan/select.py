"""Each query's best database entries from a score matrix on the GPU (the hit order of
``wavedp.ranking``: score descending, then index ascending), copying back only those."""

from __future__ import annotations

import numpy as np

from ....ranking import Candidates
from ..hostmem import settle
from ..module import function

#: entries per chunk of a row in :func:`select`
SELECT_CHUNK = 256

#: scores (bytes) :func:`select` takes at once (on the host its temporaries are about four
#: times as many; on the GPU a key per chunk)
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
    largest keys: one pass over the matrix finds each chunk's largest (on the GPU, one
    kernel of ``kernels/select.cu``), the host picks each row's k best chunks and ranks
    their keys; rows are taken SELECT_BYTES of scores at a time. On the GPU no CuPy array
    routine runs (the first of a process loaded 20 kernel modules and, where CuPy's
    accelerators include cuTENSOR, imported cupyx and SciPy: 0.35 s)."""
    rows, n = scores.shape
    if len(thresholds) != rows or scores.dtype != np.int32:
        raise ValueError(f"select: {len(thresholds)} thresholds for {rows} rows of "
                         f"{scores.dtype} scores (one per row, int32)")
    c = SELECT_CHUNK
    chunks = -(-n // c)
    kk = min(k, chunks)
    floor = _floors(thresholds).astype(np.int32)
    step = min(max(1, SELECT_BYTES // (4 * chunks * c)), 65535)
    device = not isinstance(scores, np.ndarray)
    out: list[Candidates] = []
    for a in range(0, rows, step):
        part, lim = scores[a:a + step], floor[a:a + step]
        best = (_device_best if device else _host_best)(part, lim, c, chunks)
        chosen = np.argsort(best, axis=1, kind="stable")[:, chunks - kk:].astype(np.int32)
        keys = (_device_keys if device else _host_keys)(part, lim, c, chosen)
        for key in np.sort(keys, axis=1)[:, -k:][:, ::-1]:
            key = key[key > _NO_KEY]
            out.append((0xFFFFFFFF - (key & 0xFFFFFFFF), (key >> 32).astype(np.int32)))
    return out


def _host_best(part: np.ndarray, floor: np.ndarray, c: int, chunks: int) -> np.ndarray:
    """Each row's largest key per chunk of ``c`` entries (rows x chunks, int64)."""
    rows, n = part.shape
    padded = np.full((rows, chunks * c), np.iinfo(np.int32).min, np.int32)
    padded[:, :n] = part
    cols = np.arange(chunks * c, dtype=np.int64)[None, :]
    return _keys(padded, cols, floor[:, None], n).reshape(rows, chunks, c).max(axis=2)


def _host_keys(part: np.ndarray, floor: np.ndarray, c: int, chosen: np.ndarray
               ) -> np.ndarray:
    """The keys of each row's ``chosen`` chunks (rows x chunks chosen x c, flat per row)."""
    rows, n = part.shape
    cols = (chosen.astype(np.int64) * c)[:, :, None] + np.arange(c)
    values = part[np.arange(rows)[:, None, None], np.minimum(cols, n - 1)]
    return _keys(values, cols, floor[:, None, None], n).reshape(rows, -1)


def _device_best(part, floor: np.ndarray, c: int, chunks: int) -> np.ndarray:
    """:func:`_host_best` of a device matrix (``kernels/select.cu``'s chunk_best)."""
    import cupy

    part = cupy.ascontiguousarray(part)
    rows, n = part.shape
    keys = cupy.empty((rows, chunks), cupy.int64)
    function("select.cu", "chunk_best")((chunks, rows), (256,), (
        part, np.int64(n), np.int64(n), cupy.asarray(floor), np.int32(c), np.int32(chunks),
        keys))
    settle()
    return keys.get()


def _device_keys(part, floor: np.ndarray, c: int, chosen: np.ndarray) -> np.ndarray:
    """:func:`_host_keys` of a device matrix (``kernels/select.cu``'s chunk_keys)."""
    import cupy

    part = cupy.ascontiguousarray(part)
    rows, n = part.shape
    picked = chosen.shape[1]
    keys = cupy.empty((rows, picked * c), cupy.int64)
    function("select.cu", "chunk_keys")((picked, rows), (256,), (
        part, np.int64(n), np.int64(n), cupy.asarray(floor), np.int32(c),
        cupy.asarray(np.ascontiguousarray(chosen)), np.int32(picked), keys))
    settle()
    return keys.get()


def _floors(thresholds: list[int | None]) -> np.ndarray:
    floor = np.array([-(1 << 31) if t is None else t for t in thresholds], np.int64)
    return np.clip(floor, -(1 << 31), (1 << 31) - 1)


def _keys(values: np.ndarray, cols: np.ndarray, floor: np.ndarray, n: int) -> np.ndarray:
    """The ranking keys (int64: score x 2^32 + 0xFFFFFFFF - column) of ``values`` at columns
    ``cols``; _NO_KEY where a value is below ``floor`` or a column past ``n``."""
    key = values.astype(np.int64) * (1 << 32) + (0xFFFFFFFF - cols)
    return np.where((values >= floor) & (cols < n), key, _NO_KEY)
