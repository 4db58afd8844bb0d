"""The CPU engine's CIGAR letters (each pair's written backwards) as BAM runs in CIGAR order,
on every core (``threads.spread``): a pass that counts each pair's runs, then one that writes
them, from the end of the pair's place."""

from __future__ import annotations

import numpy as np
from numba import njit

from ...cigars import op_codes
from .threads import spread


@njit(cache=True, nogil=True)
def _count(first, step, ops, opoff, nops, counts):
    """Runs of pairs first, first + step, ..."""
    for p in range(first, nops.size, step):
        a, c, last = opoff[p], 0, 0
        for x in range(nops[p]):
            if ops[a + x] != last:
                c += 1
                last = ops[a + x]
        counts[p] = c


@njit(cache=True, nogil=True)
def _fill(first, step, ops, opoff, nops, roff, codes, runs):
    """The runs of pairs first, first + step, ... (their letters backwards: the first run
    met is the CIGAR's last)."""
    for p in range(first, nops.size, step):
        a, k, w, x = opoff[p], nops[p], roff[p + 1], 0
        while x < k:
            o = ops[a + x]
            y = x + 1
            while y < k and ops[a + y] == o:
                y += 1
            w -= 1
            runs[w] = np.uint32((y - x) << 4 | codes[o])
            x = y


def runs_of(ops: np.ndarray, opoff: np.ndarray, nops: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """(runs, offsets) of pair p's ``nops[p]`` letters at ``ops[opoff[p]:]``, backwards."""
    nops = np.ascontiguousarray(nops, np.int64)
    counts = np.empty(nops.size, np.int64)
    spread(_count, nops.size, ops, opoff, nops, counts)
    offsets = np.zeros(nops.size + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    runs = np.empty(int(offsets[-1]), np.uint32)
    spread(_fill, nops.size, ops, opoff, nops, offsets, op_codes().astype(np.int64), runs)
    return runs, offsets
