"""The lab's bitonic sort (Xiao and Feng, Fig. 15): multi-block, one barrier (or launch) per
merge step, int32 or float32 keys, under every synchronization strategy; ``cupy.sort`` (CUB)
is the anchor."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import numpy as np

from ..engines.cuda import sync as syncs
from ..errors import InputError
from .timing import by_strategy, seconds

THREADS = 256
FILE = "lab_sort.cu"
TYPES = {np.dtype(np.int32): "int", np.dtype(np.float32): "float"}


def merge_steps(logn: int) -> list[tuple[int, int]]:
    """The (log2 k, log2 j) merge steps of a bitonic sort of 2^logn keys, in order."""
    return [(logk, logj) for logk in range(1, logn + 1) for logj in range(logk - 1, -1, -1)]


class Plan:
    """A sort of one device array of int32 or float32 keys (padded to a power of two with the
    largest key) under one strategy; :meth:`run` may be repeated: each run sorts a fresh copy
    of the keys into :attr:`keys`."""

    def __init__(self, x, sync: str, blocks: int | None = None, threads: int = THREADS,
                 timeout_ns: int = syncs.TIMEOUT_NS) -> None:
        import cupy

        syncs.check_sync(sync, (*syncs.SYNCS, "none"))
        x = cupy.asarray(x)
        if x.dtype not in TYPES:
            raise InputError(f"keys must be int32 or float32, got {x.dtype}")
        if x.dtype.kind == "f" and bool(cupy.isnan(x).any()):
            raise InputError("keys must not be NaN")
        self.size = int(x.size)
        self.logn = max(self.size - 1, 0).bit_length()
        top = np.iinfo(np.int32).max if x.dtype.kind == "i" else np.inf
        self.source = cupy.full(1 << self.logn, top, dtype=x.dtype)
        self.source[:self.size] = x.ravel()
        self.keys = cupy.empty_like(self.source)
        kind = TYPES[x.dtype]
        work = max(-(-(1 << self.logn) // 2 // threads), 1)  # blocks for a pair per thread
        if sync in syncs.HOST_SYNCS:
            step = syncs.kernel(FILE, f"sort_step<{kind}>", sync)
            self.plan: syncs.Runnable = syncs.HostSteps(
                sync, [(step, blocks or work, threads,
                        (self.keys, np.int32(self.logn), np.int32(k), np.int32(j)), 0)
                       for k, j in merge_steps(self.logn)])
        else:
            kern = syncs.kernel(FILE, f"sort_steps<{kind}, {syncs.KINDS[sync]}>", sync)
            blocks = blocks or min(work, syncs.co_resident(kern, threads))
            self.plan = syncs.Persistent(sync, kern, blocks, threads,
                                         (self.keys, np.int32(self.logn)), 0, timeout_ns)
        self.steps = len(merge_steps(self.logn))

    def run(self) -> None:
        """Enqueue a sort of a fresh copy of the keys on the current stream."""
        self.keys[...] = self.source
        if self.logn:
            self.plan.run()

    def check(self) -> None:
        """Wait for it; DeviceError if a barrier failed."""
        self.plan.check()

    def result(self):
        """The sorted keys of the last run (a device array)."""
        return self.keys[:self.size]


def limit(threads: int = THREADS) -> int:
    """The co-resident maximum of the persistent sort kernels."""
    return syncs.limit(FILE, [f"sort_steps<{t}, {k}>" for t in TYPES.values()
                              for k in syncs.KINDS.values()], threads)


def sort(x, sync: str = "lockfree", blocks: int | None = None) -> np.ndarray:
    """``x`` (int32 or float32, not NaN) sorted ascending on the GPU under ``sync``."""
    plan = Plan(x, sync, blocks)
    plan.run()
    plan.check()
    return plan.result().get()


def keys(rng: np.random.Generator, size: int, dtype) -> np.ndarray:
    """Random keys of ``dtype`` with repeats (int32 in a range of size / 4 values)."""
    if np.dtype(dtype).kind == "i":
        return rng.integers(-(size // 8) - 1, size // 8 + 1, size, dtype=np.int32)
    return rng.standard_normal(size).astype(np.float32)


def measure(sizes: Iterable[int], sync_names: Iterable[str], blocks_list: Iterable[int],
            dtypes: Iterable = (np.int32, np.float32), repeats: int = 3,
            progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per (dtype, size, block count, strategy) with seconds, the compute-only seconds
    (no barrier) and cupy.sort's seconds (the anchor), all measured in this sweep; ``exact``
    says whether the result equals numpy.sort. Each run sorts a fresh copy of the keys."""
    import cupy

    rng = np.random.default_rng(17)
    rows = []
    names = list(sync_names)
    for dtype in dtypes:
        for size in sizes:
            host = keys(rng, size, dtype)
            x = cupy.asarray(host)
            expected = np.sort(host)
            anchor = seconds(functools.partial(cupy.sort, x), lambda: None, repeats)
            for blocks, sync, plan, total, t_compute in by_strategy(
                    functools.partial(Plan, x), blocks_list, names, repeats):
                rows.append({"dtype": np.dtype(dtype).name, "size": size, "blocks": blocks,
                             "sync": sync, "seconds": total, "compute": t_compute,
                             "anchor": anchor, "steps": plan.steps,
                             "exact": bool(np.array_equal(plan.result().get(), expected))})
            if progress:
                progress(f"sort: {np.dtype(dtype).name} 2^{max(size - 1, 0).bit_length()} done")
    return rows
