"""The scan engines' common interface: what a search asks of the CPU's, the GPUs' and a Dask
cluster's scanners (``engines.scanner`` makes one for a resolved device)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from ..ranking import Candidates, Thresholds


class Scanner(Protocol):
    """What a search asks of a scan engine (the CPU's, the GPUs', a Dask cluster's): each
    encoded query's best ``k`` (0: all) database indices and exact scores at or above its
    threshold, ranked; ``progress(cells)`` as work completes. :class:`ranking.Later` thresholds are
    asked for as late as the engine can (the GPUs: once the first scores are computed).

    A scanner whose scan finds local alignments' end cells as it scores (the CPU's) also
    has ``every_hit(queries, thresholds, progress)``: each query's every candidate at or
    above its threshold, ranked, with their end cells (indices, scores, int64 [n, 2]
    (i, j)): what a score-only local hit reports, without aligning the hits again."""

    def top(self, queries: list[np.ndarray], k: int, thresholds: Thresholds,
            progress: Callable[[int], None] | None = None) -> list[Candidates]: ...

    def with_table(self, sub: np.ndarray) -> Scanner:
        """The same database scored with another table (a profile's rows, the queries'
        codes its row indices), what is resident shared (a cluster's scanner takes no
        profiles: it has none)."""
        ...
