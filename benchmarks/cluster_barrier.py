"""A two-level barrier through thread block clusters (Hopper), measured against the lab's
``simple`` barrier and ``grid.sync()``: can a hardware first level beat the issue's
<= 1.0 us per round?

Run from the repository root: python benchmarks/cluster_barrier.py (on a GPU of compute
capability 9.0 or later; kernels/lab_barriers.cu's cluster_rounds). The barrier
micro-benchmark of ``wavedp lab barriers`` (mean of two floats per thread per round, 256
threads per block, 10,000 rounds, median of 3 after a warm-up), each barrier's cost per
round being its time minus the compute-only run's. Two first levels over clusters of 2, 4
and 8 blocks, then one arrival per cluster on a global
counter that every block polls (acquire):

- ``hw``: the cluster's hardware barrier (``barrier.cluster.arrive.release`` /
  ``wait.acquire``; it cannot time out);
- ``mb``: an mbarrier in the cluster leader's shared memory that the other blocks arrive at
  remotely (``mbarrier.arrive.release.cluster``), the leader waiting with bounded polls.

Block counts are multiples of 8 up to 528 (4 per SM on the H100): beyond that not every
cluster of 4 or 8 was co-resident on the H100 (the barrier times out; a timed-out ``mb``
leader may leave while others still arrive at its shared memory, so those are not run).
The cluster kernels are launched normally (``__cluster_dims__``): clusters are co-scheduled,
and every global wait is bounded.
"""

from __future__ import annotations

import statistics

import numpy as np

from wavedp.engines.cuda import module

FILE = "lab_barriers.cu"

CLUSTERS = (2, 4, 8)
KINDS = ("hw", "mb")
NAMES = [f"cluster_rounds<{k}, {cs}>" for k in range(len(KINDS)) for cs in CLUSTERS]
THREADS, ROUNDS = 256, 10_000
BLOCKS = (8, 16, 32, 64, 128, 256, 264, 512, 528)


def timed(fn, blocks: int, args: tuple, repeats: int = 3) -> float:
    """Median seconds of one launch (CUDA events) after a warm-up; NaN if it timed out."""
    import cupy

    bar = cupy.zeros(28704, cupy.uint32)
    times = []
    for rep in range(repeats + 1):
        bar.fill(0)
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn((blocks,), (THREADS,), (*args, bar, np.uint64(2_000_000_000)))
        end.record()
        end.synchronize()
        if int(bar[0].get()):
            return float("nan")
        if rep:
            times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times)


def main() -> None:
    import cupy

    clusters = module.module(FILE)  # launched normally: the kernels name their clusters
    papers = module.module(FILE, cooperative=True)
    rng = np.random.default_rng(1)
    print("barrier cost per round, us (time per round minus compute-only); "
          f"{THREADS} threads per block, {ROUNDS:,} rounds")
    print("| blocks | compute-only | simple | grid.sync() (anchor) | "
          + " | ".join(f"{k}, {cs}" for k in KINDS for cs in CLUSTERS)
          + " | best cluster / anchor |")
    print("|---|" + "---|" * (4 + len(NAMES)))
    for blocks in BLOCKS:
        a = cupy.asarray(rng.random(blocks * THREADS, dtype=np.float32))
        b = a.copy()
        args = (a, b, np.int32(ROUNDS), np.int32(-1))
        compute = timed(papers.get_function("mean_rounds<0>"), blocks, args)
        cost = [timed(papers.get_function(e), blocks, args) for e in ("mean_rounds<1>",
                                                                       "mean_rounds<5>")]
        for name in NAMES:
            cs = int(name.split(", ")[1][:-1])
            cost.append(timed(clusters.get_function(name), blocks, (a, b, np.int32(ROUNDS)))
                        if blocks % cs == 0 else float("nan"))
        us = [(t - compute) / ROUNDS * 1e6 for t in cost]
        best = np.nanmin(us[2:])
        print(f"| {blocks} | {compute / ROUNDS * 1e6:.2f} | "
              + " | ".join(f"{u:.2f}" for u in us) + f" | {best / us[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
