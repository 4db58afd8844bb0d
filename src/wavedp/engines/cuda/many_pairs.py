"""Many pairs per launch on the GPU (``kernels/many_pairs.cu``): a group of G lanes per pair,
pairs sorted by shape on the GPU, the traceback from 4-bit direction codes and the CIGAR runs
made on the GPU; only scores, coordinates and runs come back.

Takes the pairs of :func:`taken`; the caller sends the others (an empty sequence, a pair too
large or whose scores could outgrow the local end key) to the pairwise engines.
"""

from __future__ import annotations

import numpy as np

from ...errors import DeviceError, InputError
from ..common import Columns
from .module import function
from .transfer import download, upload

#: lanes a pair (the kernel instances); one is chosen per call by :func:`lanes_for`
GROUPS = (4, 8, 16, 32)
#: rows a lane
ROWS = 8
#: the kernel's block (kernels/many_pairs.cu's PAIRS_BLOCK)
BLOCK = 256
#: sides and cells of the pairs taken (the scratch rows hold MAX_SIDE columns a group)
MAX_SIDE = 8192
MAX_CELLS = 1 << 24
#: the local end key keeps X << 3 in an int32
MAX_SCORE = (1 << 28) - 1
#: GPU memory for one launch's direction words (at most a third of the free memory)
DIRS_BYTES = 48 << 30
#: a pass boundary costs about this many cells a column (the scratch row's store and load),
#: score-only and with direction words: on the H200, 2,000,000 reads of 150 against 300
#: swept score-only in 166 ms with groups of 4 (five passes), 69 ms with 8 (three), 94 ms
#: with 16 (two); with direction words 134, 153 and 209 ms (one run, local)
PASS_CELLS = {False: 32, True: 8}


def taken(m: np.ndarray, n: np.ndarray, top: int) -> np.ndarray:
    """Which m x n pairs this engine aligns, ``top`` the largest substitution score."""
    m, n = np.asarray(m, np.int64), np.asarray(n, np.int64)
    return ((m >= 1) & (n >= 1) & (m <= MAX_SIDE) & (n <= MAX_SIDE) & (m * n <= MAX_CELLS)
            & (np.minimum(m, n) * max(int(top), 0) <= MAX_SCORE))


