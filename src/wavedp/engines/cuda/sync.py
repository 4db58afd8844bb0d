"""Synchronization strategies between thread blocks, one parameter everywhere.

A computation of dependent steps (FFT stages, merge steps, anti-diagonals) runs either as
one kernel launch per step, synchronized from the CPU:

- ``cpu-explicit``: launch, then wait for the GPU, per step;
- ``cpu-implicit``: back-to-back launches on one stream (the launch boundary orders them);
- ``graph``: the launches captured once as a CUDA graph, replayed;

or as one persistent kernel whose blocks meet at an in-kernel barrier between steps
(``kernels/barriers.cuh``): ``simple``, ``tree2``, ``tree3``, ``lockfree`` (Xiao and Feng) and
``grid`` (cooperative groups' ``grid.sync()``). In-kernel barriers run only on co-resident
grids: the grid is checked against the occupancy API (asking for more blocks is an
InputError naming the limit) and launched cooperatively; their waits are bounded and a
timeout raises :class:`wavedp.errors.DeviceError`.

``TUNED`` are wavedp's own in-kernel barriers, not the papers' (``spread``: arrivals spread
over several counters; each block polls its own, then all of them; one release, no relay).
The barrier micro-benchmark and the barrier checks run them (``BARRIER_SYNCS``); the
algorithms' kernels are compiled for ``KINDS`` only (``engines/cuda/module.py``'s template
instances), so FFT, sort and Smith-Waterman offer ``SYNCS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ...errors import DeviceError, InputError
from .module import OPTIONS, function
from .multipass import multiprocessors

SYNCS = ("cpu-explicit", "cpu-implicit", "graph", "simple", "tree2", "tree3", "lockfree", "grid")
#: the strategies that launch one kernel per step
HOST_SYNCS = SYNCS[:3]
#: barrier kinds of kernels/barriers.cuh; ``none`` (no barrier) times the compute alone
KINDS = {"none": 0, "simple": 1, "tree2": 2, "tree3": 3, "lockfree": 4, "grid": 5}
#: wavedp's own in-kernel barriers (the micro-benchmark's; see the module's docstring) and
#: their kinds (kernels/barriers.cuh; kernels lab_barriers.cu's mean_rounds_<name>, ...)
TUNED = ("spread",)
TUNED_KINDS = {"spread": 6}
#: every strategy of the barrier micro-benchmark and the barrier checks
BARRIER_SYNCS = SYNCS + TUNED
#: the barrier state of one launch and the largest grid it serves (kernels/barriers.cuh)
BAR_WORDS = 28704
BAR_MAX_BLOCKS = 8192
#: a block waiting longer than this at one barrier gives up and the run raises DeviceError
TIMEOUT_NS = 10_000_000_000
#: error flag of a grid barrier compiled without cooperative_groups.h (kernels/barriers.cuh)
ERR_NO_GRID = 4

#: one kernel launch: (kernel, blocks, threads, arguments, dynamic shared memory bytes)
Launch = tuple[Any, int, int, tuple, int]


class Runnable(Protocol):
    """A planned computation: ``run`` enqueues it on the current stream, ``check`` waits for
    it and raises DeviceError if a barrier failed."""

    def run(self) -> None: ...

    def check(self) -> None: ...


def check_sync(sync: str, allowed: Sequence[str] = SYNCS) -> str:
    """``sync`` itself, or an InputError naming the choices."""
    if sync not in allowed:
        raise InputError(f"sync must be one of {', '.join(allowed)}, got {sync!r}")
    return sync


def co_resident_limit(per_sm: int, sms: int) -> int:
    """Blocks that can be resident at once: per multiprocessor times multiprocessors, within
    what the barrier state serves."""
    return min(per_sm * sms, BAR_MAX_BLOCKS)


def check_blocks(blocks: int, limit: int, sync: str) -> None:
    """An InputError unless 1 <= blocks <= limit (the co-resident maximum)."""
    if blocks < 1:
        raise InputError(f"blocks must be at least 1, got {blocks}")
    if blocks > limit:
        raise InputError(f"{blocks} blocks requested for the in-kernel barrier {sync!r}, but "
                         f"at most {limit} blocks of this kernel are co-resident on this GPU "
                         "(occupancy limit); ask for fewer")


def co_resident(kernel, threads: int, shared: int = 0) -> int:
    """The most blocks of ``kernel`` (threads and dynamic shared memory per block) that are
    resident at once on the current device: the occupancy API's count per multiprocessor."""
    from cupy.cuda import driver

    per_sm = driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads,
                                                               shared)
    return co_resident_limit(int(per_sm), multiprocessors())


