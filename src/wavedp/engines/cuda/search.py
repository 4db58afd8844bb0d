"""GPU database search: the scan kernel (``kernels/search.cu``) and top-K selection.

The database sits in GPU memory when it fits (uploaded once per :class:`Scanner`), else it
streams through in chunks: two page-locked host buffers and two device buffers, the copy of
chunk i+1 on its own stream overlapping the scan of chunk i. The launches over a chunk are
the batches of ``search.partition`` (``partition``: none, static, dynamic1, dynamic2, or
auto, the predictor's fastest: ``search.predict``), each scanning its subjects longest first
(groups of a warp get similar lengths) with the kernel shape planned for them. The host
prepares each launch while the one before runs and waits once, at the chunk's end. Local
searches pack two queries per 32-bit word (16-bit lanes) and rescore at 32 bits the
subjects whose 16-bit best could have saturated; global and semiglobal searches run 32-bit
words. Each query's best candidates are selected on the GPU; only they are copied back.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import NamedTuple

import numpy as np

from ...errors import InputError
from ..common import GLOBAL, LOCAL
from . import staging
from .hostmem import settle
from .module import function
from .multipass import multiprocessors

#: rows per lane of the kernel instances (multiples of 4: the profile is read 16 bytes at once)
ROWS = (4, 8, 12, 16, 20, 24, 28, 32)
#: lanes per subject group (powers of two)
GROUPS = (4, 8, 16, 32)
#: threads per block (kernels/search.cu's BLOCK) and per warp
BLOCK = 128
#: the kernel's RING: each group's slots of 16 bytes for its scratch-row chunks in flight
RING = 4
WARP = 32
#: profile scores of rows past the query (16-bit and 32-bit words)
PAD16, PAD32 = -8192, -(1 << 24)
#: shared memory for one pass's profile at most (four blocks of four warps per SM fit)
PROFILE_BYTES = 56 << 10
#: blocks per multiprocessor the grid is sized for (tickets make any size safe)
BLOCKS_PER_SM = 8
#: the passes' scratch rows of all groups in flight take at most this much GPU memory
SCRATCH_BYTES = 256 << 20
#: GPU memory the resident database (or a streamed chunk pair) may take; tests lower it to
#: force streaming
DATABASE_BYTES: int | None = None
#: per-pass cost of a group, in cells of a column (scratch traffic and synchronisation)
PASS_CELLS = 64
#: plans a scanner keeps (the last scans' query lengths over each chunk)
PLANS = 8
#: GPU memory for one launch's result words (profiles x subjects) and profiles
OUT_BYTES = 1 << 30
#: at most this many blocks per launch (None: no cap; the energy lab sets it through
#: :func:`capped_grid` to run the scan on fewer multiprocessors, one block each)
GRID_CAP: int | None = None

Candidates = tuple[np.ndarray, np.ndarray]


class Launch(NamedTuple):
    """One planned launch over a chunk: its kernel shape (G, R, passes), its subjects (chunk
    indices, int32, in the order the tickets hand them out), the longest of them and its
    grid (``search.predict.launch_grid``)."""

    shape: tuple[int, int, int]
    subjects: np.ndarray
    longest: int
    blocks: int | None = None

#: seconds spent in each phase since the last reset (benchmarks read and clear it): upload
#: (database to the GPU), scan, rescore (32-bit rescoring of saturated pairs), topk
STATS: dict[str, float] = {}
#: every scan launch since the last reset (``search --explain`` reads and clears it):
#: (partition, units, subjects, predicted seconds, measured seconds, its kernel's seconds),
#: both by CUDA events: a launch's seconds are from the end of the one before (or the start
#: of the chunk's scan) to its own end, the time it adds to the scan (the host prepares each
#: launch while the one before runs)
LOG: list[tuple[str, int, int, float, float, float]] = []


class _Timer:
    """Adds the GPU time between entry and exit (current stream synchronized) to STATS."""

    def __init__(self, phase: str) -> None:
        self.phase = phase

    def __enter__(self) -> None:
        import time

        self.start = time.perf_counter()

    def __exit__(self, *exc) -> None:
        import time

        import cupy

        cupy.cuda.get_current_stream().synchronize()
        STATS[self.phase] = STATS.get(self.phase, 0.0) + time.perf_counter() - self.start


def plan(m: int, columns: float, alphabet: int,
         rate: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None
         ) -> tuple[int, int, int]:
    """(lanes G, rows per lane R, passes) for a query of m rows against subjects of about
    ``columns`` residues: the least time, padded lane-cells (pipeline fill and passes
    counted) over ``rate(G, R, passes)``, the lane-cells per second the launch runs at with
    each shape (arrays over the shapes; the predictor's: calibrated per shape, and the
    grid's fill); without rates, the fewest padded lane-cells. Ties go to the larger R, then
    the shape first in GROUPS x ROWS order."""
    g, r = _admissible(alphabet)
    t = g * r
    passes = -(-max(m, 1) // t)
    cost = passes * (t * (columns + g - 1) + PASS_CELLS * columns)
    time = cost / rate(g, r, passes) if rate else cost
    best = int(np.lexsort((-r, time))[0])
    return int(g[best]), int(r[best]), int(passes[best])


@functools.cache
def _admissible(alphabet: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernel shapes (G, R) whose profile of ``alphabet`` letters fits PROFILE_BYTES, in
    GROUPS x ROWS order (arrays, read only)."""
    pairs = np.array([(g, r) for g in GROUPS for r in ROWS
                      if 4 * alphabet * g * r <= PROFILE_BYTES], np.int64).reshape(-1, 2)
    pairs.setflags(write=False)
    return pairs[:, 0], pairs[:, 1]


def launch_blocks(g, units: int, count: int, passes, longest: int, sms: int):
    """The grid of a launch of ``units`` profiles (at most ``passes`` each) against ``count``
    subjects (the longest ``longest`` residues) with G = ``g``: a ticket per batch of
    subjects, at most BLOCKS_PER_SM blocks per SM and, with several passes, as many as the
    scratch rows of the longest subject leave room for. ``g`` and ``passes`` may be arrays
    (one grid per shape)."""
    groups = BLOCK // np.asarray(g)
    blocks = np.maximum(1, np.minimum(-(-count // groups) * units, BLOCKS_PER_SM * sms))
    blocks = np.where(np.asarray(passes) > 1, np.maximum(1, np.minimum(
        blocks, SCRATCH_BYTES // (groups * (longest + 2) * 8))), blocks)
    if GRID_CAP is not None:
        blocks = np.minimum(blocks, GRID_CAP)
    return int(blocks) if blocks.ndim == 0 else blocks


@contextmanager
def capped_grid(blocks: int) -> Iterator[None]:
    """Every scan launched inside runs at most ``blocks`` blocks (GRID_CAP)."""
    global GRID_CAP
    keep, GRID_CAP = GRID_CAP, max(1, int(blocks))
    try:
        yield
    finally:
        GRID_CAP = keep


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused (after one collection) while launches are
    timed one by one: a collection of a large heap falling inside a millisecond launch is not
    that launch's time. For the calibration and the benchmarks, never for searches."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def scan_need(alphabet: int, sms: int):
    """The GPU memory a launch needs (``search.partition``'s ``need``): result words, the
    profiles (passes counted at 128 rows) and the passes' scratch rows of a full grid, capped
    at SCRATCH_BYTES (a launch of long subjects runs fewer blocks instead)."""

    def need(longest_query: int, units: int, longest_subject: int, subjects: int) -> int:
        passes = -(-max(int(longest_query), 1) // 128)
        rows = BLOCKS_PER_SM * sms * (BLOCK // 4) * (longest_subject + 2) * 8
        scratch = 0 if passes == 1 else (np.minimum(SCRATCH_BYTES, rows) if isinstance(
            rows, np.ndarray) else min(SCRATCH_BYTES, int(rows)))
        return 4 * units * subjects + 4 * alphabet * passes * 128 * units + scratch

    need.affine = True  # in the units and in the subjects (and takes an array of longest
    # subjects): the partitions size their runs directly
    return need


def pair_up(live: list[int], packed: bool) -> list[list[int]]:
    """The units of a launch: queries (indices, longest first) two by two when packed."""
    step = 2 if packed else 1
    return [live[p:p + step] for p in range(0, len(live), step)]


def profile(queries: list[np.ndarray], sub: np.ndarray, go: int, g: int, r: int, passes: int,
            packed: bool) -> np.ndarray:
    """The kernel's query profile (uint32 words, passes x A x T in chunked row order) of one
    query, or of two packed into int16 halves (low half: the first): the layout's reference
    in NumPy; launches build theirs on the GPU (``Scanner._profiles``)."""
    a = sub.shape[0]
    t = g * r
    rows = passes * t
    halves = []
    for q in queries:
        col = np.full((a, rows), PAD16 if packed else PAD32, np.int64)
        col[:, :q.size] = sub[q, :].T.astype(np.int64) + go
        halves.append(col)
    if packed:
        words = (halves[0] & 0xFFFF) | ((halves[-1] & 0xFFFF) << 16)
    else:
        words = halves[0] & 0xFFFFFFFF
    words = words.reshape(a, passes, g, r // 4, 4).transpose(1, 0, 3, 2, 4)
    return np.ascontiguousarray(words.reshape(-1)).astype(np.uint32)


def packable(sub: np.ndarray, go: int, ge: int) -> bool:
    """Whether 16-bit words cannot wrap for these scores (kernels/search.cu)."""
    return go <= 8000 and int(sub.max()) + go <= 32767 and int(sub.min()) + go >= -32768 \
        and ge <= go


def saturation_limit(sub: np.ndarray) -> int:
    """A 16-bit local best at or above this may have overflowed: rescore it at 32 bits."""
    return 32767 - max(int(sub.max()), 0)


def _kernel(mode: int, g: int, r: int, packed: bool, alphabet: int):
    """The scan kernel of shape (G, R) and its dynamic shared memory in bytes (one pass's
    profile of ``alphabet`` rows, then each group's ring), configured to take it."""
    kernel = function("search.cu", f"scan<{mode}, {g}, {r}, {'true' if packed else 'false'}>")
    smem = 4 * alphabet * g * r + BLOCK // g * RING * 16
    if smem > 40 << 10:  # near the default 48 KB (the kernel has static shared memory too)
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def occupancy(g: int, r: int, packed: bool, alphabet: int = 24) -> int:
    """Blocks of shape (G, R) resident at once on one multiprocessor of the current GPU (the
    occupancy API's count), at most the BLOCKS_PER_SM the grid is sized for."""
    from cupy.cuda import driver

    kernel, smem = _kernel(LOCAL, g, r, packed, alphabet)
    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, BLOCK, smem)
    return max(1, min(int(per_sm), BLOCKS_PER_SM))


def unit_rows(units: list[list[np.ndarray]]) -> np.ndarray:
    """Each unit's rows: its longest query's length (int64)."""
    return np.array([max([q.size for q in u]) for u in units], np.int64)


def _profile_inputs(units: list[list[np.ndarray]], own: np.ndarray, a: int, g: int, r: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """build_profiles' host inputs for ``units`` of ``own`` passes each: the queries' codes
    one after another (uint8), per unit (start, length) of its first query and of its
    second (the first again where it has one; int32, units x 4), each unit's first word
    (int64), and the words of all profiles."""
    queries = [q for u in units for q in u]
    sizes = np.array([q.size for q in queries], np.int64)
    starts = np.cumsum(sizes) - sizes
    one = np.cumsum([0] + [len(u) for u in units[:-1]])  # each unit's first query
    two = one + (np.array([len(u) for u in units]) == 2)  # its second (or the first again)
    meta = np.stack([starts[one], sizes[one], starts[two], sizes[two]], 1).astype(np.int32)
    first = (np.cumsum(own) - own) * a * g * r
    codes = np.concatenate(queries).astype(np.uint8, copy=False)
    return codes, meta, first.astype(np.int64), int(own.sum()) * a * g * r


def word(value: int, packed: bool) -> np.uint32:
    """``value`` as the kernel's word: in both int16 halves when ``packed``, else an int32."""
    return np.uint32((value & 0xFFFF) * 0x10001 if packed else value & 0xFFFFFFFF)


class _Chunk:
    """One resident slice of the database: residues, offsets and subject lengths."""

    def __init__(self, start: int, stop: int, offsets: np.ndarray, d_res, d_off) -> None:
        lengths = np.diff(offsets)
        self.start, self.stop = start, stop
        self.lengths = lengths
        self.nonempty = np.flatnonzero(lengths > 0)  # the subjects a launch scans
        self.count = int(self.nonempty.size)
        self.empty = np.flatnonzero(lengths == 0)
        self.longest = int(lengths.max()) if lengths.size else 0
        self.res, self.off = d_res, d_off

    @property
    def size(self) -> int:
        return self.stop - self.start


class Scanner:
    """Scores queries against every database sequence on the GPU (same contract as the CPU
    engine: exact scores, DESIGN.md's order)."""

    def __init__(self, residues: np.ndarray, offsets: np.ndarray, lut: np.ndarray | None,
                 sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                 partition: str = "auto") -> None:
        import cupy

        self.residues, self.offsets, self.lut = residues, np.asarray(offsets), lut
        self.sub = np.ascontiguousarray(sub, dtype=np.int32)
        self.go, self.ge, self.mode = int(gap_open), int(gap_extend), int(mode)
        self.partition = partition
        self.events: list = []  # CUDA events around each kernel since the last kernel_seconds
        self._sub = cupy.asarray(self.sub)  # the substitution matrix on the GPU
        self._plans: dict[tuple, tuple] = {}  # the last scans' plans (see _plan), oldest first
        self.packed = mode == LOCAL and packable(self.sub, self.go, self.ge)
        free, _ = cupy.cuda.runtime.memGetInfo()
        budget = DATABASE_BYTES if DATABASE_BYTES is not None else int(free * 0.6)
        n = self.offsets.size - 1
        total = int(self.offsets[-1])
        lengths = np.diff(self.offsets)
        longest = int(lengths.max()) if n else 0
        per_seq = 8 + 4 + 4 + 8  # offset, order, score, key
        if total + per_seq * n <= budget:
            self.ranges = [(0, n)]
        else:
            cap = max((budget // 2) - per_seq * 1024, longest)
            self.ranges = list(_ranges(self.offsets, cap))
        need = max(int(self.offsets[b] - self.offsets[a]) + per_seq * (b - a)
                   for a, b in self.ranges) * (1 if len(self.ranges) == 1 else 2)
        if need > free:
            raise InputError(f"the database needs {need / 2**30:.2f} GiB of GPU memory for its "
                             f"longest sequence ({longest} residues), "
                             f"{free / 2**30:.2f} GiB free")
        self._resident: _Chunk | None = None

    # ---- chunks ------------------------------------------------------------------------------

    def _host_chunk(self, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
        lo, hi = int(self.offsets[start]), int(self.offsets[stop])
        raw = np.asarray(self.residues[lo:hi])
        if out is None:
            return raw if self.lut is None else self.lut[raw]
        view = out[:hi - lo]
        if self.lut is None:
            view[:] = raw
        else:
            np.take(self.lut, raw, out=view)
        return view

    def _upload(self, start: int, stop: int, stream=None, pinned=None, dres=None) -> _Chunk:
        import cupy

        offsets = self.offsets[start:stop + 1] - self.offsets[start]
        host = self._host_chunk(start, stop, pinned)
        if dres is None:
            dres = cupy.empty(max(host.size, 1), cupy.uint8)
        dres[:host.size].set(host, stream=stream)
        doff = cupy.asarray(offsets)
        return _Chunk(start, stop, offsets, dres, doff)

    def _chunks(self):
        """Yield the database's chunks on the device, the next one copied during the scan."""
        import cupy

        if len(self.ranges) == 1:
            if self._resident is None:
                with _Timer("upload"):
                    self._resident = self._upload(*self.ranges[0])
            yield self._resident
            return
        size = max(int(self.offsets[b] - self.offsets[a]) for a, b in self.ranges)
        pinned = [staging.pinned(size) for _ in range(2)]
        dres = [cupy.empty(max(size, 1), cupy.uint8) for _ in range(2)]
        copy = cupy.cuda.Stream(non_blocking=True)
        pending = None
        for k, (a, b) in enumerate(self.ranges):
            if pending is None:
                with copy:
                    pending = self._upload(a, b, copy, pinned[k % 2], dres[k % 2])
            copy.synchronize()
            current = pending
            pending = None
            if k + 1 < len(self.ranges):
                a2, b2 = self.ranges[k + 1]
                with copy:
                    pending = self._upload(a2, b2, copy, pinned[(k + 1) % 2], dres[(k + 1) % 2])
            yield current
            cupy.cuda.get_current_stream().synchronize()  # done with this chunk's buffers

    # ---- scanning ----------------------------------------------------------------------------

    def _launch(self, ch: _Chunk, units: list[list[np.ndarray]], subjects: np.ndarray,
                packed: bool, out, shape: tuple[int, int, int], longest: int,
                scatter: tuple[np.ndarray, object, object] | None = None,
                blocks: int | None = None):
        """Scan the chunk indices ``subjects`` (host, in the order the tickets hand them out;
        at most ``longest`` residues) against each unit (one query, or two packed) with
        kernel shape (G, R; each unit runs its own passes) in one launch on a grid of
        ``blocks`` (default, and at most, :func:`launch_blocks`'s); the kernel's words
        (uint32, units x subjects) go to the device array ``out``. With ``scatter`` (rows,
        scores, over: each unit's rows of the device int32 matrix ``scores``, int32 units x 2,
        -1 for none), a second kernel writes them there at the subjects' columns and adds its
        count of possibly saturated halves to the device int32 ``over``. The launch's inputs
        go up in one copy; nothing here waits for the GPU (but see :meth:`Staging.put`)."""
        import cupy

        a = self.sub.shape[0]
        g, r, _ = shape
        lengths = unit_rows(units)
        own = np.maximum(-(-lengths // (g * r)), 1)  # each profile's own passes
        codes, meta, first, words = _profile_inputs(units, own, a, g, r)
        ticket = np.zeros(1, np.int32)  # the kernel's ticket counter
        staged = self._staging.put(ticket, subjects.astype(np.int32, copy=False),
                                   lengths.astype(np.int32), codes, meta, first,
                                   np.zeros((0, 2), np.int32) if scatter is None
                                   else scatter[0])
        d_count, d_subj, ms, d_codes, d_meta, poffs, d_rows = staged
        prof = self._build_profiles(d_codes, d_meta, poffs, len(units), int(own.max()), words,
                                    g, r, packed)
        groups = BLOCK // g
        count = int(subjects.size)
        most = launch_blocks(g, len(units), count, int(own.max()), longest, multiprocessors())
        blocks = most if blocks is None else min(blocks, most)
        stride = (longest + 2) // 2 * 2  # even: lane 0 copies two-column chunks of 16 bytes
        scratch = staging.workspace().scratch(blocks * groups * stride * 2 if own.max() > 1
                                              else 2)
        kernel, smem = _kernel(LOCAL if packed else self.mode, g, r, packed, a)
        events = cupy.cuda.Event(), cupy.cuda.Event()
        events[0].record()
        kernel((blocks,), (BLOCK,), (
            ch.res, ch.off, d_subj, np.int32(count), prof, np.int32(a), poffs, ms,
            np.int32(len(units)), np.int32(self.go), np.int32(self.ge), word(-self.go, packed),
            word(-self.ge, packed), scratch, np.int32(stride), out, d_count),
            shared_mem=smem)
        events[1].record()
        self.events.append(events)
        if scatter is None:
            return
        _, scores, over = scatter
        grid = (min(-(-count // 256), 4 * multiprocessors()), min(len(units), 65535))
        function("search.cu", "scatter_scores")(grid, (256,), (
            out, np.int32(len(units)), np.int32(count), d_rows, d_subj, scores,
            np.int64(scores.shape[1]), np.int32(packed), np.int32(saturation_limit(self.sub)),
            over))

    def _profiles(self, units: list[list[np.ndarray]], own: np.ndarray, g: int, r: int,
                  packed: bool):
        """The launch's profiles (device uint32, each unit's ``own`` passes in turn, as
        :func:`profile` lays them out) built on the GPU from the units' codes, and each
        unit's first word (device int64)."""
        codes, meta, first, words = _profile_inputs(units, own, self.sub.shape[0], g, r)
        d_codes, d_meta, poffs = self._staging.put(codes, meta, first)
        return self._build_profiles(d_codes, d_meta, poffs, len(units), int(own.max()), words,
                                    g, r, packed), poffs

    def _build_profiles(self, codes, meta, poffs, units: int, most: int, words: int, g: int,
                        r: int, packed: bool):
        """Launch build_profiles on staged inputs (see :func:`_profile_inputs`)."""
        import cupy

        a = self.sub.shape[0]
        prof = cupy.empty(words, cupy.uint32)
        grid = (min(-(-most * a * g * r // 256), 1024), min(units, 65535))
        function("search.cu", "build_profiles")(grid, (256,), (
            codes, meta, poffs, np.int32(units), self._sub, np.int32(a), np.int32(g),
            np.int32(r), np.int32(self.go), np.int32(PAD16 if packed else PAD32),
            np.int32(packed), prof))
        return prof

    @property
    def _staging(self) -> staging.Staging:
        """Each launch's inputs in one copy (see :meth:`_launch`): this thread's on this
        GPU."""
        return staging.workspace().staging

    def _scan(self, ch: _Chunk, units: list[list[np.ndarray]], packed: bool,
              subjects: np.ndarray, shape: tuple[int, int, int] | None = None,
              scatter: tuple[np.ndarray, object, object] | None = None,
              longest: int | None = None, blocks: int | None = None):
        """The kernel's words (device uint32, units x subjects) of one launch over the chunk
        indices ``subjects`` (host int array, in the order the tickets hand them out; the
        longest ``longest`` residues, default looked up), with kernel ``shape`` (G, R,
        passes; default planned for them, and then its grid too) on ``blocks`` (default its
        own grid), scattered where ``scatter`` says (see :meth:`_launch`)."""
        import cupy

        if shape is None or longest is None:
            lengths = ch.lengths[subjects]
            if shape is None:
                shape = self._shape(units, lengths, packed)
                blocks = self._grid(units, lengths, packed, shape)
            longest = int(lengths.max())
        words = cupy.empty((len(units), subjects.size), cupy.uint32)
        self._launch(ch, units, subjects, packed, words, shape, longest, scatter, blocks)
        return words

    def _grid(self, units: list[list[np.ndarray]], lengths: np.ndarray, packed: bool,
              shape: tuple[int, int, int]) -> int:
        """The grid planned for a launch of ``units`` over subjects of ``lengths`` with
        kernel ``shape`` (the predictor's wide choice)."""
        from ...search import predict

        return predict.launch_grid(predict.model_for("gpu"), unit_rows(units), lengths, packed,
                                   shape, wide=True)

    def _shape(self, units: list[list[np.ndarray]], lengths: np.ndarray,
               packed: bool | None = None) -> tuple[int, int, int]:
        """The kernel shape planned for a launch of ``units`` over subjects of ``lengths``
        (``packed``: the kernel's packing, default the scanner's)."""
        from ...search import predict

        packed = self.packed if packed is None else packed
        unit_m = unit_rows(units)
        return predict.launch_shape(predict.model_for("gpu"), unit_m, lengths,
                                    self.sub.shape[0], packed)

    def batches(self, ch: _Chunk, units: list[list[np.ndarray]]):
        """The launches over the chunk (``search.partition`` batches of units x non-empty
        subjects) under this scanner's partition (``auto``: the predictor's fastest), with
        each one's predicted seconds."""
        from ...search import predict

        unit_m = unit_rows(units)
        subj_n = ch.lengths[ch.nonempty]
        a = self.sub.shape[0]
        return predict.schedule(predict.model_for("gpu"), self.partition, unit_m, subj_n, a,
                                self.packed, scan_need(a, multiprocessors()),
                                OUT_BYTES + SCRATCH_BYTES, wide=True)

    def _scores(self, ch: _Chunk, queries: list[np.ndarray]) -> list:
        """Exact scores (device int32, queries x chunk index) of each query against the
        chunk."""

        import cupy

        out = cupy.zeros((len(queries), ch.size), cupy.int32)
        for q, s in zip(queries, out, strict=True):
            if self.mode == GLOBAL and ch.empty.size:
                s[cupy.asarray(ch.empty)] = _edge(q.size, self.go, self.ge)
            if q.size == 0 and self.mode == GLOBAL:
                s[:] = cupy.asarray(_edges(ch.lengths, self.go, self.ge))
        live = sorted((k for k, q in enumerate(queries) if q.size > 0),
                      key=lambda k: -queries[k].size)
        if ch.count == 0 or not live:
            return out
        units = pair_up(live, self.packed)
        name, batches, predicted, launches = self._plan(ch, [[queries[k] for k in u]
                                                             for u in units])
        function("search.cu", "build_profiles")  # load the kernels first: the log times
        for launch in launches:  # launches only
            _kernel(LOCAL if self.packed else self.mode, launch.shape[0], launch.shape[1],
                    self.packed, self.sub.shape[0])
        over = staging.workspace().counter()
        self.events.clear()
        begin = _mark()
        ends = []
        for batch, launch in zip(batches, launches, strict=True):
            chosen = [units[i] for i in batch.queries.tolist()]
            self._enqueue(ch, queries, chosen, launch.subjects, out, launch.shape,
                          launch.longest, over, launch.blocks)
            ends.append(_mark())
        saturated = int(self._staging.read(over)[0])  # the one wait of the chunk's scan
        for k, (batch, guess, end) in enumerate(zip(batches, predicted, ends, strict=True)):
            LOG.append((name, batch.queries.size, batch.subjects.size, guess,
                        cupy.cuda.get_elapsed_time(ends[k - 1] if k else begin, end) / 1e3,
                        cupy.cuda.get_elapsed_time(*self.events[k]) / 1e3))
        self.events.clear()
        if saturated:
            self._rescore(ch, queries, _query_rows(units), None, out)
        return out

    def kernel_seconds(self) -> float:
        """The GPU time of the kernels launched since the last call (CUDA events; their
        stream synchronized)."""
        import cupy

        seconds = sum(cupy.cuda.get_elapsed_time(*e) for e in self.events) / 1e3
        self.events.clear()
        return seconds

    def _plan(self, ch: _Chunk, units: list[list[np.ndarray]]):
        """(partitioning, batches, their predicted seconds, their :class:`Launch`) over the
        chunk for units of these lengths. The plan depends on the lengths alone and costs
        about 0.2 s of host time on 2M subjects, so the last PLANS are kept: a scan of the
        same query lengths again (a query set searched once more, a benchmark's repeats)
        reuses its plan. A launch's subjects are looked up here once, not per launch."""
        from ...search import predict

        key = (ch.start, ch.stop, id(predict.model_for("gpu")),
               tuple(tuple(q.size for q in u) for u in units))
        plan_ = self._plans.pop(key, None)
        if plan_ is None:
            name, batches, predicted = self.batches(ch, units)
            launches = []
            for batch in batches:
                subjects = ch.nonempty[batch.subjects].astype(np.int32)
                lengths = ch.lengths[subjects]
                chosen = [units[i] for i in batch.queries]
                shape = self._shape(chosen, lengths)
                launches.append(Launch(shape, subjects, int(lengths.max()),
                                       self._grid(chosen, lengths, self.packed, shape)))
            plan_ = name, batches, predicted, launches
        self._plans[key] = plan_
        while len(self._plans) > PLANS:
            self._plans.pop(next(iter(self._plans)))
        return plan_

    def _enqueue(self, ch: _Chunk, queries: list[np.ndarray], units: list[list[int]],
                 subjects: np.ndarray, out, shape: tuple[int, int, int] | None,
                 longest: int | None, over, blocks: int | None = None) -> None:
        """Enqueue one launch: ``units`` (query indices) x the chunk indices ``subjects``
        (the longest ``longest`` residues, default looked up; on ``blocks``, see
        :meth:`_scan`), each query's scores into its
        row of ``out``, the count of 16-bit scores that may have saturated added to the
        device int32 ``over``. The launch's inputs go up in one copy; its profiles, scan and
        scatter run back to back on the GPU. The host goes on at once: it prepares the next
        launch while this one runs (see :meth:`Staging.put` for how far ahead)."""
        rows = np.array([[u[0], u[1] if len(u) == 2 and self.packed else -1] for u in units],
                        np.int32)
        self._scan(ch, [[queries[k] for k in u] for u in units], self.packed, subjects, shape,
                   (rows, out, over), longest, blocks)

    def _rescore(self, ch: _Chunk, queries: list[np.ndarray], rows: np.ndarray,
                 subjects: np.ndarray | None, out) -> None:
        """Rescore at 32 bits the scores of ``out`` (rows: queries, columns: chunk indices)
        among the query rows ``rows`` x the chunk indices ``subjects`` (None: all) that are
        at or above the saturation limit: their 16-bit scan may have saturated."""
        import cupy

        limit = saturation_limit(self.sub)
        settle()
        with _Timer("rescore"):  # a part of the scan's time
            for row in rows.tolist():
                line = out[row] if subjects is None else out[row, cupy.asarray(subjects)]
                hot = cupy.flatnonzero(line >= limit).get()
                if not hot.size:
                    continue
                STATS["rescored"] = STATS.get("rescored", 0) + int(hot.size)
                cols = hot if subjects is None else np.asarray(subjects)[hot]
                exact = self._scan(ch, [[queries[row]]], False, cols)
                out[row, cupy.asarray(cols)] = exact[0].view(cupy.int32)

    def top(self, queries: list[np.ndarray], k: int, thresholds: list[int | None],
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores above its threshold,
        ranked (score descending, index ascending)."""
        from ...search.ranking import PLUS, merge

        found: list[list] = [[] for _ in queries]
        for ch in self._chunks():
            with _Timer("scan"):
                scores = self._scores(ch, queries)
            residues = int(self.offsets[ch.stop] - self.offsets[ch.start])
            with _Timer("topk"):
                if k == 0 or k >= ch.size:
                    picked = select_all(scores, thresholds)
                else:
                    picked = select(scores, k, thresholds)
            for j, (idx, sc) in enumerate(picked):
                found[j].append((idx + ch.start, sc, PLUS))
                if progress is not None:
                    progress(queries[j].size * residues)
        return [merge(parts, k)[:2] for parts in found]


def select_all(scores, thresholds: list[int | None]) -> list[Candidates]:
    """Every entry of each row of a device score matrix at or above the row's threshold, as
    host (indices, scores) per row, best first (ties: smaller index): one pass, one copy."""
    import cupy

    keep = scores >= cupy.asarray(_floors(thresholds).astype(np.int32))[:, None]
    settle()
    rows, cols = cupy.nonzero(keep)
    vals = scores[rows, cols].get().astype(np.int32)
    rows, cols = rows.get(), cols.get().astype(np.int64)
    bounds = np.searchsorted(rows, np.arange(len(thresholds) + 1))
    out = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        idx, sc = cols[a:b], vals[a:b]
        order = np.lexsort((idx, -sc.astype(np.int64)))
        out.append((idx[order], sc[order]))
    return out


def select(scores, k: int, thresholds: list[int | None]) -> list[Candidates]:
    """Each row's ``k`` best entries (0 < k < row length; else :func:`select_all`) of a score
    matrix (device, or host for the tests) at or above the row's threshold, as host
    (indices, scores), best first (ties: smaller index). Ranked by the unique key (score,
    -index), a row's k best lie in the k chunks of SELECT_CHUNK entries with the best
    largest keys: one pass over the matrix finds each chunk's largest (its first maximum),
    one sort of k chunks per row ranks them; rows are taken SELECT_BYTES of scores at a
    time."""
    xp = _module(scores)
    rows, n = scores.shape
    c = SELECT_CHUNK
    chunks = -(-n // c)
    kk = min(k, chunks)
    floor = xp.asarray(_floors(thresholds).astype(np.int32))
    low = np.iinfo(np.int32).min
    step = max(1, SELECT_BYTES // (4 * chunks * c))
    spans = xp.arange(chunks, dtype=np.int64)[None, :] * c
    within = xp.arange(c, dtype=np.int64)
    out: list[Candidates] = []
    for a in range(0, rows, step):
        part, lim = scores[a:a + step], floor[a:a + step, None]
        r = part.shape[0]
        padded = xp.full((r, chunks * c), low, np.int32)
        padded[:, :n] = xp.where(part >= lim, part, low)
        blocks = padded.reshape(r, chunks, c)
        first = blocks.argmax(axis=2)
        largest = xp.take_along_axis(blocks, first[:, :, None], 2)[:, :, 0]
        keys = _keys(xp, largest, spans + first, lim, n)
        best = xp.argsort(keys, axis=1)[:, chunks - kk:]
        cols = (best * c)[:, :, None] + within
        cand = padded[xp.arange(r)[:, None, None], cols]
        ranked = xp.sort(_keys(xp, cand, cols, lim[:, :, None], n).reshape(r, -1), axis=1)
        top = ranked[:, -k:]
        if xp is not np:
            settle()
            top = top.get()
        for key in top[:, ::-1]:
            key = key[key > _NO_KEY]
            out.append((0xFFFFFFFF - (key & 0xFFFFFFFF), (key >> 32).astype(np.int32)))
    return out


#: seconds the calibration keeps the GPU busy before each launch it times (:func:`hold`):
#: longer than the host's work to enqueue any launch it times, so each one is queued
#: behind work as a search's launches are (its kernel timed alone, not the host's launch)
HOLD_SECONDS = 2e-3


def _query_rows(units: list[list[int]]) -> np.ndarray:
    """The query rows (indices) of launch units."""
    return np.array([k for u in units for k in u], np.int64)


def _mark():
    """A CUDA event recorded now on the current stream."""
    import cupy

    event = cupy.cuda.Event()
    event.record()
    return event


def _module(a):
    """numpy for a host array, else cupy."""
    if isinstance(a, np.ndarray):
        return np
    import cupy

    return cupy


#: entries per chunk of a row in :func:`select`
SELECT_CHUNK = 256
#: scores (bytes) :func:`select` takes at once (its temporaries are about twice as many)
SELECT_BYTES = 1 << 30
#: the key of no entry (below the threshold, or past the row's end)
_NO_KEY = np.iinfo(np.int64).min


def _floors(thresholds: list[int | None]) -> np.ndarray:
    floor = np.array([-(1 << 31) if t is None else t for t in thresholds], np.int64)
    return np.clip(floor, -(1 << 31), (1 << 31) - 1)


def _keys(xp, values, cols, floor, n: int):
    """The ranking keys (int64: score x 2^32 + 0xFFFFFFFF - column) of ``values`` at columns
    ``cols``; _NO_KEY where a value is below ``floor`` or a column past ``n``."""
    key = values.astype(np.int64) * (1 << 32) + (0xFFFFFFFF - cols)
    return xp.where((values >= floor) & (cols < n), key, _NO_KEY)


def _edge(k: int, go: int, ge: int) -> int:
    return -(go + (k - 1) * ge) if k > 0 else 0


def _edges(lengths: np.ndarray, go: int, ge: int) -> np.ndarray:
    return np.where(lengths > 0, -(go + (lengths - 1) * ge), 0).astype(np.int32)


def _ranges(offsets: np.ndarray, cap: int):
    n, start = offsets.size - 1, 0
    while start < n:
        stop = int(np.searchsorted(offsets, offsets[start] + cap, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        yield start, stop
        start = stop


def timed_launches(scanner: Scanner, ch: _Chunk, queries: list[np.ndarray]) -> list[dict]:
    """Every launch of one scan of ``queries`` over the chunk, timed: the units' rows
    (``m``), the subjects' lengths in launch order (``n``), the kernel ``shape``, the time
    the launch adds to the scan (``whole``: profiles, kernel, results in place; see LOG) and
    its kernel (``kernel``), both by CUDA events, in seconds. For
    ``benchmarks/predictor_terms.py``."""
    import cupy

    LOG.clear()
    with collector_paused():
        scanner._scores(ch, queries)
        cupy.cuda.get_current_stream().synchronize()
    log = list(LOG)
    live = sorted((k for k, q in enumerate(queries) if q.size > 0),
                  key=lambda k: -queries[k].size)
    units = [[queries[k] for k in u] for u in pair_up(live, scanner.packed)]
    _, batches, _, launches = scanner._plan(ch, units)
    rows = []
    for batch, launch, entry in zip(batches, launches, log, strict=True):
        chosen = [units[i] for i in batch.queries.tolist()]
        subj_n = ch.lengths[launch.subjects].astype(np.int64)
        rows.append(dict(m=unit_rows(chosen).tolist(), n=subj_n.tolist(),
                         shape=list(launch.shape), whole=entry[4], kernel=entry[5]))
    return rows


def _random_units(rng, m: int, units: int, packed: bool
                  ) -> tuple[list[np.ndarray], list[list[int]]]:
    """``units`` launch units of random m-residue queries (two each when ``packed``): the
    queries and their pairing."""
    queries = [rng.integers(0, 20, m, dtype=np.uint8) for _ in range(units * (1 + packed))]
    return queries, pair_up(list(range(len(queries))), packed)


def hold(seconds: float = HOLD_SECONDS) -> None:
    """Keep the current stream's GPU busy for ``seconds`` (one thread of kernels/search.cu's
    ``hold``)."""
    function("search.cu", "hold")((1,), (1,), (np.uint64(seconds * 1e9),))


def _timed_batch(scanner: Scanner, ch: _Chunk, queries: list[np.ndarray],
                 units: list[list[int]], subjects: np.ndarray, out,
                 shape: tuple[int, int, int], longest: int | None = None, held: bool = True
                 ) -> tuple[float, float, float]:
    """One launch alone (:meth:`Scanner._enqueue`, then its one wait, and the 32-bit
    rescoring of scores that may have saturated), with ``held`` enqueued while the GPU is
    busy (:func:`hold`), as a search's launches are: (its GPU seconds from the hold's end
    (or from the call) to its own, its kernel's by CUDA events, the host's to enqueue it
    less its waits for the GPU). Not held, the GPU waits for the host's launch of the
    kernel and its CUDA events count that too."""
    import time

    import cupy

    over = staging.workspace().counter()
    if held:
        hold()
    mark = _mark()
    scanner.events.clear()
    waited, start = scanner._staging.waited, time.perf_counter()
    scanner._enqueue(ch, queries, units, subjects, out, shape, longest, over)
    host = time.perf_counter() - start - (scanner._staging.waited - waited)
    end = _mark()
    saturated = scanner._staging.read(over)[0]
    gpu, kernel = cupy.cuda.get_elapsed_time(mark, end) / 1e3, scanner.kernel_seconds()
    if saturated:
        scanner._rescore(ch, queries, _query_rows(units), subjects, out)
    return gpu, kernel, host


def host_launches(scanner: Scanner, grid: list[tuple[int, int, int]], rng,
                  repeats: int = 7, rows: int = 512
                  ) -> list[tuple[tuple[int, int, int], float, float]]:
    """The costs of launches over the scanner's resident chunk besides their kernels: per
    (units, subjects, query length) of ``grid``, random queries (two per unit when packed)
    against that many subjects in random order, with the planned shape, their scores
    scattered into a matrix of at least ``rows`` rows (far larger than the L2 cache, as a
    search's). The launches take turns, as a search's differ one from the next, each timed
    by :func:`_timed_batch`. Returns per entry (shape, the host's seconds to enqueue it,
    its GPU seconds less its kernel's), each the median over ``repeats`` after two warm-up
    turns."""
    import statistics

    import cupy

    ch = next(scanner._chunks())
    runs = []
    for units, count, m in grid:
        queries, pairs = _random_units(rng, m, units, scanner.packed)
        subjects = rng.permutation(ch.nonempty)[:count].astype(np.int32)  # as a plan's
        shape = scanner._shape([[queries[k] for k in u] for u in pairs], ch.lengths[subjects])
        runs.append((queries, pairs, subjects, shape, int(ch.lengths[subjects].max())))
    out = cupy.zeros((max(rows, max(len(q) for q, *_ in runs)), ch.size), cupy.int32)
    found: list[list[tuple[float, float]]] = [[] for _ in runs]
    with collector_paused():
        for turn in range(repeats + 2):
            for k, (queries, pairs, subjects, shape, longest) in enumerate(runs):
                gpu, kernel, host = _timed_batch(scanner, ch, queries, pairs, subjects, out,
                                                 shape, longest)
                if turn >= 2:
                    found[k].append((host, gpu - kernel))
    return [(run[3], statistics.median(h for h, _ in f), statistics.median(g for _, g in f))
            for run, f in zip(runs, found, strict=True)]


def calibration(lengths: np.ndarray, runs: list[tuple[int, ...]], seed: int = 0,
                repeats: int = 3) -> list[tuple[float, float]]:
    """Measure launches for the predictor (``search.predict.calibrate``): a random protein
    database of ``lengths`` resident on the current GPU; each run (m, G, R, passes, packed,
    first, count, units[, blocks]) scans ``units`` profiles of m-residue random queries (two
    each when packed) against the subjects ``first:first + count`` of the longest-first
    order with that shape, as a search's launch does (on a grid of at most ``blocks``
    blocks where given), each launch alone (:func:`_timed_batch` not held: the kernel's
    start then includes the host's launch of it, as the predictor's fitted ``start``
    always has). Returns per run (the kernel's seconds by CUDA events, the launch's GPU
    seconds with its results in place), each the median of ``repeats`` after a warm-up."""
    import statistics

    import cupy

    from ...scoring import Scoring

    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    rng = np.random.default_rng(seed)
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    residues = rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8)
    found = []
    for packed in sorted({run[4] for run in runs}):
        scanner = Scanner(residues, offsets, None, scoring.table, 11, 1, LOCAL, "none")
        scanner.packed = packed
        ch = next(scanner._chunks())
        order = np.argsort(-ch.lengths, kind="stable")
        for k, (m, g, r, passes, _, first, count, nu, *cap) in enumerate(runs):
            if runs[k][4] != packed:
                continue
            queries, units = _random_units(rng, m, nu, packed)
            out = cupy.zeros((len(queries), ch.size), cupy.int32)
            subjects = order[first:first + count].astype(np.int32)  # as a plan's
            with collector_paused(), capped_grid(cap[0]) if cap else nullcontext():
                timed = [_timed_batch(scanner, ch, queries, units, subjects, out,
                                      (g, r, passes), int(ch.lengths[subjects].max()),
                                      held=False)
                         for _ in range(repeats + 1)][1:]
            found.append((k, statistics.median(t[1] for t in timed),
                          statistics.median(t[0] for t in timed)))
    return [(kernel, whole) for _, kernel, whole in sorted(found)]
