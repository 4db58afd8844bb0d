"""Launcher of the blocked polyadic kernels (``kernels/polyadic.cu``).

Runs the phases of ``wavedp.polyadic.schedule`` on the gap-coordinate tables, which stay
on the device: per phase one launch of ``product`` (the far min-plus products; a phase whose
thread blocks would not fill one wave of the GPU has its tasks cut along the split points,
the parts folded by one ``reduce`` launch), then one of ``finalize``. Same results as the
CPU engine.
"""

from __future__ import annotations

import functools

import numpy as np

from ...errors import InputError
from ...polyadic.problem import Problem
from ...polyadic.schedule import plan, split
from .module import function

#: tests set this to fill the tables with 0x7f bytes first, so cells no kernel writes show
POISON = False
FIN_THREADS = 256
INIT_THREADS = 256
CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
          np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def _table(shape: tuple[int, int], dtype):
    import cupy

    if POISON:
        out = cupy.empty(shape, dtype)
        out.view(np.uint8).fill(0x7F)
        return out
    return cupy.empty(shape, dtype)


@functools.cache
def _sm_count() -> int:
    from cupy.cuda import runtime

    return runtime.deviceGetAttribute(runtime.cudaDevAttrMultiProcessorCount,
                                      runtime.getDevice())


def _resident(kernel, threads: int) -> int:
    """Thread blocks of ``kernel`` that run at once on the whole GPU."""
    from cupy.cuda import driver

    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, 0)
    return max(1, per_sm) * _sm_count()


def _check_memory(prob: Problem, scratch: int) -> None:
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()
    free += pool.free_bytes()
    need = prob.table_bytes() + scratch + 4 * prob.size * 6
    if need > free:
        raise InputError(f"n = {prob.n} needs {need / 2**30:.1f} GiB of GPU memory for its "
                         f"tables, {free / 2**30:.1f} GiB are free")


@functools.lru_cache(maxsize=8)
def _layout(schedule: str, nb: int, resident: int, subtiles: int):
    """Every phase's launches in one int32 array: product tasks (A, C, L0, L1, slot), reduce
    groups (A, C, first slot, end slot) and finalize tasks (A, C); per phase the offsets and
    counts of the three; and the most partial slots a phase needs. A phase's products are cut
    into parts only while its thread blocks would not fill one wave of the GPU."""
    phases = plan(schedule, nb)
    counts = np.diff(phases.product_start)
    phase = phases.product_phase
    tasks, source = split(phases.products, resident // np.maximum(1, counts * subtiles)[phase])
    parts = np.bincount(source, minlength=len(phase))
    cut = parts[source] > 1
    task_phase = phase[source]
    edges = np.arange(phases.phases + 1)
    task_start = np.searchsorted(task_phase, edges)
    before = np.concatenate([[0], np.cumsum(cut)])  # cut tasks before each task
    slot = np.where(cut, before[:-1] - before[task_start[task_phase]], -1)
    first = np.flatnonzero(cut & np.concatenate([[True], source[1:] != source[:-1]]))
    groups = np.stack([tasks[first, 0], tasks[first, 1], slot[first],
                       slot[first] + parts[source[first]]], axis=1)
    group_start = np.searchsorted(task_phase[first], edges)
    slots = int(groups[:, 3].max()) if len(groups) else 0
    arrays = [np.column_stack([tasks, slot]), groups, phases.finals]
    base = np.cumsum([0] + [a.size for a in arrays])
    layout = np.stack([base[0] + 5 * task_start[:-1], np.diff(task_start),
                       base[1] + 4 * group_start[:-1], np.diff(group_start),
                       base[2] + 2 * phases.final_start[:-1], np.diff(phases.final_start)],
                      axis=1)
    flat = np.concatenate([a.ravel() for a in arrays]).astype(np.int32)
    flat.flags.writeable = False
    return tuple(map(tuple, layout.tolist())), flat, slots


def solve(prob: Problem, schedule: str):
    """The gap-coordinate tables (T, K) of an encoded problem, as CuPy arrays."""
    import cupy

    b, size, ctype = prob.block, prob.size, CTYPES[prob.dtype]
    tile = 64 if b % 64 == 0 else 32
    threads, subtiles = (tile // 4) ** 2, (b // tile) ** 2
    product = function("polyadic.cu", f"product<{ctype}, {str(prob.wkind == 1).lower()}, "
                                      f"{tile}, {str(prob.pack).lower()}>")
    layout, tasks, slots = _layout(schedule, prob.blocks, _resident(product, threads), subtiles)
    _check_memory(prob, slots * b * b * (prob.dtype.itemsize + 4))
    T = _table((size, size), prob.dtype)
    K = _table((size, size), np.int32)
    ld, big = np.int64(size), prob.big
    function("polyadic.cu", f"init<{ctype}>")(
        (max(1, -(-size // INIT_THREADS)), min(size, 65535)), (INIT_THREADS,),
        (T, K, ld, np.int32(b), big))
    dev = {name: cupy.asarray(getattr(prob, name))
           for name in ("diag", "dvec", "wtab", "codes", "ptab")}
    dev_tasks = cupy.asarray(tasks)
    pv = cupy.empty(max(1, slots) * b * b, prob.dtype)
    pk = cupy.empty(max(1, slots) * b * b, np.int32)
    reduce = function("polyadic.cu", f"reduce<{ctype}>")
    finalize = function("polyadic.cu", f"finalize<{ctype}>")
    fixed = (dev["diag"], np.int32(prob.wkind), dev["dvec"], dev["wtab"],
             np.int32(prob.paired), dev["codes"], dev["ptab"], np.int32(prob.na),
             np.int32(prob.min_loop), big)
    for t0, tn, g0, gn, f0, fn in layout:
        if tn:
            product((tn, subtiles), (threads,),
                    (T, K, ld, np.int32(b), dev_tasks[t0:], dev["dvec"], pv, pk))
        if gn:
            reduce((gn, max(1, b * b // 1024)), (256,),
                   (T, K, ld, np.int32(b), dev_tasks[g0:], pv, pk))
        if fn:
            finalize((fn,), (FIN_THREADS,), (T, K, ld, np.int32(b), dev_tasks[f0:]) + fixed)
    return T, K


def walk(K, n: int) -> np.ndarray:
    """The optimal derivation's non-leaf cells (i, j, k), as ``traceback.derivation`` lists
    them, read from the device's choice table by one GPU thread (nothing else is copied)."""
    import cupy

    stack = cupy.empty(2 * n + 2, np.int32)
    out = cupy.empty(3 * 2 * n, np.int32)
    count = cupy.zeros(1, np.int32)
    function("polyadic.cu", "walk")((1,), (1,), (K, np.int64(K.shape[1]), np.int32(n), stack,
                                                 out, count))
    m = int(count.get()[0])
    return out[:3 * m].get().astype(np.int64).reshape(-1, 3)
