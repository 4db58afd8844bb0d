"""Waterman-Eggert non-intersecting local alignments of many pairs on the GPU (docs/design.md,
"Non-intersecting hits"): rounds of the batch kernel (``kernels/batch.cu``, FORBID).

The direction bytes of a group of pairs stay on the GPU from round to round; each round finds,
for every pair still going, the best end cell with the forbidden cells of its earlier hits
(the kernel reads them from the direction bytes), traces the hit back and marks its pairs
forbidden. A pair stops at its first hit that ``cpu.waterman_eggert.keeps`` rejects, or at ``limit``
hits. A round recomputes each live pair's whole matrix: a hit costs m x n cells.

Pairs whose direction bytes exceed ``HIT_BYTES`` take the CPU engine's linear-memory path
(``engines.cpu.waterman_eggert``: checkpointed bands, recomputed where a hit can change them), so no
pair's full matrix is kept beyond that budget.
"""

from __future__ import annotations

import numpy as np

from ..common import LOCAL
from ..cpu.waterman_eggert import RawHit, keeps
from ..cpu.waterman_eggert import hits as cpu_hits
from . import batch

#: the largest direction-byte matrix one pair may keep on the GPU (one byte per cell)
HIT_BYTES = 4 << 30


def hits(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
         sub: np.ndarray, gap_open: int, gap_extend: int, fraction: float,
         limit: int | None) -> list[list[RawHit]]:
    """``engines.cpu.waterman_eggert.hits``' contract, on the GPU."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out: list[list[RawHit]] = [[] for _ in range(len(pairs))]
    if not len(pairs):
        return out
    ms = np.array([qcodes[a].size for a in pairs[:, 0]], dtype=np.int64)
    ns = np.array([tcodes[b].size for b in pairs[:, 1]], dtype=np.int64)
    r = batch.rows_for(np.maximum(ms, 1), np.maximum(ns, 1))
    need = batch.dir_bytes(ms, ns, r)
    gpu = (ms > 0) & (ns > 0) & (need <= HIT_BYTES)
    big = np.flatnonzero((ms > 0) & (ns > 0) & ~gpu)
    for p, found in zip(big, cpu_hits(qcodes, tcodes, pairs[big], sub, gap_open, gap_extend,
                                      fraction, limit), strict=True):
        out[p] = found
    todo = np.flatnonzero(gpu)
    if not todo.size:
        return out
    budget = batch.launch_budget(int(need[todo].max()), int(ns[todo].max()))
    order = todo[np.argsort(-(ms[todo] * ns[todo]), kind="stable")]
    for group in batch.launches(order, need, budget):
        _rounds(qcodes, tcodes, pairs, group, ms, ns, r, sub, go=gap_open, ge=gap_extend,
                fraction=fraction, limit=limit, out=out)
    return out


def _rounds(qcodes, tcodes, pairs, group: np.ndarray, ms, ns, r: int, sub, *, go: int, ge: int,
            fraction: float, limit: int | None, out: list[list[RawHit]]) -> None:
    """Every round of one group of pairs (longest first), hits into ``out``."""
    g = batch.Group(qcodes, tcodes, pairs[group], ms[group], ns[group], r, sub, go, ge=ge,
                    mode=LOCAL, traceback=True, forbid=True)
    live = np.arange(group.size)
    while live.size:
        going = []
        for k, hit in zip(live.tolist(), g.run(live), strict=True):
            found = out[group[k]]
            if not keeps(hit[0], found[0][0] if found else None, fraction):
                continue
            found.append(hit)
            if len(found) != limit:
                going.append(k)
        live = np.array(going, dtype=np.int64)
