"""The CPU database scan: :class:`CpuScanner` runs the inter-sequence SIMD kernel
(``intersequence.py``) over the database chunk by chunk on every core; its cost model is
``T = h_call * queries + cells / rate`` (the kernel pads nothing), calibrated by
:func:`calibrate_cpu`."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...ranking import PLUS, Candidates, Thresholds, merge, thresholds_of, top
from ...scoring import Scoring
from ..calibration import Model, device_name, load, model_version
from ..common import LOCAL, query_type, residue_ranges
from .compile import SECONDS, notice
from .intersequence import local_ends, scan_slice, scores
from .small import SMALL_CELLS, small_pairs

#: the CPU engine scans the database in chunks of at most this many residues (memory-mapped
#: databases are read chunk by chunk; the translated copy of a chunk is this large)
CPU_CHUNK = 1 << 26
#: a scan of at most this many DP cells aligns each pair with the small calls' traceback
#: kernel that the search's hits then take too (exact, the same scores and end cells)
#: instead of compiling the inter-sequence kernel for it: the README example's first run
TINY_CELLS = SMALL_CELLS


class CpuScanner:
    """Scores queries against every database sequence (``residues``, possibly memory-mapped,
    and ``offsets``; ``lut`` the codes' translation to the scoring's, None: the same) with
    the inter-sequence kernel on all cores, CPU_CHUNK residues at a time; the contract of
    ``wavedp.engines.protocol.Scanner``."""

    def __init__(self, residues: np.ndarray, offsets: np.ndarray, lut: np.ndarray | None,
                 sub: np.ndarray, gap_open: int, gap_extend: int, mode: int) -> None:
        self.residues, self.offsets, self.lut, self.mode = residues, offsets, lut, mode
        self.sub = np.ascontiguousarray(sub, dtype=np.int32)
        self.gaps = int(gap_open), int(gap_extend)

    def with_table(self, sub: np.ndarray) -> CpuScanner:
        """This scanner scoring with another table (a profile's rows)."""
        return CpuScanner(self.residues, self.offsets, self.lut, sub, *self.gaps, self.mode)

    def top(self, queries: list[np.ndarray], k: int, thresholds: Thresholds,
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores above its threshold."""
        # a first search compiles the scan at one or two widths (a tiny one: the small
        # calls' traceback kernel, which its hits take too); the hits' traceback says its
        # own compiling when it comes (its kernel depends on their cells)
        notice(self._compiles(queries))
        found: list[list] = [[] for _ in queries]
        limits = thresholds_of(thresholds)
        for start, j, s in self._scores(queries, progress):
            idx = top(s, k, limits[j])
            found[j].append((idx + start, s[idx], PLUS))
        return [merge(parts, k)[:2] for parts in found]

    def every_hit(self, queries: list[np.ndarray], thresholds: Thresholds,
                  progress: Callable[[int], None] | None = None
                  ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Each query's every database index at or above its threshold, ranked, with the
        end cells (local mode): the kernel tracks them as it scores, one pass."""
        if self.mode != LOCAL:
            raise ValueError("end cells are tracked in local mode only")
        notice(self._compiles(queries))
        found: list[list] = [[] for _ in queries]
        limits = thresholds_of(thresholds)
        for start, j, (s, ends) in self._scores(queries, progress, ends=True):
            idx = top(s, 0, limits[j])
            found[j].append((idx + start, s[idx], PLUS, ends[idx]))
        none = np.zeros((0, 2), np.int64)  # a query without parts: no candidates
        return [(index, score, none if ends is None else ends) for index, score, _, ends in
                (merge(parts, 0) for parts in found)]

    def matrix(self, queries: list[np.ndarray],
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Every query's exact score against every database sequence: int32, queries x
        database, in database order (no ranking)."""
        notice(self._compiles(queries))
        out = np.empty((len(queries), len(self.offsets) - 1), np.int32)
        for start, j, s in self._scores(queries, progress):
            out[j, start:start + s.size] = s
        return out

    def _tiny(self, queries: list[np.ndarray]) -> bool:
        """Whether the scan of ``queries`` is at most TINY_CELLS cells."""
        return sum(q.size for q in queries) * int(self.offsets[-1]) <= TINY_CELLS

    def _compiles(self, queries: list[np.ndarray]) -> list:
        """The kernels a scan of ``queries`` calls (:func:`compile.notice`'s calls)."""
        if self._tiny(queries):
            return [(small_pairs, None, SECONDS["small"])]
        return [(scan_slice, None, SECONDS["scan"] * (2 if self.mode == LOCAL else 1))]

    def _scores(self, queries: list[np.ndarray], progress: Callable[[int], None] | None,
                ends: bool = False) -> Iterator[tuple[int, int, Any]]:
        """(first database index of the chunk, query index, the query's scores against the
        chunk, with ``ends`` (local mode) a pair (scores, end cells)) for every chunk of at
        most CPU_CHUNK residues and every query."""
        if self._tiny(queries):
            yield from self._aligned(queries, progress, ends)
            return
        for start, stop in residue_ranges(self.offsets, CPU_CHUNK):
            lo, hi = int(self.offsets[start]), int(self.offsets[stop])
            residues = np.asarray(self.residues[lo:hi])
            if self.lut is not None:
                residues = self.lut[residues]
            offsets = np.asarray(self.offsets[start:stop + 1]) - lo
            for j, q in enumerate(queries):
                yield start, j, (local_ends(q, residues, offsets, None, self.sub, *self.gaps)
                                 if ends else
                                 scores(q, residues, offsets, self.sub, *self.gaps, self.mode))
                if progress is not None:
                    progress(q.size * (hi - lo))


    def _aligned(self, queries: list[np.ndarray], progress: Callable[[int], None] | None,
                 ends: bool) -> Iterator[tuple[int, int, Any]]:
        """:meth:`_scores` of a tiny scan: every pair aligned by the pairwise engine (its
        score and end cell are the scan's, by ``docs/design.md``)."""
        from . import align_cat, concat  # lazy: the package imports this module

        # writable copies (a tiny scan's database is small): the kernel compiles once more
        # for read-only arguments, such as a memory-mapped database's
        residues = np.array(self.residues) if self.lut is None else self.lut[self.residues]
        offsets = np.array(self.offsets, np.int64)
        qcat, qoff = concat(queries, query_type(self.sub))
        n = offsets.size - 1
        pairs = np.stack(np.divmod(np.arange(len(queries) * n, dtype=np.int64), max(n, 1)),
                         axis=1)
        out, _, _ = align_cat(qcat, qoff, residues, offsets, pairs, self.sub, *self.gaps,
                              mode=self.mode, traceback=True)
        for j, q in enumerate(queries):
            row = out[j * n:(j + 1) * n]
            score = row[:, 0].astype(np.int32)
            yield 0, j, ((score, row[:, [2, 4]].astype(np.int64)) if ends else score)
            if progress is not None:
                progress(q.size * int(offsets[-1]))


DEFAULT_CPU = Model(kind="cpu", device="default", version="", calibrated=False,
                    rates={"cells": 5e9}, launch=1e-4)


@functools.cache
def cpu_model() -> Model:
    """This process's CPU model: its calibration, else :data:`DEFAULT_CPU` (loaded once)."""
    return load("cpu") or DEFAULT_CPU


def cpu_seconds(model: Model, query_m: np.ndarray, total: int) -> float:
    """Predicted seconds of the CPU scan of queries of ``query_m`` residues against
    ``total`` database residues."""
    return model.launch * len(query_m) + float(np.sum(query_m)) * total / model.rates["cells"]


def calibrate_cpu(say: Callable[[str], None]) -> Model:
    """Measure this CPU's constants on every core (the first run includes Numba's compile);
    ``say`` hears what is being measured."""
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    rng = np.random.default_rng(0)
    sub = np.ascontiguousarray(scoring.table, np.int32)
    say("two database sizes on every core (Numba compile included the first time)")
    timings = []
    for subjects in (2_000, 40_000):
        offsets = np.arange(subjects + 1, dtype=np.int64) * 300
        residues = rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8)
        query = rng.integers(0, 20, 300, dtype=np.uint8)
        scores(query, residues, offsets, sub, 11, 1, LOCAL)  # compile or cache load
        best = []
        for _ in range(3):
            start = time.perf_counter()
            scores(query, residues, offsets, sub, 11, 1, LOCAL)
            best.append(time.perf_counter() - start)
        timings.append((300.0 * int(offsets[-1]), min(best)))
    (c1, t1), (c2, t2) = timings
    rate = (c2 - c1) / max(t2 - t1, 1e-9)
    return Model(kind="cpu", device=device_name("cpu"), version=model_version(),
                 rates={"cells": rate}, launch=max(0.0, t1 - c1 / rate))
