"""Page-locked host memory that kernels read and write directly (mapped, unified addressing).

``cudaHostAlloc`` pins about 2 GB/s on the H100 machine: 2 s for the 3.9 GB of checkpoints a
1 Mbp x 1 Mbp traceback keeps. An anonymous mapping backed by transparent huge pages, faulted
in by several threads and then registered with ``cudaHostRegister``, pins about ten times
faster (``benchmarks/host_pinning.py`` measures both). One region per GPU is kept and
grown on demand, so repeated tracebacks pin nothing; :func:`release` gives it back. A new
region can be pinned in the background, chunk by chunk, while a kernel already writes to the
part pinned so far.
"""

from __future__ import annotations

import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext

import numpy as np

from ...errors import DeviceError

#: cudaHostRegisterPortable | cudaHostRegisterMapped
REGISTER_FLAGS = 3
#: bytes each thread faults in at a time
TOUCH_CHUNK = 8 << 20
#: regions grow in multiples of this (a multiple of the huge page size)
GRANULE = 64 << 20
#: registration steps: the first (what a kernel waits for before it starts), doubling up to
#: the last (each step is one cudaHostRegister call)
FIRST_CHUNK = 16 << 20
LAST_CHUNK = 256 << 20


def touch(buf: np.ndarray, threads: int | None = None) -> None:
    """Zero a uint8 buffer from several threads (faults its pages in in parallel)."""
    threads = threads or min(16, os.cpu_count() or 1)
    starts = range(0, buf.size, TOUCH_CHUNK)
    if threads == 1 or len(starts) == 1:
        buf.fill(0)
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda a: buf[a:a + TOUCH_CHUNK].fill(0), starts))


def _register(ptr: int, size: int) -> None:
    from cupy.cuda import runtime

    runtime.hostRegister(ptr, size, REGISTER_FLAGS)


def _can_register() -> bool:
    from cupy.cuda import Device, runtime

    attr = runtime.cudaDevAttrCanUseHostPointerForRegisteredMem
    return bool(runtime.deviceGetAttribute(attr, Device().id))


class Region:
    """``size`` bytes of registered (or, where registration is unavailable, pinned) host
    memory whose host address is also its device address.

    Registration goes chunk by chunk in address order, optionally on a background thread
    (``background=True``): :attr:`pinned` says how many leading bytes kernels may use so far,
    :meth:`watch` reports each step, :meth:`wait` waits for a prefix or the whole. Kernels
    may use the pinned part meanwhile. (On the H100 machine, registering 1 GiB took 0.02 s
    beside a running kernel, but 6 s beside one whose 264 blocks kept polling a host flag:
    kernels should wait on device memory.)"""

    def __init__(self, size: int, huge: bool = True, threads: int | None = None,
                 background: bool = False) -> None:
        self.size = size
        self.ptr = 0
        self.pinned = 0
        self._map = None
        self._pinned = None
        self._chunks: list[int] = []  # addresses registered
        self._error: BaseException | None = None
        self._watchers: list = []
        self._cond = threading.Condition()
        self._thread = None
        if _can_register():
            self._map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            if huge and hasattr(mmap, "MADV_HUGEPAGE"):
                try:
                    self._map.madvise(mmap.MADV_HUGEPAGE)
                except OSError:
                    pass
            self.bytes = np.frombuffer(self._map, np.uint8)
            self.ptr = self.bytes.ctypes.data
            if background:
                from cupy.cuda import Device

                self._thread = threading.Thread(target=self._pin, args=(threads, Device().id),
                                                name="wavedp-pin", daemon=True)
                self._thread.start()
            else:
                self._pin(threads, None)
                self.wait()
        else:
            import cupy

            self._pinned = cupy.cuda.alloc_pinned_memory(size)
            self.bytes = np.frombuffer(self._pinned, np.uint8, size)
            self.ptr = self._pinned.ptr
            self.pinned = size

    def _pin(self, threads: int | None, device: int | None) -> None:
        import cupy

        try:
            with cupy.cuda.Device(device) if device is not None else nullcontext():
                off, chunk = 0, FIRST_CHUNK
                while off < self.size:
                    n = min(chunk, self.size - off)
                    touch(self.bytes[off:off + n], threads)
                    _register(self.ptr + off, n)
                    self._chunks.append(self.ptr + off)
                    off += n
                    chunk = min(2 * chunk, LAST_CHUNK)
                    self._advance(off)
        except Exception as e:  # reported by wait() on the caller's thread
            self._error = DeviceError(f"could not page-lock {self.size / 2**30:.2f} GiB of host "
                                      f"memory for checkpoints ({e})")
            self._advance(self.pinned)

    def _advance(self, pinned: int) -> None:
        with self._cond:
            self.pinned = pinned
            for fn in self._watchers:
                fn(pinned, self._error is not None)
            self._cond.notify_all()

    def watch(self, fn) -> None:
        """Call ``fn(pinned_bytes, failed)`` now and after every step (from the pinning
        thread, so it must be quick)."""
        with self._cond:
            self._watchers.append(fn)
            fn(self.pinned, self._error is not None)

    def unwatch(self, fn) -> None:
        with self._cond:
            self._watchers.remove(fn)

    @property
    def failed(self) -> bool:
        return self._error is not None

    def wait(self, upto: int | None = None) -> None:
        """Wait until the first ``upto`` bytes (default: all) are pinned; raise what stopped
        the pinning."""
        upto = self.size if upto is None else min(upto, self.size)
        with self._cond:
            while self.pinned < upto and self._error is None:
                self._cond.wait(0.05)
        if self._error is not None:
            raise self._error

    def release(self) -> None:
        """Unregister and unmap (the region must not be used afterwards)."""
        from cupy.cuda import runtime

        if self._thread is not None:
            self._thread.join()
        if self._map is not None:
            for ptr in self._chunks:
                runtime.hostUnregister(ptr)
            self._chunks.clear()
            del self.bytes
            try:
                self._map.close()
            except BufferError:  # a view is still alive: the mapping goes with it
                pass
        self._map = self._pinned = None


#: the region of each GPU (several GPUs trace back at once, each in its own thread)
_regions: dict[int, Region] = {}
_lock = threading.Lock()


def region(size: int, background: bool = False) -> Region:
    """The current GPU's region, grown to at least ``size`` bytes (in steps of GRANULE bytes,
    so pairs of similar sizes reuse it); with ``background``, a new region is pinned on a
    background thread (see :class:`Region`)."""
    import cupy

    device = cupy.cuda.Device().id
    with _lock:
        held = _regions.get(device)
        if held is None or held.size < size or held.failed:
            if held is not None:
                held.release()
                del _regions[device]
            held = _regions[device] = Region(max(1, -(-size // GRANULE)) * GRANULE,
                                             background=background)
        return held


def release() -> None:
    """Give every region back to the system."""
    with _lock:
        while _regions:
            _regions.popitem()[1].release()


def settle() -> None:
    """Wait for the current stream's work before a copy to the host, so the copy finds its
    data ready: a copy that waits for a kernel blocks the other GPUs' threads' copies
    meanwhile (on two H200s each launch's profile upload then took 0.1 s, and two GPUs
    scanned only 1.25x as fast as one)."""
    import cupy

    cupy.cuda.get_current_stream().synchronize()
