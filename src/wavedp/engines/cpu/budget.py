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


def check_traceback(qlen: np.ndarray, tlen: np.ndarray, letters: int, threads: int) -> None:
    """An InputError, before any work, where the tracebacks of these pairs (m, n each) need
    more memory than :func:`available`: ``threads`` of the largest at once, and every
    pair's CIGAR letters."""
    if not qlen.size:
        return
    shapes, inverse = np.unique(np.stack([qlen, tlen], axis=1), axis=0, return_inverse=True)
    each = np.array([traceback_bytes(int(m), int(n), letters) for m, n in shapes.tolist()],
                    np.int64)[inverse.ravel()]
    largest = np.sort(each)[::-1][:max(threads, 1)]
    need = int(largest.sum()) + int((qlen + tlen).sum())
    have = available()
    if need > have:
        k = int(np.argmax(each))
        raise InputError(
            f"the CPU traceback of these pairs needs {need / 2**30:.2f} GiB "
            f"({int(qlen[k]):,} x {int(tlen[k]):,} the largest pair), "
            f"{have / 2**30:.2f} GiB available: align on a GPU, score-only (--score-only), "
            "or with fewer threads (--threads)")
