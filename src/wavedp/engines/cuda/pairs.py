"""Pairwise alignment on the GPU: each pair by the strategy asked for.

Strategies (one engine, the strategy a parameter):
- ``multipass`` (default): the single-kernel multi-pass wavefront, score-only and traceback;
  pairs of up to ``batch.MAX_CELLS`` cells run many per launch instead, a warp per pair
  (``batch``);
- ``diagonal``: the cells of one anti-diagonal per step, ``storage`` ``coalesced`` (default)
  or ``simple``, score-only;
- ``tiled``: a tile per block in shared memory, one tile diagonal per step, score-only.
``diagonal`` and ``tiled`` run under any ``sync`` of ``engines/cuda/sync.py`` (default
``cpu-implicit``: one launch per step).
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from ..common import STRATEGIES, empty_pair
from . import batch, diagonal, tiled
from .multipass import check_free, end_cell, sweep, sweep_bytes, upload
from .sync import check_sync


def align_pairs(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
                sub: np.ndarray, gap_open: int, gap_extend: int, mode: int, traceback: bool, *,
                strategy: str = "multipass", sync: str | None = None,
                storage: str | None = None, profile: bool = False):
    """Same contract as ``wavedp.engines.cpu.align_pairs``, on the GPU. ``profile``: ``sub``
    is profiles' table, each query's codes a run of its rows: the batch engine and the
    multipass engine read them (the strategies diagonal and tiled take a matrix)."""
    if profile and strategy != "multipass":
        raise InputError(f"strategy {strategy!r} takes a substitution matrix, not a profile")
    if strategy not in STRATEGIES:
        raise InputError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if strategy != "multipass" and traceback:
        raise InputError(f"strategy {strategy!r} is score-only: use traceback=False")
    if sync is not None and strategy == "multipass":
        raise InputError("sync applies to the strategies diagonal and tiled only")
    if storage is not None and strategy != "diagonal":
        raise InputError("storage applies to the strategy diagonal only")
    sync = check_sync(sync or "cpu-implicit")
    storage = storage or "coalesced"
    diagonal.check_storage(storage)
    results: list = [None] * len(pairs)
    small = [p for p, (a, b) in enumerate(pairs.tolist())
             if strategy == "multipass" and batch.takes(qcodes[a].size, tcodes[b].size,
                                                        profile=profile)]
    for p, found in zip(small, batch.align(qcodes, tcodes, pairs[small], sub, gap_open,
                                           gap_extend, mode, traceback, profile=profile),
                        strict=True):
        results[p] = found
    rest = sorted(set(range(len(pairs))) - set(small))
    if traceback:  # its host walk is a Numba kernel: a score-only search loads no Numba
        from .traceback import align_traceback, check_memory
    for p in rest:
        m, n = qcodes[pairs[p, 0]].size, tcodes[pairs[p, 1]].size
        if traceback:
            check_memory(m, n, traceback)
        else:
            check_free(sweep_bytes(m, n), f"a {m} x {n} pair")
    for p in rest:
        q, t = qcodes[pairs[p, 0]], tcodes[pairs[p, 1]]
        if q.size == 0 or t.size == 0:  # nothing for a kernel to do: the boundary decides
            results[p] = empty_pair(q.size, t.size, mode, gap_open, gap_extend, traceback)
            continue
        dev = upload(q, t, sub, gap_open, gap_extend, mode, profile)
        if traceback:
            results[p] = align_traceback(dev, q, t)
            continue
        if strategy == "diagonal":
            score, ei, ej = diagonal.score(dev, storage, sync)
        elif strategy == "tiled":
            score, ei, ej = tiled.score(dev, sync)
        else:
            score, ei, ej = end_cell(dev, sweep(dev, 0, dev.m, 0, dev.n))
        results[p] = (score, -1, ei, -1, ej, None)
    return results

