"""CUDA engine: CuPy launchers of the kernels in ``wavedp/kernels``.

Strategies (one engine, the strategy a parameter):
- ``multipass`` (default): the single-kernel multi-pass wavefront, score-only and traceback;
- ``diagonal``: one kernel launch per anti-diagonal, anti-diagonal-major storage, score-only.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError
from .. import cpu

STRATEGIES = ("multipass", "diagonal")


def align_pairs(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
                sub: np.ndarray, gap_open: int, gap_extend: int, mode: int, traceback: bool,
                strategy: str = "multipass"):
    """Same contract as ``wavedp.engines.cpu.align_pairs``, on the GPU."""
    from . import diagonal
    from .multipass import end_cell, sweep, upload
    from .traceback import align_traceback, check_memory

    if strategy not in STRATEGIES:
        raise InputError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
    if strategy == "diagonal" and traceback:
        raise InputError("strategy 'diagonal' is score-only: use traceback=False")
    for a, b in pairs.tolist():
        check_memory(qcodes[a].size, tcodes[b].size, traceback)
    results = []
    for a, b in pairs.tolist():
        q, t = qcodes[a], tcodes[b]
        if q.size == 0 or t.size == 0:  # nothing for a kernel to do: the boundary decides
            results.extend(cpu.align_pairs([q], [t], np.zeros((1, 2), np.int64), sub,
                                           gap_open, gap_extend, mode, traceback))
            continue
        p = upload(q, t, sub, gap_open, gap_extend, mode)
        if traceback:
            results.append(align_traceback(p, q, t))
            continue
        if strategy == "diagonal":
            score, ei, ej = diagonal.score(p)
        else:
            score, ei, ej = end_cell(p, sweep(p, 0, p.m, 0, p.n))
        results.append((score, -1, ei, -1, ej, None))
    return results
