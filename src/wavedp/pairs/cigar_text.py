"""A block of pairs' CIGAR runs (BAM's ``length << 4 | op``) as text and as per-pair counts,
by compiled loops that hold no interpreter lock: the batch writers build their blocks on
several threads (``formats``). A protein pair has about a hundred runs; built column by
column with NumPy, their text was 60% of a PAF line's cost."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..cigars import DELETE, DIFF, EQUAL, INSERT, OPS

#: each op code's letter (codes past OPS: ``?``)
LETTERS = np.frombuffer(OPS.encode("ascii").ljust(16, b"?"), np.uint8)
#: the columns of :func:`counts`
COUNTED = (EQUAL, DIFF, INSERT, DELETE, 0)  # =, X, I, D, M


@njit(cache=True, nogil=True)
def _counts(runs, offsets, out):  # pragma: no cover - compiled
    """Per pair (row of ``out``): the residues of each op of COUNTED, then its gap opens."""
    for r in range(offsets.size - 1):
        for k in range(offsets[r], offsets[r + 1]):
            length, op = np.int64(runs[k] >> 4), np.int64(runs[k] & 15)
            if op == EQUAL:
                out[r, 0] += length
            elif op == DIFF:
                out[r, 1] += length
            elif op == INSERT:
                out[r, 2] += length
                out[r, 5] += 1
            elif op == DELETE:
                out[r, 3] += length
                out[r, 5] += 1
            elif op == 0:
                out[r, 4] += length


@njit(cache=True, nogil=True)
def _widths(runs, offsets, out):  # pragma: no cover - compiled
    """Per pair, its CIGAR text's bytes."""
    for r in range(offsets.size - 1):
        width = 0
        for k in range(offsets[r], offsets[r + 1]):
            length = np.int64(runs[k] >> 4)
            width += 2
            while length >= 10:
                length //= 10
                width += 1
        out[r] = width


@njit(cache=True, nogil=True)
def _fill(runs, offsets, letters, out):  # pragma: no cover - compiled
    """Each pair's CIGAR text into its row of ``out`` (zeroed, wide enough)."""
    for r in range(offsets.size - 1):
        at = 0
        for k in range(offsets[r], offsets[r + 1]):
            length = np.int64(runs[k] >> 4)
            digits, rest = 1, length
            while rest >= 10:
                rest //= 10
                digits += 1
            for d in range(digits - 1, -1, -1):
                out[r, at + d] = np.uint8(48 + length % 10)
                length //= 10
            at += digits
            out[r, at] = letters[runs[k] & 15]
            at += 1


def counts(runs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per pair (``offsets``: its runs, from 0), int64 columns: the residues in ``=``,
    ``X``, ``I``, ``D`` and ``M`` runs, then the gap opens (``I`` and ``D`` runs)."""
    out = np.zeros((offsets.size - 1, len(COUNTED) + 1), np.int64)
    _counts(runs, offsets, out)
    return out


def text(runs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each pair's CIGAR text, a row each, padded with 0."""
    widths = np.empty(offsets.size - 1, np.int64)
    _widths(runs, offsets, widths)
    out = np.zeros((widths.size, int(widths.max()) if widths.size else 0), np.uint8)
    _fill(runs, offsets, LETTERS, out)
    return out


def notice() -> None:
    """Say once, where the kernels are not compiled yet, that they are being compiled."""
    from ..engines.cpu.compile import SECONDS
    from ..engines.cpu.compile import notice as said

    said([(kernel, None, SECONDS["cigar"]) for kernel in (_counts, _widths, _fill)])
