"""The GPU database scan (``kernels/search.cu``): :class:`Scanner` scores queries against
every database sequence and keeps each query's best (``select.py``).

The database sits in GPU memory when it fits (uploaded once per :class:`Scanner`), else it
streams through in chunks: two page-locked host buffers and two device buffers, the copy of
chunk i+1 on its own stream overlapping the scan of chunk i. The launches over a chunk are
the planner's (``planner.py``: the scanner's ``partition``, ``auto`` by default, cut by the
schedulers of ``partition.py`` and priced by the cost model), each scanning its subjects
longest first (groups of a warp get similar lengths) with the kernel shape and grid planned
for them. The host prepares each launch while the one before runs and waits once, at the
chunk's end. Local searches pack two queries per 32-bit word (16-bit lanes) and rescore at
32 bits the subjects whose 16-bit best could have saturated; global and semiglobal searches
run 32-bit words. Each query's best candidates are selected on the GPU; only they are copied
back. What the scan does is recorded in its :class:`~wavedp.trace.Trace`.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ....ranking import PLUS, Candidates, Thresholds, begin, merge, thresholds_of
from ....trace import LaunchTime, Trace
from ...calibration import Model, capped
from ...common import GLOBAL, LOCAL
from .. import staging
from ..hostmem import settle
from ..module import function
from ..multipass import current_device, device_multiprocessors, multiprocessors
from . import choices, planner
from .chunks import Chunk, chunk_ranges
from .cost import launch_grid, launch_shape
from .lines import Subjects
from .model import gpu_model
from .select import select, select_all
from .shapes import (
    BLOCK,
    BLOCKS_PER_SM,
    OUT_BYTES,
    PAD16,
    PAD32,
    RING,
    SCRATCH_BYTES,
    Launch,
    launch_blocks,
    packable,
    pair_up,
    pair_words,
    profile_inputs,
    saturation_limit,
    scan_need,
    unit_rows,
    word,
)

#: GPU memory the resident database (or a streamed chunk pair) may take; tests lower it to
#: force streaming
DATABASE_BYTES: int | None = None

#: plans a scanner keeps (the last scans' query lengths over each chunk)
PLANS = 8

#: a local 16-bit launch of one query alone sweeps two subjects in its words' halves (the
#: kernel's PAIRS), not the query twice (H200: 96.9 -> 66.0 ms a query); WAVEDP_SCAN_PAIRS=0: off
PAIRS = os.environ.get("WAVEDP_SCAN_PAIRS", "1") != "0"


def _kernel(mode: int, g: int, r: int, packed: bool, alphabet: int, pairs: bool = False):
    """The scan kernel of shape (G, R) and its dynamic shared memory in bytes (one pass's
    profile of ``alphabet`` rows, then each group's ring), configured to take it;
    ``pairs``: the kernel's PAIRS instance (local, packed)."""
    flag = ", true" if pairs else ""
    kernel = function("search.cu",
                      f"scan<{mode}, {g}, {r}, {'true' if packed else 'false'}{flag}>")
    profile = pair_words(alphabet, g, r) if pairs else alphabet * g * r
    smem = 4 * profile + BLOCK // g * RING * 16
    if smem > 40 << 10:  # near the default 48 KB (the kernel has static shared memory too)
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel, smem


def occupancy(g: int, r: int, packed: bool, alphabet: int = 24) -> int:
    """Blocks of shape (G, R) resident at once on one multiprocessor of the current GPU (the
    occupancy API's count), at most the BLOCKS_PER_SM the grid is sized for."""
    from cupy.cuda import driver  # optional dependency: the GPU extra

    kernel, smem = _kernel(LOCAL, g, r, packed, alphabet)
    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, BLOCK, smem)
    return max(1, min(int(per_sm), BLOCKS_PER_SM))


