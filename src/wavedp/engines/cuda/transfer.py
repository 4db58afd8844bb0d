"""Large copies between pageable host arrays and the GPU, through page-locked buffers.

A copy from pageable memory runs at a few GB/s (6 GB/s for the 900 MB of two million DNA
pairs on the H200 machine: 0.16 s). Here the host array is cut into pieces: the host's
threads copy each piece into one of two page-locked buffers while the other buffer's piece
is on its way, so both links run at once. The buffers are made once per process and GPU.

:class:`Slots` does the same for work that goes up in chunks: each chunk's arrays are
written straight into one page-locked slot and go up in one copy into a GPU slot, two of
each taking turns, so one chunk is written while the one before goes up and the one before
that is worked on. :func:`host_work` writes several arrays at once, piece k of each on one
thread.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...threads import in_pieces

#: bytes a piece (and each page-locked buffer)
PIECE = 32 << 20
#: arrays smaller than this go in one plain copy
SMALL = 4 << 20
#: threads copying a piece on the host (the H200 machine, 16 cores: 44 GB/s; 8 threads 27-41)
THREADS = min(16, os.cpu_count() or 1)


@functools.cache
def _buffers(device: int) -> tuple[list[np.ndarray], list]:
    """Two page-locked buffers of PIECE bytes for GPU ``device``, and for each the event
    its last copy to the GPU records (None: none in flight): a buffer is written again only
    once that copy has left it, also by the next call."""
    from .staging import pinned

    return [pinned(PIECE), pinned(PIECE)], [None, None]


def copier(dst: np.ndarray, src: np.ndarray) -> tuple[Callable[[int, int], None], int]:
    """``dst[:] = src`` as :func:`host_work` takes it: (work(a, b) copying elements a:b,
    elements)."""
    return (lambda a, b: np.copyto(dst[a:b], src[a:b])), src.size


def differ(dst: np.ndarray, src: np.ndarray) -> tuple[Callable[[int, int], None], int]:
    """``dst[k] = src[k + 1] - src[k]`` (lengths off offsets, ``dst`` one shorter) as
    :func:`host_work` takes it."""
    return (lambda a, b: np.subtract(src[a + 1:b + 1], src[a:b], out=dst[a:b],
                                     casting="unsafe")), dst.size


def host_work(jobs: list[tuple[Callable[[int, int], None], int]], own: bool = False) -> None:
    """Each job (work(a, b) over elements 0..size) cut in THREADS pieces, piece k of every
    job on one thread: one start and one wait for them all. On this thread where a piece
    would hold under 2**20 elements; ``own``: on threads of their own (:func:`spread`)."""
    pieces = 1 if sum(size for _, size in jobs) // THREADS < (1 << 20) else THREADS

    def piece(first: int, last: int) -> None:
        for k in range(first, last):
            for work, size in jobs:
                step = -(-size // pieces)
                a, b = min(k * step, size), min((k + 1) * step, size)
                if b > a:
                    work(a, b)

    spread(piece, pieces, own)


def spread(work: Callable[[int, int], None], pieces: int, own: bool) -> None:
    """``work(k, k + 1)`` for k < ``pieces``, on the helper threads (``threads.in_pieces``)
    or, ``own``, on THREADS threads kept for the many-pairs chunk writes: on the helper
    threads, a chunk's results waited to come down behind a whole write (one H200, against
    the helper threads, turns alternating: protein with CIGARs 0.061-0.081 -> 0.053-0.055 s,
    score-only DNA 0.054 -> 0.049-0.052 s)."""
    if own and pieces > 1:
        list(_writers(os.getpid()).map(lambda k: work(k, k + 1), range(pieces)))
    else:
        in_pieces(work, pieces, pieces)


@functools.cache
def _writers(pid: int) -> ThreadPoolExecutor:
    """Process ``pid``'s threads for :func:`spread` (a forked child makes its own)."""
    return ThreadPoolExecutor(THREADS, thread_name_prefix="wavedp-pairs-write")


