"""The scan engines behind ``wavedp.search``: each scores encoded queries against every
database sequence and keeps each query's best candidates (DESIGN.md's order)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..scoring import Scoring
from .database import Database
from .ranking import PLUS, merge, top

#: the CPU engine scans the database in chunks of at most this many residues (memory-mapped
#: databases are read chunk by chunk; the translated copy of a chunk is this large)
CPU_CHUNK = 1 << 26

Candidates = tuple[np.ndarray, np.ndarray]  # database indices, scores (ranked)


class CpuScanner:
    """Numba inter-sequence SIMD kernel (``engines.cpu.intersequence``), all cores."""

    def __init__(self, db: Database, lut: np.ndarray | None, scoring: Scoring, mode: int):
        self.db, self.lut, self.mode = db, lut, mode
        self.sub = np.ascontiguousarray(scoring.table, dtype=np.int32)
        self.gaps = scoring.gap_open, scoring.gap_extend

    def top(self, queries: list[np.ndarray], k: int, thresholds: list[int | None],
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores above its threshold."""
        from ..engines.cpu.intersequence import scores

        found: list[list] = [[] for _ in queries]
        for start, stop in self.db.chunks(CPU_CHUNK):
            lo, hi = int(self.db.offsets[start]), int(self.db.offsets[stop])
            residues = np.asarray(self.db.residues[lo:hi])
            if self.lut is not None:
                residues = self.lut[residues]
            offsets = np.asarray(self.db.offsets[start:stop + 1]) - lo
            for j, q in enumerate(queries):
                s = scores(q, residues, offsets, self.sub, *self.gaps, self.mode)
                idx = top(s, k, thresholds[j])
                found[j].append((idx + start, s[idx], PLUS))
                if progress is not None:
                    progress(q.size * (hi - lo))
        return [merge(parts, k)[:2] for parts in found]


def scanner_for(device: str, db: Database, lut: np.ndarray | None, scoring: Scoring,
                mode: int, devices: tuple[int, ...] | None = None, partition: str = "auto"):
    """The scan engine of a resolved device (``cpu`` or ``gpu``; on the GPUs ``devices``,
    checked, default every visible one, their launches cut by ``partition``: the CPU's
    inter-sequence kernel pads nothing, so it has no use for one)."""
    if device == "gpu":
        from .. import device as _device
        from ..distributed import GpuScanner

        return GpuScanner(db, lut, scoring, mode, _device.gpus(devices), partition)
    return CpuScanner(db, lut, scoring, mode)