class Scanner:
    """Scores queries against every database sequence on the current GPU (the contract of
    ``wavedp.engines.protocol.Scanner``: exact scores, ranked): ``residues`` (uint8, possibly
    memory-mapped) and ``offsets`` (n + 1) of the database, ``lut`` its codes' translation
    to the scoring's (None: the same), the substitution table, gaps and mode code; the
    launches cut by ``partition`` and planned with ``model`` (default this GPU's:
    :func:`~.model.gpu_model`), each on at most ``grid_cap`` blocks where given; what it
    does recorded in ``trace`` (default a trace of its own); on GPU ``device`` (default the
    current one) of ``multiprocessors`` (default asked of the device); ``order``: its
    sequences sorted longest first (default sorted here, as the database's stores it);
    ``identity``: what names these sequences for ``auto``'s choices kept (``choices.py``:
    a database build and shard; None: none kept)."""

    def __init__(self, residues: np.ndarray, offsets: np.ndarray, lut: np.ndarray | None,
                 sub: np.ndarray, gap_open: int, gap_extend: int, mode: int,
                 partition: str = "auto", *, model: Model | None = None,
                 grid_cap: int | None = None, trace: Trace | None = None,
                 device: int | None = None, multiprocessors: int | None = None,
                 order: Subjects | None = None, identity: str | None = None) -> None:
        self.residues, self.offsets, self.lut = residues, np.asarray(offsets), lut
        self.order, self.identity = order, identity
        self.go, self.ge, self.mode = int(gap_open), int(gap_extend), int(mode)
        self.partition = partition
        self.device = current_device() if device is None else int(device)
        self._sms = multiprocessors
        self.model = capped(model if model is not None else gpu_model(), grid_cap)
        self.trace = trace if trace is not None else Trace()
        self._scoring(sub)
        # the chunk ranges and the resident chunk, shared with this scanner's with_table copies
        self._shared: dict[str, Any] = {"ranges": None, "chunk": None}

    def with_table(self, sub: np.ndarray) -> Scanner:
        """This scanner scoring with another table (a profile's rows, ``sub``): the
        database's chunks and resident copy (whichever scanner makes them first), order,
        identity and trace shared; its plans its own."""
        other = copy.copy(self)
        other._scoring(sub)
        return other

    def _scoring(self, sub: np.ndarray) -> None:
        """The table ``sub`` and what follows from it: its letters, the packing, and no plan
        or GPU copy yet."""
        self.sub = np.ascontiguousarray(sub, dtype=np.int32)  # rows: query letters/positions
        self.letters = int(self.sub.shape[1])  # the subjects' letters: the table's columns
        self.packed = self.mode == LOCAL and packable(self.sub, self.go, self.ge)
        self.events: list = []  # CUDA events around each kernel since the last kernel_seconds
        self._plans: dict[tuple, tuple] = {}  # the last scans' plans (see launches), oldest first
        self._on_gpu: tuple | None = None  # (the substitution matrix, the chunk ranges)

    def _gpu(self) -> tuple:
        """(the substitution matrix on the GPU, the database's chunk ranges), made on first
        use, under this scanner's device: the scanner is made and plans without the GPU
        (its CUDA context may still be starting meanwhile)."""
        if self._on_gpu is not None:
            return self._on_gpu
        import cupy  # optional dependency: the GPU extra

        if self._shared["ranges"] is None:
            self._shared["ranges"] = self._chunk_ranges()
        self._on_gpu = cupy.asarray(self.sub), self._shared["ranges"]
        return self._on_gpu

    def _chunk_ranges(self) -> list[tuple[int, int]]:
        """The database's chunks: one where it fits in the GPU's memory budget."""
        import cupy  # optional dependency: the GPU extra

        free, _ = cupy.cuda.runtime.memGetInfo()
        budget = DATABASE_BYTES if DATABASE_BYTES is not None else int(free * 0.6)
        return chunk_ranges(self.offsets, budget, free)

    @property
    def ranges(self) -> list[tuple[int, int]]:
        """The database's chunks (first, last + 1 sequence): one where it fits in GPU
        memory, else as many as stream through two buffers."""
        return self._gpu()[1]

    @contextmanager
    def _timed(self, phase: str) -> Iterator[None]:
        """Adds the time to ``phase`` in the trace, the current stream synchronized at the
        end (so the GPU's work inside counts)."""
        import cupy  # optional dependency: the GPU extra

        start = time.perf_counter()
        yield
        cupy.cuda.get_current_stream().synchronize()
        self.trace.add(phase, time.perf_counter() - start)

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

    def _upload(self, start: int, stop: int, stream=None, pinned=None, dres=None) -> Chunk:
        import cupy

        offsets = self.offsets[start:stop + 1] - self.offsets[start]
        host = self._host_chunk(start, stop, pinned)
        if dres is None:
            dres = cupy.empty(max(host.size, 1), cupy.uint8)
        dres[:host.size].set(host, stream=stream)
        doff = cupy.asarray(offsets)
        order = None if self.order is None else self.order.within(start, stop, np.diff(offsets))
        return Chunk(start, stop, offsets, dres, doff, order)

    def chunks(self) -> Iterator[Chunk]:
        """Yield the database's chunks on the device, the next one copied during the scan."""
        import cupy

        if len(self.ranges) == 1:
            if self._shared["chunk"] is None:
                with self._timed("upload"):  # synchronized at its end: then shared
                    chunk = self._upload(*self.ranges[0])
                self._shared["chunk"] = chunk
            yield self._shared["chunk"]
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

    def _launch(self, ch: Chunk, units: list[list[np.ndarray]], subjects: np.ndarray,
                packed: bool, out, shape: tuple[int, int, int], longest: int, *,
                scatter: tuple[np.ndarray, object, object] | None = None,
                blocks: int | None = None, pairs: bool = False):
        """Scan the chunk indices ``subjects`` (host, in the order the tickets hand them out;
        at most ``longest`` residues) against each unit (one query, or two packed) with
        kernel shape (G, R; each unit runs its own passes) in one launch on a grid of
        ``blocks`` (default, and at most, :func:`launch_blocks`'s); the kernel's words
        (uint32, units x subjects) go to the device array ``out``. With ``scatter`` (rows,
        scores, over: each unit's rows of the device int32 matrix ``scores``, int32 units x 2,
        -1 for none), a second kernel writes them there at the subjects' columns and adds its
        count of possibly saturated halves to the device int32 ``over``. ``pairs`` (one unit
        of one query, packed, local; see :meth:`_pairs`): each group sweeps two subjects, the
        words ``out`` holds (1 x (subjects + 1) // 2) their scores in halves. The launch's
        inputs go up in one copy; nothing here waits for the GPU (but see
        :meth:`Staging.put`)."""
        import cupy

        a = self.letters
        g, r, _ = shape
        lengths = unit_rows(units)
        own = np.maximum(-(-lengths // (g * r)), 1)  # each profile's own passes
        codes, meta, first, words = profile_inputs(units, own, a, g, r)
        ticket = np.zeros(1, np.int32)  # the kernel's ticket counter
        staged = self.uploads.put(ticket, subjects.astype(np.int32, copy=False),
                                   lengths.astype(np.int32), codes, meta, first,
                                   np.zeros((0, 2), np.int32) if scatter is None
                                   else scatter[0])
        d_count, d_subj, ms, d_codes, d_meta, poffs, d_rows = staged
        prof = self._build_profiles(d_codes, d_meta, poffs, len(units), int(own.max()), words,
                                    g=g, r=r, packed=packed)
        groups = BLOCK // g
        count = int(subjects.size)
        items = (count + 1) // 2 if pairs else count  # a group's subjects, or pairs of them
        most = launch_blocks(g, len(units), items, int(own.max()), longest, multiprocessors(),
                             self.model.grid_cap)
        blocks = most if blocks is None else min(blocks, most)
        stride = (longest + 2) // 2 * 2  # even: lane 0 copies two-column chunks of 16 bytes
        scratch = staging.workspace().scratch(blocks * groups * stride * 2 if own.max() > 1
                                              else 2)
        kernel, smem = _kernel(LOCAL if packed else self.mode, g, r, packed, a, pairs)
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
        rows, scores, over = scatter
        if pairs:
            function("search.cu", "scatter_pairs")(
                (min(-(-items // 256), 4 * multiprocessors()),), (256,), (
                    out, np.int32(count), np.int32(rows[0, 0]), d_subj, scores,
                    np.int64(scores.shape[1]), np.int32(saturation_limit(self.sub)), over))
            return
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
        codes, meta, first, words = profile_inputs(units, own, self.letters, g, r)
        d_codes, d_meta, poffs = self.uploads.put(codes, meta, first)
        return self._build_profiles(d_codes, d_meta, poffs, len(units), int(own.max()), words,
                                    g=g, r=r, packed=packed), poffs

    def _build_profiles(self, codes, meta, poffs, units: int, most: int, words: int, *,
                        g: int, r: int, packed: bool):
        """Launch build_profiles on staged inputs (see :func:`_profile_inputs`)."""
        import cupy

        a = self.letters
        prof = cupy.empty(words, cupy.uint32)
        grid = (min(-(-most * a * g * r // 256), 1024), min(units, 65535))
        function("search.cu", "build_profiles")(grid, (256,), (
            codes, meta, poffs, np.int32(units), self._gpu()[0], np.int32(a), np.int32(g),
            np.int32(r), np.int32(self.go), np.int32(PAD16 if packed else PAD32),
            np.int32(packed), prof))
        return prof

    @property
    def uploads(self) -> staging.Staging:
        """Each launch's inputs in one copy (see :meth:`_launch`): this thread's on this
        GPU."""
        return staging.workspace().staging

    def _scan(self, ch: Chunk, units: list[list[np.ndarray]], packed: bool,
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
                shape = self.shape(units, lengths, packed)
                blocks = self._grid(units, lengths, packed, shape)
            longest = int(lengths.max())
        pairs = scatter is not None and self._pairs(units, packed, subjects.size)
        words = cupy.empty((len(units), (subjects.size + 1) // 2 if pairs else subjects.size),
                           cupy.uint32)
        self._launch(ch, units, subjects, packed, words, shape, longest, scatter=scatter,
                     blocks=blocks, pairs=pairs)
        return words

    def _pairs(self, units: list[list[np.ndarray]], packed: bool, count: int) -> bool:
        """Whether a launch of ``units`` over ``count`` subjects sweeps two subjects per
        group (the kernel's PAIRS; module ``PAIRS`` on): one unit of one query, packed (so
        local), two subjects or more."""
        return PAIRS and packed and self.mode == LOCAL and len(units) == 1 \
            and len(units[0]) == 1 and count > 1

    def _grid(self, units: list[list[np.ndarray]], lengths: np.ndarray, packed: bool,
              shape: tuple[int, int, int]) -> int:
        """The grid planned for a launch of ``units`` over subjects of ``lengths`` with
        kernel ``shape`` (the cost model's wide choice)."""
        return launch_grid(self.model, unit_rows(units), lengths, packed, shape, wide=True)

    def shape(self, units: list[list[np.ndarray]], lengths: np.ndarray,
              packed: bool | None = None) -> tuple[int, int, int]:
        """The kernel shape planned for a launch of ``units`` over subjects of ``lengths``
        (``packed``: the kernel's packing, default the scanner's)."""
        packed = self.packed if packed is None else packed
        return launch_shape(self.model, unit_rows(units), lengths, self.letters, packed)

    def batches(self, ch: Chunk, units: list[list[np.ndarray]]) -> planner.Plan:
        """The launches over the chunk (the partition schedulers' batches of units x
        non-empty subjects, chunk indices) under this scanner's partition (``auto``: the
        planner's fastest), each one priced."""
        a, unit_m = self.letters, unit_rows(units)
        key = self._choice(ch, unit_m) if self.partition == "auto" and \
            unit_m.size > planner.FEW_UNITS else None  # few units: static, unpriced
        known = choices.lookup(key) if key else None
        name = known if known in planner.CANDIDATES else self.partition
        found = planner.plan(self.model, name, unit_m, ch.lengths, ch.subjects, a,
                             self.packed, scan_need(a, self.multiprocessors),
                             budget=OUT_BYTES + SCRATCH_BYTES, wide=True)
        if key and name == "auto":
            choices.remember(key, found.name)
        return found

    def _choice(self, ch: Chunk, unit_m: np.ndarray) -> str | None:
        """The key of ``auto``'s choice for units of ``unit_m`` rows over ``ch`` (None for
        sequences without an identity): the sequences, the GPU model, the kernel's mode and
        packing, the units' count and the longest one's 128-row passes."""
        if self.identity is None:
            return None
        m = self.model
        return (f"{self.identity}:{ch.start}-{ch.stop} {m.device} {m.version} "
                f"{self.multiprocessors} {self.letters} {self.mode} {self.packed} "
                f"{unit_m.size} {-(-int(unit_m.max()) // 128)}")

    @property
    def multiprocessors(self) -> int:
        """The multiprocessors of this scanner's GPU (as given, else asked of it)."""
        return self._sms if self._sms is not None else device_multiprocessors(self.device)

    def scores(self, ch: Chunk, queries: list[np.ndarray],
               planned: Callable[[], None] | None = None) -> list:
        """Exact scores (device int32, queries x chunk index) of each query against the
        chunk; each launch recorded in the trace; ``planned`` is called once the launches
        are planned, before they are enqueued (the host's own work is then little more than
        waiting for the GPU: what starts then runs beside the scan)."""
        import cupy  # optional dependency: the GPU extra

        out = cupy.zeros((len(queries), ch.size), cupy.int32)
        for q, s in zip(queries, out, strict=True):
            if self.mode == GLOBAL and ch.empty.size:
                s[cupy.asarray(ch.empty)] = _edge(q.size, self.go, self.ge)
            if q.size == 0 and self.mode == GLOBAL:
                s[:] = cupy.asarray(_edges(ch.lengths, self.go, self.ge))
        units = self._units(queries)
        if ch.count == 0 or not units:
            return out
        over = staging.workspace().counter()
        self.events.clear()
        first = mark()
        ends, made = [], []
        name, batches, predicted, launches = self.launches(ch, [[queries[k] for k in u]
                                                                for u in units])
        if planned is not None:
            planned()
        # load the kernels first: the trace times launches only, and a module loaded while a
        # kernel runs waits for it (scatter_scores, loaded after the first scan launch, took
        # 0.35 s of a fresh process's first search)
        function("search.cu", "build_profiles")
        one = [[queries[k] for k in u] for u in units]
        for launch in launches:
            pairs = self._pairs(one, self.packed, launch.subjects.size)
            _kernel(LOCAL if self.packed else self.mode, launch.shape[0], launch.shape[1],
                    self.packed, self.letters, pairs)
            function("search.cu", "scatter_pairs" if pairs else "scatter_scores")
        for batch, launch, guess in zip(batches, launches, predicted, strict=True):
            chosen = [units[i] for i in batch.queries.tolist()]
            self.enqueue(ch, queries, chosen, launch.subjects, out, launch.shape,
                         launch.longest, over, blocks=launch.blocks)
            ends.append(mark())
            made.append((name, batch, guess))
        saturated = int(self.uploads.read(over)[0])  # the one wait of the chunk's scan
        for k, ((name, batch, guess), end) in enumerate(zip(made, ends, strict=True)):
            self.trace.launch(LaunchTime(
                name, batch.queries.size, batch.subjects.size, guess,
                cupy.cuda.get_elapsed_time(ends[k - 1] if k else first, end) / 1e3,
                cupy.cuda.get_elapsed_time(*self.events[k]) / 1e3))
        self.events.clear()
        if saturated:
            self.rescore(ch, queries, query_rows(units), None, out)
        return out

    def _units(self, queries: list[np.ndarray]) -> list[list[int]]:
        """The launch units of ``queries`` (indices, longest first; one query, or two packed),
        the empty ones left out."""
        live = sorted((k for k, q in enumerate(queries) if q.size > 0),
                      key=lambda k: -queries[k].size)
        return pair_up(live, self.packed)

    @staticmethod
    def _key(ch: Chunk, units: list[list[np.ndarray]]) -> tuple:
        """The key of a plan kept: the chunk and the units' query lengths."""
        return ch.start, ch.stop, tuple(tuple(q.size for q in u) for u in units)

    def kernel_seconds(self) -> float:
        """The GPU time of the kernels launched since the last call (CUDA events; their
        stream synchronized)."""
        import cupy  # optional dependency: the GPU extra

        seconds = sum(cupy.cuda.get_elapsed_time(*e) for e in self.events) / 1e3
        self.events.clear()
        return seconds

    def launches(self, ch: Chunk, units: list[list[np.ndarray]]):
        """(partitioning, batches, their predicted seconds, their :class:`Launch`) over the
        chunk for units of these lengths. The plan depends on the lengths alone, so the last
        PLANS are kept: a scan of the same query lengths again (a query set searched once
        more, a benchmark's repeats) reuses its plan."""
        key = self._key(ch, units)
        plan_ = self._plans.pop(key, None)
        if plan_ is None:
            plan_ = self._planned(ch, units)
        self._plans[key] = plan_
        while len(self._plans) > PLANS:
            self._plans.pop(next(iter(self._plans)))
        return plan_

    def _planned(self, ch: Chunk, units: list[list[np.ndarray]]) -> tuple:
        """A new plan of ``units`` over ``ch`` (see :meth:`launches`), its time recorded."""
        start = time.perf_counter()
        found = self.batches(ch, units)
        launches = [Launch(p.shape, b.subjects.astype(np.int32, copy=False), longest, p.blocks)
                    for b, p, longest in zip(found.batches, found.priced, found.longest,
                                             strict=True)]
        self.trace.add("plan", time.perf_counter() - start)
        return found.name, found.batches, found.seconds, launches

    def enqueue(self, ch: Chunk, queries: list[np.ndarray], units: list[list[int]],
                 subjects: np.ndarray, out, shape: tuple[int, int, int] | None,
                 longest: int | None, over, *, blocks: int | None = None) -> None:
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

    def rescore(self, ch: Chunk, queries: list[np.ndarray], rows: np.ndarray,
                 subjects: np.ndarray | None, out) -> None:
        """Rescore at 32 bits the scores of ``out`` (rows: queries, columns: chunk indices)
        among the query rows ``rows`` x the chunk indices ``subjects`` (None: all) that are
        at or above the saturation limit: their 16-bit scan may have saturated."""
        import cupy  # optional dependency: the GPU extra

        limit = saturation_limit(self.sub)
        settle()
        with self._timed("rescore"):  # a part of the scan's time
            for row in rows.tolist():
                line = out[row] if subjects is None else out[row, cupy.asarray(subjects)]
                hot = cupy.flatnonzero(line >= limit).get()
                if not hot.size:
                    continue
                self.trace.count("rescored", int(hot.size))
                cols = hot if subjects is None else np.asarray(subjects)[hot]
                exact = self._scan(ch, [[queries[row]]], False, cols)
                out[row, cupy.asarray(cols)] = exact[0].view(cupy.int32)

    def top(self, queries: list[np.ndarray], k: int, thresholds: Thresholds,
            progress: Callable[[int], None] | None = None) -> list[Candidates]:
        """Each query's best ``k`` (0: all) database indices and scores above its threshold,
        ranked (score descending, index ascending)."""
        found: list[list] = [[] for _ in queries]
        for ch in self.chunks():
            with self._timed("scan"):
                scores = self.scores(ch, queries, lambda: begin(thresholds))
            residues = int(self.offsets[ch.stop] - self.offsets[ch.start])
            limits = thresholds_of(thresholds)  # Later ones: while the first scan ran
            with self._timed("topk"):
                if k == 0 or k >= ch.size:
                    picked = select_all(scores, limits)
                else:
                    picked = select(scores, k, limits)
            for j, (idx, sc) in enumerate(picked):
                found[j].append((idx + ch.start, sc, PLUS))
                if progress is not None:
                    progress(queries[j].size * residues)
        return [merge(parts, k)[:2] for parts in found]

    def matrix(self, queries: list[np.ndarray],
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Every query's exact score against every database sequence: host int32, queries x
        database, in database order (no ranking)."""
        out = np.empty((len(queries), len(self.offsets) - 1), np.int32)
        for ch in self.chunks():
            with self._timed("scan"):
                out[:, ch.start:ch.stop] = self.scores(ch, queries).get()
            if progress is not None:
                residues = int(self.offsets[ch.stop] - self.offsets[ch.start])
                progress(sum(q.size for q in queries) * residues)
        return out


def query_rows(units: list[list[int]]) -> np.ndarray:
    """The query rows (indices) of launch units."""
    return np.array([k for u in units for k in u], np.int64)


def mark():
    """A CUDA event recorded now on the current stream."""
    import cupy

    event = cupy.cuda.Event()
    event.record()
    return event


def _edge(k: int, go: int, ge: int) -> int:
    return -(go + (k - 1) * ge) if k > 0 else 0


def _edges(lengths: np.ndarray, go: int, ge: int) -> np.ndarray:
    return np.where(lengths > 0, -(go + (lengths - 1) * ge), 0).astype(np.int32)
