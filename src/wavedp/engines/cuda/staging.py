"""A launch's small inputs in one copy, and its small outputs back in one.

A scan launch needs a handful of small arrays on the GPU (its subjects' indices, the units'
rows, the queries' codes, the profiles' offsets, a zeroed ticket counter). One
``cupy.asarray`` each costs a pageable copy and tens of microseconds of host time, and how
many tens moves from run to run. A :class:`Staging` packs them into one page-locked host
buffer, copies it with one asynchronous copy on the current stream, and hands out device
views; its :meth:`Staging.read` copies a few device words back into page-locked memory and
waits for the stream once. Both buffers are kept and grown, never allocated per launch.

A :class:`Workspace` (:func:`workspace`: one per thread and GPU) keeps a Staging and the
passes' scratch rows across scanners, so a search's first launches allocate nothing: a
page-locked allocation and a scratch buffer grown three times cost the first launches of
every search 0.2-0.3 ms each on the H100 machine.
"""

from __future__ import annotations

import threading
import time

import numpy as np

#: every array starts at a multiple of this many bytes (16: int4 and 16-byte loads)
ALIGN = 16


def layout(nbytes: list[int]) -> tuple[list[int], int]:
    """Where arrays of these byte sizes start in one buffer, each ALIGN-aligned (an empty
    one takes ALIGN bytes), and the buffer's size."""
    starts, size = [], 0
    for n in nbytes:
        starts.append(size)
        size += -(-max(n, 1) // ALIGN) * ALIGN
    return starts, size


def pinned(size: int) -> np.ndarray:
    """A page-locked host buffer of ``size`` bytes (at least one), as uint8."""
    import cupy

    size = max(size, 1)
    return np.frombuffer(cupy.cuda.alloc_pinned_memory(size), np.uint8, size)


def pinned_array(shape: int | tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised array in page-locked memory from CuPy's pool (given back to it when
    the array and its views are gone), its bytes rounded up to a size class (an eighth of a
    power of two) so that calls of about one size take the same blocks again."""
    import cupy

    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    nbytes = max(count * dtype.itemsize, 1)
    step = 1 << max(nbytes.bit_length() - 4, 0)
    memory = cupy.cuda.alloc_pinned_memory(-(-nbytes // step) * step)
    return np.frombuffer(memory, dtype, count).reshape(shape)


class Staging:
    """Page-locked host and device buffers for one stream's launches, grown on demand."""

    def __init__(self) -> None:
        self._host: np.ndarray | None = None
        self._dev = None
        self._back: np.ndarray | None = None
        self._copied = None  # an event after the last copy (the host buffer is free after it)
        self.waited = 0.0  # seconds put has waited for the copy before (the host's idle time)

    def put(self, *arrays: np.ndarray) -> list:
        """Device copies of ``arrays`` (C-contiguous views of one buffer, same shapes and
        dtypes), copied in one asynchronous copy on the current stream: kernels launched
        after it on the stream see them. Valid until the next ``put``."""
        import cupy

        arrays = tuple(np.ascontiguousarray(a) for a in arrays)
        starts, size = layout([a.nbytes for a in arrays])
        if self._copied is None:
            self._copied = cupy.cuda.Event(block=False, disable_timing=True)
        start = time.perf_counter()
        self._copied.synchronize()  # the previous copy has left the host buffer (it runs
        # after the launch before the last: the host prepares one launch ahead)
        self.waited += time.perf_counter() - start
        if self._host is None or self._host.size < size:
            grown = max(size, 2 * (0 if self._host is None else self._host.size), 1 << 16)
            self._host, self._dev = pinned(grown), None
            self._dev = cupy.empty(grown, cupy.uint8)
        for a, s in zip(arrays, starts, strict=True):
            self._host[s:s + a.nbytes] = a.view(np.uint8).reshape(-1)
        stream = cupy.cuda.get_current_stream()
        self._dev.data.copy_from_host_async(self._host.ctypes.data, size, stream)
        self._copied.record(stream)
        return [cupy.ndarray(a.shape, a.dtype, memptr=self._dev.data + s)
                for a, s in zip(arrays, starts, strict=True)]

    def read(self, device_array) -> np.ndarray:
        """A host copy of a small device array, once the current stream's work before this
        call is done (one asynchronous copy into page-locked memory, then one wait)."""
        import cupy

        nbytes = int(device_array.nbytes)
        if self._back is None or self._back.size < nbytes:
            self._back = pinned(max(nbytes, 4096))
        stream = cupy.cuda.get_current_stream()
        device_array.data.copy_to_host_async(self._back.ctypes.data, nbytes, stream)
        stream.synchronize()
        return self._back[:nbytes].view(device_array.dtype).reshape(device_array.shape).copy()


class Workspace:
    """One thread's launch buffers on one GPU: a :class:`Staging` and the scratch rows."""

    def __init__(self) -> None:
        self.staging = Staging()
        self._rows = None
        self._counter = None

    def counter(self):
        """A device int32[1], zeroed on the current stream (a count its kernels add to)."""
        import cupy

        if self._counter is None:
            self._counter = cupy.zeros(1, cupy.int32)
        else:
            self._counter.data.memset_async(0, 4)
        return self._counter

    def scratch(self, words: int):
        """A device buffer of at least ``words`` uint32 (kept and grown, not allocated per
        launch: its users write it before they read it)."""
        import cupy

        if self._rows is None or self._rows.size < words:
            self._rows = None
            self._rows = cupy.empty(words, cupy.uint32)
        return self._rows


_local = threading.local()


def workspace() -> Workspace:
    """This thread's :class:`Workspace` on the current GPU (launches of one thread run one
    after another, so scanners of one thread share it)."""
    import cupy

    spaces = _local.__dict__.setdefault("spaces", {})
    device = cupy.cuda.Device().id
    if device not in spaces:
        spaces[device] = Workspace()
    return spaces[device]
