"""Launcher of the single-kernel multi-pass wavefront (``kernels/multipass.cu``).

One call of :func:`sweep` runs one kernel over a rectangle of the DP matrix, with optional
top-row and left-column inputs and optional outputs (row and column checkpoints, direction
bytes, end cell). The forward pass, the band recomputation and the traceback tiles are all
calls of it with different options.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

import numpy as np

from ...device import driver
from ...errors import DeviceError, InputError
from ..common import GLOBAL, LOCAL, SEMIGLOBAL, own_rows
from .module import function

#: rows per thread of the score-only variants (strip height 32 * rows), largest first
ROWS = (32, 16, 8)
#: rows per thread of the direction-byte variant (traceback tiles)
DIR_ROWS = 4
#: a spin-wait longer than this is reported as an error instead of hanging
TIMEOUT_NS = 30_000_000_000
#: error flag value the host writes to stop a running sweep early (kernels/common.cuh)
CANCELLED = 2
#: tests set this to fill every output buffer with 0x7f bytes first, so unwritten cells show
POISON = False


def scratch(size: int, dtype):
    """An output buffer: uninitialised, or poisoned when POISON is set."""
    import cupy

    if POISON:
        return cupy.full(size, 0x7F7F7F7F if np.dtype(dtype).itemsize == 4 else 0x7F, dtype)
    return cupy.empty(size, dtype=dtype)


@dataclass
class Pair:
    """One encoded pair on the device."""

    q: object  # cupy uint8 (a profile's: int32 rows)
    t: object  # cupy uint8
    sub: object  # cupy int32 [A*rows], transposed: sub[t * rows + q] scores q against t
    alphabet: int
    gap_open: int
    gap_extend: int
    mode: int
    table_min: int = 0
    table_max: int = 0
    profile: bool = False  # q holds rows of a profile's table, sub its rows transposed

    @property
    def stride(self) -> int:
        """The rows of the transposed table (the alphabet; a profile's height)."""
        return int(self.sub.size) // self.alphabet

    @property
    def m(self) -> int:
        return int(self.q.size)

    @property
    def n(self) -> int:
        return int(self.t.size)


def upload(q: np.ndarray, t: np.ndarray, sub: np.ndarray, gap_open: int, gap_extend: int,
           mode: int, profile: bool = False) -> Pair:
    """Copy one encoded pair and its substitution table to the device (``profile``: ``sub``
    is profiles' table and ``q`` rows of it; the query's own rows go up)."""
    import cupy

    def dev(a, dtype):
        return cupy.asarray(np.ascontiguousarray(a, dtype=dtype)) if a.size else \
            cupy.zeros(1, dtype=dtype)[:0]

    if profile:
        q, sub = own_rows(q, sub)
    return Pair(dev(q, np.int32 if profile else np.uint8), dev(t, np.uint8),
                dev(sub.T.ravel(), np.int32), int(sub.shape[1]), int(gap_open),
                int(gap_extend), int(mode), int(sub.min()), int(sub.max()), profile)


def _ptr(x) -> np.uint64:
    if x is None:
        return np.uint64(0)
    if isinstance(x, (int, np.integer)):
        return np.uint64(x)
    return np.uint64(x.data.ptr)


@dataclass
class Checkpoints:
    """Where a sweep of ``rows`` x ``cols`` writes checkpoints every ``every`` rows and
    columns (a multiple of the strip height): row blocks of :attr:`block` ints from address
    ``addr``. Block b holds H of rows b every..(b + 1) every, then E (entry 0, row b every,
    unused), on each of the C = cols // every checkpoint columns (every + 1 ints per column),
    then H and F of row (b + 1) every at columns 0..cols. The kernel writes a block only once
    the device int ``ready`` (when given) exceeds its index, so the host can pin the blocks
    while the sweep runs."""

    rows: int
    cols: int
    every: int
    addr: int = 0
    ready: object = None

    @property
    def ncols(self) -> int:
        return self.cols // self.every

    @property
    def blocks(self) -> int:
        return self.rows // self.every + 1

    @property
    def block(self) -> int:
        return -(-(2 * self.ncols * (self.every + 1) + 2 * (self.cols + 1)) // 64) * 64

    @property
    def nbytes(self) -> int:
        return 4 * self.blocks * self.block

    def col(self, b: int, k: int, e: bool = False) -> int:
        """Offset (ints) of H (or E) of row b every on checkpoint column k."""
        return b * self.block + (self.ncols * (self.every + 1) if e else 0) + k * (self.every + 1)

    def row(self, b: int, f: bool = False) -> int:
        """Offset (ints) of H (or F) of row (b + 1) every at column 0."""
        return b * self.block + 2 * self.ncols * (self.every + 1) + (self.cols + 1 if f else 0)


@dataclass
class Outputs:
    """What a sweep leaves behind (device arrays, or None when not asked for)."""

    strip_best: object = None
    lastcol: object = None
    lastrow: object = None
    timeline: object = None  # int64 [strips, 3]: start, end, time waiting (ns, global timer)
    ticket: object = None  # int32 [ticket, error flags] of the launch
    persisting: bool = False  # the ring rows were marked persisting in L2 (reset by check)


def sweep_bytes(m: int, n: int) -> int:
    """GPU memory a score-only sweep of an m x n pair needs (its codes, profile, column
    state and outputs)."""
    return m + n + 20 * (n + 1) + 4 * (m + n) + 4096


def check_free(need: int, what: str) -> None:
    """An InputError before any launch when ``what`` needs more than the GPU's free memory."""
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    if need > free:
        raise InputError(f"{what} needs {need / 2**30:.2f} GiB of GPU memory, "
                         f"{free / 2**30:.2f} GiB free")


def current_device() -> int:
    """This thread's current CUDA device (no CUDA context needed)."""
    import cupy

    return int(cupy.cuda.runtime.getDevice())


def multiprocessors() -> int:
    """Multiprocessor count of the current device (queried once per device)."""
    return device_multiprocessors(current_device())


@functools.cache
def device_multiprocessors(device_id: int) -> int:
    """Multiprocessor count of device ``device_id`` (no CUDA context needed)."""
    import cupy

    return int(cupy.cuda.runtime.deviceGetAttribute(
        cupy.cuda.runtime.cudaDevAttrMultiProcessorCount, device_id))


def strip_height(rows_per_thread: int) -> int:
    return 32 * rows_per_thread


def rows_for(m: int) -> int:
    """Rows per thread for a score-only sweep of m rows: the largest that still gives every
    multiprocessor four strips (more rows per thread amortise the per-column overhead)."""
    sms = multiprocessors()
    for r in ROWS:
        if m >= 4 * sms * strip_height(r):
            return r
    return ROWS[-1]


def shared_bytes(kernel, profile: int, blocks_per_sm: int | None) -> int:
    """Dynamic shared memory for one block: the strip's profile, or, with ``blocks_per_sm``,
    enough more that at most that many one-warp blocks fit on a multiprocessor (so the block
    scheduler spreads strips evenly: a multiprocessor with more warps runs its strips more
    slowly, and the wavefront moves at the pace of its slowest strip)."""
    size = profile
    if blocks_per_sm:
        from cupy.cuda import Device, runtime

        dev = Device().id
        per_sm = runtime.deviceGetAttribute(
            runtime.cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)
        reserved = runtime.deviceGetAttribute(
            runtime.cudaDevAttrReservedSharedMemoryPerBlock, dev)
        size = max(profile, (per_sm // blocks_per_sm - reserved) // 128 * 128)
        kernel.preferred_shared_memory_carveout = 100
    if size > 48 << 10:  # beyond the default limit: opt in
        kernel.max_dynamic_shared_size_bytes = size
    return size


#: an int32 query profile (no byte extraction per cell) while it takes at most this much
#: shared memory per block (DNA's 5 letters at 1024-row strips); int8 otherwise
INT32_PROFILE_BYTES = 24 << 10


def profile_is_wide(p: Pair, shift: int, strip: int) -> bool:
    """Whether a sweep's query profile holds int32 scores (else int8)."""
    if p.table_min + shift < -128 or p.table_max + shift > 127:
        return True
    return 4 * p.alphabet * strip <= INT32_PROFILE_BYTES


def key_fits(p: Pair, i: int, j: int, r: int) -> bool:
    """Whether local end-cell keys ``(H - go) * r + row`` stay in int32 for cells up to
    (i, j): a local score there is at most min(i, j) times the best substitution score."""
    bound = min(i, j) * max(p.table_max, 0)
    return (bound + 1) * r < 2**31 and (p.gap_open + 1) * r < 2**31


def blocks_for(nstrips: int) -> int:
    """Grid size: enough one-warp blocks to fill the device; tickets make any size safe."""
    return max(1, min(nstrips, 32 * multiprocessors()))


def kernel_for(p: Pair, rows: int, track: bool = True, rows_per_thread: int | None = None,
               profile: str | None = None) -> tuple[int, bool, object]:
    """(rows per thread, whether the profile holds int32, the kernel) of a sweep of ``rows``
    rows: score-only (``track``) or with direction bytes; ``rows_per_thread`` and
    ``profile`` ("int8" or "int32") override the automatic choices (see :func:`sweep`)."""
    r = rows_per_thread or (rows_for(rows) if track else DIR_ROWS)
    shift = p.gap_open if track else 0  # score-only profiles hold score + gap_open
    wide = profile_is_wide(p, shift, strip_height(r)) if profile is None else \
        profile == "int32"
    expr = (f"multipass<{p.mode}, {r}, {'false' if track else 'true'}, "
            f"{'int' if wide else 'signed char'}>")
    return r, wide, function("multipass.cu", expr)


def sweep(p: Pair, row0: int, rows: int, col0: int, cols: int, *, top=(None, None),
          left=(None, None), dirs=None, checkpoints: Checkpoints | None = None,
          rows_per_thread: int | None = None, blocks_per_sm: int | None = None,
          profile: str | None = None, keyed: bool | None = None,
          timeline: bool = False, persist: bool = False, wait: bool = True) -> Outputs:
    """Run the multipass kernel over rows row0+1..row0+rows and columns col0+1..col0+cols.

    top: device pointers/arrays of H and F on row ``row0`` for columns col0..col0+cols, or
    None for the matrix's row 0. left: H and E on column ``col0`` for rows row0..row0+rows,
    or None for column 0. dirs: a uint8 array for the direction bytes, laid out by strips
    (``rows.strip_index``; ceil(rows / strip) * strip * (cols + 31) bytes); without it the
    sweep tracks the end cell (see :func:`end_cell`).
    checkpoints: where H and E of every K-th column and H and F of every K-th row go
    (:class:`Checkpoints`; K a multiple of the strip height). For benchmarks and tests:
    rows_per_thread overrides ROWS / DIR_ROWS, blocks_per_sm caps the blocks resident on
    one multiprocessor, profile ("int8" or "int32") and keyed (the local end cell tracked
    by keys, see the kernel) override the automatic choices, timeline records when each
    strip ran. persist: keep the ring rows (the strips' boundary rows) in L2 as persisting
    lines (:func:`persist_l2`; off by default). With wait=False the launch is left running
    on the current stream: call :func:`check` on the result."""
    import cupy

    track = dirs is None
    r, wide, kernel = kernel_for(p, rows, track, rows_per_thread, profile)
    nstrips = -(-rows // strip_height(r))
    if keyed is None:
        keyed = key_fits(p, row0 + rows, col0 + cols, r)
    keyed = keyed and track and p.mode == LOCAL
    half = -(-2 * (cols + 1) // 32) * 32  # ring F from a 128-byte line: one window for both
    ring = scratch(2 * half, np.int32)
    ring_h, ring_f = ring[:2 * (cols + 1)], ring[half:half + 2 * (cols + 1)]
    progress = cupy.zeros(nstrips + 1, dtype=cupy.int32)
    ticket = cupy.zeros(2, dtype=cupy.int32)  # [ticket, error]
    blocks = blocks_for(nstrips)
    ck, stash = checkpoints, None
    if ck is not None:
        if ck.every % strip_height(r) or (ck.rows, ck.cols) != (rows, cols):
            raise ValueError(f"checkpoints every {ck.every} of {ck.rows} x {ck.cols} do not "
                             f"fit a {rows} x {cols} sweep of {strip_height(r)}-row strips")
        stash = scratch(blocks * 2 * strip_height(r), np.int32)  # <= 8 (rows + strip) bytes
    out = Outputs()
    if track and p.mode == LOCAL:
        out.strip_best = scratch(3 * nstrips, np.int32)
    elif track:
        out.lastcol = scratch(rows, np.int32)
        out.lastrow = scratch(cols, np.int32)
    if timeline:
        out.timeline = cupy.zeros((nstrips, 3), dtype=cupy.int64)
    args = (
        p.q, _ptr(p.q if p.profile else None), p.t, p.sub, np.int32(p.alphabet),
        np.int32(p.stride), np.int32(p.gap_open), np.int32(p.gap_extend),
        np.int32(row0), np.int32(rows), np.int32(col0), np.int32(cols),
        _ptr(top[0]), _ptr(top[1]), _ptr(left[0]), _ptr(left[1]),
        ring_h, ring_f, progress, ticket, _ptr(ticket.data.ptr + 4),
        np.uint64(TIMEOUT_NS), np.int32(ck.every if ck else 0), np.int64(ck.addr if ck else 0),
        np.int64(ck.block if ck else 0), _ptr(ck.ready if ck else None), _ptr(stash),
        _ptr(dirs),
        _ptr(out.strip_best), _ptr(out.lastcol), _ptr(out.lastrow),
        np.int32(r if keyed else 0), _ptr(out.timeline),
    )
    smem = shared_bytes(kernel, (4 if wide else 1) * p.alphabet * strip_height(r),
                        blocks_per_sm)
    if persist:
        stream = cupy.cuda.get_current_stream().ptr
        persist_l2(ring, stream)
    kernel((blocks,), (32,), args, shared_mem=smem)
    if persist:
        _access_window(stream, 0, 0, 0.0)  # later launches on the stream: no window
        out.persisting = True
    out.ticket = ticket
    if wait:
        check(out)
    return out


def check(out: Outputs, stream=None) -> None:
    """Wait for a sweep (on ``stream``, else the current one); raise DeviceError if it
    timed out."""
    error = int(out.ticket[1].get(stream=stream))
    if out.persisting:  # the ring's lines back to normal, so later kernels get the whole L2
        _call("cuCtxResetPersistingL2Cache")
        out.persisting = False
    if error & ~CANCELLED:
        raise DeviceError(f"multipass kernel: a strip waited longer than {TIMEOUT_NS / 1e9:.0f}"
                          f" s for the strip above (error flags {error}); results discarded")


#: cudaLimitPersistingL2CacheSize (CuPy's runtime module names no constant for it)
LIMIT_PERSISTING_L2 = 0x06
#: CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW; CU_ACCESS_PROPERTY_STREAMING and _PERSISTING
_WINDOW, _STREAMING, _PERSISTING = 1, 1, 2


class _Window(ctypes.Structure):  # CUaccessPolicyWindow
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t),
                ("hit_ratio", ctypes.c_float), ("hit_prop", ctypes.c_int),
                ("miss_prop", ctypes.c_int)]


class _Value(ctypes.Union):  # CUstreamAttrValue (CUlaunchAttributeValue, 64 bytes)
    _fields_ = [("window", _Window), ("pad", ctypes.c_char * 64)]


def _call(name: str, *args) -> None:
    status = getattr(driver(), name)(*args)
    if status:
        raise DeviceError(f"{name} failed: CUDA driver error {status}")


def _access_window(stream: int, base: int, nbytes: int, hit_ratio: float) -> None:
    """Set the L2 access-policy window of the stream whose handle is ``stream`` (hits
    persisting, misses streaming; ``nbytes`` 0: no window)."""
    value = _Value()
    value.window = _Window(base, nbytes, hit_ratio, _PERSISTING, _STREAMING)
    _call("cuStreamSetAttribute", ctypes.c_void_p(stream), ctypes.c_int(_WINDOW),
          ctypes.byref(value))


@functools.cache
def _l2_limits(device_id: int) -> tuple[int, int]:
    """(largest persisting set-aside, largest access-policy window) of a device, bytes."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(device_id)
    return int(props.get("persistingL2CacheMaxSize", 0)), \
        int(props.get("accessPolicyMaxWindowSize", 0))


def persist_l2(buffer, stream: int) -> None:
    """Mark ``buffer`` (a device array) persisting in L2 for the next launches on the stream
    whose handle is ``stream``: the device's persisting set-aside
    (``cudaLimitPersistingL2CacheSize``) grows to cover it, up to the largest the device
    allows, and an access-policy window over it takes that share of its lines as
    persisting (the rest streaming). An InputError where the device has no L2 persistence
    (before compute capability 8.0)."""
    import cupy

    most, window = _l2_limits(cupy.cuda.Device().id)
    if not most or not window:
        raise InputError("L2 persistence needs a GPU of compute capability 8.0 or later")
    nbytes = min(int(buffer.nbytes), window)
    aside = min(nbytes, most)
    runtime = cupy.cuda.runtime
    if runtime.deviceGetLimit(LIMIT_PERSISTING_L2) < aside:
        runtime.deviceSetLimit(LIMIT_PERSISTING_L2, aside)
    _access_window(stream, int(buffer.data.ptr), nbytes, min(1.0, aside / max(nbytes, 1)))


def cancel(out: Outputs, stream) -> None:
    """Make a running sweep stop (every strip leaves within 32 columns); ``stream`` must not
    be the sweep's own, or the write would wait for the sweep to end. :func:`check` does not
    count a cancel as an error."""
    out.ticket[1:].set(np.array([CANCELLED], np.int32), stream=stream)


#: candidate kinds of ``kernels/endcell.cu``
TRIPLES, ROWS_BEST, EDGES = 0, 1, 2


def best_cell(kind: int, a, b=None, m: int = 0, n: int = 0, count: int = 0
              ) -> tuple[int, int, int]:
    """(score, i, j) of the best candidate by docs/design.md's tie rule, reduced on the GPU
    (``kernels/endcell.cu`` says what the kinds and arrays are)."""
    import cupy

    out = cupy.empty(3, dtype=cupy.int32)
    function("endcell.cu", "best_cell")((1,), (1024,), (
        np.int32(kind), _ptr(a), _ptr(b), np.int32(m), np.int32(n), np.int32(count), out))
    score, i, j = (int(v) for v in out.get())
    return score, i, j


def end_cell(p: Pair, out: Outputs) -> tuple[int, int, int]:
    """(score, end_i, end_j) by docs/design.md's tie rule from a tracked full-matrix sweep."""
    m, n = p.m, p.n
    if p.mode == LOCAL:
        score, i, j = best_cell(TRIPLES, out.strip_best, count=out.strip_best.size // 3)
        return (0, 0, 0) if score <= 0 else (score, i, j)
    if p.mode == GLOBAL:
        return int(out.lastrow[-1:].get()[0]), m, n
    assert p.mode == SEMIGLOBAL
    return best_cell(EDGES, out.lastcol, out.lastrow, m, n, m + n + 1)