def host_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[:] = src`` on the helper threads (:func:`host_work`)."""
    host_work([copier(dst, src)])


def upload(host: np.ndarray):
    """``host`` (any contiguous array) on the current GPU, copied on the current stream."""
    import cupy

    host = np.ascontiguousarray(host)
    if host.nbytes < SMALL:
        return cupy.asarray(host)
    out = cupy.empty(host.shape, host.dtype)
    raw, dst = host.reshape(-1).view(np.uint8), out.reshape(-1).view(cupy.uint8)
    stream = cupy.cuda.get_current_stream()
    buffers, events = _buffers(cupy.cuda.Device().id)
    for k, a in enumerate(range(0, raw.size, PIECE)):
        b = min(a + PIECE, raw.size)
        buf = buffers[k % 2]
        if events[k % 2] is not None:
            events[k % 2].synchronize()  # this buffer's last piece has left
        host_copy(buf[:b - a], raw[a:b])
        dst[a:b].data.copy_from_host_async(buf.ctypes.data, b - a, stream)
        events[k % 2] = stream.record()
    return out


def upload_all(arrays: list[np.ndarray]) -> list:
    """The host ``arrays`` on the current GPU in one copy (each a view of one buffer there,
    aligned as :class:`Slots` aligns them): one wait, not one a small array."""
    import cupy

    from .staging import layout

    starts, size = layout([a.nbytes for a in arrays])
    host = np.empty(size, np.uint8)
    for a, start in zip(arrays, starts, strict=True):
        host[start:start + a.nbytes] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    dev = upload(host)
    return [cupy.ndarray(a.shape, a.dtype, memptr=dev.data + start)
            for a, start in zip(arrays, starts, strict=True)]


@functools.cache
def slots(device: int, size: int) -> Slots:
    """The :class:`Slots` of GPU ``device`` (made once per process)."""
    return Slots(size)


class Slots:
    """Two page-locked host slots and two GPU slots of ``size`` bytes, taking turns: a
    chunk's arrays are written into a host slot (:meth:`take`; the next chunk's may be taken
    and written before this one goes) and go up in one copy on the slots' own stream
    (:meth:`send`); a GPU slot is written again only after the work that reads it (the
    event given to :meth:`release`), a host slot only after its copy has left. Results come
    down on ``down``, a stream of their own: on ``stream`` they would wait behind uploads
    that wait for their GPU slots. One caller at a time holds ``lock``; :func:`slots` keeps
    them per GPU."""

    def __init__(self, size: int) -> None:
        import cupy

        from .staging import pinned

        self.size, self.turn, self.lock = size, 0, threading.Lock()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.down = cupy.cuda.Stream(non_blocking=True)
        self.host = [pinned(size), pinned(size)]
        self.dev = [cupy.empty(size, cupy.uint8), cupy.empty(size, cupy.uint8)]
        self.copied: list = [None, None]  # the host slot's last copy up
        self.used: list = [None, None]  # the last work reading the GPU slot

    def take(self, shapes: list[tuple[type, int]]) -> tuple[list[np.ndarray], tuple]:
        """Views of the next host slot for arrays of these (dtype, size), each 16-byte
        aligned (waits until the slot's copy has left), and the ticket that :meth:`send`
        takes once they are written (the next slot may be taken before)."""
        from .staging import layout

        slot = self.turn % 2
        self.turn += 1
        if self.copied[slot] is not None:
            self.copied[slot].synchronize()
        types = [(np.dtype(dtype), count) for dtype, count in shapes]
        starts, size = layout([d.itemsize * c for d, c in types])
        if size > self.size:
            raise ValueError(f"a chunk of {size} bytes does not fit slots of {self.size}")
        places = [(a, d, c) for a, (d, c) in zip(starts, types, strict=True)]
        host = self.host[slot]
        return [host[a:a + c * d.itemsize].view(d) for a, d, c in places], (slot, places)

    def send(self, ticket: tuple) -> tuple[list, int]:
        """The arrays of a :meth:`take` ticket on the GPU (copied on the stream once their
        GPU slot is free) and the slot's number (for :meth:`release`)."""
        import cupy

        slot, places = ticket
        a, d, c = places[-1]
        size = a + c * d.itemsize
        if self.used[slot] is not None:
            self.stream.wait_event(self.used[slot])
        dev = self.dev[slot]
        dev.data.copy_from_host_async(self.host[slot].ctypes.data, size, self.stream)
        self.copied[slot] = self.stream.record()
        return [cupy.ndarray((c,), d, memptr=dev.data + a) for a, d, c in places], slot

    def release(self, slot: int, event) -> None:
        """The GPU slot ``slot`` is read until ``event``."""
        self.used[slot] = event


def download(device_array, out: np.ndarray | None = None, locked: bool = False
             ) -> np.ndarray:
    """``device_array`` (contiguous) on the host, into ``out`` where given (``locked``:
    ``out`` is page-locked and contiguous, and takes one copy at the link's rate)."""
    import cupy

    if locked and out is not None:
        stream = cupy.cuda.get_current_stream()
        device_array.data.copy_to_host_async(out.ctypes.data, device_array.nbytes, stream)
        stream.synchronize()
        return out
    if out is None:
        out = np.empty(device_array.shape, device_array.dtype)
    if device_array.nbytes < SMALL:  # straight into ``out`` where it is contiguous
        if (out.flags.c_contiguous and out.shape == device_array.shape
                and out.dtype == device_array.dtype):
            return device_array.get(out=out)
        out[...] = device_array.get()
        return out
    src, raw = device_array.reshape(-1).view(cupy.uint8), out.reshape(-1).view(np.uint8)
    stream = cupy.cuda.get_current_stream()
    buffers, uploads = _buffers(cupy.cuda.Device().id)
    for k, event in enumerate(uploads):  # an upload's last pieces have left the buffers
        if event is not None:
            event.synchronize()
            uploads[k] = None
    pieces = list(range(0, raw.size, PIECE))
    events = []
    for k, a in enumerate(pieces[:2]):  # two pieces in flight
        b = min(a + PIECE, raw.size)
        src[a:b].data.copy_to_host_async(buffers[k % 2].ctypes.data, b - a, stream)
        events.append(stream.record())
    for k, a in enumerate(pieces):
        b = min(a + PIECE, raw.size)
        events[k].synchronize()
        host_copy(raw[a:b], buffers[k % 2][:b - a])
        if k + 2 < len(pieces):
            c = pieces[k + 2]
            d = min(c + PIECE, raw.size)
            src[c:d].data.copy_to_host_async(buffers[k % 2].ctypes.data, d - c, stream)
            events.append(stream.record())
    return out
