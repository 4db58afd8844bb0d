"""A database's sequences longest first, stored once by the builder (``order.i32``: the
indices, ties in file order; ``runs.i64``: (length, count) of its runs of equal lengths), so
that a scan cuts its launches without sorting (``engines/cuda/scan/partition.Subjects``)."""

from __future__ import annotations

import os
import zlib

import numpy as np

from ..engines.cuda.scan.lines import Subjects
from .reading import fail


def write_order(folder: str, count: int) -> dict[str, tuple[int, int]]:
    """Write the order of the ``count`` sequences of the data folder ``folder`` (from its
    ``lengths.i32``); each file's (size, CRC-32)."""
    lengths = np.fromfile(os.path.join(folder, "lengths.i32"), "<i4", count)
    found = Subjects.of(lengths)
    written = {}
    for name, array in (("order.i32", found.order.astype("<i4")),
                        ("runs.i64", found.runs.astype("<i8"))):
        data = array.tobytes()
        with open(os.path.join(folder, name), "wb") as fh:
            fh.write(data)
        written[name] = (len(data), zlib.crc32(data))
    return written


def stored_order(path: str, order: np.ndarray, runs: np.ndarray, header: dict) -> Subjects:
    """The stored order, its runs checked against the header's counts (``path`` names the
    runs' file in the error); each index's place is checked by the checksums."""
    runs = runs.reshape(-1, 2)
    lengths, counts = runs[:, 0], runs[:, 1]
    if (not runs.size or int(counts.sum()) != header["sequences"]
            or int(np.dot(lengths, counts)) != header["residues"] or counts.min() < 1
            or lengths.min() < 0 or int(lengths[0]) != header["longest"]
            or (lengths.size > 1 and np.diff(lengths).max() >= 0)):
        raise fail(path, "damaged length runs (they disagree with the header's counts)")
    return Subjects(order, runs)
