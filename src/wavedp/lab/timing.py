"""Timing on the GPU: CUDA events around enqueued work, warm-up first, median of repeats."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator


def seconds(run: Callable[[], None], check: Callable[[], object], repeats: int = 3,
            warmup: int = 1) -> float:
    """Median seconds of ``run`` (work enqueued on the current stream), timed by CUDA events
    on that stream; ``check`` runs after each (it waits for the work and raises on failure).
    The warm-up runs absorb compilation and first-touch costs."""
    import cupy

    stream = cupy.cuda.get_current_stream()
    for _ in range(warmup):
        run()
        check()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record(stream)
        run()
        end.record(stream)
        end.synchronize()
        check()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(times)


def by_strategy(make: Callable[[str, object], object], blocks_list: Iterable,
                sync_names: Iterable[str], repeats: int = 3, warmup: int = 1
                ) -> Iterator[tuple[object, str, object, float, float]]:
    """For each block count, the compute-only run (``make("none", blocks)``: no barrier)
    then every strategy, timed by :func:`seconds`; yields (blocks, sync, the strategy's plan,
    its seconds, the compute-only seconds). Plans have ``run`` and ``check``."""
    names = list(sync_names)
    for blocks in blocks_list:
        compute = make("none", blocks)
        t_compute = seconds(compute.run, compute.check, repeats, warmup)
        for sync in names:
            plan = make(sync, blocks)
            yield blocks, sync, plan, seconds(plan.run, plan.check, repeats, warmup), t_compute


def l2_bytes() -> int:
    """The current GPU's L2 cache, bytes."""
    import cupy

    rt = cupy.cuda.runtime
    return int(rt.deviceGetAttribute(rt.cudaDevAttrL2CacheSize, cupy.cuda.Device().id))


def device() -> dict:
    """Name, multiprocessors and memory of the current GPU, and the CUDA and CuPy versions."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "sms": int(props["multiProcessorCount"]),
        "memory_gib": props["totalGlobalMem"] / 2**30,
        "cuda": cupy.cuda.runtime.runtimeGetVersion(),
        "driver": cupy.cuda.runtime.driverGetVersion(),
        "cupy": cupy.__version__,
    }
