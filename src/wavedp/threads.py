"""How many CPU threads wavedp's CPU stages use (``threads=`` in Python, ``--threads`` on the
command line): every core by default; 1 runs each kernel on one thread."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from .errors import InputError

T = TypeVar("T")
#: :func:`in_pieces`' threads, and the fewest elements a piece worth a thread of its own
HELPERS = 16
PIECE = 1 << 17


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check(threads: object) -> int | None:
    """``threads`` as a positive int (None: every core); an InputError otherwise."""
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(f"threads must be a positive integer (or None: every core), got "
                         f"{threads!r}")
    return threads


@contextlib.contextmanager
def limited(threads: int | None) -> Iterator[None]:
    """The CPU kernels run in this thread on at most ``threads`` threads while the context
    lasts (None: no limit, every core)."""
    threads = check(threads)
    if threads is None:
        yield
        return
    # Numba loads here, only when a limit is asked for: it costs 0.2 s of a command's start
    import numba

    old = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(old)


@contextlib.contextmanager
def pool(threads: int, name: str) -> Iterator[ThreadPoolExecutor]:
    """A pool of ``threads`` threads for the block: when the block raises (a stop, an error),
    the work still queued is dropped and only the running tasks are waited for (a plain
    ``with ThreadPoolExecutor`` runs every queued task first)."""
    executor = ThreadPoolExecutor(threads, thread_name_prefix=name)
    try:
        yield executor
    except BaseException:
        executor.shutdown(cancel_futures=True)
        raise
    executor.shutdown()


@functools.cache
def _helpers(pid: int) -> ThreadPoolExecutor:
    """Process ``pid``'s helper threads (a forked child makes its own)."""
    return ThreadPoolExecutor(HELPERS, thread_name_prefix="wavedp-numpy")


def in_pieces(work: Callable[[int, int], T], size: int, count: int | None = None
              ) -> list[T]:
    """``work(a, b)``'s results over ``count`` consecutive pieces a:b of 0..size, in order, on
    the helper threads (NumPy lets go of the interpreter's lock in its loops over arrays);
    ``count`` None: up to HELPERS pieces of at least PIECE elements, one piece on this thread
    where ``size`` is small."""
    if count is None:
        count = max(1, min(HELPERS, cores(), size // PIECE))
    if count <= 1:
        return [work(0, size)]
    step = -(-size // count)
    return list(_helpers(os.getpid()).map(lambda a: work(a, min(a + step, size)),
                                          range(0, size, step)))
