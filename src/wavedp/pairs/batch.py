"""PairBatch: the alignments of many pairs as columns (NumPy arrays), each ``Alignment`` made
only when asked for.

CIGARs are runs in BAM's encoding, ``length << 4 | op`` (uint32), every pair's runs one after
another with offsets: op 7 is ``=``, 8 ``X``, 1 ``I`` (query only) and 2 ``D`` (target
only), as ``docs/design.md`` writes them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from ..alignment import Alignment, built
from ..cigars import DELETE, DIFF, EQUAL, INSERT, OPS, cigar_strings, runs_from_letters  # noqa: F401  (the batch's names for its users)
from .sequences import Sequences


@dataclass(frozen=True, eq=False)
class PairBatch(Sequence[Alignment]):
    """The alignments of pairs k = 0..n-1 of ``queries[query_index[k]]`` against
    ``targets[target_index[k]]``: ``score`` (int32), coordinates (int64, 0-based, half-open;
    a start of -1 where only the end cell was computed: score-only local and semiglobal),
    ``cigar_runs`` and ``cigar_offsets`` (None when score-only), ``mode`` and ``alphabet``
    (the letter of each code, for records kept without their letters).

    Indexing and iteration give ``Alignment`` objects, made on demand; ``cigars()`` every
    CIGAR text at once; ``to_frame()`` / ``to_arrow()`` a table of the columns.
    """

    score: np.ndarray
    query_start: np.ndarray
    query_end: np.ndarray
    target_start: np.ndarray
    target_end: np.ndarray
    cigar_runs: np.ndarray | None
    cigar_offsets: np.ndarray | None
    query_index: np.ndarray
    target_index: np.ndarray
    queries: Sequences
    targets: Sequences
    mode: str
    alphabet: str

    def __len__(self) -> int:
        return int(self.score.size)

    def __eq__(self, other: object) -> bool:
        """Equal to a batch or list of the same Alignments, in the same order."""
        if not isinstance(other, (PairBatch, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    @overload
    def __getitem__(self, k: int) -> Alignment: ...

    @overload
    def __getitem__(self, k: slice) -> list[Alignment]: ...

    def __getitem__(self, k):
        if isinstance(k, slice):
            return self.alignments(range(*k.indices(len(self))))
        n = len(self)
        if not -n <= k < n:
            raise IndexError(f"pair {k} of {n}")
        return self.alignments([k % n])[0]

    def __iter__(self) -> Iterator[Alignment]:
        step = 4096
        for a in range(0, len(self), step):
            yield from self.alignments(range(a, min(a + step, len(self))))

    @property
    def traced(self) -> bool:
        """Whether the batch holds CIGARs (traceback)."""
        return self.cigar_runs is not None

    @property
    def query_length(self) -> np.ndarray:
        return self.queries.lengths[self.query_index]

    @property
    def target_length(self) -> np.ndarray:
        return self.targets.lengths[self.target_index]

    def cigars(self, which: Sequence[int] | np.ndarray | None = None) -> list[str] | None:
        """The CIGAR texts of the pairs ``which`` (default all); None when score-only."""
        if self.cigar_runs is None or self.cigar_offsets is None:
            return None
        if which is None:
            return cigar_strings(self.cigar_runs, self.cigar_offsets)
        which = np.asarray(which, np.int64)
        a, b = self.cigar_offsets[which], self.cigar_offsets[which + 1]
        sizes = b - a
        take = np.repeat(a - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
        offsets = np.zeros(which.size + 1, np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return cigar_strings(self.cigar_runs[take], offsets)

    def counts(self) -> dict[str, np.ndarray]:
        """Per pair, from the CIGAR runs: ``=``, ``X``, ``I``, ``D`` columns, gap opens and
        alignment length (int64 arrays); empty dict when score-only."""
        if self.cigar_runs is None or self.cigar_offsets is None:
            return {}
        owner = np.repeat(np.arange(len(self)), np.diff(self.cigar_offsets))
        lengths = (self.cigar_runs >> 4).astype(np.int64)
        ops = self.cigar_runs & 15
        out = {}
        for name, code in (("=", EQUAL), ("X", DIFF), ("I", INSERT), ("D", DELETE)):
            out[name] = np.bincount(owner, lengths * (ops == code), len(self)).astype(np.int64)
        out["gapopen"] = np.bincount(owner, (ops == INSERT) | (ops == DELETE),
                                     len(self)).astype(np.int64)
        out["length"] = out["="] + out["X"] + out["I"] + out["D"]
        return out

    def alignments(self, which: Sequence[int] | range) -> list[Alignment]:
        """The Alignments of the pairs ``which``, in that order."""
        which = np.asarray(which, np.int64)
        qi, ti = self.query_index[which], self.target_index[which]
        q_ids, t_ids = self.queries.ids, self.targets.ids
        cigars = self.cigars(which)
        starts_q = self.query_start[which].tolist()
        starts_t = self.target_start[which].tolist()
        return built({
            "score": self.score[which].tolist(),
            "query_start": [None if v < 0 else v for v in starts_q],
            "query_end": self.query_end[which].tolist(),
            "target_start": [None if v < 0 else v for v in starts_t],
            "target_end": self.target_end[which].tolist(),
            "cigar": cigars if cigars is not None else [None] * which.size,
            "query_id": [q_ids[k] for k in qi.tolist()],
            "target_id": [t_ids[k] for k in ti.tolist()],
            "query_length": self.queries.lengths[qi].tolist(),
            "target_length": self.targets.lengths[ti].tolist(),
            "query": [self.queries.text(k, self.alphabet) for k in qi.tolist()],
            "target": [self.targets.text(k, self.alphabet) for k in ti.tolist()],
        }, mode=self.mode, evalue=None, bitscore=None, strand=None, target_title="")

    def columns(self) -> dict[str, Any]:
        """The batch as named columns: ids, lengths, score, coordinates (-1: unknown) and,
        with traceback, ``cigar`` texts."""
        out: dict[str, Any] = {
            "query_id": [self.queries.ids[k] for k in self.query_index.tolist()],
            "target_id": [self.targets.ids[k] for k in self.target_index.tolist()],
            "query_length": self.query_length, "target_length": self.target_length,
            "score": self.score, "query_start": self.query_start,
            "query_end": self.query_end, "target_start": self.target_start,
            "target_end": self.target_end,
        }
        cigars = self.cigars()
        if cigars is not None:
            out["cigar"] = cigars
        return out

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per pair (the ``tables`` extra)."""
        from ..dbsearch.tables import optional_module  # optional dependency, imported on use

        return optional_module("pandas", "to_frame").DataFrame(self.columns())

    def to_arrow(self) -> Any:
        """A pyarrow Table, one row per pair (the ``tables`` extra)."""
        from ..dbsearch.tables import optional_module  # optional dependency, imported on use

        pa = optional_module("pyarrow", "to_arrow")
        return pa.table({k: pa.array(v) for k, v in self.columns().items()})