def limit(name: str, expressions: Sequence[str], threads: int, shared: int = 0) -> int:
    """The co-resident maximum of a family of persistent kernels of ``kernels/<name>`` (the
    smallest over ``expressions``)."""
    return min(co_resident(kernel(name, e, "simple"), threads, shared) for e in expressions)


def kernel(name: str, expression: str, sync: str):
    """A kernel of ``kernels/<name>``; cooperative when it holds an in-kernel barrier. The
    ``grid`` barrier needs the CUDA toolkit's headers (an InputError where none is found)."""
    if sync == "grid" and not any(option.startswith("-I") for option in OPTIONS):
        raise InputError("the grid barrier (cooperative groups) needs the CUDA toolkit's "
                         "headers (cooperative_groups.h), and none were found: set CUDA_PATH")
    return function(name, expression, cooperative=sync not in HOST_SYNCS)


class HostSteps:
    """Dependent launches synchronized from the CPU (``cpu-explicit``, ``cpu-implicit``,
    ``graph``). A graph is captured here, once, and replayed by every :meth:`run`."""

    def __init__(self, sync: str, launches: Sequence[Launch]) -> None:
        import cupy

        self.sync = check_sync(sync, HOST_SYNCS)
        self.launches = list(launches)
        self.graph = None
        if sync == "graph" and self.launches:
            for kern in {launch[0] for launch in self.launches}:
                kern.kernel  # noqa: B018 - load every module before the capture
            stream = cupy.cuda.Stream(non_blocking=True)  # capture needs a stream of its own
            with stream:
                stream.begin_capture()
                try:
                    self._launch(explicit=False)
                finally:
                    self.graph = stream.end_capture()

    def _launch(self, explicit: bool) -> None:
        import cupy

        stream = cupy.cuda.get_current_stream()
        for kern, blocks, threads, args, shared in self.launches:
            kern((blocks,), (threads,), args, shared_mem=shared)
            if explicit:
                stream.synchronize()

    def run(self) -> None:
        if self.graph is None:
            self._launch(explicit=self.sync == "cpu-explicit")
        else:
            self.graph.launch()  # on the current stream

    def check(self) -> None:
        import cupy

        cupy.cuda.get_current_stream().synchronize()


class Persistent:
    """One cooperative launch whose blocks meet at an in-kernel barrier between steps. The
    kernel takes ``args`` then the barrier state and the timeout (``kernels/barriers.cuh``);
    ``sync`` is an in-kernel strategy or ``none`` (the compute-only run)."""

    def __init__(self, sync: str, kern, blocks: int, threads: int, args: tuple,
                 shared: int = 0, timeout_ns: int = TIMEOUT_NS) -> None:
        check_sync(sync, (*KINDS, *TUNED))
        check_blocks(blocks, co_resident(kern, threads, shared), sync)
        import cupy

        self.sync, self.kernel, self.blocks, self.threads = sync, kern, blocks, threads
        self.args, self.shared, self.timeout_ns = args, shared, timeout_ns
        self.state = cupy.zeros(BAR_WORDS, dtype=cupy.uint32)

    def run(self) -> None:
        self.state.fill(0)
        self.kernel((self.blocks,), (self.threads,),
                    (*self.args, self.state, np.uint64(self.timeout_ns)),
                    shared_mem=self.shared)

    def check(self) -> None:
        error = int(self.state[0].get())
        if error & ERR_NO_GRID:
            raise DeviceError("the grid barrier was compiled without cooperative_groups.h; "
                              "results discarded")
        if error:
            raise DeviceError(f"in-kernel barrier {self.sync!r} on {self.blocks} blocks: a block "
                              f"waited longer than {self.timeout_ns / 1e9:g} s (error flags "
                              f"{error}); results discarded")
