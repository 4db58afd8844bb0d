"""Lengths as the partition schedulers cut them (``partition.py``): :class:`Subjects`
(sorted once, with the runs of equal lengths; a database stores its own), the lines of
lengths cut greedily into runs (:class:`SortedLine`: longest first, cut run of equal lengths
by run; :class:`FileOrder`: any order), the caps a memory budget allows a run of a longest
length (:class:`Caps`), and the subject side of a query group (:class:`SubjectLine`)."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import inf

import numpy as np

#: (longest_query, n_queries, longest_subject, n_subjects) -> the bytes of a batch: affine in
#: each count (the other arguments fixed), taking an array of longest subjects (one size each)
#: and marked ``need.affine = True``, as ``shapes.scan_need``: runs are sized in closed form
Need = Callable[[int, int, int, int], int]
Lengths = Sequence[int] | np.ndarray
Fits = Callable[[int, int], bool]  # (longest, count) of a run -> within the budget
Most = Callable[[int], int]  # longest of a run -> the most items within the budget


@dataclass(frozen=True)
class Subjects:
    """Subjects sorted once, longest first: ``order`` their indices in that order (int32,
    ties in index order), ``runs`` the (length, count) of its runs of equal lengths (int64,
    k x 2). A database stores its own (``wavedp.db``), so a scan schedules it without
    sorting; a launch's subjects are slices of ``order``, not copies."""

    order: np.ndarray
    runs: np.ndarray

    @classmethod
    def of(cls, lengths: Lengths) -> Subjects:
        """Every index of ``lengths``, sorted."""
        values = as_lengths(lengths)
        order = longest_first(values).astype(np.int32)
        return cls(order, runs_of(values[order]))

    def within(self, start: int, stop: int, lengths: np.ndarray) -> Subjects:
        """Those of indices ``start`` to ``stop``, numbered from ``start`` (``lengths``:
        theirs), in this order: a slice of the database sorted without sorting again."""
        if start == 0 and stop == self.order.size:
            return self
        shifted = self.order.astype(np.int32, copy=False) - np.int32(start)
        order = shifted[shifted.view(np.uint32) < stop - start]  # below start: wrapped
        return Subjects(order, runs_of(lengths[order]))

    @property
    def n(self) -> int:
        return int(self.order.size)

    def split(self, threshold: int | None) -> list[Subjects]:
        """Those longer than ``threshold`` (default: twice the median), then the rest; empty
        parts left out."""
        lengths, counts = self.runs[:, 0], self.runs[:, 1]
        if threshold is None:
            threshold = int(2 * _median(lengths, counts)) if self.n else 0
        k = int(np.count_nonzero(lengths > threshold))  # runs longest first
        cut = int(counts[:k].sum())
        parts = (Subjects(self.order[:cut], self.runs[:k]),
                 Subjects(self.order[cut:], self.runs[k:]))
        return [part for part in parts if part.n]


def runs_of(values: np.ndarray) -> np.ndarray:
    """The (length, count) runs of equal neighbours of ``values`` (int64, k x 2)."""
    values = np.asarray(values)
    starts = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = np.concatenate(([0], starts)) if values.size else starts
    counts = np.diff(np.append(starts, values.size))
    return np.stack([values[starts], counts], 1).astype(np.int64).reshape(-1, 2)


