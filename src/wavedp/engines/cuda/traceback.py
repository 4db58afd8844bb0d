"""Exact traceback on the GPU, GPU memory linear in m + n.

1. Forward pass (the multipass kernel): the end cell, plus checkpoints written straight from
   the kernel into mapped, page-locked host memory (``hostmem``, kept for later calls): H
   and F of every K-th row and H and E of every K-th column, ``8 m n (2 / K)`` bytes of
   host RAM in all (3.9 GB for 1 Mbp x 1 Mbp), in blocks of K rows
   (:class:`multipass.Checkpoints`). A first call pins that memory block by block on a
   background thread while the sweep runs; a strip waits only for its own block. Up to
   DEVICE_CHECKPOINTS bytes of checkpoints stay in GPU memory instead (no pinning at all).
2. From the end cell back, the K x K tile holding the current cell is recomputed on the GPU
   from its top row and left column checkpoints with one direction byte per cell, copied
   back and followed on the host with the CPU engine's walk until the path leaves the tile;
   then the next tile. The tiles the path may reach next are computed ahead, concurrently
   (:class:`Tiles`). About (m + n) / K tiles are walked, so the path is docs/design.md's,
   identical to the CPU engine's alignment.

GPU memory: ``m + n + 20 (n + 1) + 4 (m + n) + 8 (m + 1024) + (L + 1)^2 (K (K + 31)
+ 20 (K + 1))`` bytes, plus the substitution table and checkpoints of at most
DEVICE_CHECKPOINTS bytes (K = 4096, or K_SMALL = 2048 below SMALL_CELLS cells; L =
LOOKAHEAD tile rows and columns computed ahead of the path; 8 (m + 1024) stages column
checkpoints): linear in m + n.
"""

from __future__ import annotations

import os
import threading
import time

import numpy as np

from ...errors import InputError
from ..common import LOCAL
from ..cpu.rows import finish, walk
from . import hostmem, multipass
from .multipass import (
    Checkpoints,
    Pair,
    check,
    check_free,
    end_cell,
    rows_for,
    scratch,
    strip_height,
    sweep,
    sweep_bytes,
)

#: rows between row checkpoints, columns between column checkpoints: the tile size
#: (a multiple of every score-only strip height); smaller tiles for smaller pairs
K = 4096
K_SMALL = 2048
#: pairs with fewer cells use K_SMALL (none by default: 4096 was faster at every benchmark
#: size on the H100 once tiles were computed ahead; tests set it to cover both sizes)
SMALL_CELLS = 0
#: tile rows and columns computed ahead of the path (up to (LOOKAHEAD + 1)^2 tiles at once;
#: at 1 Mbp x 1 Mbp on the H100, once cancelled tiles stopped within 32 columns, the 489
#: tiles took 1.06 s with 0, 0.36 s with 1, 0.21 s with 2)
LOOKAHEAD = 2
#: checkpoints up to this many bytes stay in GPU memory (a constant: the bound stays linear)
DEVICE_CHECKPOINTS = 512 << 20
#: pin host checkpoint memory while the forward sweep runs (False: all of it before)
OVERLAP_PINNING = True


def tile_size(m: int, n: int) -> int:
    """Checkpoint spacing and tile side for an m x n traceback."""
    return K_SMALL if m * n < SMALL_CELLS else K


_host = threading.local()


def _pinned_tile() -> np.ndarray:
    """This thread's pinned host buffer for one tile of direction bytes (faster copies back;
    each GPU's thread has its own)."""
    import cupy

    if getattr(_host, "tile", None) is None:
        mem = cupy.cuda.alloc_pinned_memory(tile_bytes(K))
        _host.tile = np.frombuffer(mem, np.uint8, tile_bytes(K))  # the largest tile
    return _host.tile


def tile_bytes(k: int) -> int:
    """Bytes of one k x k tile of direction bytes as the kernel lays them out (each strip
    has 31 more steps than columns)."""
    return k * (k + 31)


def gpu_bytes(m: int, n: int, traceback: bool) -> int:
    """GPU memory one pair needs (the module docstring's bound)."""
    base = sweep_bytes(m, n)
    if not traceback:
        return base
    k = tile_size(m, n)
    tiles = (LOOKAHEAD + 1) ** 2 * (tile_bytes(k) + 20 * (k + 1))
    stash = 8 * (m + 1024)  # the forward pass's staging of column checkpoints
    checkpoints = host_bytes(m, n)
    return base + tiles + stash + (checkpoints if checkpoints <= DEVICE_CHECKPOINTS else 0)


