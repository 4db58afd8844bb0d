"""Page-locked host memory that kernels read and write directly (mapped, unified addressing).

``cudaHostAlloc`` pins about 2 GB/s on the H100 machine: 2 s for the 3.9 GB of checkpoints a
1 Mbp x 1 Mbp traceback keeps. An anonymous mapping backed by transparent huge pages, faulted
in by several threads and then registered with ``cudaHostRegister``, pins about ten times
faster (``benchmarks/host_pinning.py`` measures both). One region per process is kept and
grown on demand, so repeated tracebacks pin nothing; :func:`release` gives it back.
"""

from __future__ import annotations

import mmap
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: cudaHostRegisterPortable | cudaHostRegisterMapped
REGISTER_FLAGS = 3
#: bytes each thread faults in at a time
TOUCH_CHUNK = 64 << 20
_ALIGN = 256


def touch(buf: np.ndarray, threads: int | None = None, value: int = 0) -> None:
    """Fill a uint8 buffer from several threads (faults its pages in in parallel)."""
    threads = threads or min(16, os.cpu_count() or 1)
    starts = range(0, buf.size, TOUCH_CHUNK)
    if threads == 1 or len(starts) == 1:
        buf.fill(value)
        return
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda a: buf[a:a + TOUCH_CHUNK].fill(value), starts))


def _can_register() -> bool:
    from cupy.cuda import Device, runtime

    attr = runtime.cudaDevAttrCanUseHostPointerForRegisteredMem
    return bool(runtime.deviceGetAttribute(attr, Device().id))


class Region:
    """``size`` bytes of registered (or, where registration is unavailable, pinned) host
    memory whose host address is also its device address."""

    def __init__(self, size: int, huge: bool = True, threads: int | None = None) -> None:
        from cupy.cuda import runtime

        self.size = size
        self._map = None
        self._pinned = None
        if _can_register():
            self._map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            if huge and hasattr(mmap, "MADV_HUGEPAGE"):
                try:
                    self._map.madvise(mmap.MADV_HUGEPAGE)
                except OSError:
                    pass
            self.bytes = np.frombuffer(self._map, np.uint8)
            touch(self.bytes, threads)
            self.ptr = self.bytes.ctypes.data
            runtime.hostRegister(self.ptr, size, REGISTER_FLAGS)
        else:
            import cupy

            self._pinned = cupy.cuda.alloc_pinned_memory(size)
            self.bytes = np.frombuffer(self._pinned, np.uint8, size)
            self.ptr = self._pinned.ptr

    def release(self) -> None:
        """Unregister and unmap (the region must not be used afterwards)."""
        from cupy.cuda import runtime

        if self._map is not None:
            runtime.hostUnregister(self.ptr)
            del self.bytes
            try:
                self._map.close()
            except BufferError:  # a view is still alive: the mapping goes with it
                pass
        self._map = self._pinned = None


_region: Region | None = None
_lock = threading.Lock()


def region(size: int) -> Region:
    """The process's region, grown to at least ``size`` bytes."""
    global _region
    with _lock:
        if _region is None or _region.size < size:
            if _region is not None:
                _region.release()
                _region = None
            _region = Region(max(size, 1))
        return _region


def release() -> None:
    """Give the process's region back to the system."""
    global _region
    with _lock:
        if _region is not None:
            _region.release()
            _region = None


class Mapped:
    """A 2-D array in the region; :meth:`address` is the device address of one element."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.ptr = array.ctypes.data

    def address(self, row: int, col: int) -> int:
        return self.ptr + self.array.itemsize * (row * self.array.shape[1] + col)


def mapped(shapes: list[tuple[int, int]], dtype=np.int32) -> list[Mapped]:
    """Arrays of the given shapes carved out of the process's region (contents undefined)."""
    itemsize = np.dtype(dtype).itemsize
    sizes = [-(-max(1, r * c) * itemsize // _ALIGN) * _ALIGN for r, c in shapes]
    reg = region(sum(sizes))
    out, off = [], 0
    for (r, c), size in zip(shapes, sizes, strict=True):
        flat = reg.bytes[off:off + r * c * itemsize].view(dtype)
        out.append(Mapped(flat.reshape(r, c)))
        off += size
    return out
