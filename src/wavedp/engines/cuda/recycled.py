"""Host arrays on pages that outlive them: large result arrays from a pool of mappings.

Every call of the many-pairs engine hands back new result arrays (scores, coordinates,
CIGAR runs), and NumPy maps each large one fresh, so the call's copies down fault every page
in again: on the H200 machine 360 MB written on 16 threads took 17-22 ms into fresh pages and
9-11 ms into pages already touched. :func:`empty` gives arrays of at least POOL_LEAST bytes
from anonymous mappings that go back to a pool once no array uses them (a weak reference on
the buffer every view of them holds), so the next call's results land on pages in place. The
pool keeps at most POOL_KEEP bytes of unused mappings; the rest go back to the system.
"""

from __future__ import annotations

import math
import mmap
import threading
import weakref

import numpy as np

#: arrays of at least this many bytes come from the pool (NumPy's allocator reuses the pages
#: of smaller ones already)
POOL_LEAST = 4 << 20
#: the most bytes of unused mappings the pool keeps
POOL_KEEP = 512 << 20
#: mappings are made in multiples of this (the huge page size)
GRANULE = 2 << 20
#: False: :func:`empty` is ``np.empty``. Off until measured on the GPU, on and off in one
#: run (``benchmarks/pairs.py --switch recycled.RECYCLE=0,1``)
RECYCLE = False


class _Pool:
    """Unused mappings, each taken whole by one array of at most its size and at least half
    of it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.unused: list[mmap.mmap] = []

    def take(self, nbytes: int) -> mmap.mmap:
        with self.lock:
            fits = [m for m in self.unused if nbytes <= len(m) <= 2 * nbytes]
            if fits:
                best = min(fits, key=len)
                self.unused.remove(best)
                return best
        made = mmap.mmap(-1, -(-nbytes // GRANULE) * GRANULE,
                         flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            try:
                made.madvise(mmap.MADV_HUGEPAGE)
            except OSError:
                pass
        return made

    def give(self, mapping: mmap.mmap) -> None:
        """``mapping`` unused again (no array holds it): kept, and the oldest ones closed
        while more than POOL_KEEP bytes are kept."""
        with self.lock:
            self.unused.append(mapping)
            while sum(len(m) for m in self.unused) > POOL_KEEP:
                try:
                    self.unused.pop(0).close()
                except BufferError:  # still exported: unmapped once collected
                    pass

    def kept(self) -> int:
        """Bytes of unused mappings kept."""
        with self.lock:
            return sum(len(m) for m in self.unused)


_pool = _Pool()


def empty(shape: int | tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised array like ``np.empty(shape, dtype)``; from the pool where it holds
    at least POOL_LEAST bytes (and RECYCLE)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    if not RECYCLE or nbytes < POOL_LEAST:
        return np.empty(shape, dtype)
    mapping = _pool.take(nbytes)
    array = np.frombuffer(mapping, dtype, count)
    holder = array.base  # NumPy's own view of the mapping, which every array made from
    # this one holds (as its base, or its base's base): once it is collected, none is left
    if holder is mapping:  # a NumPy that holds the mapping itself: no way to see it unused
        _pool.give(mapping)
        return np.empty(shape, dtype)
    weakref.finalize(holder, _pool.give, mapping).atexit = False
    return array.reshape(shape)


def kept() -> int:
    """Bytes of unused mappings the pool keeps."""
    return _pool.kept()