def host_bytes(m: int, n: int) -> int:
    """Memory for the row and column checkpoints of a traceback (page-locked host memory
    above DEVICE_CHECKPOINTS)."""
    return Checkpoints(m, n, tile_size(m, n)).nbytes


def check_memory(m: int, n: int, traceback: bool) -> None:
    """Raise InputError before any launch when the GPU (or pinned host RAM) is too small."""
    check_free(gpu_bytes(m, n, traceback), f"a {m} x {n} pair")
    if traceback and host_bytes(m, n) > DEVICE_CHECKPOINTS:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if host_bytes(m, n) > avail // 2:
            raise InputError(f"a {m} x {n} traceback needs {host_bytes(m, n) / 2**30:.2f} GiB"
                             f" of pinned host memory for checkpoints, "
                             f"{avail / 2**30:.2f} GiB available")


class Tiles:
    """Direction-byte tiles recomputed on the GPU ahead of the path.

    A tile depends only on its top-row and left-column checkpoints, not on where the path
    enters it, so every tile the path can reach within LOOKAHEAD tile rows and columns is
    computed at once, each whole and on its own stream: while the host copies and walks one
    tile, the GPU (which one tile's 32 strips leave mostly idle) computes the next ones.
    Tiles below or right of the path are never needed again: their sweeps are cancelled
    (:func:`multipass.cancel`: every strip stops within 32 columns) and their buffers
    reused.
    """

    def __init__(self, p: Pair, ck: Checkpoints) -> None:
        self.p, self.K, self.ck = p, ck.every, ck
        self.live: dict[tuple[int, int], tuple] = {}
        self.spare: list[tuple] = []
        self.host = _pinned_tile()
        self.control = None  # a stream for the cancelling writes

    def _cancel(self, out) -> None:
        import cupy

        if self.control is None:
            self.control = cupy.cuda.Stream(non_blocking=True)
        multipass.cancel(out, self.control)

    def _launch(self, tr: int, tc: int) -> None:
        import cupy

        p, K = self.p, self.K  # noqa: N806
        r0, c0 = tr * K, tc * K
        rows, cols = min(K, p.m - r0), min(K, p.n - c0)
        dirs, stream = self.spare.pop() if self.spare else (
            scratch(tile_bytes(K), np.uint8), cupy.cuda.Stream(non_blocking=True))
        ck = self.ck
        left = (None, None)
        if c0 > 0:
            left = (ck.addr + 4 * ck.col(tr, tc - 1), ck.addr + 4 * ck.col(tr, tc - 1, True))
        top = (None, None)  # row 0 of the matrix
        if tr > 0:
            top = (ck.addr + 4 * (ck.row(tr - 1) + c0), ck.addr + 4 * (ck.row(tr - 1, True) + c0))
        with stream:
            out = sweep(p, r0, rows, c0, cols, top=top, left=left, dirs=dirs, wait=False)
        self.live[(tr, tc)] = (dirs, stream, cols, out)

    def fetch(self, tr: int, tc: int, rows: int, cols: int) -> tuple[np.ndarray, int]:
        """The direction bytes of the first ``rows`` rows and ``cols`` columns of tile
        (tr, tc) on the host (in the tile's layout; the bytes of later columns are left out
        of the copy), and the tile's width."""
        for key in [key for key in self.live if key[0] > tr or key[1] > tc]:
            dirs, stream, _, out = self.live.pop(key)
            self._cancel(out)
            self.spare.append((dirs, stream))  # reuse is ordered on the same stream
        for a in range(LOOKAHEAD + 1):
            for b in range(LOOKAHEAD + 1):
                if tr - a >= 0 and tc - b >= 0 and (tr - a, tc - b) not in self.live:
                    self._launch(tr - a, tc - b)
        import cupy

        dirs, stream, width, out = self.live[(tr, tc)]
        strip = strip_height(multipass.DIR_ROWS)
        # a strip holds width + 31 steps of 32 lanes x DIR_ROWS rows; column c is in steps
        # c..c + 31, so columns 0..cols - 1 are in the first cols + 31 steps of every strip
        pitch = strip * (width + 31)
        strips = -(-rows // strip)
        cupy.cuda.runtime.memcpy2DAsync(
            self.host.ctypes.data, pitch, dirs.data.ptr, pitch, strip * min(width + 31, cols + 31),
            strips, cupy.cuda.runtime.memcpyDeviceToHost, stream.ptr)
        check(out, stream)  # waits for the copy, then looks at the error flags
        return self.host[:strips * pitch], width

    def close(self) -> None:
        """Cancel the tiles still being computed and wait for them to stop (their buffers
        go back to the pool)."""
        for *_, out in self.live.values():
            self._cancel(out)
        for _, stream, *_ in [*self.live.values(), *self.spare]:
            stream.synchronize()
        self.live.clear()
        self.spare.clear()


def _pin_during(reg: hostmem.Region, ck: Checkpoints, out) -> None:
    """Tell a running forward sweep (through ``ck.ready``) which checkpoint blocks are pinned
    while ``reg`` (which they start) is being pinned; return when all are.
    If pinning fails, the sweep is cancelled and the error raised."""
    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)  # not behind the sweep

    def progress(pinned: int, failed: bool) -> None:
        if failed:
            multipass.cancel(out, stream)
        else:
            ready = min(ck.blocks, pinned // (4 * ck.block))
            ck.ready.set(np.array([ready], np.int32), stream=stream)

    reg.watch(progress)
    try:
        reg.wait(ck.nbytes)  # the rest of the region goes on in the background
    except BaseException:
        cupy.cuda.get_current_stream().synchronize()  # the cancelled sweep has stopped
        raise
    finally:
        reg.unwatch(progress)
        stream.synchronize()


def align_traceback(p: Pair, q: np.ndarray, t: np.ndarray,
                    phases: dict[str, float] | None = None):
    """(score, qs, qe, ts, te, ops) with ops the uint8 CIGAR letters in forward order;
    ``phases`` (a dict), where given, gets the seconds and counts of the traceback's phases
    (``benchmarks/gpu_align.py --tune``)."""
    import cupy  # optional dependency: the GPU extra

    m, n = p.m, p.n
    K = tile_size(m, n)  # noqa: N806 - the tile side, as in the module docstring
    stats = phases if phases is not None else {}
    stats.clear()
    stats.update(tiles=0, tile_s=0.0, walk_s=0.0)
    start = entry = time.perf_counter()
    ck = Checkpoints(m, n, K)
    reg = None
    if ck.nbytes <= DEVICE_CHECKPOINTS:
        ints = scratch(ck.nbytes // 4, np.int32)
        ck.addr = ints.data.ptr
    else:
        reg = hostmem.region(ck.nbytes, background=True)
        ck.addr = reg.ptr
        if multipass.POISON or not OVERLAP_PINNING:
            reg.wait(ck.nbytes)
        if multipass.POISON:
            reg.bytes[:ck.nbytes].fill(0x7F)
        ck.ready = cupy.zeros(1, dtype=cupy.int32)  # checkpoint blocks pinned so far
        cupy.cuda.get_current_stream().synchronize()  # before the side stream's updates
    out = sweep(p, 0, m, 0, n, rows_per_thread=rows_for(m), checkpoints=ck, wait=False)
    if reg is not None:
        _pin_during(reg, ck, out)
    stats["pin_s"] = time.perf_counter() - start  # pinning ran alongside the sweep
    check(out)
    score, ei, ej = end_cell(p, out)
    stats["forward_s"] = time.perf_counter() - start
    if p.mode == LOCAL and score == 0:
        return 0, 0, 0, 0, 0, np.empty(0, np.uint8)
    ops = np.empty(m + n, np.uint8)
    tiles = Tiles(p, ck)
    i, j, state, k = ei, ej, 0, 0
    try:
        while i > 0 and j > 0:
            tr, tc = (i - 1) // K, (j - 1) // K
            t0 = time.perf_counter()
            tile, cols = tiles.fetch(tr, tc, i - tr * K, j - tc * K)
            t1 = time.perf_counter()
            i, j, state, k, stopped = walk(q, t, p.mode, tile, tr * K, tc * K, cols,
                                           multipass.DIR_ROWS, i, j, state, ops, k)
            stats["tiles"] += 1
            stats["tile_s"] += t1 - t0
            stats["walk_s"] += time.perf_counter() - t1
            if stopped:
                break
        else:
            i, j, k = finish(p.mode, i, j, ops, k)
    finally:
        t0 = time.perf_counter()
        tiles.close()
        stats["close_s"] = time.perf_counter() - t0
    stats["total_s"] = time.perf_counter() - entry
    return score, i, ei, j, ej, ops[:k][::-1].copy()
