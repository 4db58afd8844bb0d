"""The cost model (``cost.py``) of many launches at once, each a range of the subjects sorted
longest first, priced on the histogram of its lengths (the runs of equal lengths a database
stores, :class:`Runs`) rather than on its subjects: what pricing a plan costs does not grow
with the database.

A launch is priced as :func:`cost.priced` prices a long one (its kernel by
:func:`cost.kernel_seconds`, not ticket by ticket): kernel shape, grid (the wide choice
included), host and GPU seconds. On its runs its work is exact but for padding: sorted, a
warp's subjects are about as long as its first, so the padding to the first and the idle
share of a block's longest are left out. Its falling phase (the end of each unit's sweep of a
subject, the latest of them) is taken over cells of runs within 2% of each other's lengths
(the formula's pieces), each as its last subject swept at its longest length: within 2% of
the largest end, never below it.
"""

from __future__ import annotations

import numpy as np

from ...calibration import Model
from .cost import (
    Priced,
    Sweeps,
    fastest,
    grids,
    host_seconds,
    kernel_seconds,
    pass_cells,
    shape_rate,
    side_seconds,
)
from .lines import cell_of
from .shapes import PASS_CELLS, plans


class Runs:
    """Lengths sorted longest first as runs (length, count): a position's run, the sum of
    the lengths before a position, and the runs in cells of lengths within 2% of each other
    (``lines.cell_of``; each run's cell, each cell's first and last run)."""

    def __init__(self, runs: np.ndarray) -> None:
        runs = np.asarray(runs, np.int64).reshape(-1, 2)
        self.lengths = runs[:, 0]
        self.starts = np.concatenate(([0], np.cumsum(runs[:, 1])))
        self.sums = np.concatenate(([0], np.cumsum(runs[:, 0] * runs[:, 1])))
        cell = cell_of(self.lengths)
        self.last = np.flatnonzero(np.diff(cell, append=-1))
        self.first = np.concatenate(([0], self.last[:-1] + 1))
        self.cell = np.repeat(np.arange(self.last.size), self.last - self.first + 1)

    def run(self, p: np.ndarray) -> np.ndarray:
        """The run of each position (the last run for the end)."""
        return np.minimum(np.searchsorted(self.starts, p, side="right") - 1,
                          self.lengths.size - 1)

    def total(self, p: np.ndarray, run: np.ndarray) -> np.ndarray:
        """The lengths before each position ``p`` of run ``run`` (or at its end)."""
        return self.sums[run] + (p - self.starts[run]) * self.lengths[run]


def priced(model: Model, unit_m: np.ndarray, launches: list[tuple[np.ndarray, int, int]],
           runs: Runs, alphabet: int, packed: bool, wide: bool = False) -> list[Priced]:
    """Each launch's pricing (see :func:`cost.priced`): ``launches`` are (units, indices
    into ``unit_m``; the range start, stop of the sorted positions of its subjects), of
    subjects of the lengths ``runs``."""
    if not launches:
        return []
    units = np.array([q.size for q, _, _ in launches])
    rows = unit_m[np.concatenate([q for q, _, _ in launches])].astype(np.int64)
    first = np.cumsum(units) - units  # each launch's first unit in rows
    start = np.array([a for _, a, _ in launches], np.int64)
    stop = np.array([b for _, _, b in launches], np.int64)
    count = stop - start
    r0, r1 = runs.run(start), runs.run(stop - 1)
    residues = (runs.total(stop, r1) - runs.total(start, r0)).astype(np.float64)
    longest = runs.lengths[r0]
    g, r, passes = plans(np.maximum.reduceat(rows, first), residues / count, alphabet,
                         shape_rate(model, packed, units[:, None], count[:, None],
                                    longest[:, None]))
    t = g * r
    unit_passes = np.maximum(-(-rows // np.repeat(t, units)), 1)
    host = host_seconds(model, units, count, np.add.reduceat(unit_passes, first) * t * alphabet)
    weighed = grids(model, g, units, count, passes, longest, wide)
    # each launch's pieces: its cells of runs, each swept last at its longest length
    on, place = _spread(runs.cell[r1] - runs.cell[r0] + 1)
    k = runs.cell[r0][on] + place  # the cell of each
    last = np.minimum(runs.last[k], r1[on])
    end = np.minimum(stop[on], runs.starts[last + 1])
    one = pass_cells(runs.lengths[np.maximum(runs.first[k], r0[on])], g[on], t[on])
    before = _swept(runs.total(end, last) - runs.total(start[on], r0[on]), end - start[on],
                    g[on], t[on]) - one
    # each launch on each grid it weighs
    col, row = np.nonzero(weighed)
    kernel = np.full(weighed.shape, np.inf)
    pieces = np.bincount(on, minlength=units.size)
    at = _segments(pieces, row)
    kernel[col, row] = kernel_seconds(
        model, packed, Sweeps(g[row], r[row], weighed[col, row], count[row], units[row],
                              _swept(residues, count, g, t)[row], pieces[row]),
        unit_passes[_segments(units, row)], before[at], one[at])
    pick = fastest(weighed, kernel)
    every = np.arange(units.size)
    gpu = side_seconds(model, units, count) + kernel[pick, every]
    shapes = np.stack([g, r, passes], axis=1).tolist()
    return [Priced(h, x, tuple(shape), b) for h, x, shape, b in zip(
        host.tolist(), gpu.tolist(), shapes, weighed[pick, every].tolist(), strict=True)]


def _swept(residues: np.ndarray, count: np.ndarray, g: np.ndarray, t: np.ndarray
           ) -> np.ndarray:
    """The lane-cells of a pass of T = G*R rows over ``count`` subjects of ``residues``
    residues in all (``cost.pass_cells`` of each, summed)."""
    return (t + PASS_CELLS) * residues + t * (g - 1.0) * count


def _segments(counts: np.ndarray, row: np.ndarray) -> np.ndarray:
    """The indices of segments ``row`` of consecutive ones of ``counts`` items, in turn."""
    group, place = _spread(counts[row])
    return (np.cumsum(counts) - counts)[row][group] + place


def _spread(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups of ``counts`` items: each item's group, and its place in it."""
    group = np.repeat(np.arange(counts.size), counts)
    return group, np.arange(group.size) - (np.cumsum(counts) - counts)[group]
