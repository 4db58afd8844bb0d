"""Exact traceback on the GPU, GPU memory linear in m + n.

1. Forward pass (the multipass kernel): the end cell, plus checkpoints written straight from
   the kernel into mapped, pinned host memory: H and F of every K-th row and H and E of every
   K-th column, ``8 m n (2 / K)`` bytes of host RAM in all (3.9 GB for 1 Mbp x 1 Mbp).
2. From the end cell back, the K x K tile holding the current cell is recomputed on the GPU
   from its top row and left column checkpoints with one direction byte per cell, copied
   back and followed on the host with the CPU engine's walk until the path leaves the tile;
   then the next tile. About (m + n) / K tiles, so the path is DESIGN.md's, identical to the
   CPU engine's alignment.

GPU memory: ``m + n + 20 (n + 1) + 4 (m + n) + K^2`` bytes plus the substitution table
(K = 2048 below 10^11 cells, else 4096): linear in m + n.
"""

from __future__ import annotations

import functools
import os
import time

import numpy as np

from ...errors import InputError
from ..common import LOCAL, NEG
from ..cpu.rows import finish, walk
from . import multipass
from .multipass import Pair, boundary_row, end_cell, rows_for, scratch, strip_height, sweep

#: rows between row checkpoints, columns between column checkpoints: the tile size
#: (a multiple of every score-only strip height); smaller tiles for smaller pairs
K = 4096
K_SMALL = 2048
SMALL_CELLS = 10**11


def tile_size(m: int, n: int) -> int:
    """Checkpoint spacing and tile side for an m x n traceback."""
    return K_SMALL if m * n < SMALL_CELLS else K
_HOST_ALLOC_MAPPED = 2  # cudaHostAllocMapped
#: seconds and counts of the last traceback's phases (benchmarks read it)
STATS: dict[str, float] = {}


@functools.cache
def _pinned_tile() -> np.ndarray:
    """A pinned host buffer for one tile of direction bytes (faster copies back)."""
    import cupy

    mem = cupy.cuda.alloc_pinned_memory(K * K)
    return np.frombuffer(mem, np.uint8, K * K)  # the largest tile


def gpu_bytes(m: int, n: int, traceback: bool) -> int:
    """GPU memory one pair needs (the module docstring's bound)."""
    k = tile_size(m, n)
    return m + n + 20 * (n + 1) + 4 * (m + n) + (k * k if traceback else 0) + 4096


def host_bytes(m: int, n: int) -> int:
    """Pinned host memory for the row and column checkpoints of a traceback."""
    k = tile_size(m, n)
    return 8 * ((m // k + 1) * (n + 1) + (n // k) * (m + 1))


class Mapped:
    """An int32 array in pinned host memory that kernels read and write directly.

    Taken from CuPy's pinned memory pool (with unified addressing a pinned host pointer is
    valid on the device), so repeated tracebacks do not pin pages again; the pool keeps the
    memory until ``cupy.get_default_pinned_memory_pool().free_all_blocks()``.
    """

    def __init__(self, shape: tuple[int, int]) -> None:
        import cupy

        self.shape = shape
        count = max(1, shape[0] * shape[1])
        self.memory = cupy.cuda.alloc_pinned_memory(4 * count)
        self.ptr = self.memory.ptr
        self.array = np.frombuffer(self.memory, np.int32, count)[: shape[0] * shape[1]]
        self.array = self.array.reshape(shape)
        if multipass.POISON:
            self.array.fill(0x7F7F7F7F)

    def address(self, row: int, col: int) -> int:
        """Device address of element [row, col]."""
        return self.ptr + 4 * (row * self.shape[1] + col)


def check_memory(m: int, n: int, traceback: bool) -> None:
    """Raise InputError before any launch when the GPU (or pinned host RAM) is too small."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    need = gpu_bytes(m, n, traceback)
    if need > free:
        raise InputError(f"a {m} x {n} pair needs {need / 2**30:.2f} GiB of GPU memory, "
                         f"{free / 2**30:.2f} GiB free")
    if traceback:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if host_bytes(m, n) > avail // 2:
            raise InputError(f"a {m} x {n} traceback needs {host_bytes(m, n) / 2**30:.2f} GiB"
                             f" of pinned host memory for checkpoints, "
                             f"{avail / 2**30:.2f} GiB available")


def align_traceback(p: Pair, q: np.ndarray, t: np.ndarray):
    """(score, qs, qe, ts, te, ops) with ops the uint8 CIGAR letters in forward order."""
    import cupy

    m, n = p.m, p.n
    K = tile_size(m, n)  # noqa: N806 - the tile side, as in the module docstring
    STATS.clear()
    STATS.update(tiles=0, tile_s=0.0, walk_s=0.0)
    start = time.perf_counter()
    rows_h, rows_f = (Mapped((m // K + 1, n + 1)) for _ in range(2))
    cols_h, cols_e = (Mapped((n // K, m + 1)) for _ in range(2))
    STATS["pin_s"] = time.perf_counter() - start
    rows_h.array[0], rows_f.array[0] = boundary_row(p, n)
    if n >= K:  # row 0 of every column checkpoint
        cols_h.array[:, 0] = boundary_row(p, n)[0][K::K][: n // K]
        cols_e.array[:, 0] = NEG
    start = time.perf_counter()
    r = rows_for(m)
    out = sweep(p, 0, m, 0, n, rows_per_thread=r, ck_every=K // strip_height(r),
                ck_addr=(rows_h.address(0, 0), rows_f.address(0, 0)),
                cc_every=K, cc=(cols_h.address(0, 0), cols_e.address(0, 0)))
    cupy.cuda.Device().synchronize()
    score, ei, ej = end_cell(p, out)
    STATS["forward_s"] = time.perf_counter() - start
    if p.mode == LOCAL and score == 0:
        return 0, 0, 0, 0, 0, np.empty(0, np.uint8)
    ops = np.empty(m + n, np.uint8)
    dirs = scratch(K * K, np.uint8)
    host = _pinned_tile()
    i, j, state, k = ei, ej, 0, 0
    while i > 0 and j > 0:
        c = (i - 1) // K
        r0 = c * K
        c0 = (j - 1) // K * K
        rows, cols = i - r0, j - c0
        left = (None, None)
        if c0 > 0:
            left = (cols_h.address(c0 // K - 1, r0), cols_e.address(c0 // K - 1, r0))
        t0 = time.perf_counter()
        sweep(p, r0, rows, c0, cols, top=(rows_h.address(c, c0), rows_f.address(c, c0)),
              left=left, dirs=dirs)
        tile = host[: rows * cols]
        dirs[: rows * cols].get(out=tile)
        t1 = time.perf_counter()
        i, j, state, k, stopped = walk(q, t, p.mode, tile, r0, c0, cols, i, j, state, ops,
                                       k)
        STATS["tiles"] += 1
        STATS["tile_s"] += t1 - t0
        STATS["walk_s"] += time.perf_counter() - t1
        if stopped:
            break
    else:
        i, j, k = finish(p.mode, i, j, ops, k)
    return score, i, ei, j, ej, ops[:k][::-1].copy()
