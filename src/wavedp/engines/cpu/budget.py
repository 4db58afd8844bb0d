"""Host memory a CPU traceback needs, checked before any work: the pairs that run at once
(one a thread, the largest first) and the letters every pair may write, against what the
machine has free and what this process may still map (``ulimit -v``)."""

from __future__ import annotations

import os
import resource

import numpy as np

from ...errors import InputError
from .rows import traceback_bytes


def available() -> int:
    """Bytes this process can still allocate: the machine's available memory, and under an
    address-space limit what is left of it."""
    free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    free = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit != resource.RLIM_INFINITY:
        try:
            with open("/proc/self/status") as fh:
                size = next(int(line.split()[1]) * 1024 for line in fh
                            if line.startswith("VmSize:"))
        except (OSError, StopIteration):
            size = 0
        free = min(free, limit - size)
    return max(free, 0)


def shapes(qlen: np.ndarray, tlen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (m, n) of these pairs (k x 2, sorted) and each pair's row among them (a
    batch of reads has a handful: each is priced once)."""
    qlen, tlen = np.asarray(qlen, np.int64), np.asarray(tlen, np.int64)
    wide = int(tlen.max()) + 1 if tlen.size else 1
    keys, inverse = np.unique(qlen * wide + tlen, return_inverse=True)
    return np.stack(np.divmod(keys, wide), axis=1), inverse.ravel()


def check_traceback(qlen: np.ndarray, tlen: np.ndarray, letters: int, threads: int,
                    distinct: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """An InputError, before any work, where the tracebacks of these pairs (m, n each) need
    more memory than :func:`available`: ``threads`` of the largest at once, and every
    pair's CIGAR letters (``distinct``: their :func:`shapes`, where known)."""
    if not qlen.size:
        return
    kinds, inverse = distinct if distinct is not None else shapes(qlen, tlen)
    each = np.array([traceback_bytes(int(m), int(n), letters) for m, n in kinds.tolist()],
                    np.int64)[inverse]
    top = min(max(threads, 1), each.size)
    largest = np.partition(each, each.size - top)[each.size - top:]
    need = int(largest.sum()) + int((qlen + tlen).sum())
    have = available()
    if need > have:
        k = int(np.argmax(each))
        raise InputError(
            f"the CPU traceback of these pairs needs {need / 2**30:.2f} GiB "
            f"({int(qlen[k]):,} x {int(tlen[k]):,} the largest pair), "
            f"{have / 2**30:.2f} GiB available: align on a GPU, score-only (--score-only), "
            "or with fewer threads (--threads)")
