"""The barrier micro-benchmark (Xiao and Feng, Fig. 11) and the barrier checks.

Every round each thread replaces a float by the mean of it and a second float; a barrier
follows every round (weak scaling: one element per thread, so each block does the same work
at any grid size). The compute-only run (no barrier) gives t_C; a strategy's barrier cost
per round is (its time - compute-only time) / rounds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ..engines.cuda import sync as syncs
from ..errors import InputError
from .timing import seconds

THREADS = 256
ROUNDS = 10_000
FILE = "lab_barriers.cu"


def block_counts(limit: int, sms: int) -> list[int]:
    """The block counts of a sweep: powers of two, and 1, 2, 4, ... per multiprocessor, up to
    ``limit`` (the co-resident maximum), which is included."""
    counts = {1 << k for k in range(limit.bit_length()) if 1 << k <= limit}
    counts |= {k * sms for k in (1, 2, 4, 8, 16, 32) if k * sms <= limit}
    return sorted(counts | {limit})


def expression(kernel: str, sync: str) -> str:
    """The kernel of ``lab_barriers.cu`` (``mean_rounds`` or ``stress_rounds``) for an
    in-kernel strategy or ``none``: a template instance, or the plain name of a tuned one."""
    if sync in syncs.TUNED_KINDS:
        return f"{kernel}_{sync}"
    return f"{kernel}<{syncs.KINDS[sync]}>"


def limit(threads: int = THREADS) -> int:
    """The co-resident maximum of the micro-benchmark's in-kernel variants."""
    return syncs.limit(FILE, [expression("mean_rounds", k) for k in (*syncs.KINDS,
                                                                      *syncs.TUNED)], threads)


def mean_plan(sync: str, a, b, blocks: int, threads: int, rounds: int, stuck: int = -1,
              timeout_ns: int = syncs.TIMEOUT_NS) -> syncs.Runnable:
    """The micro-benchmark on ``a``, ``b`` (float32, blocks * threads each) under ``sync``
    (or ``none``: compute only). ``stuck``: a block that never arrives (a test hook for the
    in-kernel barriers other than ``grid``, which cannot time out)."""
    syncs.check_sync(sync, (*syncs.BARRIER_SYNCS, "none"))
    if stuck >= 0 and sync in (*syncs.HOST_SYNCS, "grid", "none"):
        raise InputError(f"a stuck block needs an in-kernel barrier that can time out "
                         f"(simple, tree2, tree3, lockfree, {', '.join(syncs.TUNED)}), "
                         f"not {sync!r}")
    if sync in syncs.HOST_SYNCS:
        step = syncs.kernel(FILE, "mean_step", sync)
        return syncs.HostSteps(sync, [(step, blocks, threads, (a, b), 0)] * rounds)
    kern = syncs.kernel(FILE, expression("mean_rounds", sync), sync)
    return syncs.Persistent(sync, kern, blocks, threads, (a, b, np.int32(rounds),
                                                           np.int32(stuck)), 0, timeout_ns)


def _arrays(blocks: int, threads: int, rng: np.random.Generator):
    import cupy

    size = blocks * threads
    return (cupy.asarray(rng.random(size, dtype=np.float32)),
            cupy.asarray(rng.random(size, dtype=np.float32)))


def _seconds(sync: str, a, b, blocks: int, threads: int, rounds: int, repeats: int) -> float:
    plan = mean_plan(sync, a, b, blocks, threads, rounds)
    return seconds(plan.run, plan.check, repeats)


