"""Several GPUs of this machine (``devices=``; every visible one by default): :func:`on_gpus`
runs one part of the work per GPU, each in its own host thread on its own stream. A search
shards the database by residues (:class:`GpuScanner`: each shard resident on its GPU); pairs
to align (``align_all``, a search's hits and their non-intersecting alignments) are spread
by cells (:func:`pairs_on_gpus`). Results are merged in the hit order of ``wavedp.ranking``,
so they equal one GPU's."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ...ranking import PLUS, Candidates, Thresholds, merge
from ...trace import Trace
from ..calibration import Model
from ..common import shard_ranges
from .scan.lines import Subjects
from .scan.scanner import Scanner

#: pairs of fewer cells than this stay on the first GPU (a second one would cost more to start
#: than it saves)
SPREAD_CELLS = 2e9


@functools.cache
def stream(device: int):
    """GPU ``device``'s work stream, one a GPU for the process: CuPy's memory pool keeps a
    freed block for the stream it was made on, so a stream a call left every call's blocks
    to a stream never used again (the pairs engine's pool held 129 GiB after six calls on
    the H200, and calls slowed as it reached the GPU's memory)."""
    import cupy  # optional dependency: the GPU extra

    with cupy.cuda.Device(device):
        return cupy.cuda.Stream(non_blocking=True)


def on_gpus(devices: Sequence[int], work: Callable[[Any], Any], parts: Sequence[Any]) -> list:
    """``work(parts[i])`` on GPU ``devices[i]`` for each part, each in its own host thread and
    on its own stream (one part runs in this thread); the results in order. The first
    failure is raised once every part has stopped."""

    def run(device: int, part: Any) -> Any:
        import cupy  # optional dependency: the GPU extra

        with cupy.cuda.Device(device), cupy.cuda.Stream(non_blocking=True) as current:
            try:
                return work(part)
            finally:
                current.synchronize()

    if len(parts) == 1:
        return [run(devices[0], parts[0])]
    with ThreadPoolExecutor(len(parts), thread_name_prefix="wavedp-gpu") as pool:
        futures = [pool.submit(run, d, p) for d, p in zip(devices, parts, strict=False)]
        return [f.result() for f in futures]


def spread(costs: np.ndarray, parts: int) -> list[np.ndarray]:
    """Indices of ``costs`` in ``parts`` groups of about equal total cost (largest first,
    each to the least loaded group); each group in ascending order, none empty."""
    if not len(costs):
        return []
    parts = max(1, min(int(parts), len(costs)))
    order = np.argsort(-np.asarray(costs, np.float64), kind="stable")
    load = np.zeros(parts)
    group = np.empty(len(costs), np.int64)
    for k in order.tolist():
        g = int(np.argmin(load))
        group[k] = g
        load[g] += float(costs[k]) + 1.0
    return [np.flatnonzero(group == g) for g in range(parts)]


def pairs_on_gpus(devices: Sequence[int], align: Callable[[np.ndarray], list],
                  cells: np.ndarray) -> list:
    """``align(selection)`` (the results of those pairs, in order) over every pair, the pairs
    spread over ``devices`` by ``cells`` (one GPU below SPREAD_CELLS); results in pair
    order."""
    groups = spread(cells, len(devices) if float(np.sum(cells)) >= SPREAD_CELLS else 1)
    if not groups:
        return []
    results: list = [None] * len(cells)
    for group, found in zip(groups, on_gpus(devices, align, groups), strict=True):
        for k, r in zip(group.tolist(), found, strict=True):
            results[k] = r
    return results


class GpuScanner:
    """Scans a database (``residues`` and ``offsets``, as :class:`~.scan.scanner.Scanner`
    takes them) on the GPUs ``devices`` of this machine: a shard of about equal residues per
    GPU, resident there, each scanned by its own :class:`~.scan.scanner.Scanner` (the other
    arguments are theirs, ``order`` and ``identity`` the whole database's; they share
    ``trace``); the contract of
    ``wavedp.engines.protocol.Scanner``."""

    def __init__(self, residues: np.ndarray, offsets: np.ndarray, lut: np.ndarray | None,
                 sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                 devices: Sequence[int], *, partition: str = "auto", grid_cap: int | None = None,
                 trace: Trace | None = None, model: Model | None = None,
                 multiprocessors: int | None = None, order: Subjects | None = None,
                 identity: str | None = None) -> None:
        offsets = np.asarray(offsets)
        n = len(offsets) - 1
        self.ranges = shard_ranges(offsets, len(devices)) if n else [(0, 0)]
        self.devices = tuple(devices)[:len(self.ranges)]
        self.trace = trace if trace is not None else Trace()

        def build(device: int, shard: tuple[int, int]) -> Scanner:
            start, stop = shard
            lo, hi = int(offsets[start]), int(offsets[stop])
            part = offsets[start:stop + 1] - lo if shard != (0, n) else offsets
            whole = shard == (0, n)  # a shard sorts its own order
            return Scanner(residues if whole else residues[lo:hi], part, lut, sub, gap_open,
                           gap_extend, mode, partition, model=model, grid_cap=grid_cap,
                           trace=self.trace, device=device, multiprocessors=multiprocessors,
                           order=order if whole else None,
                           identity=identity and f"{identity}:{start}-{stop}")

        # made without the GPUs: their contexts may still be starting
        self.scanners = [build(d, shard) for d, shard in zip(self.devices, self.ranges,
                                                             strict=True)]

    def with_table(self, sub: np.ndarray) -> GpuScanner:
        """This scanner scoring with another table (a profile's rows): each GPU's resident
        shard shared (:meth:`Scanner.with_table`)."""
        other = copy.copy(self)
        other.scanners = [s.with_table(sub) for s in self.scanners]
        return other

    def top(self, queries: list[np.ndarray], k: int, thresholds: Thresholds,
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores at or above its
        threshold, ranked."""
        parts = on_gpus(self.devices, lambda s: s.top(queries, k, thresholds, progress),
                        self.scanners)
        return [merge([(part[j][0] + start, part[j][1], PLUS)
                       for part, (start, _) in zip(parts, self.ranges, strict=True)], k)[:2]
                for j in range(len(queries))]

    def matrix(self, queries: list[np.ndarray],
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Every query's exact score against every database sequence: host int32, queries x
        database, each GPU filling its shard's columns."""
        parts = on_gpus(self.devices, lambda s: s.matrix(queries, progress), self.scanners)
        return np.concatenate(parts, axis=1)