def _median(lengths: np.ndarray, counts: np.ndarray) -> float:
    """NumPy's median of ``lengths`` repeated ``counts`` times."""
    ends = np.cumsum(counts[::-1])  # ascending
    up = lengths[::-1]
    n = int(ends[-1])
    low, high = up[np.searchsorted(ends, (n - 1) // 2, side="right")], \
        up[np.searchsorted(ends, n // 2, side="right")]
    return (float(low) + float(high)) / 2


def as_lengths(values: Lengths) -> np.ndarray:
    """Lengths as a 1-D int64 array (a ValueError for negative ones)."""
    out = np.asarray(values, dtype=np.int64).reshape(-1)
    if out.size and out.min() < 0:
        raise ValueError(f"lengths must be >= 0, got {int(out.min())}")
    return out


def longest_first(lengths: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """``idx`` (default: every index) by length descending, ties in file order."""
    key = lengths if idx is None else lengths[idx]
    if key.size and int(key.max()) - int(key.min()) < 1 << 16:
        key = (key.max() - key).astype(np.uint16)  # sorted by radix sort
    else:
        key = -key
    order = np.argsort(key, kind="stable")
    return order if idx is None else idx[order]


def subject_fits(need: Need, budget: int, longest_query: int, n_queries: int) -> Fits:
    """Whether a subject batch of (longest, count) fits beside a query group."""
    return lambda longest, n: need(longest_query, n_queries, longest, n) <= budget


def check_need(need: Need) -> Need:
    """``need`` when it is marked affine (:data:`Need`), else a TypeError."""
    if not getattr(need, "affine", False):
        raise TypeError("a partition's need must be affine in the counts and say so "
                        f"(need.affine = True), got {need!r}")
    return need


def _subject_most(need: Need, budget: int, longest_query: int, n_queries: int) -> Most:
    """The largest subject batch of a longest (or of each of an array of them) beside a
    query group."""
    return closed_form(budget, lambda longest, n: need(longest_query, n_queries, longest, n))


def closed_form(budget: int, size: Callable[[int, int], int]) -> Most:
    """The most items of a run of a longest, ``size(longest, n)`` (affine in n) within
    ``budget``."""
    return lambda longest: _most(lambda n: size(longest, n), budget)


def _most(size: Callable[[int], int], budget: int):
    """The most items n with ``size(n)`` (affine in n) within ``budget``: 0 if not one; a
    size that does not grow with n holds any number (2**62). Sizes of an array of runs give
    an array."""
    base = size(0)
    step = size(1) - base
    if not isinstance(base, np.ndarray) and not isinstance(step, np.ndarray):
        if base + step > budget:
            return 0
        return int((budget - base) // step) if step > 0 else 1 << 62
    return np.where(base + step > budget, 0,
                    np.where(step > 0, (budget - base) // np.maximum(step, 1), 1 << 62))


class Caps:
    """The most items, up to ``limit``, that a run padded to a given longest length holds
    within the budget (0 if not one), in closed form (``most``), memoized."""

    def __init__(self, most: Most, limit: int) -> None:
        self.most, self.limit = most, limit
        self.known: dict[int, int] = {}

    def __call__(self, longest: int) -> int:
        cap = self.known.get(longest)
        if cap is None:
            cap = self.known[longest] = min(self.most(longest), self.limit)
        return cap

    def holds(self, longest: int, count: int) -> bool:
        """Whether the cap at ``longest`` is at least ``count``."""
        return count <= self(longest)


class Line(ABC):
    """Lengths in run order, cut greedily into runs (bounds 0, ..., n): a run takes, from its
    start, the most that fit padded to their longest (at least one)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values, self.n = values, values.size

    def longest(self, start: int, stop: int) -> int:
        return int(self.values[start:stop].max())

    @abstractmethod
    def take(self, start: int, caps: Caps) -> int:
        """How many the run at ``start`` takes, with ``caps`` for the budget."""

    def cuts(self, caps: Caps, bound: float = inf) -> list[int] | None:
        """The greedy bounds with ``caps`` for the budget; None once more than ``bound`` runs
        would be needed."""
        cuts = [0]
        while cuts[-1] < self.n:
            if len(cuts) > bound:
                return None
            cuts.append(cuts[-1] + self.take(cuts[-1], caps))
        return cuts

    @abstractmethod
    def part(self, index: np.ndarray, start: int, stop: int) -> np.ndarray:
        """``index`` (aligned with the values) from ``start`` to ``stop``, longest first, ties
        in run order."""


class FileOrder(Line):
    """Lengths in any order: a run is padded to its longest so far. Its end is searched among
    the next few positions, then block by block (of BLOCK positions) where the longest so far
    grows, then among the positions of the block where it fails."""

    BLOCK = 256

    def __init__(self, values: np.ndarray) -> None:
        super().__init__(values)
        blocks = np.maximum.reduceat(values, np.arange(0, self.n, self.BLOCK))
        self.block_longest, self.longer = memoryview(blocks), memoryview(_next_longer(blocks))
        self.width = 64  # of the positions searched first: twice the last run
        key = values.max() - values
        self.key = key.astype(np.uint16) if key.max() < 1 << 16 else key  # radix sorted
        self.parts: dict[tuple[int, int], np.ndarray] = {}

    def take(self, start: int, caps: Caps) -> int:
        size, n = self.BLOCK, self.n
        stop = min(n, -(-(start + self.width) // size) * size)
        end, top = self._end(start, start, stop, 0, caps)
        if end is None and stop < n:
            end = self._blocks(start, stop // size, top, caps)
        taken = (n if end is None else end) - start
        self.width = min(2 * taken, 1 << 14)
        return taken

    def _blocks(self, start: int, k: int, top: int, caps: Caps) -> int | None:
        """Where the run from ``start`` ends in blocks k on, ``top`` the longest before them
        (None if it takes them all)."""
        size, n, longest, longer = self.BLOCK, self.n, self.block_longest, self.longer
        first, before = k, top  # blocks from `first` on hold `top` as the longest so far
        while True:
            after = first
            while after < len(longest) and longest[after] <= top:
                after = longer[after]
            if not caps.holds(top, min(n, after * size) - start):
                # it ends in the first of these blocks whose end it cannot reach
                j = max(first, (start + caps(top)) // size)
                return self._end(start, j * size, min(n, (j + 1) * size),
                                 before if j == first else top, caps)[0]
            if after == len(longest):
                return None
            first, before, top = after, top, longest[after]

    def _end(self, start: int, a: int, b: int, top: int,
             caps: Caps) -> tuple[int | None, int]:
        """Where the run from ``start`` ends in [a, b), ``top`` the longest before a (None if
        it takes all of them), and the longest up to b."""
        tops = np.maximum.accumulate(self.values[a:b])
        if top:
            np.maximum(tops, top, out=tops)
        rises = [0, *((tops[1:] != tops[:-1]).nonzero()[0] + 1).tolist()]
        for rise, stop, longest in zip(rises, [*rises[1:], b - a], tops[rises].tolist(),
                                       strict=True):
            # runs to a + rise + 1, ..., a + stop hold `longest`
            if not caps.holds(longest, a + stop - start):
                return max(start + 1, a + rise, start + caps(longest)), int(tops[-1])
        return None, int(tops[-1])

    def part(self, index: np.ndarray, start: int, stop: int) -> np.ndarray:
        """Memoized: the groups of queries often cut alike."""
        part = self.parts.get((start, stop))
        if part is None:
            order = np.argsort(self.key[start:stop], kind="stable")
            part = self.parts[start, stop] = index[start:stop][order]
        return part


def _next_longer(values: np.ndarray) -> np.ndarray:
    """For each position, the next one holding a longer length (values.size if none): pointer
    jumping, each unresolved position taking its candidate's candidate, as all lengths between
    a position and its candidate are no longer than it."""
    n = values.size
    nxt = np.arange(1, n + 2)
    nxt[n] = n
    longest = np.append(values, np.iinfo(values.dtype).max)  # n: longer than any
    todo = np.arange(n)
    while todo.size:
        todo = todo[longest[nxt[todo]] <= values[todo]]
        nxt[todo] = nxt[nxt[todo]]
    return nxt[:n]


class SortedLine(Line):
    """Lengths longest first, as runs of equal ones: a run is padded to its first, and closes
    before a length below ``share`` times it. Runs that start inside a run of equal lengths
    all take alike, so they are counted, not searched, one by one."""

    def __init__(self, runs: np.ndarray, share: float, values: np.ndarray | None = None
                 ) -> None:
        """``runs``: (length, count) longest first; ``values`` the lengths themselves where
        kept (a query line's groups read them)."""
        lengths, counts = runs[:, 0], runs[:, 1]
        bounds = np.concatenate(([0], np.cumsum(counts)))
        self.values, self.n = values, int(bounds[-1])
        least = np.ceil(share * lengths).astype(np.int64)  # integer lengths >= share * length
        self.lengths, self.starts = memoryview(lengths), memoryview(bounds)
        self.ends = memoryview(bounds[np.searchsorted(-lengths, -least, side="right")])

    @functools.cached_property
    def cells(self) -> tuple[list[int], np.ndarray]:
        """Cells of runs whose lengths + 1 lie within 2% of each other: each cell's shortest
        length, and how many items it holds."""
        lengths, bounds = np.asarray(self.lengths), np.asarray(self.starts)
        last = np.flatnonzero(np.diff(cell_of(lengths), append=-1))  # each cell's last run
        return lengths[last].tolist(), np.diff(bounds[last + 1], prepend=0)

    def longest(self, start: int, stop: int) -> int:
        return self.at(start)

    def at(self, p: int) -> int:
        """The length at position ``p``."""
        return self.lengths[bisect_right(self.starts, p) - 1]

    def take(self, start: int, caps: Caps) -> int:
        r = bisect_right(self.starts, start) - 1
        return max(1, min(caps(self.lengths[r]), self.ends[r] - start))

    def cuts(self, caps: Caps, bound: float = inf) -> list[int] | None:
        lengths, starts, ends = self.lengths, self.starts, self.ends
        cuts = [0]
        p = r = 0
        while p < self.n:
            r = bisect_right(starts, p, r) - 1
            step, stop = max(1, caps(lengths[r])), ends[r]
            if p + step < stop:  # runs of `step` from p while they start in run r
                last = p + (starts[r + 1] - 1 - p) // step * step
                cuts.extend(range(p + step, last + 1, step))
                stop = min(last + step, stop)
            cuts.append(stop)
            if len(cuts) > bound + 1:
                return None
            p = stop
        return cuts

    def fewest(self, sizes: np.ndarray, caps: np.ndarray) -> float:
        """A lower bound on the number of runs, from cells of ``sizes`` items and an upper
        bound on the cap at each one's shortest length: a run padded to L holds at most cap(L)
        items, and cap(L) <= cap(l) for each length l <= L it holds, so its items' 1 / cap(l)
        sum to at most one."""
        return float(np.dot(sizes, 1 / np.maximum(caps, 1)))

    def part(self, index: np.ndarray, start: int, stop: int) -> np.ndarray:
        return index[start:stop]  # a view: longest first already

    def join(self, cuts: list[int], fits: Fits, share: float) -> list[int]:
        """dynamic2's joining: a run that the share rule started joins the run before it when
        the joined run fits and keeps (1 + share) / 2 of its padded length real."""
        if len(cuts) < 3:
            return cuts
        lengths, starts = np.asarray(self.lengths), np.asarray(self.starts)
        p = np.asarray(cuts)
        r = np.minimum(np.searchsorted(starts, p, side="right") - 1, lengths.size - 1)
        before = np.concatenate(([0], np.cumsum(lengths * np.diff(starts))))
        at = lengths[r].tolist()  # the length at each cut, and the lengths before it
        total = (before[r] + (p - starts[r]) * lengths[r]).tolist()
        kept = [0, 1]  # the cuts kept (indices)
        for k in range(2, len(cuts)):
            first = kept[-2]
            size = cuts[k] - cuts[first]
            if (at[k - 1] < share * at[k - 2] and fits(at[first], size)
                    and total[k] - total[first] >= (1 + share) / 2 * at[first] * size):
                kept[-1] = k
            else:
                kept.append(k)
        return [cuts[k] for k in kept]


def cell_of(lengths: np.ndarray) -> np.ndarray:
    """Each length's cell: lengths + 1 within 2% of each other share one."""
    return np.floor(np.log1p(lengths) / np.log(1.02))


def line_of(values: np.ndarray, share: float) -> FileOrder | SortedLine:
    """``values`` as a :class:`SortedLine` line when longest first (where a run's longest so far
    is its first), else as a :class:`FileOrder` one."""
    if np.all(values[1:] <= values[:-1]):
        return SortedLine(runs_of(values), share, values)
    return FileOrder(values)


class SubjectLine:
    """Subjects ``index`` (in run order) of lengths ``lengths[index]``, and their greedy cuts
    beside query groups of each (longest, count), memoized."""

    def __init__(self, index: np.ndarray, line: Line, budget: int, need: Need,
                 at: int | None = None) -> None:
        """``at``: where ``index`` starts in the whole sorted order (None: not a range of
        it); ``need`` affine (:data:`Need`; else a TypeError)."""
        self.index, self.line, self.at = index, line, at
        self.need, self.budget = check_need(need), budget
        self.known: dict[tuple[int, int], tuple[list[int] | None, float]] = {}
        self.caps: dict[tuple[int, int], Caps] = {}

    @classmethod
    def sorted(cls, subjects: Subjects, budget: int, need: Need, share: float | None = None,
               at: int = 0) -> SubjectLine:
        """``subjects`` in their order (longest first), from position ``at`` of the whole
        sorted order."""
        return cls(subjects.order, SortedLine(subjects.runs, share or 0.0), budget, need, at)

    def cuts(self, longest: int, count: int, bound: float = inf) -> list[int] | None:
        """The cuts, or None when more than ``bound`` runs: on a longest-first line that is
        seen first, where it can be, from a lower bound on their number."""
        cuts, tried = self.known.get((longest, count), (None, -1))
        if cuts is not None:
            return cuts if len(cuts) - 1 <= bound else None
        if bound <= tried:
            return None
        line = self.line
        if bound < inf and count > 1 and isinstance(line, SortedLine) and \
                self._fewest(line, longest, count) > bound * (1 + 1e-9):
            cuts = None
        else:
            cuts = line.cuts(self._caps(longest, count), bound)
        self.known[longest, count] = cuts, bound
        return cuts

    def parts(self, cuts: list[int]) -> list[tuple[np.ndarray, int | None, int | None]]:
        """The subjects cut at ``cuts``, each part longest first (ties in run order), with
        its start and stop in the whole sorted order (None, None where not a range of it)."""
        at = self.at
        return [(self.line.part(self.index, a, b), *((None, None) if at is None
                                                     else (at + a, at + b)))
                for a, b in zip(cuts[:-1], cuts[1:], strict=True)]

    def _caps(self, longest: int, count: int) -> Caps:
        """The caps beside ``count`` queries up to ``longest``."""
        key = longest, count
        if key not in self.caps:
            self.caps[key] = Caps(_subject_most(self.need, self.budget, longest, count),
                                  self.line.n)
        return self.caps[key]

    def _fewest(self, line: SortedLine, longest: int, count: int) -> float:
        """:meth:`SortedLine.fewest` of the ``line``'s cells beside ``count`` queries up to
        ``longest``, the caps at the cells' lengths all at once."""
        lengths, sizes = line.cells
        runs = np.asarray(lengths)
        caps = np.minimum(self._caps(longest, count).most(runs), line.n)
        return line.fewest(sizes, np.broadcast_to(caps, runs.shape))