def measure(sync_names: Iterable[str], blocks_list: Iterable[int], threads: int = THREADS,
            rounds: int = ROUNDS, repeats: int = 3,
            progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per (strategy, block count): total seconds, microseconds per round, and the
    barrier's own cost per round (compute-only time subtracted). The compute-only run and the
    anchor (``grid``) are measured in the same sweep."""
    rng = np.random.default_rng(11)
    rows = []
    for blocks in blocks_list:
        a, b = _arrays(blocks, threads, rng)
        compute = _seconds("none", a, b, blocks, threads, rounds, repeats)
        for sync in sync_names:
            total = _seconds(sync, a, b, blocks, threads, rounds, repeats)
            rows.append({"sync": sync, "blocks": blocks, "threads": threads, "rounds": rounds,
                         "seconds": total, "round_us": total / rounds * 1e6,
                         "compute_us": compute / rounds * 1e6,
                         "barrier_us": (total - compute) / rounds * 1e6})
        if progress:
            progress(f"barriers: {blocks} blocks done")
    return rows


#: the floor probes (kernels/lab_barriers.cu's bar_probe): name -> kind
PROBES = {"poll": 0, "atomic": 1, "store + fence": 2, "fence": 3, "red + poll": 4}


def floor(blocks: int, spread: int = 32, iters: int = 20_000) -> list[dict]:
    """What a barrier is made of, on this GPU: one L2 round trip of a poll and of an atomic,
    a fence alone and after a store, an arrival with its first poll (one block each); then
    polls and atomics of ``blocks`` blocks on one 128-byte line against ``spread`` lines.
    One row per probe: microseconds per operation of one block (each waits for the one
    before) and nanoseconds per request at one line (the line's service time once it is
    the bottleneck); and fences of 132, 264 and ``blocks`` blocks at once."""
    import cupy

    kern = syncs.kernel(FILE, "bar_probe", "none")
    w = cupy.zeros(max(spread, blocks, 1) * 32, dtype=cupy.uint32)
    plan = [(name, 1, 1) for name in PROBES]
    plan += [(name, blocks, k) for name in ("poll", "atomic") for k in (1, 8, spread)]
    # fences of many blocks at once (each block on a line of its own): do they queue?
    plan += [(name, n, n) for name in ("fence", "store + fence") for n in (132, 264, blocks)]
    rows = []
    for name, n, k in plan:
        count = iters if n == 1 else max(iters // 10, 100)

        def run(name=name, n=n, k=k, count=count):
            kern((n,), (32,), (w, np.int32(PROBES[name]), np.int32(count), np.uint32(k),
                               np.uint32(0)))

        per_op = seconds(run, cupy.cuda.get_current_stream().synchronize, 3) / count
        rows.append({"probe": name, "blocks": n, "lines": k, "us": per_op * 1e6,
                     "ns_per_request": per_op * 1e9 / -(-n // k)})
    return rows


def stress(sync: str, blocks: int, threads: int = THREADS, rounds: int = 1000) -> int:
    """Stale reads under ``sync``: each round reads words four other blocks wrote in the
    previous round; 0 means every round saw every write of the one before."""
    import cupy

    syncs.check_sync(sync, syncs.BARRIER_SYNCS)
    n = blocks * threads
    buf = cupy.zeros(2 * n, dtype=cupy.uint32)
    bad = cupy.zeros(1, dtype=cupy.int32)
    if sync in syncs.HOST_SYNCS:
        step = syncs.kernel(FILE, "stress_step", sync)
        plan: syncs.Runnable = syncs.HostSteps(
            sync, [(step, blocks, threads, (buf, np.int32(r), bad), 0) for r in range(rounds)])
    else:
        kern = syncs.kernel(FILE, expression("stress_rounds", sync), sync)
        plan = syncs.Persistent(sync, kern, blocks, threads, (buf, np.int32(rounds), bad))
    plan.run()
    plan.check()
    last = buf[(rounds & 1) * n:(rounds & 1) * n + n]
    return int(bad.get()[0]) + int((last != rounds).sum())


def stuck(sync: str, blocks: int, block: int = 0, threads: int = THREADS,
          timeout_ns: int = 200_000_000) -> None:
    """Run the micro-benchmark with ``block`` never arriving at the barrier: the others time
    out and this raises DeviceError (a test of the bounded waits)."""
    a, b = _arrays(blocks, threads, np.random.default_rng(0))
    plan = mean_plan(sync, a, b, blocks, threads, 10, stuck=block, timeout_ns=timeout_ns)
    plan.run()
    plan.check()
