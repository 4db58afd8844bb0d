"""Launcher of the per-anti-diagonal strategy (``kernels/diagonal.cu``), score-only.

Xiao, Aji and Feng's fine-grained design: the cells of an anti-diagonal one per thread,
diagonals one after another, under any synchronization strategy of ``engines/cuda/sync.py`` (one
launch per diagonal, or one persistent kernel with an in-kernel barrier between diagonals),
with the diagonals stored ``simple`` (anti-diagonal-major, packed) or ``coalesced``
(64-byte-aligned rows, aligned warps).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ..common import GLOBAL, LOCAL, NEG
from . import sync as syncs
from .multipass import EDGES, ROWS_BEST, Pair, best_cell, scratch

STORAGES = ("simple", "coalesced")
#: threads per block
BLOCK = 256


def check_storage(storage: str) -> int:
    """The kernel's storage code (``kernels/diagonal.cu``), or an InputError."""
    if storage not in STORAGES:
        raise InputError(f"storage must be one of {', '.join(STORAGES)}, got {storage!r}")
    return STORAGES.index(storage)


def row_end_cell(p: Pair, rowbest, rowcol, lastcol, lastrow) -> tuple[int, int, int]:
    """(score, end_i, end_j) from per-row bests (local) or the last row and column (global,
    semiglobal; indexed by i and j from 0), by docs/design.md's tie rule."""
    m, n = p.m, p.n
    if p.mode == LOCAL:  # per-row bests, each at the row's first column reaching it
        score, i, j = best_cell(ROWS_BEST, rowbest, rowcol, count=m + 1)
        return (0, 0, 0) if score <= 0 else (score, i, j)
    if p.mode == GLOBAL:
        return int(lastrow[n:n + 1].get()[0]), m, n
    return best_cell(EDGES, lastcol[1:], lastrow[1:], m, n, m + n + 1)


class EndCellSweep:
    """What the score-only sweeps (this module's and ``tiled``'s) share: the end-cell outputs
    (per-row bests for local mode, the last row and column otherwise), the arguments every
    kernel takes first, and the result read from them. Subclasses set ``plan``."""

    plan: syncs.Runnable

    def __init__(self, p: Pair) -> None:
        import cupy

        self.p = p
        self.rowbest = cupy.zeros(p.m + 1, dtype=cupy.int32)
        self.rowcol = cupy.zeros(p.m + 1, dtype=cupy.int32)
        self.lastcol = scratch(p.m + 1, np.int32)
        self.lastrow = scratch(p.n + 1, np.int32)

    def head(self) -> tuple:
        """The pair's arguments (sequences, scores, sizes, mode), first in every kernel."""
        p = self.p
        return (p.q, p.t, p.sub, np.int32(p.alphabet), np.int32(p.gap_open),
                np.int32(p.gap_extend), np.int32(p.m), np.int32(p.n), np.int32(p.mode))

    def tail(self) -> tuple:
        """The end-cell outputs, after each kernel's own buffers."""
        return self.rowbest, self.rowcol, self.lastcol, self.lastrow

    def check(self) -> None:
        """Wait for the last run; DeviceError if a barrier failed."""
        self.plan.check()

    def result(self) -> tuple[int, int, int]:
        """(score, end_i, end_j) of the last run; DeviceError if a barrier failed."""
        self.plan.check()
        return row_end_cell(self.p, self.rowbest, self.rowcol, self.lastcol, self.lastrow)


class Sweep(EndCellSweep):
    """One pair's buffers and launches under one storage and synchronization strategy;
    :meth:`run` may be repeated (each run starts from fresh buffers).

    ``blocks``: the grid (host strategies: per diagonal, default enough for its cells;
    in-kernel barriers: the persistent grid, default enough for the longest diagonal within
    the co-resident maximum). ``sync="none"`` runs the persistent kernel without barriers
    (the lab's compute-only time; the result is then meaningless)."""

    def __init__(self, p: Pair, storage: str = "coalesced", sync: str = "cpu-implicit",
                 blocks: int | None = None, timeout_ns: int = syncs.TIMEOUT_NS) -> None:
        import cupy

        code = check_storage(storage)
        syncs.check_sync(sync, (*syncs.SYNCS, "none"))
        super().__init__(p)
        m, n = p.m, p.n
        stride = m + 1 if storage == "simple" else -(-(m + 1) // 16) * 16
        self.H = cupy.zeros(3 * stride, dtype=cupy.int32)
        self.E = cupy.full(2 * stride, NEG, dtype=cupy.int32)
        self.F = cupy.full(2 * stride, NEG, dtype=cupy.int32)
        args = (*self.head(), np.int32(stride), self.H, self.E, self.F, *self.tail())
        self.steps = m + n
        if sync in syncs.HOST_SYNCS:
            step = syncs.kernel("diagonal.cu", f"diagonal_step<{code}>", sync)
            launches = []
            for d in range(1, m + n + 1):
                ilo, ihi = max(0, d - n), min(m, d)
                first = ilo & ~15 if storage == "coalesced" else ilo
                grid = blocks or -(-(ihi - first + 1) // BLOCK)
                launches.append((step, grid, BLOCK, (*args, np.int32(d)), 0))
            self.plan: syncs.Runnable = syncs.HostSteps(sync, launches)
        else:
            kern = syncs.kernel("diagonal.cu",
                                f"diagonal_sweep<{code}, {syncs.KINDS[sync]}>", sync)
            if blocks is None:
                blocks = min(-(-(min(m, n) + 16) // BLOCK), syncs.co_resident(kern, BLOCK))
            self.plan = syncs.Persistent(sync, kern, blocks, BLOCK, args, 0, timeout_ns)

    def run(self) -> None:
        """Reset the buffers and enqueue the sweep on the current stream."""
        self.H.fill(0)
        self.E.fill(NEG)
        self.F.fill(NEG)
        self.rowbest.fill(0)
        self.plan.run()


def score(p: Pair, storage: str = "coalesced", sync: str = "cpu-implicit",
          blocks: int | None = None) -> tuple[int, int, int]:
    """(score, end_i, end_j) of one pair, diagonal by diagonal."""
    sweep = Sweep(p, storage, sync, blocks)
    sweep.run()
    return sweep.result()
