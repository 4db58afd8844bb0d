"""The hit order every scanner keeps (``docs/design.md``, "Ranking"): score descending, then
database index ascending, then the plus strand before the minus strand; top-K selection, the
merge of candidate lists (the scanners' interface is ``engines/protocol.py``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

#: a query's candidates: database indices and their scores, ranked
Candidates = tuple[np.ndarray, np.ndarray]


class Later:
    """Thresholds known only later (a search's statistics, fitted while its scan runs):
    ``begin`` starts the work that gives them (a GPU scanner calls it once its launches are
    planned, so that the work does not compete with the planning for the interpreter),
    :meth:`get` waits for them, computing them once, in the first thread that asks (and
    begins first where nothing did)."""

    def __init__(self, make: Callable[[], Sequence[int | None]],
                 begin: Callable[[], None] | None = None) -> None:
        self._make, self._begin = make, begin
        self._lock = threading.Lock()
        self._value: Sequence[int | None] | None = None

    def begin(self) -> None:
        """Start the work (once, whichever thread calls first)."""
        with self._lock:
            self._started()

    def _started(self) -> None:
        if self._begin is not None:  # cleared once it succeeds (a failure is raised again)
            self._begin()
            self._begin = None

    def get(self) -> Sequence[int | None]:
        with self._lock:
            if self._value is None:
                self._started()
                self._value = self._make()
            return self._value


#: each query's threshold (None: none), now or :class:`Later`
Thresholds = Sequence[int | None] | Later


def thresholds_of(thresholds: Thresholds) -> Sequence[int | None]:
    """The thresholds themselves (waiting for :class:`Later` ones)."""
    return thresholds.get() if isinstance(thresholds, Later) else thresholds


def begin(thresholds: Thresholds) -> None:
    """Start the work of :class:`Later` thresholds (nothing for known ones)."""
    if isinstance(thresholds, Later):
        thresholds.begin()


#: strand codes in rank order (ties between the two strands of one sequence: plus first)
PLUS, MINUS = 0, 1


def top(scores: np.ndarray, k: int, threshold: int | None) -> np.ndarray:
    """Indices into ``scores`` of its ``k`` best entries (all when k == 0) scoring at least
    ``threshold``, best first: larger score, then smaller index."""
    idx = np.arange(scores.size, dtype=np.int64)
    if threshold is not None:
        keep = scores >= threshold
        idx, scores = idx[keep], scores[keep]
    if k and idx.size > k:
        # the k-th largest score; everything above it is in, ties at it go by index
        kth = np.partition(scores, idx.size - k)[idx.size - k]
        above = scores > kth
        at = np.flatnonzero(scores == kth)[: k - int(above.sum())]
        keep = np.flatnonzero(above)
        sel = np.concatenate([keep, at])
        idx, scores = idx[sel], scores[sel]
    order = np.lexsort((idx, -scores.astype(np.int64)))
    return idx[order]


def merge(parts: list[tuple], k: int
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Merge candidate lists ``(database indices, scores, strand[, end cells])`` into one
    ranked list of at most ``k`` entries (all when k == 0): (indices, scores, strands, end
    cells), the end cells (int64 [n, 2]) where every part has them, else None."""
    if not parts:
        empty = np.empty(0, np.int64)
        return empty, empty.astype(np.int32), empty.astype(np.int8), None
    index = np.concatenate([p[0] for p in parts]).astype(np.int64)
    score = np.concatenate([p[1] for p in parts]).astype(np.int64)
    strand = np.concatenate([np.full(p[0].size, p[2], np.int8) for p in parts])
    order = np.lexsort((strand, index, -score))
    if k:
        order = order[:k]
    ends = (np.concatenate([p[3] for p in parts])[order]
            if all(len(p) > 3 for p in parts) else None)
    return index[order], score[order].astype(np.int32), strand[order], ends
