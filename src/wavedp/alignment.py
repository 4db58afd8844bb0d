"""The Alignment result and CIGAR helpers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

_CIGAR_RE = re.compile(r"(\d+)([=XIDMS])")


def cigar_ops(cigar: str) -> list[tuple[int, str]]:
    """Split a CIGAR string into (length, op) pairs."""
    return [(int(n), op) for n, op in _CIGAR_RE.findall(cigar)]


def cigar_from_ops(ops: bytes | str | np.ndarray) -> str:
    """Run-length encode single-letter ops (``b"==XID"`` -> ``"2=1X1I1D"``)."""
    if isinstance(ops, str):
        ops = ops.encode("ascii")
    arr = np.frombuffer(ops, dtype=np.uint8) if isinstance(ops, bytes) else ops
    if arr.size == 0:
        return ""
    starts = np.flatnonzero(np.concatenate(([True], arr[1:] != arr[:-1])))
    lengths = np.diff(np.append(starts, arr.size))
    letters = arr[starts].tobytes().decode("ascii")
    return "".join(f"{n}{op}" for n, op in zip(lengths.tolist(), letters, strict=True))


@dataclass(frozen=True)
class Alignment:
    """One pairwise alignment: coordinates are 0-based, half-open; the target is the reference.

    ``query_start``/``target_start`` are None for score-only local and semiglobal results
    (only the end cell is known). ``cigar`` uses ``=``, ``X``, ``I`` (query only) and ``D``
    (target only); it is None when traceback was not asked for. Search hits also carry
    ``evalue``, ``bitscore`` and ``strand``; a minus-strand hit's query fields (text,
    coordinates) are those of the reverse-complemented query it aligns.
    """

    score: int
    query_start: int | None
    query_end: int
    target_start: int | None
    target_end: int
    cigar: str | None
    query_id: str = "query"
    target_id: str = "target"
    mode: str = "local"
    query_length: int = 0
    target_length: int = 0
    query: str = field(default="", repr=False, compare=False)
    target: str = field(default="", repr=False, compare=False)
    #: search hits: E-value and bit score (None without statistics) and the query strand
    #: ("+", or "-" where the hit aligns the reverse complement of the query; None outside
    #: a DNA search)
    evalue: float | None = None
    bitscore: float | None = None
    strand: str | None = None

    def ops(self) -> list[tuple[int, str]]:
        """The CIGAR as (length, op) pairs; empty when there is none."""
        return cigar_ops(self.cigar) if self.cigar else []

    def rows(self) -> tuple[str, str]:
        """The two gapped rows (query, target) of the aligned region."""
        if self.cigar is None:
            raise ValueError("this alignment is score-only: align with traceback=True for rows")
        q, t = self.query_start or 0, self.target_start or 0
        qrow, trow = [], []
        for length, op in self.ops():
            if op in "=XM":
                qrow.append(self.query[q:q + length])
                trow.append(self.target[t:t + length])
                q += length
                t += length
            elif op == "I":
                qrow.append(self.query[q:q + length])
                trow.append("-" * length)
                q += length
            elif op == "D":
                qrow.append("-" * length)
                trow.append(self.target[t:t + length])
                t += length
        return "".join(qrow), "".join(trow)

    def counts(self) -> dict[str, int]:
        """Column counts from the CIGAR: matches, mismatches, gap columns, gap opens, length."""
        c = {"=": 0, "X": 0, "I": 0, "D": 0, "gapopen": 0}
        for length, op in self.ops():
            c[op] += length
            if op in "ID":
                c["gapopen"] += 1
        c["length"] = c["="] + c["X"] + c["I"] + c["D"]
        return c

    def format(self, kind: str = "pairwise") -> str:
        """Render as ``pairwise``, ``sam`` (record line), ``blast6`` or ``json``."""
        from .formats import format_alignment

        return format_alignment(self, kind)