def lanes_for(m: np.ndarray, n: np.ndarray, traceback: bool = False) -> int:
    """The group size G of the fewest padded cells (pass boundaries priced in)."""
    def cost(g: int) -> float:
        t = g * ROWS
        passes = -(-m // t)
        return float(np.sum(passes * (t * (n + g - 1) + PASS_CELLS[traceback] * n)))
    return min(GROUPS, key=cost)


def dir_words(m, n, g: int):
    """Direction words of an m x n pair (or arrays of them) for groups of g lanes."""
    t = g * ROWS
    return -(-m // t) * (n + g - 1) * g * (ROWS // 8)


def align(qcat: np.ndarray, qoff: np.ndarray, tcat: np.ndarray, toff: np.ndarray,
          qi: np.ndarray | None, ti: np.ndarray | None, m: np.ndarray, n: np.ndarray,
          sub: np.ndarray, gap_open: int, gap_extend: int, mode: int, traceback: bool,
          phases: dict[str, float] | None = None) -> Columns:
    """Pair k aligns query ``qi[k]`` (``qcat[qoff[qi[k]]:qoff[qi[k] + 1]]``, m[k] letters)
    against target ``ti[k]`` (n[k] letters); ``qi`` and ``ti`` None: query k against target
    k. Every pair :func:`taken`. ``phases`` (benchmarks) gains each phase's seconds (the
    host's clock, the GPU waited for at each phase's end)."""
    import cupy

    clock = _Clock(phases)
    count = int(m.size)
    ends = np.empty((count, 3), np.int32)
    res5 = np.empty((count, 5), np.int32) if traceback else None
    runs_parts: list[np.ndarray] = []
    if not count:
        return _columns(ends, res5, traceback, runs_parts)
    step = max(1, count // 20000)
    g = lanes_for(m[::step].astype(np.int64), n[::step].astype(np.int64), traceback)
    a = int(sub.shape[0])
    d_q = upload(qcat)
    d_t = d_q if tcat is qcat else upload(tcat)
    d_sub = cupy.asarray(np.ascontiguousarray(sub, np.int32).ravel())
    d_qs, d_ts = (upload(off)[:-1] if which is None else upload(off)[upload(which)]
                  for off, which in ((qoff, qi), (toff, ti)))
    d_m, d_n = upload(m.astype(np.int32, copy=False)), upload(n.astype(np.int32, copy=False))
    words = dir_words(m.astype(np.int64), n.astype(np.int64), g) if traceback else None
    clock("upload")
    for lo, hi in _launches(words, count):
        sel = slice(lo, hi)
        found = _launch(g, mode, d_q, d_t, d_qs[sel], d_ts[sel], d_m[sel], d_n[sel],
                        None if words is None else words[sel], d_sub, a, gap_open, gap_extend,
                        int(n[sel].max()), bool((m[sel] > g * ROWS).any()), clock,
                        ends[sel], None if res5 is None else res5[sel])
        if traceback:
            runs_parts.append(found)
    return _columns(ends, res5, traceback, runs_parts)


def _columns(ends: np.ndarray, res5: np.ndarray | None, traceback: bool,
             runs_parts: list[np.ndarray]) -> Columns:
    if not traceback:
        unknown = np.full(ends.shape[0], -1, np.int32)
        return Columns(ends[:, 0], unknown, ends[:, 1], unknown, ends[:, 2], None, None)
    offsets = np.zeros(ends.shape[0] + 1, np.int64)
    np.cumsum(res5[:, 4], out=offsets[1:])
    runs = (runs_parts[0] if len(runs_parts) == 1 else
            np.concatenate(runs_parts) if runs_parts else np.zeros(0, np.uint32))
    return Columns(ends[:, 0], *(res5[:, c] for c in range(4)), runs, offsets)


def _launches(words: np.ndarray | None, count: int) -> list[tuple[int, int]]:
    """Consecutive pair ranges whose direction words (None: score-only) fit one launch's
    budget."""
    if words is None:
        return [(0, count)]
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    budget = min(DIRS_BYTES, free // 3) // 4
    largest = int(words.max())
    if largest > budget:
        raise InputError(f"a batch of pairs needs {4 * largest / 2**20:.1f} MiB of GPU memory "
                         f"for its largest pair, {free / 2**20:.1f} MiB free")
    cum = np.cumsum(words)
    cuts, start = [], 0
    while start < count:
        stop = int(np.searchsorted(cum, (cum[start - 1] if start else 0) + budget, "right"))
        stop = max(stop, start + 1)
        cuts.append((start, stop))
        start = stop
    return cuts


class _Clock:
    """Phases' seconds into a dict (nothing without one)."""

    def __init__(self, phases: dict[str, float] | None) -> None:
        import time

        self.phases, self.now = phases, time.perf_counter
        self.last = self.now()

    def __call__(self, name: str) -> None:
        if self.phases is None:
            return
        import cupy

        cupy.cuda.get_current_stream().synchronize()
        now = self.now()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.last
        self.last = now


def _grid(kernel, smem: int) -> int:
    """Resident blocks of ``kernel`` over the GPU (its registers, ``smem`` bytes of shared
    memory and the block's threads bound each multiprocessor's)."""
    from .multipass import multiprocessors

    regs = max(int(kernel.num_regs), 1)
    by_regs = 65536 // (((regs * 32 + 255) // 256 * 256) * (BLOCK // 32))
    by_smem = (228 << 10) // (smem + 1024)
    return multiprocessors() * max(1, min(by_regs, by_smem, 2048 // BLOCK))


def _launch(g: int, mode: int, d_q, d_t, d_qs, d_ts, d_m, d_n, words: np.ndarray | None,
            d_sub, a: int, go: int, ge: int, longest: int, passes: bool, clock: _Clock,
            ends: np.ndarray, res5: np.ndarray | None) -> np.ndarray | None:
    """One launch over the pairs of the views given: their end cells into ``ends`` and, with
    direction words (``words``), their traceback into ``res5``; returns their runs."""
    import cupy

    traceback = words is not None
    count = int(d_m.size)
    order = cupy.argsort(-(((d_m + g * ROWS - 1) // (g * ROWS)).astype(cupy.int64) * 65536
                           + d_n), kind="stable").astype(cupy.int32)
    kernel = function("many_pairs.cu", f"many_pairs<{mode}, {g}, {ROWS}, "
                      f"{'true' if traceback else 'false'}>")
    smem = (a + 1) * a * 32 * 4
    if smem > 48 << 10:
        kernel.max_dynamic_shared_size_bytes = smem
    grid = _grid(kernel, smem)
    stride = longest + 2 if passes else 1
    scratch = cupy.empty(grid * (BLOCK // g) * stride * 2 if passes else 2, cupy.int32)
    d_ends = cupy.empty(3 * count, cupy.int32)
    ticket = cupy.zeros(1, cupy.int32)
    if traceback:
        doff = np.zeros(count + 1, np.int64)
        np.cumsum(words, out=doff[1:])
        d_doff = cupy.asarray(doff)
        dirs = cupy.empty(int(doff[-1]), cupy.uint32)
    else:
        d_doff = cupy.zeros(1, cupy.int64)
        dirs = cupy.zeros(1, cupy.uint32)
    clock("sort")
    kernel((grid,), (BLOCK,), (d_q, d_t, d_qs, d_ts, d_m, d_n, order, np.int32(count), d_sub,
                               np.int32(a), np.int32(go), np.int32(ge), dirs, d_doff, scratch,
                               np.int32(stride), d_ends, ticket), shared_mem=smem)
    clock("sweep")
    if not traceback:
        download(d_ends, ends.reshape(-1))
        clock("download")
        return None
    roff = cupy.zeros(count + 1, cupy.int64)
    cupy.cumsum((d_m + d_n + 1).astype(cupy.int64), out=roff[1:])
    runs = cupy.empty(int(roff[-1]), cupy.uint32)
    d_res5 = cupy.empty(5 * count, cupy.int32)
    trace = function("many_pairs.cu", f"trace_pairs<{g}, {ROWS}>")
    blocks = min(-(-count // 128), 65535)
    trace((blocks,), (128,), (np.int32(mode), d_q, d_t, d_qs, d_ts, d_m, d_n, order,
                              np.int32(count), dirs, d_doff, d_ends, roff, runs, d_res5))
    clock("traceback")
    del dirs
    poff = cupy.zeros(count + 1, cupy.int64)
    cupy.cumsum(d_res5[4::5].astype(cupy.int64), out=poff[1:])
    total = int(poff[-1])
    packed = cupy.empty(max(total, 1), cupy.uint32)
    pack = function("many_pairs.cu", "pack_runs")
    pack((blocks,), (128,), (runs, roff, d_res5, poff, np.int32(count), packed))
    clock("pack")
    download(d_ends, ends.reshape(-1))
    download(d_res5, res5.reshape(-1))
    host_runs = download(packed[:total])
    clock("download")
    if (res5[:, 4] < 0).any():
        raise DeviceError("the pairs' traceback left results unwritten")
    return host_runs
