"""Runs ``nogil`` Numba kernels on several threads without ``parallel=True``.

Numba's parfor pass made every ``prange`` kernel slow to compile (about 6 s for the pair
batch on two cores, 3 s for the database scan), and a ``prange`` body compiles a second time
for its unsigned loop index. Here a kernel takes ``(first, step, ...)`` and handles units
``first, first + step, ...``; Python threads run one such slice each while Numba releases
the GIL. The threads are as many as Numba's (``numba.get_num_threads``); the calling thread
waits, so that a stop signal is handled at once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
from numba.core.dispatcher import Dispatcher

from ...stops import raise_if_stopped

_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}
_lock = threading.Lock()
_compiled: set[tuple] = set()  # (kernel, argument dtypes) compiled or loaded here


def _pool(threads: int) -> ThreadPoolExecutor:
    """This process's pool of ``threads`` threads (a forked child makes its own)."""
    key = (os.getpid(), threads)
    with _lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = ThreadPoolExecutor(threads, thread_name_prefix="wavedp-cpu")
        return pool


def spread(kernel: Callable, units: int, *args) -> None:
    """``kernel(first, step, *args)`` for first = 0 .. step - 1 on ``step`` threads of the
    pool, step = min(Numba's thread count, units). The calling thread only waits, in a wait
    a signal interrupts: a stop (Ctrl-C, SIGTERM) takes effect at once instead of after the
    kernel (the pool's threads finish their slices behind it). A stop that a compile swallowed
    (Numba's compiler calls back into Python) takes effect before the kernel runs."""
    workers = min(numba.get_num_threads(), units)
    if workers < 1:
        return
    compile_here(kernel, (0, workers, *args))
    raise_if_stopped()
    futures = [_pool(workers).submit(kernel, w, workers, *args) for w in range(workers)]
    for future in futures:
        future.result()


def compile_here(kernel: Callable, args: tuple) -> None:
    """Compile or load ``kernel`` for ``args`` in the calling thread before a pool calls it:
    compiling in a pool thread took twice the time (most of the extra in mmap and munmap).
    Arguments are typed once per kernel and dtypes (typing costs about 10 us an argument)."""
    if not isinstance(kernel, Dispatcher):
        return
    key = (kernel, *(getattr(a, "dtype", type(a)) for a in args))
    if key in _compiled:
        return
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    if sig not in kernel.overloads:
        kernel.compile(sig)
    _compiled.add(key)
