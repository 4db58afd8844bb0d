"""A many-pairs call cut into chunks (``many_pairs.align``): consecutive pair ranges, each
written, sent and swept while the GPU sweeps the one before, within the caps on a chunk's
bytes, its pairs and its saved words on the GPU; and a chunk's arrays written into their
page-locked slot (:func:`fill`, on the :func:`filler`'s thread)."""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...errors import InputError
from ..common import Sides
from . import nibbles, transfer

#: bytes a chunk (residues and PAIR_BYTES a pair), so its copies overlap another chunk's
#: sweep
CHUNK_BYTES = 96 << 20
PAIR_BYTES = 24
#: a call goes in at least this many chunks (each at most its share of the pairs, but at least
#: LEAST_PAIRS), so its results come down while its later chunks run (one H200, 500,000
#: proteins with CIGARs: 0.057 -> 0.049-0.050 s); a chunk costs the host about 0.3 ms
LEAST_CHUNKS = 4
LEAST_PAIRS = 4096
#: a call's first chunk holds at most a FIRST-th of CHUNK_BYTES, so that the GPU's first
#: sweep starts sooner (1: as the others)
FIRST = 2
#: GPU memory for the saved borders of the two chunks on the GPU at once (at most a third free)
SAVE_BYTES = 48 << 30


def chunks(sides: Sides, saved: tuple[int, int] | None,
           offsets: tuple[np.ndarray, np.ndarray] | None = None, *,
           units: Callable | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive pair ranges of about CHUNK_BYTES (residues and PAIR_BYTES a pair), at
    most a LEAST_CHUNKS-th of the pairs (or LEAST_PAIRS), whose saved words fit a launch's
    share of the GPU's memory (two chunks are on the GPU at once), each cut as it is asked
    for: ``saved`` (g, words a unit) with a traceback (``many_pairs.saved_units``), None
    score-only; the pairs' words are counted only where a bound (the longest sides', the most
    pairs a chunk holds) says they can bind, and a pair whose words alone cannot fit is an
    InputError at the first cut. ``offsets``: the one-to-one pairs' query and target
    offsets, whose differences are the residues' running sums (no pass over the pairs).
    ``units``: a pair's words, with ``saved`` (``many_pairs.saved_units``, or ``dir_units``
    for direction bits)."""
    m, n = sides.m, sides.n
    count = int(m.size)

    def running(values: np.ndarray):
        sums = np.zeros(count + 1, np.int64)
        np.cumsum(values, dtype=np.int64, out=sums[1:])
        return sums.__getitem__

    if offsets is not None:
        qoff, toff = offsets
        q0, t0 = int(qoff[0]), int(toff[0])
        weights = [(lambda k: int(qoff[k]) - q0 + int(toff[k]) - t0 + PAIR_BYTES * k,
                    CHUNK_BYTES)]
    elif sides.uniform:  # one shape: no pass over the pairs
        weights = [(lambda k: k * (sides.m_max + sides.n_max + PAIR_BYTES), CHUNK_BYTES)]
    else:
        weights = [(running(m + n + PAIR_BYTES), CHUNK_BYTES)]
    weights.append((lambda k: k, max(-(-count // LEAST_CHUNKS), LEAST_PAIRS)))
    if saved is not None:
        if units is None:
            raise ValueError("pair_chunks.chunks: saved words need their units")
        import cupy

        g, unit = saved
        free, _ = cupy.cuda.runtime.memGetInfo()
        budget = min(SAVE_BYTES, free // 3) // 8
        bound = int(units(np.int64(sides.m_max), np.int64(sides.n_max), g)) * unit
        most = CHUNK_BYTES // (PAIR_BYTES + sides.m_min + sides.n_min) + 1
        if min(most, count) * bound > budget:  # the words can bind
            words = units(np.asarray(m, np.int64), np.asarray(n, np.int64), g) * unit
            largest = int(words.max())
            if largest > budget:
                raise InputError(f"a batch of pairs needs {4 * largest / 2**20:.1f} MiB of "
                                 f"GPU memory for its largest pair, {free / 2**20:.1f} MiB "
                                 "free")
            weights.append((running(words), budget))
    (total_bytes, cap_bytes), *others = weights
    firsts = [(total_bytes, cap_bytes // max(1, FIRST)), *others]  # the first chunk's caps
    start = 0
    while start < count:  # the most pairs from start whose every running sum stays in its cap
        stop = min(bisect.bisect_right(range(count + 1), total(start) + cap, key=total) - 1
                   for total, cap in (firsts if start == 0 else weights))
        stop = max(stop, start + 1)
        yield start, stop
        start = stop


def words(part: Sides, g: int, units: Callable) -> int:
    """The saved units of the pairs ``part`` (``units``: ``many_pairs.saved_units`` or
    ``dir_units``); one shape: no pass over them."""
    if part.uniform:
        return part.m.size * int(units(np.int64(part.m_max), np.int64(part.n_max), g))
    return int(units(np.asarray(part.m, np.int64), np.asarray(part.n, np.int64), g)
               .sum(dtype=np.int64))


@functools.cache
def filler() -> ThreadPoolExecutor:
    """The thread that writes a chunk into its page-locked slot (:func:`fill`)."""
    return ThreadPoolExecutor(1, thread_name_prefix="wavedp-pairs-fill")


def fill(views: list[np.ndarray], sources: list[np.ndarray], nibbled: bool = False,
         parallel: bool = False, spans: bool = False) -> None:
    """Each source into its view of a page-locked slot (``spans``: the last two are offsets,
    their views the differences): a large one-to-one chunk by ``writes``' kernel where
    ``parallel``, else all on the writers' threads at once (``transfer.host_work``)."""
    from . import writes  # lazy: Numba

    if not (parallel and writes.write(views, sources, nibbled, transfer.THREADS)):
        transfer.host_work(jobs(views, sources, nibbled, spans), own=True)


def jobs(views: list[np.ndarray], sources: list[np.ndarray], nibbled: bool,
         spans: bool = False) -> list:
    """``transfer.host_work``'s jobs writing each source into its view; ``nibbled``: the
    first two (the residues) packed two letters a byte; ``spans``: the last two offsets,
    written as their differences."""
    def job(k: int, view: np.ndarray, source: np.ndarray):
        if nibbled and k < 2:
            return nibbles.packer(view, source)
        if spans and k >= 2:
            return transfer.differ(view, source)
        return transfer.copier(view, source)
    return [job(k, view, source)
            for k, (view, source) in enumerate(zip(views, sources, strict=True))]
