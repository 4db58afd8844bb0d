"""Many small pairs per launch (``kernels/batch.cu``): a warp per pair, the end cell and the
traceback computed on the GPU, only scores, coordinates and CIGAR letters copied back.

A launch holds as many pairs as their direction bytes allow (``DIRS_BYTES``, one byte per
cell of the padded matrix); pairs run longest first, each warp taking the next by atomic
ticket. Pairs above ``MAX_CELLS`` go to the multipass engine (linear-space traceback); a
profile's (``profile=True``: its rows read through the cache) run here up to
``PROFILE_CELLS``.
"""

from __future__ import annotations

import numpy as np

from ...errors import DeviceError, InputError
from ..common import rows_run
from . import multipass
from .hostmem import settle
from .module import function
from .multipass import multiprocessors, scratch

#: rows per lane of the kernel instances (a strip is 32 of them)
ROWS = (4, 8)
#: warps per block (kernels/batch.cu's WARPS)
WARPS = 4
#: pairs of at most this many cells run here; tests lower it to 0 to exercise the multipass
#: engine on small pairs
MAX_CELLS = 1 << 24
#: a profile's pairs of at most this many cells, padded to whole strips, run here (its rows
#: read from the cache, not shared memory; above it, the multipass engine's): a byte of
#: direction a cell
PROFILE_CELLS = 1 << 28
#: GPU memory for the direction bytes of one launch (at most a quarter of the free memory;
#: a launch needs thousands of pairs to fill the GPU)
DIRS_BYTES = 8 << 30
#: GPU memory for the scratch rows of the warps in flight
SCRATCH_BYTES = 256 << 20
#: blocks per multiprocessor the grid is sized for
BLOCKS_PER_SM = 16
#: a pair costs about this many cells of a column per warp step besides its R cells a lane
STEP_CELLS = 3

Result = tuple[int, int, int, int, int, np.ndarray | None]


