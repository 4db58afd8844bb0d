"""Many pairs per launch on the GPU (``kernels/many_pairs.cu``; the traceback in
``kernels/pairs_trace.cu``): a group of G lanes per pair, pairs sorted by shape on the GPU.
With a traceback the sweep saves the borders of blocks of 8 rows by CKPT columns, and the
traceback recomputes the blocks its path crosses; the CIGAR runs are made on the GPU, and
only scores, coordinates and runs come back. Calls whose values fit int16 (:func:`packs`)
sweep two pairs a group, one in each half of every word (``kernels/many_pairs16.cu``,
saving direction bits), the pairs exchanged where that pads fewer cells (:func:`shape_for`).
The pairs go in chunks, so one chunk's copies overlap another's sweep.

Takes the pairs of :func:`taken`; the caller sends the others (an empty sequence, a pair too
large or whose scores could outgrow the local end key) to the pairwise engines.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...errors import DeviceError
from ..common import Columns, Sides
from ..cross import indices as cross_indices
from . import nibbles, pair_chunks, staging, transfer
from .marks import Clock
from .module import function

#: lanes a pair (the kernel instances); one is chosen per call by :func:`shape_for`
GROUPS = (4, 8, 16, 32)
#: rows a lane
ROWS = 8
#: the kernels' blocks (kernels/many_pairs.cuh's PAIRS_BLOCK, pairs_trace.cu's TRACE_BLOCK)
BLOCK = 256
TRACE_BLOCK = 128
#: sides and cells of the pairs taken (the scratch rows hold MAX_SIDE columns a group)
MAX_SIDE = 8192
MAX_CELLS = 1 << 24
#: the local end key keeps X << 3 in an int32
MAX_SCORE = (1 << 28) - 1
#: calls take the two-pairs-a-word kernel (many_pairs16) where its int16 halves cannot
#: overflow (:func:`packs`); False: always the int32 kernel (for comparisons)
PACKED = True
#: int16 bounds of many_pairs16: the local key X << 3 | 7 - r holds X <= KEY16; global and
#: semiglobal values stay within +-LIMIT16 (PAD16 = -16384 a score, rows past a query)
KEY16 = 4095
LIMIT16 = 16383
#: many_pairs16 keeps each thread's rows as a profile (many_pairs16.cu's PROF: a byte a row and
#: letter) where every score + gap open fits int8 and the block's profiles fit this (DNA: 24
#: KiB, 48 with TALL rows): with SAVE 213 -> 194 instructions a step against the table at two
#: bytes a row, 831 -> 808 a run of four at one (one H200, 2,000,000 DNA pairs with CIGARs:
#: 0.076 -> 0.073-0.074 s). BLOSUM62's 100 KiB took as long as its table.
PROFILE_BYTES = 64 << 10
#: steps whose saved bottoms lie side by side, stored at once (kernels/pairs_layout.cuh's RUN)
RUN = 4
#: columns between two saved columns of a strip (kernels/pairs_layout.cuh's CKPT)
CKPT = 16
CKPT_BITS = 4
#: the page-locked and GPU slots hold a chunk (``pair_chunks.CHUNK_BYTES``) and SLACK (the
#: arrays' alignment)
SLACK = 4096
#: a pass boundary costs about this many cells a column (the scratch row's store and load,
#: the pass's setup): on the H200, 2,000,000 reads of 150 against 300 (local, int16 x 2) swept
#: in 35.2 ms with groups of 4 (five passes) and 35.7 ms with 8 (three) score-only, 124 and
#: 79 ms saving the borders (one run); int32, score-only: 166, 69 and 94 ms (16, two passes)
PASS_CELLS = 32
#: many_pairs16 may sweep the pairs exchanged (the target down the rows) where that pads
#: fewer cells (:func:`shape_for`); False: never (for comparisons)
EXCHANGE = True
#: one-to-one pairs of an alphabet of at most 16 letters (DNA) go up two letters a byte
#: (:mod:`.nibbles`); False: one a byte (for comparisons)
NIBBLES = True
#: score-only calls sweep TALL rows a lane (many_pairs16.cu's R = 16: a step's shuffles and
#: bookkeeping over twice the cells, local 7.4 -> 5.9 instructions a cell, 117 registers) where
#: the values fit (local: X <= KEY16 // 2) and the profile PROFILE_BYTES; ROWS: never
TALL = 16
#: pairs sampled for :func:`shape_for` (one where every pair has one shape)
LANES_SAMPLE = 4096
#: a cross product's chunks (``align``'s ``every``) made on the GPU from the records' offsets
#: (``kernels/cross.cu``), none sent (one H200, align_all of 100 x 1,000 proteins: 6.0 -> 5.1 ms
#: score-only, 9.4 -> 8.8 with CIGARs); False: their indices sent as any pairs' (comparisons)
CROSS = True
#: the results come down into page-locked arrays (``staging.pinned_array``, from CuPy's pool:
#: calls of about one size take the same blocks again), one copy each at the link's rate
#: (one H200, turns alternating, with CIGARs: 500,000 proteins 0.050 -> 0.040 s, 2,000,000
#: DNA pairs 0.073 -> 0.071 s); False: into pageable arrays (comparisons)
PINNED = True


def _profile(sub: np.ndarray, gap_open: int, rows: int) -> int:
    """A block's profile bytes with ``rows`` rows a lane (PROF; 0 where a score +
    ``gap_open`` leaves int8 or the profile is over PROFILE_BYTES)."""
    if not (-127 <= int(sub.min()) + gap_open and int(sub.max()) + gap_open <= 127):
        return 0
    size = (len(sub) + 1) * rows * BLOCK * 2
    return size if size <= PROFILE_BYTES else 0


def takes_all(sides: Sides, top: int) -> bool:
    """Whether the extremes say that this engine aligns every pair of ``sides`` (the common
    case), ``top`` the largest substitution score."""
    top, hm, hn = max(int(top), 0), sides.m_max, sides.n_max
    return (min(sides.m_min, sides.n_min) >= 1 and max(hm, hn) <= MAX_SIDE
            and hm * hn <= MAX_CELLS and min(hm, hn) * top <= MAX_SCORE)


def taken(sides: Sides, top: int) -> np.ndarray:
    """Which pairs of ``sides`` this engine aligns, ``top`` the largest substitution score."""
    if takes_all(sides, top):
        return np.ones(sides.m.size, bool)
    top = max(int(top), 0)
    m, n = np.asarray(sides.m, np.int64), np.asarray(sides.n, np.int64)
    return ((m >= 1) & (n >= 1) & (m <= MAX_SIDE) & (n <= MAX_SIDE) & (m * n <= MAX_CELLS)
            & (np.minimum(m, n) * top <= MAX_SCORE))


def packs(longest_m: int, longest_n: int, sub: np.ndarray, gap_open: int, gap_extend: int,
          mode: int, g: int, rows: int = ROWS) -> bool:
    """Whether pairs of at most ``longest_m`` x ``longest_n`` fit many_pairs16's int16 halves:
    every score + gap open and the local key (X <= KEY16), or every global and semiglobal H
    (between the all-gaps path and the best diagonal, rows past the query's tile included)."""
    top, low = max(int(sub.max()), 0), min(int(sub.min()), 0)
    if not (-LIMIT16 <= low + gap_open and top + gap_open <= LIMIT16):
        return False
    best = top * min(longest_m, longest_n)
    if mode == 0:  # local
        return best <= KEY16 * ROWS // rows and gap_open + gap_extend <= LIMIT16
    depth = 3 * gap_open + gap_extend * (longest_m + longest_n + g * rows + 2) - low
    return best + gap_open <= LIMIT16 and depth <= LIMIT16


def shape_for(m: np.ndarray, n: np.ndarray, exchange: bool = True, rows: int = ROWS
              ) -> tuple[int, bool]:
    """The group size G and orientation of the fewest padded cells (pass boundaries priced
    in) with ``rows`` rows a lane: True, the pairs exchanged (n down the rows;
    many_pairs16's SWAP), considered only where ``exchange``. Ties keep them."""
    m, n = np.asarray(m, np.int64), np.asarray(n, np.int64)

    def cost(shape: tuple[int, bool]) -> float:
        g, swap = shape
        down, columns = (n, m) if swap else (m, n)
        t = g * rows
        passes = -(-down // t)
        return float(np.sum(passes * (t * (columns + g - 1) + PASS_CELLS * columns)))
    return min(((g, swap) for swap in (False, True)[:1 + exchange] for g in GROUPS), key=cost)


def _passes(m, g: int):
    """The passes of g * ROWS rows over a query of m (or an array of them): a shift."""
    t = g * ROWS
    passes = m + (t - 1)
    passes >>= t.bit_length() - 1
    return passes


def dir_units(m, n, g: int):
    """The 4-byte words of an m x n pair's direction bits (or arrays of them) for groups of
    g lanes (many_pairs16's SAVE): a word (8 rows' nibbles) a strip and step,
    (n + g + 2) // 4 runs of RUN steps a pass, each pair's on an aligned 8 words. The saved
    borders' bottoms (:func:`saved_units`) have this layout. Shifts, not divisions (g * ROWS
    and RUN are powers of two), and in place: within MAX_SIDE every count fits int32."""
    units = n + (g + RUN - 2)
    units >>= RUN.bit_length() - 1
    units *= RUN * g
    units *= _passes(m, g)
    units += 7
    units &= ~7
    return units


def saved_units(m, n, g: int):
    """The units of an m x n pair's saved borders (or arrays of them) for groups of g lanes:
    a bottom row a strip and step (:func:`dir_units`' words), and the rows of every CKPT-th
    column, each pair's on an aligned 8 units (many_pairs' SAVE: a unit is two int32)."""
    units = dir_units(m, n, g)
    columns = n >> CKPT_BITS
    columns *= g * ROWS
    columns *= _passes(m, g)
    units += columns
    units += 7
    units &= ~7
    return units


def align(qcat: np.ndarray, qoff: np.ndarray, tcat: np.ndarray, toff: np.ndarray,
          qi: np.ndarray | None, ti: np.ndarray | None, sides: Sides, *, sub: np.ndarray,
          gap_open: int, gap_extend: int, mode: int, traceback: bool, every: bool = False,
          phases: dict[str, float] | None = None, timeline: list | None = None) -> Columns:
    """Pair k aligns query ``qi[k]`` (``qcat[qoff[qi[k]]:qoff[qi[k] + 1]]``,
    ``sides.m[k]`` letters) against target ``ti[k]`` (``sides.n[k]`` letters); ``qi`` and
    ``ti`` None: query k against target k; ``every``: the pairs are every query against every
    target, query-major (``qi`` and ``ti`` may be None; the chunks made on the GPU, see
    CROSS). Every pair :func:`taken`. ``phases``
    (benchmarks) gains each phase's seconds (the host's clock, the GPU waited for at each
    phase's end, so nothing overlaps); ``timeline`` (benchmarks) gains (phase, host seconds,
    an event recorded on the phase's stream) at each phase's end, nothing waited for.

    The pairs go in chunks (``pair_chunks.chunks``): a thread writes a chunk's arrays into a
    page-locked slot (``transfer.Slots``), the first while this one plans the launches, the
    others while it sends the chunk before and the GPU sweeps the ones before that
    (one-to-one, its residues and sides: the GPU makes the offsets); each chunk's results
    come down once it is done (``_Run``)."""
    import cupy

    from .gpus import stream  # lazy: the scanner's modules

    count = int(sides.m.size)
    if not count:
        return _columns(np.empty((0, 3), np.int32), np.empty((0, 5), np.int32) if traceback
                        else None, np.zeros(0, np.uint32), np.zeros(1, np.int64))
    clock = Clock(phases, timeline)
    cross = every and CROSS
    targets = toff.size - 1  # the cross product's row length
    if every and not cross and qi is None:
        qi, ti = cross_indices(qoff.size - 1, targets)
    one = qi is None and not cross  # query k against target k
    sample = slice(0, 1) if sides.uniform else slice(None, None, max(1, count // LANES_SAMPLE))
    tall = PACKED and not traceback and TALL > ROWS and _profile(sub, gap_open, TALL)
    rows = TALL if tall and packs(sides.m_max, sides.n_max, sub, gap_open, gap_extend, mode, 1,
                                  TALL) else ROWS  # a lane's rows (see TALL)
    g, swap = shape_for(sides.m[sample], sides.n[sample], EXCHANGE and PACKED, rows=rows)
    if swap and not packs(sides.n_max, sides.m_max, sub, gap_open, gap_extend, mode, g, rows):
        # only many_pairs16 swaps
        g, swap = shape_for(sides.m[sample], sides.n[sample], False, rows)
    if swap:  # the pairs exchanged: the targets down the rows, the table transposed
        qcat, qoff, qi, tcat, toff, ti, sub = tcat, toff, ti, qcat, qoff, qi, sub.T
        sides = sides.exchanged()
    packed = PACKED and packs(sides.m_max, sides.n_max, sub, gap_open, gap_extend, mode, g,
                              rows)
    m, n = sides.m, sides.n
    unit = 1 if packed else 2  # saved words a unit
    # with a traceback, many_pairs16 saves 4 direction bits a cell that trace_dirs walks
    # (kernels/many_pairs16.cu's SAVE); many_pairs saves borders that trace_saved recomputes from
    units = dir_units if packed and traceback else saved_units
    slots = transfer.slots(cupy.cuda.Device().id, pair_chunks.CHUNK_BYTES + SLACK)
    compute = stream(cupy.cuda.Device().id)
    cuts = pair_chunks.chunks(sides, (g, unit) if traceback else None,
                              (qoff, toff) if one else None, units=units)
    nibbled = bool(NIBBLES and one and nibbles.fits(int(sub.shape[0])))
    # the parallel writes (``writes``) for one-to-one chunks of DNA or without a traceback
    # (measured faster; protein with CIGARs slower: its threads take the cores that the
    # settler's copies of the runs need)
    parallel = nibbled or (one and not traceback)

    def written(lo: int, hi: int):
        """Chunk lo:hi's arrays in the next host slot, written on the filler's thread (a
        future) while this one plans, or sends and launches the chunk before (a cross
        product's: nothing)."""
        if cross:
            return None, None, lo, hi
        k = hi - lo
        if one:  # query k against target k: the chunk's residues
            a, b, c, d = int(qoff[lo]), int(qoff[hi]), int(toff[lo]), int(toff[hi])
            size = nibbles.packed_size if nibbled else int
            views, ticket = slots.take([(np.uint8, size(b - a)), (np.uint8, size(d - c)),
                                        (np.int32, k), (np.int32, k)])
            # the sides read off the offsets as they are written (no array of every length)
            sources = [qcat[a:b], tcat[c:d], qoff[lo:hi + 1], toff[lo:hi + 1]]
        else:
            views, ticket = slots.take([(np.int64, k), (np.int64, k), (np.int32, k),
                                        (np.int32, k)])
            sources = [qi[lo:hi], ti[lo:hi], m[lo:hi], n[lo:hi]]
        clock("slot", slots.stream)
        return (pair_chunks.filler().submit(pair_chunks.fill, views, sources, nibbled,
                                             parallel, one), ticket,
                lo, hi)

    def launch(run: _Run, whole, filled, ticket, lo: int, hi: int) -> None:
        """Chunk lo:hi sent once written, and launched (``whole``: every record on the GPU
        where pairs index them; a cross product's chunk made there)."""
        part = sides.part(lo, hi)
        words = pair_chunks.words(part, g, units) * unit if traceback else None
        if cross:
            with compute:
                run.launch(_crossed(whole, lo, hi, targets, swap), lo, hi, part, words)
            return
        filled.result()
        clock("written", slots.stream)
        arrays, slot = slots.send(ticket)
        clock("upload", slots.stream)
        compute.wait_event(slots.copied[slot])
        with compute:
            if whole is None:  # the chunk's offsets from its sides
                if nibbled:  # the residues one letter a byte
                    arrays[:2] = [nibbles.unpack(arrays[0], int(qoff[hi] - qoff[lo])),
                                  nibbles.unpack(arrays[1], int(toff[hi] - toff[lo]))]
                arrays[2:2] = [_starts(arrays[2]), _starts(arrays[3])]
            else:  # the records' offsets of the chunk's pairs
                d_q, d_t, d_qo, d_to = whole
                arrays = [d_q, d_t, d_qo[arrays[0]], d_to[arrays[1]], *arrays[2:]]
            run.launch(arrays, lo, hi, part, words)
            slots.release(slot, compute.record())

    with slots.lock:
        clock("begin", slots.stream)
        pending: list = []  # chunks written or being written, not yet launched
        run = None
        try:
            pending.append(written(*next(cuts)))  # written while the launches are planned
            with compute:
                run = _Run(g, mode, traceback, packed, np.asarray(sub), gap_open, gap_extend,
                           clock=clock, count=count, down=slots.down, units=units, swap=swap,
                           rows=rows if packed else ROWS)
            clock("planned", compute)
            whole = None
            if not one:  # pairs index the records: every record goes up once
                with compute if cross else slots.stream:  # (a cross product: no slots)
                    whole = transfer.upload_all([qcat, tcat, qoff, toff] if tcat is not qcat
                                                else [qcat, qoff, toff])
                    if tcat is qcat:
                        whole.insert(1, whole[0])
            for lo, hi in cuts:
                pending.append(written(lo, hi))
                launch(run, whole, *pending.pop(0))
            while pending:
                launch(run, whole, *pending.pop(0))
            with compute:
                ends, res5, runs, offsets = run.results()
            clock("download", compute)
        finally:
            for filled, *_ in pending:  # no write left running into a slot
                if filled is not None:  # (a cross product's chunks have none)
                    filled.exception()
            if run is not None:
                run.close()  # no download of this call left running: the next call's slots
    columns = _columns(ends, res5, runs, offsets, swap)
    clock("columns")
    return columns


def _columns(ends: np.ndarray, res5: np.ndarray | None, runs: np.ndarray,
             offsets: np.ndarray | None, swap: bool = False) -> Columns:
    """The columns of the end cells, coordinates, runs and the runs' offsets (the last two
    None score-only); ``swap``: the pairs were swept exchanged (their runs exchanged back
    already), so the rows' coordinates are the targets'."""
    if res5 is None:
        unknown = np.broadcast_to(np.int32(-1), ends.shape[:1])  # no memory a pair
        rows, columns = (ends[:, 2], ends[:, 1]) if swap else (ends[:, 1], ends[:, 2])
        return Columns(ends[:, 0], unknown, rows, unknown, columns, None, None)
    order = (2, 3, 0, 1) if swap else range(4)
    return Columns(ends[:, 0], *(res5[:, c] for c in order), runs, offsets)


def _crossed(whole: list, lo: int, hi: int, targets: int, swap: bool) -> list:
    """Pairs lo:hi of a cross product of ``targets`` a row, made on the GPU from the records
    (``whole``: residues and offsets): residues, starts and sides, as a chunk's arrays."""
    import cupy

    d_q, d_t, d_qo, d_to = whole
    count = hi - lo
    starts = cupy.empty((2, count), cupy.int64)
    sides = cupy.empty((2, count), cupy.int32)
    function("cross.cu", "cross_pairs")(
        (-(-count // BLOCK),), (BLOCK,), (d_qo, d_to, np.int64(lo), np.int32(count),
                                          np.int64(targets), np.int32(swap), starts[0],
                                          starts[1], sides[0], sides[1]))
    return [d_q, d_t, starts[0], starts[1], sides[0], sides[1]]


def _starts(sides):
    """Each pair's first residue in the chunk's array, from the sides (on the GPU)."""
    import cupy

    starts = cupy.zeros(sides.size, cupy.int64)
    cupy.cumsum(sides[:-1], dtype=cupy.int64, out=starts[1:])
    return starts


def _firsts(count: int, each: int, values):
    """The running sums (from 0, ``count`` + 1 on the GPU) of each pair's units: multiples
    of ``each`` where every pair has that many (``each`` > 0), else of ``values()``."""
    import cupy

    if each:
        return cupy.arange(0, (count + 1) * each, each, dtype=cupy.int64)
    sums = cupy.zeros(count + 1, cupy.int64)
    cupy.cumsum(values(), out=sums[1:])
    return sums


@functools.cache
def _settler() -> ThreadPoolExecutor:
    """The thread that brings the chunks' results down (:meth:`_Run._settled`)."""
    return ThreadPoolExecutor(1, thread_name_prefix="wavedp-pairs-down")


def _grid(kernel, smem: int) -> int:
    """Resident blocks of ``kernel`` over the GPU (its registers, ``smem`` bytes of shared
    memory and the block's threads bound each multiprocessor's)."""
    from .multipass import multiprocessors

    regs = max(int(kernel.num_regs), 1)
    by_regs = 65536 // (((regs * 32 + 255) // 256 * 256) * (BLOCK // 32))
    by_smem = (228 << 10) // (smem + 1024)
    return multiprocessors() * max(1, min(by_regs, by_smem, 2048 // BLOCK))


class _Run:
    """The launches of one call on the current stream: group size, mode, kernel (many_pairs16
    where ``packed``), scoring, the phases' clock, and the results of its ``count`` pairs:
    each chunk's end cells (with a traceback: scores, coordinates and runs) come down as soon
    as it is done, on the slots' download stream (``down``) and a thread of their own
    (:func:`_settler`), while this thread sends the chunks after it."""

    def __init__(self, g: int, mode: int, traceback: bool, packed: bool, sub: np.ndarray,
                 go: int, ge: int, *, clock: Clock, count: int, down=None,
                 units=saved_units, swap: bool = False, rows: int = ROWS) -> None:
        import cupy

        self.g, self.mode, self.traceback, self.packed, self.rows = g, mode, traceback, packed, rows
        self.swap = swap  # many_pairs16's SWAP: the pairs exchanged
        # a pair's saved words: direction bits (many_pairs16) or borders (many_pairs)
        self.units, self.dirs = units, units is dir_units
        a = int(sub.shape[0])
        self.d_sub = cupy.asarray(np.ascontiguousarray(sub, np.int32).ravel())
        self.a, self.go, self.ge, self.clock = a, go, ge, clock
        self.ends = cupy.empty(3 * count, cupy.int32)
        self.found = None if traceback else self._host((count, 3), np.int32)  # on the host
        self.res5 = cupy.full(5 * count, -1, cupy.int32) if traceback else None
        self.settling: list = []  # the downloads under way (futures)
        self.count, self.down = count, down
        self.device = cupy.cuda.Device().id
        if traceback:  # the results on the host: runs in a buffer grown as they come
            self.scores = self._host(count, np.int32)
            self.coords = self._host((count, 5), np.int32)
            self.runs, self.runs_at = np.empty(0, np.uint32), 0
            self.unwritten = False  # whether a chunk came down with a pair left unwritten
            self.offsets = self._host(count + 1, np.int64)
            self.offsets[0] = 0
            self.base = cupy.zeros(1, cupy.int64)  # the runs of the chunks launched (GPU)
        a1 = a + 1 if packed else a  # the table's rows: a last one of PAD (and column)
        self.smem = (a + 1) * a1 * 32 * 4
        flags = [traceback]
        if packed:  # many_pairs16's PROF and SWAP
            prof = _profile(sub, go, rows)
            flags += [prof > 0, swap]
            self.smem = prof or self.smem
        name = "many_pairs16" if packed else "many_pairs"
        flags = ", ".join(str(f).lower() for f in flags)
        self.sweep = function(f"{name}.cu", f"{name}<{mode}, {g}, {rows}, {flags}>")
        if self.smem > 48 << 10:
            self.sweep.max_dynamic_shared_size_bytes = self.smem
        self.grid = _grid(self.sweep, self.smem)

    @staticmethod
    def _host(shape, dtype) -> np.ndarray:
        """A result array on the host: page-locked where PINNED."""
        return staging.pinned_array(shape, dtype) if PINNED else np.empty(shape, dtype)

    def launch(self, args: list, lo: int, hi: int, part: Sides, words: int | None) -> None:
        """Sort, sweep and (with ``words`` saved words) trace pairs lo:hi (sides ``part``);
        ``args``: their residues, offsets and sides on the GPU."""
        import cupy

        d_q, d_t, d_qs, d_ts, d_m, d_n = args
        g, count, t, grid = self.g, hi - lo, self.g * self.rows, self.grid
        longest_m, longest_n = part.m_max, part.n_max
        if longest_m <= t * -(-part.m_min // t) and longest_n == part.n_min:
            order = cupy.arange(count, dtype=cupy.int32)  # one shape: nothing to sort
        else:  # by passes, then columns, longest first (keys below 2**24)
            order = cupy.argsort(-(((d_m + t - 1) // t) * 65536 + d_n).astype(cupy.int32))
            order = order.astype(cupy.int32)
        passes = longest_m > t
        stride = longest_n + 2 if passes else 1
        scratch = cupy.empty(grid * (BLOCK // g) * stride * 2 if passes else 2, cupy.int32)
        d_ends = self.ends[3 * lo:3 * hi]
        ticket = cupy.zeros(1, cupy.int32)
        one = part.uniform
        soff = cupy.zeros(1, cupy.int64) if words is None else _firsts(  # saved units
            count, one and int(self.units(np.int64(longest_m), np.int64(longest_n), g)),
            lambda: self.units(d_m.astype(cupy.int64), d_n.astype(cupy.int64), g))
        save = cupy.empty(max(words or 0, 2), cupy.uint32)
        self.clock("sort")
        head = (d_q, d_t, d_qs, d_ts, d_m, d_n, order, np.int32(count), self.d_sub,
                np.int32(self.a), np.int32(self.go), np.int32(self.ge), save, soff, scratch,
                np.int32(stride), d_ends, ticket)
        self.sweep((grid,), (BLOCK,), (*head, np.uint32(self.rows)) if self.packed else head,
                   shared_mem=self.smem)
        self.clock("sweep")
        if words is None:  # the chunk's end cells down once it is swept
            self._after(lambda: transfer.download(d_ends, out=self.found[lo:hi].reshape(-1),
                                                  locked=PINNED))
            return
        roff = _firsts(count, one and longest_m + longest_n + 1,
                       lambda: (d_m + d_n + 1).astype(cupy.int64))  # runs' room
        letters = count * (longest_m + longest_n) if one else int(
            part.m.sum(dtype=np.int64) + part.n.sum(dtype=np.int64))
        runs = cupy.empty(count + letters, cupy.uint32)
        res5 = self.res5[5 * lo:5 * hi]
        blocks = min(-(-count // TRACE_BLOCK), 65535)
        trace = (f"trace_dirs<{self.mode}, {g}, {str(self.swap).lower()}>" if self.dirs
                 else f"trace_saved<{self.mode}, {g}>")
        function("pairs_trace.cu", trace)(
            (blocks,), (TRACE_BLOCK,), (d_q, d_t, d_qs, d_ts, d_m, d_n, order, np.int32(count),
                                self.d_sub, np.int32(self.a), np.int32(self.go),
                                np.int32(self.ge), save, soff, d_ends, roff, runs, res5),
            shared_mem=self.a * self.a * 4)
        self.clock("traceback")
        poff = cupy.zeros(count + 1, cupy.int64)
        cupy.cumsum(res5[4::5].astype(cupy.int64), out=poff[1:])
        packed = cupy.empty(runs.size, cupy.uint32)
        function("pairs_trace.cu", "pack_runs")((blocks,), (TRACE_BLOCK,), (
            runs, roff, res5, poff, np.int32(count), packed, np.int32(self.swap)))
        self.clock("pack")
        ends_at = poff[1:] + self.base  # where each pair's runs end in the call's runs
        self.base = ends_at[-1:]
        # the scores gathered here: a kernel on the download stream would wait for room on
        # the GPU behind the next chunk's sweep
        scores = d_ends[::3].copy()
        self._after(lambda: self._settle(packed, ends_at, scores, lo, hi))

    def _after(self, settle) -> None:
        """``settle()`` (a chunk's results down) on the settler's thread once the work
        launched so far on this stream is done."""
        import cupy

        # an event the settler sleeps on (not spins: the host's copies need the cores; the
        # last chunk's spun for was no faster)
        done = cupy.cuda.get_current_stream().record(
            cupy.cuda.Event(block=True, disable_timing=True))
        if len(self.settling) >= 3:  # at most three chunks not down (CIGARs: runs on the GPU)
            self.settling[-3].result()
        self.settling.append(_settler().submit(self._settled, settle, done))

    def _settled(self, settle, done) -> None:
        """``settle()`` on the ``down`` stream once ``done`` (on the settler's thread: one
        chunk at a time, in order)."""
        import cupy

        done.synchronize()
        self._mark("ready")
        with cupy.cuda.Device(self.device), self.down:
            settle()
            self._mark("down")

    def _settle(self, packed, ends_at, scores, lo: int, hi: int) -> None:
        """Chunk lo:hi's ``scores``, coordinates, runs (``packed``) and the runs' offsets in
        the call's runs (``ends_at``, whose last says how many) on the host."""
        transfer.download(ends_at, out=self.offsets[lo + 1:hi + 1], locked=PINNED)
        end = int(self.offsets[hi])
        if end > self.runs.size:  # room for about 1.25 times the runs a pair so far
            grown = self._host(max(end, end * self.count // hi * 5 // 4), np.uint32)
            grown[:self.runs_at] = self.runs[:self.runs_at]
            self.runs = grown
        transfer.download(packed[:end - self.runs_at], out=self.runs[self.runs_at:end],
                          locked=PINNED)
        transfer.download(self.res5[5 * lo:5 * hi], out=self.coords[lo:hi].reshape(-1),
                          locked=PINNED)
        # checked here, beside the later chunks' work (after the last, 2,000,000 pairs' took
        # 7.6 ms on one H200's host)
        self.unwritten |= bool(self.coords[lo:hi, 4].min() < 0)
        transfer.download(scores, out=self.scores[lo:hi], locked=PINNED)
        self.runs_at = end

    def _mark(self, name: str) -> None:
        """A timeline mark on the settler's thread and the download stream (only a timeline:
        the phases are waited for on the calling thread)."""
        if self.clock.timeline is not None:
            import cupy

            with cupy.cuda.Device(self.device):
                self.clock(name, self.down)

    def close(self) -> None:
        """Downloads not started cancelled, running ones waited for (their errors, if an
        error is on its way already, left to it)."""
        for future in self.settling:
            future.cancel()
        for future in self.settling:
            if not future.cancelled():
                future.exception()

    def results(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]:
        """Every pair's end cells (count x 3; with a traceback, their scores alone, count x
        1), coordinates and run counts (count x 5; None score-only), runs and their offsets
        (None score-only), on the host (the chunks' downloads waited for). A pair the
        traceback left unwritten is a DeviceError."""
        for future in self.settling:
            future.result()
        self.clock("settled")
        if self.res5 is None:
            return self.found, None, np.zeros(0, np.uint32), None
        if self.unwritten:
            raise DeviceError("the pairs' traceback left results unwritten")
        return self.scores.reshape(-1, 1), self.coords, self.runs[:self.runs_at], self.offsets
