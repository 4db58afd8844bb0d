"""Cost of making host memory visible to kernels (page-locked and mapped), by strategy.

The GPU traceback writes its checkpoints from the kernel straight into page-locked host
memory (3.9 GB for 1 Mbp x 1 Mbp); pinning it is what a first traceback call pays on top.
Anchor: ``cudaHostAlloc`` (what CuPy's pinned pool does), measured in the same run, against
``wavedp.engines.cuda.hostmem.Region`` (anonymous mapping, optionally transparent huge pages,
faulted in by N threads, then ``cudaHostRegister``).

    python benchmarks/host_pinning.py [GiB]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from wavedp.engines.cuda import hostmem


def thp_setting() -> str:
    path = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return path.read_text().strip() if path.exists() else "unknown"


def host_alloc(size: int) -> float:
    from cupy.cuda import runtime

    t0 = time.perf_counter()
    ptr = runtime.hostAlloc(size, 3)  # portable | mapped
    sec = time.perf_counter() - t0
    runtime.freeHost(ptr)
    return sec


def region(size: int, huge: bool, threads: int) -> float:
    t0 = time.perf_counter()
    reg = hostmem.Region(size, huge=huge, threads=threads)
    sec = time.perf_counter() - t0
    reg.release()
    return sec


def main() -> int:
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    size = int(gib * 2**30)
    import cupy

    cupy.cuda.runtime.free(cupy.cuda.runtime.malloc(1))  # create the context first
    cores = min(16, os.cpu_count() or 1)
    print(f"transparent huge pages: {thp_setting()}; {gib:g} GiB per trial; {cores} threads")
    anchor = host_alloc(size)
    print(f"{'strategy':<46} {'seconds':>8} {'GB/s':>6} {'speed-up':>8}")
    print(f"{'cudaHostAlloc (anchor)':<46} {anchor:8.2f} {size / anchor / 1e9:6.1f} {1:8.2f}")
    for huge, threads in ((False, 1), (False, cores), (True, 1), (True, cores)):
        sec = region(size, huge, threads)
        name = f"mmap{' + huge pages' if huge else ''}, {threads} thread(s), hostRegister"
        print(f"{name:<46} {sec:8.2f} {size / sec / 1e9:6.1f} {anchor / sec:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
