"""The database's chunks on the GPU: where it fits in the memory budget one resident chunk,
else slices that stream through two buffers (:class:`Chunk`: one slice and its subjects)."""

from __future__ import annotations

import numpy as np

from ....errors import InputError
from ...common import residue_ranges
from .lines import Subjects

#: bytes a sequence costs beside its residues: offset, order, score, key
PER_SEQUENCE = 8 + 4 + 4 + 8


def chunk_ranges(offsets: np.ndarray, budget: int, free: int) -> list[tuple[int, int]]:
    """The chunks (first, last + 1 sequence) of a database of ``offsets``: one where it fits
    in ``budget`` bytes, else as many as stream through two buffers; ``free``: the GPU's
    free bytes (too few for the longest sequence's chunk is an input error)."""
    n = offsets.size - 1
    lengths = np.diff(offsets)
    longest = int(lengths.max()) if n else 0
    if int(offsets[-1]) + PER_SEQUENCE * n <= budget:
        ranges = [(0, n)]
    else:
        cap = max((budget // 2) - PER_SEQUENCE * 1024, longest)
        ranges = list(residue_ranges(offsets, cap))
    need = max(int(offsets[b] - offsets[a]) + PER_SEQUENCE * (b - a)
               for a, b in ranges) * (1 if len(ranges) == 1 else 2)
    if need > free:
        raise InputError(f"the database needs {need / 2**30:.2f} GiB of GPU memory for its "
                         f"longest sequence ({longest} residues), {free / 2**30:.2f} GiB free")
    return ranges


class Chunk:
    """One slice of the database: subject lengths, the non-empty ones sorted (``order``:
    the slice's own, longest first, where known), and its residues and offsets on the GPU."""

    def __init__(self, start: int, stop: int, offsets: np.ndarray, d_res=None,
                 d_off=None, order: Subjects | None = None) -> None:
        lengths = np.diff(offsets)
        self.start, self.stop = start, stop
        self.lengths = lengths
        whole = order if order is not None else Subjects.of(lengths)
        zero = int(whole.runs[-1, 1]) if whole.runs.size and whole.runs[-1, 0] == 0 else 0
        self.subjects = Subjects(whole.order[:whole.n - zero],
                                 whole.runs[:len(whole.runs) - bool(zero)])  # a launch's
        self.count = self.subjects.n
        self.empty = whole.order[whole.n - zero:]
        self.longest = int(whole.runs[0, 0]) if whole.runs.size else 0
        self.res, self.off = d_res, d_off

    @property
    def size(self) -> int:
        return self.stop - self.start


