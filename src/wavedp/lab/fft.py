"""The lab's FFT (Xiao and Feng, Fig. 13): complex radix-2 over the whole grid, one barrier
(or launch) per stage, under every synchronization strategy; ``cupy.fft`` (cuFFT) is the
anchor."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import numpy as np

from ..engines.cuda import sync as syncs
from ..errors import InputError
from .timing import by_strategy, seconds

THREADS = 256
FILE = "lab_fft.cu"


def log2_length(n: int) -> int:
    """log2 of an FFT length, which must be a power of two >= 2."""
    if n < 2 or n & (n - 1):
        raise InputError(f"FFT length must be a power of two >= 2, got {n}")
    return n.bit_length() - 1


def twiddles(n: int) -> np.ndarray:
    """exp(-2 pi i k / n) for k < n / 2, computed in double precision, as complex64."""
    return np.exp(-2j * np.pi * np.arange(n // 2) / n).astype(np.complex64)


class Plan:
    """An FFT of one device array under one strategy; :meth:`run` may be repeated."""

    def __init__(self, x, sync: str, blocks: int | None = None, threads: int = THREADS,
                 timeout_ns: int = syncs.TIMEOUT_NS) -> None:
        import cupy

        syncs.check_sync(sync, (*syncs.SYNCS, "none"))
        self.logn = log2_length(int(x.size))
        self.input = cupy.ascontiguousarray(cupy.asarray(x, dtype=cupy.complex64))
        self.out = cupy.empty_like(self.input)
        tw = cupy.asarray(twiddles(int(x.size)))
        args = (self.out, self.input, tw, np.int32(self.logn))
        work = -(-int(x.size) // 2 // threads)  # blocks for one butterfly per thread
        if sync in syncs.HOST_SYNCS:
            step = syncs.kernel(FILE, "fft_stage", sync)
            self.plan: syncs.Runnable = syncs.HostSteps(
                sync, [(step, blocks or work, threads, (*args, np.int32(s)), 0)
                       for s in range(self.logn + 1)])
        else:
            kern = syncs.kernel(FILE, f"fft_stages<{syncs.KINDS[sync]}>", sync)
            blocks = blocks or min(work, syncs.co_resident(kern, threads))
            self.plan = syncs.Persistent(sync, kern, blocks, threads, args, 0, timeout_ns)

    def run(self) -> None:
        """Enqueue the FFT of :attr:`input` into :attr:`out` on the current stream."""
        self.plan.run()

    def check(self) -> None:
        """Wait for it; DeviceError if a barrier failed."""
        self.plan.check()


def limit(threads: int = THREADS) -> int:
    """The co-resident maximum of the persistent FFT kernels."""
    return syncs.limit(FILE, [f"fft_stages<{k}>" for k in syncs.KINDS.values()], threads)


def fft(x, sync: str = "lockfree", blocks: int | None = None) -> np.ndarray:
    """The discrete Fourier transform of ``x`` (length a power of two) in float32 precision,
    as ``numpy.fft.fft`` defines it, computed on the GPU under ``sync``."""
    plan = Plan(x, sync, blocks)
    plan.run()
    plan.check()
    return plan.out.get()


def measure(sizes: Iterable[int], sync_names: Iterable[str], blocks_list: Iterable[int],
            repeats: int = 3, progress: Callable[[str], None] | None = None) -> list[dict]:
    """One row per (size, block count, strategy) with seconds, the compute-only seconds (no
    barrier) and cuFFT's seconds (the anchor), all measured in this sweep; ``exact`` says
    whether the result matched numpy.fft.fft within float32 tolerance."""
    import cupy

    rng = np.random.default_rng(13)
    rows = []
    names = list(sync_names)
    for size in sizes:
        host = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(np.complex64)
        x = cupy.asarray(host)
        expected = np.fft.fft(host.astype(np.complex128))
        anchor = seconds(functools.partial(cupy.fft.fft, x), lambda: None, repeats)
        for blocks, sync, plan, total, t_compute in by_strategy(
                functools.partial(Plan, x), blocks_list, names, repeats):
            rows.append({"size": size, "blocks": blocks, "sync": sync, "seconds": total,
                         "compute": t_compute, "anchor": anchor, "steps": plan.logn + 1,
                         "exact": close(plan.out.get(), expected)})
        if progress:
            progress(f"fft: 2^{log2_length(size)} done")
    return rows


def close(got: np.ndarray, expected: np.ndarray) -> bool:
    """Relative L2 error within float32 FFT tolerance (5e-6 per stage)."""
    scale = max(float(np.linalg.norm(expected)), 1e-30)
    stages = max(int(np.log2(expected.size)), 1)
    return float(np.linalg.norm(got - expected)) / scale <= 5e-6 * stages
