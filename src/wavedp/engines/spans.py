"""Records' lengths read off their offsets (:class:`Spans`): one-to-one pairs need only the
lengths' extremes before their chunks are cut, and each chunk's lengths as it is written
(``cuda/writes.py``), so no array of every length is made in the call (for 4,000,000 DNA
records that array was 32 MB of fresh pages, 3.5-4.6 ms of the call on one H200's host).
The extremes come from one Numba ``parallel`` pass over the offsets where that may run from
any thread (``parallel.ready``), else from the array."""

from __future__ import annotations

import numpy as np

from ..threads import in_pieces

#: the fewest records worth the parallel pass (an API call's 500,000 proteins are; the
#: command's chunks of 2**16 pairs are not: their lines need the array anyway, and beside the
#: command's busy reader and writer threads the pass took up to 15 ms a call on 2 cores,
#: 0.9 s of a 2,000,000-pair command's main thread)
PARALLEL_LEAST = 1 << 18


class Spans:
    """Record k's length is ``offsets[k + 1] - offsets[k]`` (int64): a slice is the Spans of
    the offsets' slice (nothing made; with a step, those lengths alone), :meth:`extremes` one
    pass without an array; anything else reads the array, made once
    (:func:`numpy.asarray`)."""

    __slots__ = ("offsets", "_array", "_extremes")
    dtype = np.dtype(np.int64)
    ndim = 1

    def __init__(self, offsets: np.ndarray) -> None:
        self.offsets = offsets
        self._array: np.ndarray | None = None
        self._extremes: tuple[int, int] | None = None

    @property
    def size(self) -> int:
        return len(self.offsets) - 1

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key):
        if isinstance(key, slice):
            a, b, step = key.indices(self.size)
            if step == 1:
                return Spans(self.offsets[a:max(a, b) + 1])
            if self._array is None and step > 1:  # a sample: only its lengths
                return self.offsets[a + 1:b + 1:step] - self.offsets[a:b:step]
        return self.array()[key]

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        made = self.array()
        return made if dtype is None or made.dtype == dtype else made.astype(dtype)

    def array(self) -> np.ndarray:
        """The lengths (int64, read-only; made once, on the helper threads, with their
        extremes in the same pass)."""
        if self._array is None:
            offsets = self.offsets
            made = np.empty(self.size, np.int64)

            def piece(a: int, b: int) -> tuple[int, int]:
                part = np.subtract(offsets[a + 1:b + 1], offsets[a:b], out=made[a:b])
                return int(part.min()), int(part.max())

            ends = in_pieces(piece, made.size) if made.size else [(0, 0)]
            made.flags.writeable = False
            self._array = made
            if self._extremes is None:
                self._extremes = (min(lo for lo, _ in ends), max(hi for _, hi in ends))
        return self._array

    def extremes(self) -> tuple[int, int]:
        """The shortest length and the longest (0, 0 where there is none): one parallel
        pass over the offsets where it serves, else the array's pass."""
        if self._extremes is None:
            if self.size >= PARALLEL_LEAST and (found := _parallel_extremes(self.offsets)):
                self._extremes = found
            else:
                self.array()
        return self._extremes  # type: ignore[return-value]


def _parallel_extremes(offsets: np.ndarray) -> tuple[int, int] | None:
    """``parallel.extremes`` where it may run here, else None (imported here: Numba costs
    0.2 s of a command's start)."""
    from . import parallel

    return parallel.extremes(offsets) if parallel.ready() else None
