"""Says once, on stderr, that the CPU kernels are being compiled for this machine.

Numba caches every kernel on disk (``cache=True``: in ``__pycache__`` beside the module,
else in its user-wide cache directory, or under ``NUMBA_CACHE_DIR``). A kernel called from
Python compiles when this process has not loaded it for the argument types and its cache
index holds no entry under the key Numba itself looks up: the argument types, this
machine's CPU (the code generator's target triple, CPU name and features) and a hash of
the function's bytecode; an index written by another Numba version or for another version
of the source file counts as empty. :func:`cold` asks Numba's cache exactly that, before
the call. Should Numba's internals change so that they cannot be asked, a marker file per
kernel and argument types in wavedp's user cache directory, keyed by the wavedp and Numba
versions and the CPU, stands in (it cannot see a cache that was deleted).

The engine's entry points pass :func:`notice` the kernels they are about to call, each with
its estimated compile time; where some are cold that it has not said before in this
process, it says :data:`MESSAGE` with the sum of theirs.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from collections.abc import Callable, Iterable

import numba
from llvmlite import binding
from numba.core.dispatcher import Dispatcher
from platformdirs import user_cache_dir

from ...version import __version__

MESSAGE = "wavedp: compiling the CPU kernels for this machine, once (about {seconds:.0f} s)..."

#: compile seconds from an empty cache, between what an x86-64 core with AVX2 and a 2-core
#: machine take (the README's first search says "small" alone: small_pairs took 2.9 s on 2
#: cores, and the composition statistics' kernels, said nowhere, 2.0 s more; the whole run
#: 5.5-6.6 s): the pair batch kernels of ``align_pairs`` (a small call's traceback cell by
#: cell; traceback keeping the whole matrix or checkpoints; score-only by rows or striped),
#: the database scan at one lane width (8 or 16 bits; 32: per pair), the non-intersecting
#: hits, the polyadic solver, a search's empirical fit, the FASTA scanner of ``align
#: --pairs`` and each CIGAR text kernel of its writers
SECONDS = {"whole": 9.0, "whole16": 9.0, "small": 4.0, "checkpointed": 5.0, "rows": 4.0,
           "striped": 2.0, "scan": 5.0, "scan32": 6.0, "hits": 4.0, "polyadic": 3.0, "fit": 7.0,
           "fasta": 1.5, "cigar": 0.3}

#: (kernel, its arguments or None for any, estimated compile seconds) of a call to be made
Call = tuple[Callable, tuple | None, float]

_lock = threading.Lock()
_said: set[int] = set()  # the kernels (ids) whose compiling this process said
_quiet = False  # say nothing (:func:`quiet`)
_seen: set[tuple[int, ...]] = set()  # the kernel sets looked at


def cold(kernel: Callable, args: tuple | None) -> bool:
    """Whether ``kernel(*args)`` compiles, i.e. is neither loaded in this process nor in
    Numba's on-disk cache for this machine (args None: whether it compiles whatever the
    arguments, i.e. no signature is loaded or cached; False for a kernel that is not a
    Numba dispatcher, as under ``NUMBA_DISABLE_JIT``)."""
    return _state(kernel, args)[0]


def notice(calls: Iterable[Call], say: Callable[[str], None] | None = None) -> bool:
    """Before the calls are made: when some compile (:func:`cold`), say :data:`MESSAGE` with
    their summed estimate (``say``: one line; default: stderr). Says it once per kernel and
    process (a later call of a kernel already said, at other arguments, says nothing; a
    kernel not yet said, such as a search's traceback after its scan, says it again with
    its own estimate), and looks at a set of kernels once per process (typing the arguments
    costs about 10 us each: too much for every call). Returns whether it said it."""
    calls = list(calls)
    site = tuple(id(kernel) for kernel, _, _ in calls)
    if _quiet or site in _seen:
        return False
    with _lock:
        if _quiet or site in _seen:
            return False
        _seen.add(site)
        seconds, markers, said = 0.0, [], []
        for kernel, args, estimate in calls:
            if id(kernel) in _said:
                continue
            compiles, marker = _state(kernel, args)
            if compiles:
                seconds += estimate
                said.append(id(kernel))
                markers += [marker] if marker else []
        if not seconds:
            return False
        for marker in markers:
            _touch(marker)
        _said.update(said)
        (say or _stderr)(MESSAGE.format(seconds=max(seconds, 1.0)))
        return True


def quiet() -> None:
    """Say nothing in this process from now on (for callers, such as tests, that compare
    stderr line by line)."""
    global _quiet
    _quiet = True


def _state(kernel: Callable, args: tuple | None) -> tuple[bool, str | None]:
    """(whether ``kernel(*args)`` compiles, the marker file that stood in for Numba's cache
    or None)."""
    if not isinstance(kernel, Dispatcher):
        return False, None
    sig = None if args is None else tuple(kernel.typeof_pyval(a) for a in args)
    if (kernel.overloads if sig is None else sig in kernel.overloads):
        return False, None
    found = _numba_cold(kernel, sig)
    if found is not None:
        return found, None
    marker = _marker(kernel, sig)
    return not os.path.exists(marker), marker


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _numba_cold(kernel: Dispatcher, sig: tuple | None) -> bool | None:
    """Whether Numba's on-disk cache lacks ``kernel`` for ``sig`` (None: any signature) on
    this machine (None: Numba's cache cannot be asked)."""
    try:
        cache = kernel._cache
        if not getattr(cache, "_enabled", False):
            return True  # no on-disk cache: every process compiles
        key = cache._index_key(sig, kernel.targetctx.codegen())
        files = cache._cache_file
        index = files._load_index()
        names = [index.get(key)] if sig is not None else [
            name for (_, *rest), name in index.items() if tuple(rest) == key[1:]]
        return not any(name and os.path.exists(files._data_path(name)) for name in names)
    except Exception:  # Numba's internals changed: the marker files stand in
        return None


def _marker(kernel: Dispatcher, sig: tuple | None) -> str:
    """The marker file of ``kernel`` compiled for ``sig`` (None: any) by this wavedp, Numba
    and CPU."""
    features = binding.get_host_cpu_features().flatten()
    key = repr((__version__, numba.__version__, numba.config.CPU_NAME,
                binding.get_host_cpu_name(), features, kernel.py_func.__module__,
                kernel.py_func.__qualname__, sig and [str(t) for t in sig]))
    name = hashlib.sha256(key.encode()).hexdigest()[:32]
    return os.path.join(user_cache_dir("wavedp"), "compiled", name)


def _touch(path: str) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a"):
            pass
    except OSError:  # an unwritable cache directory: the message may come again
        pass


@numba.njit(cache=True)
def _ready(x):
    return x + 1


def warm() -> None:
    """Start Numba's code generator by loading the smallest cached kernel: the first kernel a
    process loads from the cache pays for it (about 0.5 s on this project's machines), a
    kernel loaded after it about 0.01 s."""
    _ready(1)
