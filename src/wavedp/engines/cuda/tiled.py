"""Launcher of the tiled strategy (``kernels/tiled.cu``), score-only.

Xiao, Aji and Feng's tiled wavefront: a TILE x TILE tile per block, swept in shared memory;
the tiles of one tile diagonal in parallel, tile diagonals one after another under any
synchronization strategy of ``engines/cuda/sync.py``.
"""

from __future__ import annotations

import numpy as np

from ..common import GLOBAL, NEG
from . import sync as syncs
from .diagonal import EndCellSweep
from .multipass import Pair

#: tile side (kernels/tiled.cu's TILE); also the threads per block, one per tile row
TILE = 128


def edge(mode: int, k: np.ndarray, gap_open: int, gap_extend: int) -> np.ndarray:
    """H on row 0 / column 0 at distance k from the origin (docs/design.md's boundaries)."""
    if mode != GLOBAL:
        return np.zeros(k.shape, np.int32)
    return np.where(k > 0, -(gap_open + (k - 1) * gap_extend), 0).astype(np.int32)


def boundaries(p: Pair) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's starting row entries (TILE + 1 per tile column: row 0 at columns
    J*TILE .. J*TILE + TILE) and column entries (column 0 at rows 0..m), H only."""
    ntc = -(-p.n // TILE)
    cols = np.arange(ntc)[:, None] * TILE + np.arange(TILE + 1)[None, :]
    return (edge(p.mode, cols.ravel(), p.gap_open, p.gap_extend),
            edge(p.mode, np.arange(p.m + 1), p.gap_open, p.gap_extend))


class Sweep(EndCellSweep):
    """One pair's buffers and launches under one synchronization strategy; :meth:`run` may
    be repeated. ``blocks``: the grid (host strategies: per tile diagonal, default one block
    per tile; in-kernel barriers: default enough for the longest tile diagonal within the
    co-resident maximum). ``sync="none"``: the compute-only persistent run."""

    def __init__(self, p: Pair, sync: str = "cpu-implicit", blocks: int | None = None,
                 timeout_ns: int = syncs.TIMEOUT_NS) -> None:
        import cupy

        syncs.check_sync(sync, (*syncs.SYNCS, "none"))
        super().__init__(p)
        m, n = p.m, p.n
        ntr, ntc = -(-m // TILE), -(-n // TILE)
        row0, col0 = boundaries(p)
        self.row0, self.col0 = cupy.asarray(row0), cupy.asarray(col0)
        self.rowH, self.colH = cupy.empty_like(self.row0), cupy.empty_like(self.col0)
        self.rowF = cupy.empty_like(self.row0)
        self.colE = cupy.empty_like(self.col0)
        args = (*self.head(), self.rowH, self.rowF, self.colH, self.colE, *self.tail())
        shared = 4 * p.alphabet * p.alphabet
        self.steps = ntr + ntc - 1
        if sync in syncs.HOST_SYNCS:
            step = syncs.kernel("tiled.cu", "tiled_step", sync)
            launches = []
            for d in range(ntr + ntc - 1):
                tiles = min(ntr - 1, d) - max(0, d - ntc + 1) + 1
                launches.append((step, blocks or tiles, TILE, (*args, np.int32(d)), shared))
            self.plan: syncs.Runnable = syncs.HostSteps(sync, launches)
        else:
            kern = syncs.kernel("tiled.cu", f"tiled_sweep<{syncs.KINDS[sync]}>", sync)
            if blocks is None:
                blocks = min(ntr, ntc, syncs.co_resident(kern, TILE, shared))
            self.plan = syncs.Persistent(sync, kern, blocks, TILE, args, shared, timeout_ns)

    def run(self) -> None:
        """Reset the buffers and enqueue the sweep on the current stream."""
        self.rowH[...] = self.row0
        self.colH[...] = self.col0
        self.rowF.fill(NEG)
        self.colE.fill(NEG)
        self.rowbest.fill(0)
        self.plan.run()


def score(p: Pair, sync: str = "cpu-implicit", blocks: int | None = None
          ) -> tuple[int, int, int]:
    """(score, end_i, end_j) of one pair, tile diagonal by tile diagonal."""
    sweep = Sweep(p, sync, blocks)
    sweep.run()
    return sweep.result()