def takes(m: int, n: int, profile: bool = False) -> bool:
    """Whether an m x n pair runs in this engine (``profile``: a profile's, its direction
    bytes counted as the widest strips lay them out)."""
    if not profile:
        return m >= 1 and n >= 1 and m * n <= MAX_CELLS
    strip = 32 * max(ROWS)
    return m >= 1 and n >= 1 and -(-m // strip) * strip * (n + 31) <= PROFILE_CELLS


def rows_for(ms: np.ndarray, ns: np.ndarray) -> int:
    """Rows per lane for a launch: the fewest warp steps weighted by their cost."""
    def cost(r: int) -> float:
        return float(np.sum(-(-ms // (32 * r)) * (ns + 31))) * (r + STEP_CELLS)
    return min(ROWS, key=lambda r: (cost(r), -r))


def dir_bytes(m, n, r: int):
    """Direction bytes of an m x n pair (or of arrays of them): strips of 32 r rows, n + 31
    steps each, 16-byte aligned."""
    return (-(-m // (32 * r)) * (n + 31) * 32 * r + 15) // 16 * 16


def align(qcodes: list[np.ndarray], tcodes: list[np.ndarray], pairs: np.ndarray,
          sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
          traceback: bool, *, profile: bool = False) -> list[Result]:
    """``align_pairs``' contract for pairs that :func:`takes` (every m, n >= 1); ``profile``:
    ``sub`` is profiles' table, each query's codes a run of consecutive rows of it (its
    aligned columns come back ``X``: the caller compares letters)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    ms = np.array([qcodes[a].size for a in pairs[:, 0]], dtype=np.int64)
    ns = np.array([tcodes[b].size for b in pairs[:, 1]], dtype=np.int64)
    results: list[Result | None] = [None] * len(pairs)
    if not len(pairs):
        return []
    r = rows_for(ms, ns)
    need = dir_bytes(ms, ns, r)
    budget = launch_budget(int(need.max()) if traceback else 0, int(ns.max()))
    for launch in launches(np.argsort(-(ms * ns), kind="stable"), need,
                           budget if traceback else None):
        group = Group(qcodes, tcodes, pairs[launch], ms[launch], ns[launch], r, sub, gap_open,
                      ge=gap_extend, mode=mode, traceback=traceback, profile=profile)
        for p, found in zip(launch, group.run(np.arange(launch.size)), strict=True):
            results[p] = found
    return results  # type: ignore[return-value]


def launch_budget(largest: int, longest: int) -> int:
    """Direction bytes one launch may take; raises InputError when the GPU lacks the memory
    for even the largest pair."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    need = largest + 16 * (longest + 2) * WARPS
    if need > free:
        raise InputError(f"a batch of pairs needs {need / 2**20:.1f} MiB of GPU memory for its "
                         f"largest pair, {free / 2**20:.1f} MiB free")
    return max(min(DIRS_BYTES, free // 4), largest)


def launches(order: np.ndarray, need: np.ndarray, budget: int | None
             ) -> list[np.ndarray]:
    """Pairs in ``order`` cut into consecutive launches whose direction bytes (``need``) fit
    ``budget`` (None: one launch); a pair larger than the budget is a launch alone."""
    cuts, used = [0], 0
    for k, p in enumerate(order.tolist()):
        if budget is not None and k > cuts[-1] and used + int(need[p]) > budget:
            cuts.append(k)
            used = 0
        used += int(need[p])
    return [order[a:b] for a, b in zip(cuts, [*cuts[1:], order.size], strict=True)]


class Group:
    """Pairs resident on the GPU for one or more launches: residues, offsets, direction bytes
    (zeroed when ``forbid``: Waterman-Eggert rounds keep their forbidden marks there);
    ``profile``: the queries are runs of rows of ``sub`` (:func:`align`)."""

    def __init__(self, qcodes, tcodes, rows: np.ndarray, m: np.ndarray, n: np.ndarray, r: int,
                 sub, go: int, *, ge: int, mode: int, traceback: bool, forbid: bool = False,
                 profile: bool = False):
        import cupy

        self.m, self.n, self.r, self.traceback = m, n, r, traceback
        # one residue buffer: each distinct query (not a profile's) and target once
        qs = {int(a): None for a in rows[:, 0]}
        ts = {int(b): None for b in rows[:, 1]}
        parts, start = [], 0
        for table, codes in ((ts, tcodes),) if profile else ((qs, qcodes), (ts, tcodes)):
            for key in table:
                table[key] = start
                parts.append(codes[key])
                start += codes[key].size
        self.res = cupy.asarray(np.concatenate(parts).astype(np.uint8, copy=False))
        if profile:  # each query's first row of the table
            if not all(rows_run(qcodes[a]) for a in qs):
                raise ValueError("a profile query's codes must be consecutive rows")
            if sub.size >= 2**31:
                raise InputError(f"profiles of {sub.shape[0]:,} rows in all are too many "
                                 "for the GPU's pairwise engine")
            qs = {a: int(qcodes[a][0]) for a in qs}
        self.qoff = np.array([qs[int(a)] for a in rows[:, 0]], np.int64)
        self.toff = np.array([ts[int(b)] for b in rows[:, 1]], np.int64)
        need = dir_bytes(m, n, r)
        self.doff = np.zeros(len(rows), np.int64)
        self.doff[1:] = np.cumsum(need)[:-1]
        self.ooff = np.zeros(len(rows), np.int64)
        self.ooff[1:] = np.cumsum(m + n)[:-1]
        size = int(need.sum()) if traceback else 1
        self.dirs = cupy.zeros(size, cupy.uint8) if forbid else scratch(size, np.uint8)
        self.ops = cupy.empty(max(int((m + n).sum()), 1) if traceback else 1, cupy.uint8)
        self.sub = cupy.asarray(np.ascontiguousarray(sub, dtype=np.int32).ravel())
        self.a, self.go, self.ge = int(sub.shape[1]), go, ge
        self.shared = 0 if profile else 4 * self.a * self.a
        self.kernel = function("batch.cu", f"align_batch<{mode}, {r}, {_b(traceback)}, "
                                           f"{_b(forbid)}, {_b(profile)}>")

    def run(self, live: np.ndarray) -> list[Result]:
        """One launch over the pairs ``live`` (indices into the group, longest first)."""
        import cupy

        count = int(live.size)
        m, n = self.m[live], self.n[live]
        result = scratch(6 * count, np.int32)
        stride = int(n.max()) + 2
        blocks = max(1, min(-(-count // WARPS), BLOCKS_PER_SM * multiprocessors(),
                            SCRATCH_BYTES // (WARPS * 2 * stride * 8)))
        scr = cupy.empty(blocks * WARPS * 2 * stride, cupy.int64)  # int2 rows
        ticket = cupy.zeros(1, cupy.int32)
        ooff = self.ooff[live]
        self.kernel((blocks,), (32 * WARPS,), (
            self.res, cupy.asarray(self.qoff[live]), cupy.asarray(m.astype(np.int32)),
            cupy.asarray(self.toff[live]), cupy.asarray(n.astype(np.int32)), np.int32(count),
            self.sub, np.int32(self.a), np.int32(self.go), np.int32(self.ge), self.dirs,
            cupy.asarray(self.doff[live]), self.ops, cupy.asarray(ooff), scr, np.int32(stride),
            result, ticket), shared_mem=self.shared)
        settle()
        out = result.get().reshape(count, 6).astype(np.int64)
        if multipass.POISON and (out == 0x7F7F7F7F).any():
            raise DeviceError("the batch kernel left results unwritten")
        host_ops = self.ops.get() if self.traceback else None
        found: list[Result] = []
        for k in range(count):
            score, qs_, qe, ts_, te, nops = out[k].tolist()
            path = None
            if self.traceback:
                path = host_ops[ooff[k]:ooff[k] + nops][::-1].copy()
            found.append((score, qs_, qe, ts_, te, path))
        return found


def _b(flag: bool) -> str:
    return "true" if flag else "false"
