"""The cost model (``cost.py``) of many launches at once, each a range of the subjects sorted
longest first, priced on the histogram of its lengths (the runs of equal lengths a database
stores, :class:`Runs`) rather than on its subjects: what pricing a plan costs does not grow
with the database.

A launch is priced as :func:`cost.priced` prices a long one (its kernel by the formula of
``cost._kernel``, not ticket by ticket): kernel shape, grid (the wide choice included), host
and GPU seconds. On its runs its work is exact but for padding: sorted, a warp's subjects are
about as long as its first, so the padding to the first and the idle share of a block's
longest are left out. Its falling phase (the end of each unit's sweep of a subject, the
latest of them) is taken over cells of runs within 2% of each other's lengths, each as its
last subject swept at its longest length: within 2% of the largest end, never below it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...calibration import Model
from .cost import (
    WIDE_LEAST,
    WIDE_TICKETS,
    Priced,
    _later,
    _shape_index,
    _shape_table,
    fills,
    host_fixed,
    side_seconds,
)
from .lines import cell_of
from .shapes import BLOCK, PASS_CELLS, _admissible, launch_blocks


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


class _Launches(NamedTuple):
    """Launches as arrays, one element each: their units (how many, the first's place in
    ``unit_passes``), their ranges (start, stop; their first and last runs), residues and
    kernel shapes (G, R); and each unit's passes."""

    units: np.ndarray
    first: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    r0: np.ndarray
    r1: np.ndarray
    residues: np.ndarray
    g: np.ndarray
    r: np.ndarray
    unit_passes: np.ndarray


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
    g, r, passes = _shapes(model, np.maximum.reduceat(rows, first), residues / count,
                           alphabet, packed, units, count, longest)
    t = g * r
    unit_passes = np.maximum(-(-rows // np.repeat(t, units)), 1)
    host = (host_fixed(model, units, count)
            + model.profile * (np.add.reduceat(unit_passes, first) * t * alphabet))
    grids = _grids(model, g, units, count, passes, longest, wide)
    row, col = np.nonzero(grids)
    blocks = grids[row, col]
    kernel = _kernels(model, packed, _Launches(units, first, start, stop, r0, r1, residues, g,
                                               r, unit_passes), runs, row, blocks)
    # each launch's grid: the fastest (the first of equals), its own where the wide choice's
    # alternatives are not worth pricing
    own = np.flatnonzero(col == 0)
    weighed = np.diff(np.append(own, row.size))
    fastest = np.flatnonzero(kernel == np.repeat(np.minimum.reduceat(kernel, own), weighed))
    pick = np.where((weighed > 2) & (kernel[own] < WIDE_LEAST), own,
                    fastest[np.searchsorted(fastest, own)])
    gpu = side_seconds(model, units, count) + kernel[pick]
    shapes = np.stack([g, r, passes], axis=1).tolist()
    return [Priced(h, x, tuple(shape), b) for h, x, shape, b in zip(
        host.tolist(), gpu.tolist(), shapes, blocks[pick].tolist(), strict=True)]


def _shapes(model: Model, m: np.ndarray, columns: np.ndarray, alphabet: int, packed: bool,
            units: np.ndarray, count: np.ndarray, longest: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(G, R, passes) of each launch, as ``shapes.plan`` weighs them with
    ``cost.shape_rate`` (its units' longest ``m`` rows, subjects of ``columns`` residues on
    average)."""
    gs, rs = _admissible(alphabet)
    t = gs * rs
    passes = -(-np.maximum(m, 1)[:, None] // t)
    cells = passes * (t * (columns[:, None] + gs - 1) + PASS_CELLS * columns[:, None])
    full, single = _shape_table(model, packed)
    shape = _shape_index(gs, rs)
    blocks = launch_blocks(gs, units[:, None], count[:, None], passes, longest[:, None],
                           model.sms or 132, model.grid_cap)
    time = cells / np.minimum(full[shape] * fills(model, packed, shape, blocks),
                              (units * count)[:, None] * single[shape])
    best = np.argmax(np.where(time == time.min(axis=1, keepdims=True), rs, -1), axis=1)
    return gs[best], rs[best], passes[np.arange(best.size), best]


def _grids(model: Model, g: np.ndarray, units: np.ndarray, count: np.ndarray,
           passes: np.ndarray, longest: np.ndarray, wide: bool) -> np.ndarray:
    """The grids ``cost.launch_grid`` weighs for each launch (a row each: its own first,
    then up to two others; 0 for none)."""
    sms = model.sms or 132
    own = launch_blocks(g, units, count, passes, longest, sms, model.grid_cap)
    alone = np.full(own.shape, model.grid_cap is not None) | (own <= sms)
    below = -(-own // sms) - 1
    tickets = -(-count // (BLOCK // g)) * units
    wider = ~alone & wide & (passes > 1) & (tickets <= WIDE_TICKETS * own)
    second = np.where(wider, below * sms, np.where(~alone & (own < 2 * sms), sms, 0))
    third = np.where(wider & (below > 1), (below - 1) * sms, 0)
    return np.stack([own, second, third], axis=1)


def _kernels(model: Model, packed: bool, launches: _Launches, runs: Runs, row: np.ndarray,
             blocks: np.ndarray) -> np.ndarray:
    """The kernel's seconds of launch ``row`` on ``blocks`` (arrays, a grid each), as
    ``cost._kernel`` times a long launch, on the runs of its range."""
    units, first, start, stop, r0, r1, residues, g, r, unit_passes = launches
    t, count = g * r, stop - start
    full, single = _shape_table(model, packed)
    index = _shape_index(g, r)
    per_profile = (t + PASS_CELLS) * residues + t * (g - 1.0) * count
    passes = np.add.reduceat(unit_passes, first).astype(np.float64)
    ticket = per_profile / count * passes / units
    rate = full[index][row] * fills(model, packed, index[row], blocks, ticket[row])
    total = passes[row] * per_profile[row] / rate
    lead = total * np.minimum(1.0, blocks / (-(-count // (BLOCK // g)) * units)[row])
    ahead = np.cumsum(unit_passes) - unit_passes
    ahead -= np.repeat(ahead[first], units)  # the passes of a launch's units before each
    later = np.array([_later(model, x) for x in g.tolist()])
    # of a launch's units of as many passes, the last to start ends last: the others left out
    ending = np.zeros(unit_passes.size, bool)
    ending[first + units - 1] = True
    kept = np.flatnonzero(ending | (unit_passes != np.append(unit_passes[1:], 0)))
    many = np.bincount(np.repeat(np.arange(units.size), units)[kept], minlength=units.size)
    # each (grid, unit kept, cell of runs) of each row's launch: the unit's sweep of the
    # cell's last subject ends last of the cell's
    pair, place = _spread(many[row])
    unit_of = kept[(np.cumsum(many) - many)[row][pair] + place]
    cells = (runs.cell[r1] - runs.cell[r0] + 1)[row]
    item, place = _spread(cells[pair])
    on = row[pair][item]  # the launch of each
    k = runs.cell[r0][on] + place  # and its cell
    last = np.minimum(runs.last[k], r1[on])
    end = np.minimum(stop[on], runs.starts[last + 1])
    length = runs.lengths[np.maximum(runs.first[k], r0[on])]  # its longest
    one = t[on] * (length + g[on] - 1.0) + PASS_CELLS * length  # a pass of it
    done = ((t[on] + PASS_CELLS) * (runs.total(end, last) - runs.total(start[on], r0[on]))
            + t[on] * (g[on] - 1.0) * (end - start[on]))
    p, speed = unit_passes[unit_of][item], rate[pair][item]
    ends = (np.maximum(0.0, (ahead[unit_of][item] * per_profile[on] + p * (done - one)) / speed
                       - lead[pair][item])
            + (1 + (p - 1) * later[on]) * one / single[index[on]])
    size = many[row] * cells
    return np.maximum(total, np.maximum.reduceat(ends, np.cumsum(size) - size))


def _spread(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For groups of ``counts`` items: each item's group, and its place in it."""
    group = np.repeat(np.arange(counts.size), counts)
    return group, np.arange(group.size) - (np.cumsum(counts) - counts)[group]
