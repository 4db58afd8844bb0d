"""Length partitioning: which queries and subjects share a GPU batch (PaSWAS, Timal 2015).

A batch is a cartesian product, some queries x some subjects, computed together and padded to
its longest query and longest subject; ``need(longest_query, n_queries, longest_subject,
n_subjects)`` gives the bytes such a batch takes on the device and must not decrease when any
argument grows. Every scheduler covers each (query, subject) pair exactly once, lists each
batch's sequences longest first and keeps every batch within ``budget`` bytes, except a single
query x single subject that alone needs more: it still gets a batch of its own, which the
engine must check and handle itself (the thesis's run script skips such runs).

The grid is cut in the order of the thesis's partitioner (PaSWAS ``partitioner/
partitioner_alg_threshold.c``: greedy on sequences, then greedy on targets): the queries are cut
into groups, then each group's subjects into batches, a batch growing while it fits beside the
group. Its ``parameters()`` sizes a group by the fewest runs, counting every target at the
longest one; on skewed sets that makes one-query groups, each with wide, padded subject
batches, look as good as larger ones. Here a group takes, of 1, 2, 4, ... up to the most
queries that fit beside one subject of the longest, the size whose batches, its subjects cut
as they will be, hold the most query rows each (ties to the smaller): the fewest batches per
unit of work, and with a memory that grows with the padded cells, as PaSWAS's does, the least
padding. pyPaSWAS cuts the other way round (target blocks, then queries) but sizes and pads
its runs the same way: sequences sorted longest first (``Readers.sort_records``), a run sized
by its first, longest sequence and padded to it (``SmithWaterman._get_max_number_sequences``,
``set_targets``).

- ``none``: no length partitioning: file order, each group or batch padded to its longest so
  far. (The thesis's ``no_partitioner.c`` pads every run to the longest of the whole set.)
- ``static`` (Algorithm 10): on each side the sequences longer than a threshold are separated
  from the rest, and each of the up to four blocks is cut as by ``dynamic1``.
- ``dynamic1`` (Algorithm 11): longest first, each group and batch sized and padded by its
  first, longest sequence: ``partitioner_alg_threshold.c`` at threshold 0 (wavedp compiles no
  kernel per configuration, so nothing is gained by reusing one padded to a longer length).
- ``dynamic2`` (Algorithms 12-13): ``dynamic1`` whose groups and batches also close before a
  sequence shorter than ``share`` times their longest, and whose tiny trailing batches join
  their neighbour (tiny: the joined one fits and keeps (1 + share) / 2 of its padded length
  real). The thesis's coarsening threshold t starts a new configuration once a
  shorter sequence lets more than (1 + t) times as many alignments run in parallel; for a
  memory linear in each length that is a length below 1 / (1 + t) of the configuration's
  longest, so ``share = 1 / (1 + t)`` draws the same length classes
  (``partitioner_alg2_threshold.c`` picks its staircase of runs by that parallelism rule too).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import inf

import numpy as np

from ....errors import InputError

Need = Callable[[int, int, int, int], int]
Lengths = Sequence[int] | np.ndarray
Fits = Callable[[int, int], bool]  # (longest, count) of a run -> within the budget
Most = Callable[[int], int]  # longest of a run -> the most items within the budget

PARTITIONS: tuple[str, ...] = ("none", "static", "dynamic1", "dynamic2", "auto")


@dataclass(frozen=True)
class Batch:
    """Queries x subjects computed together, as int64 indices into the lengths given,
    longest first."""

    queries: np.ndarray
    subjects: np.ndarray


def paswas_need(cell_bytes: int = 4) -> Need:
    """PaSWAS's memory model: every pair keeps its whole matrix, padded to the batch's longest
    query and subject, ``cell_bytes`` per cell (row and column 0 included)."""

    def need(longest_query: int, n_queries: int, longest_subject: int, n_subjects: int) -> int:
        return (int(n_queries) * int(n_subjects) * (int(longest_query) + 1)
                * (int(longest_subject) + 1) * cell_bytes)

    return need


def none(queries: Lengths, subjects: Lengths, budget: int, need: Need) -> list[Batch]:
    """No length partitioning: groups and batches in file order."""
    ql, sl = _lengths(queries), _lengths(subjects)
    return _grid(np.arange(ql.size), ql, _Subjects(np.arange(sl.size), sl, budget, need))


def static(queries: Lengths, subjects: Lengths, budget: int, need: Need,
           threshold: int | None = None) -> list[Batch]:
    """Algorithm 10: the sequences longer than ``threshold`` apart from the rest on each side,
    each block cut as by :func:`dynamic1`.

    The default threshold is twice the median length, each side its own: a sequence longer than
    that would more than double the padded length of a batch of typical sequences, while a side
    without such outliers stays whole.
    """
    if threshold is not None and threshold < 0:
        raise InputError(f"threshold must be >= 0, got {threshold!r}")
    ql, sl = _lengths(queries), _lengths(subjects)
    sides = [_Subjects(si, sl, budget, need) for si in _split(sl, threshold)]
    return [batch for qi in _split(ql, threshold) for side in sides
            for batch in _grid(qi, ql, side)]


def dynamic1(queries: Lengths, subjects: Lengths, budget: int, need: Need) -> list[Batch]:
    """Algorithm 11: longest first; groups sized as the module docstring says, batches as
    large as the budget allows at their first, longest subject."""
    ql, sl = _lengths(queries), _lengths(subjects)
    return _grid(_longest_first(ql), ql, _Subjects(_longest_first(sl), sl, budget, need))


def dynamic2(queries: Lengths, subjects: Lengths, budget: int, need: Need,
             share: float = 0.5) -> list[Batch]:
    """Algorithms 12-13: :func:`dynamic1`, but a group or batch also closes before a sequence
    shorter than ``share`` times its longest. A tiny one that this rule started joins the one
    before it when the joined one fits the budget and keeps (1 + share) / 2 of its padded
    length real (what lengths spread evenly over [share, 1] times the longest keep).

    The lengths of every group, and of every batch, sum to at least ``share`` times their count
    times their longest.
    """
    if not 0 <= share <= 1:
        raise InputError(f"share must be between 0 and 1, got {share!r}")
    ql, sl = _lengths(queries), _lengths(subjects)
    side = _Subjects(_longest_first(sl), sl, budget, need, share)
    return _grid(_longest_first(ql), ql, side, share)


SCHEDULERS: dict[str, Callable[..., list[Batch]]] = {
    "none": none, "static": static, "dynamic1": dynamic1, "dynamic2": dynamic2,
}


def check_partition(name: object) -> str:
    """``name`` when it is one of PARTITIONS, else an InputError."""
    if isinstance(name, str) and name in PARTITIONS:
        return name
    raise InputError(f"partition must be one of {', '.join(PARTITIONS)}, got {name!r}")


def partition(name: str, queries: Lengths, subjects: Lengths, budget: int, need: Need,
              **params) -> list[Batch]:
    """The batches of scheduler ``name`` (``params`` go to it); ``auto`` must have been
    resolved by the performance predictor before."""
    if check_partition(name) == "auto":
        raise ValueError("partition 'auto' is resolved by the performance predictor; "
                         "pass the partition it chose")
    return SCHEDULERS[name](queries, subjects, budget, need, **params)


def padding(batches: Sequence[Batch], queries: Lengths, subjects: Lengths) -> tuple[int, int]:
    """(real cells, padded cells) of ``batches``: the sum of q*s over their pairs, and of
    n_q*n_s*longest_q*longest_s over the batches."""
    ql, sl = _lengths(queries), _lengths(subjects)
    real = padded = 0
    for b in batches:
        q, s = ql[b.queries], sl[b.subjects]
        real += int(q.sum()) * int(s.sum())
        padded += q.size * s.size * int(q.max()) * int(s.max())
    return real, padded


def check(batches: Sequence[Batch], n_queries: int, n_subjects: int) -> None:
    """A ValueError unless ``batches`` cover every (query, subject) pair exactly once."""
    queries = [np.asarray(b.queries) for b in batches]
    subjects = [np.asarray(b.subjects) for b in batches]
    bad_queries = _invalid(queries, n_queries)
    in_batches: list[list[int]] = [[] for _ in range(n_queries)]
    missed: dict[tuple[int, ...], tuple[int, int] | bool | None] = {}  # per set of batches
    if not bad_queries.any():
        for k, q in enumerate(queries):
            for i in q.tolist():
                in_batches[i].append(k)
        by_stretches: dict[tuple[tuple[int, int, int], ...], tuple[int, int] | bool | None] = {}
        for ks in map(tuple, in_batches):
            if ks not in missed:
                missed[ks] = _missed([subjects[k] for k in ks], n_subjects, by_stretches)
    if bad_queries.any() or False in missed.values():
        bad = np.flatnonzero(bad_queries | _invalid(subjects, n_subjects))
        k = int(bad[0])
        name, n = ("queries", n_queries) if bad_queries[k] else ("subjects", n_subjects)
        raise ValueError(f"batch {k}: {name} must be a non-empty 1-D array of indices in "
                         f"[0, {n})")
    for i, ks in enumerate(in_batches):
        miss = missed[tuple(ks)]
        if miss:
            raise ValueError(f"pair (query {i}, subject {miss[0]}) is covered {miss[1]} times")


def _missed(parts: list[np.ndarray], n: int,
            known: dict[tuple[tuple[int, int, int], ...], tuple[int, int] | bool | None]
            ) -> tuple[int, int] | bool | None:
    """The first index in [0, n) that ``parts`` together do not hold once, and how many times
    they do; None if none, False if a part is not a non-empty 1-D array of indices in [0, n).
    ``known`` holds the answers per set of stretches of memory the parts span (views of one
    array that follow each other count as one stretch): the schedulers' query groups share
    their subjects' arrays, so most are looked at once."""
    if any(p.ndim != 1 or p.size == 0 for p in parts):
        return False
    stretches = [_stretch(p) for p in parts]
    owners = {id(owner): owner for owner, _, _ in stretches}
    merged: list[list[int]] = []
    for owner, start, stop in sorted((id(o), a, b) for o, a, b in stretches):
        if merged and merged[-1][0] == owner and merged[-1][2] == start:
            merged[-1][2] = stop
        else:
            merged.append([owner, start, stop])
    key = tuple(map(tuple, merged))
    if key not in known:
        flat = np.concatenate([owners[o][a:b] for o, a, b in merged] or [np.empty(0, int)])
        if flat.size and (flat.min() < 0 or flat.max() >= n):
            known[key] = False
        else:
            times = np.bincount(flat, minlength=n)
            miss = np.flatnonzero(times != 1)
            known[key] = (int(miss[0]), int(times[miss[0]])) if miss.size else None
    return known[key]


def _stretch(part: np.ndarray) -> tuple[np.ndarray, int, int]:
    """``part`` as (array, start, stop): the stretch of the 1-D array it is a contiguous view
    of, else all of itself."""
    owner = part.base
    if (isinstance(owner, np.ndarray) and owner.ndim == 1 and owner.dtype == part.dtype
            and owner.flags.c_contiguous and part.strides == (part.itemsize,)):
        start, off = divmod(part.__array_interface__["data"][0]
                            - owner.__array_interface__["data"][0], part.itemsize)
        if not off and 0 <= start and start + part.size <= owner.size:
            return owner, start, start + part.size
    return part, 0, part.size


def _invalid(arrays: list[np.ndarray], n: int) -> np.ndarray:
    """Whether each of ``arrays`` is not a non-empty 1-D array of indices in [0, n): their
    least and greatest found a few million indices at a time."""
    bad = np.array([a.ndim != 1 or a.size == 0 for a in arrays], dtype=bool)
    chunk: list[int] = []
    size = 0
    for k in [*np.flatnonzero(~bad).tolist(), None]:
        if chunk and (k is None or size >= 1 << 22):
            flat = np.concatenate([arrays[c] for c in chunk])
            at = np.cumsum([0] + [arrays[c].size for c in chunk[:-1]])
            bad[chunk] = (np.minimum.reduceat(flat, at) < 0) | (np.maximum.reduceat(flat, at) >= n)
            chunk, size = [], 0
        if k is not None:
            chunk.append(k)
            size += arrays[k].size
    return bad


def _lengths(values: Lengths) -> np.ndarray:
    """Lengths as a 1-D int64 array (a ValueError for negative ones)."""
    out = np.asarray(values, dtype=np.int64).reshape(-1)
    if out.size and out.min() < 0:
        raise ValueError(f"lengths must be >= 0, got {int(out.min())}")
    return out


def _longest_first(lengths: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """``idx`` (default: every index) by length descending, ties in file order."""
    key = lengths if idx is None else lengths[idx]
    if key.size and int(key.max()) - int(key.min()) < 1 << 16:
        key = (key.max() - key).astype(np.uint16)  # sorted by radix sort
    else:
        key = -key
    order = np.argsort(key, kind="stable")
    return order if idx is None else idx[order]


def _split(lengths: np.ndarray, threshold: int | None) -> list[np.ndarray]:
    """The indices longer than ``threshold`` (default: twice the median), then the rest, each
    longest first; empty parts left out."""
    if threshold is None:
        threshold = int(2 * np.median(lengths)) if lengths.size else 0
    order = _longest_first(lengths)
    cut = int(np.count_nonzero(lengths > threshold))
    return [part for part in (order[:cut], order[cut:]) if part.size]


def _grid(qi: np.ndarray, ql: np.ndarray, subjects: _Subjects,
          share: float | None = None) -> list[Batch]:
    """Batches of queries ``qi`` (indices in run order) x ``subjects``: the query groups
    :func:`_group` sizes, then each group's subjects cut greedily; with ``share``, dynamic2's
    closing and joining rules on both sides."""
    if not qi.size or not subjects.line.n:
        return []
    need, budget = subjects.need, subjects.budget
    queries = _line(ql[qi], share or 0.0)
    longest_subject = subjects.line.longest(0, subjects.line.n)
    fits = _query_fits(need, budget, longest_subject)
    caps = _Caps(fits, queries.n, most=_query_most(need, budget, longest_subject))
    stops = [0]
    while stops[-1] < queries.n:
        stops.append(stops[-1] + _group(queries, stops[-1], caps, subjects))
    if share is not None:
        stops = queries.join(stops, fits, share)
    batches = []
    for start, stop in zip(stops[:-1], stops[1:], strict=True):
        longest, count = queries.longest(start, stop), stop - start
        cuts = subjects.cuts(longest, count)
        if share is not None:
            cuts = subjects.line.join(cuts, _subject_fits(need, budget, longest, count), share)
        group = _longest_first(ql, qi[start:stop])
        batches += [Batch(group, part) for part in subjects.parts(cuts)]
    return batches


def _query_fits(need: Need, budget: int, longest_subject: int) -> Fits:
    """Whether a query group of (longest, count) fits beside one subject of the longest."""
    return lambda longest, n: need(longest, n, longest_subject, 1) <= budget


def _subject_fits(need: Need, budget: int, longest_query: int, n_queries: int) -> Fits:
    """Whether a subject batch of (longest, count) fits beside a query group."""
    return lambda longest, n: need(longest_query, n_queries, longest, n) <= budget


def _query_most(need: Need, budget: int, longest_subject: int) -> Most | None:
    """The largest query group of a longest beside one subject of the longest, where ``need``
    is affine in the counts (else None: searched)."""
    return _closed_form(need, budget, lambda longest, n: need(longest, n, longest_subject, 1))


def _subject_most(need: Need, budget: int, longest_query: int, n_queries: int
                  ) -> Most | None:
    """The largest subject batch of a longest (or of each of an array of them, where ``need``
    takes one) beside a query group, where ``need`` is affine in the counts (else None:
    searched)."""
    return _closed_form(need, budget,
                        lambda longest, n: need(longest_query, n_queries, longest, n))


def _closed_form(need: Need, budget: int, size: Callable[[int, int], int]) -> Most | None:
    """The most items of a run of a longest, ``size(longest, n)`` within ``budget``, where
    ``need`` (which ``size`` calls) is affine in the counts; else None."""
    if not getattr(need, "affine", False):
        return None
    return lambda longest: _most(lambda n: size(longest, n), budget)


def _most(size: Callable[[int], int], budget: int):
    """The most items n with ``size(n)`` (affine in n) within ``budget``: 0 if not one; a
    size that does not grow with n holds any number (2**62). Sizes of an array of runs give
    an array."""
    base = size(0)
    step = size(1) - base
    if np.ndim(base) == 0 and np.ndim(step) == 0:
        if base + step > budget:
            return 0
        return int((budget - base) // step) if step > 0 else 1 << 62
    return np.where(base + step > budget, 0,
                    np.where(step > 0, (budget - base) // np.maximum(step, 1), 1 << 62))


def _group(queries: _Line, start: int, caps: _Caps, subjects: _Subjects) -> int:
    """Size of the query group at ``start`` (module docstring): of 1, 2, 4, ... and the most
    that fit beside one subject of the longest, the one whose batches hold the most query rows
    each; a size is dropped as soon as its subject cuts, or a lower bound on their number,
    show it cannot win."""
    most = queries.take(start, caps)
    top = queries.values[start:start + most]
    rows, longest = np.cumsum(top + 1).tolist(), np.maximum.accumulate(top).tolist()
    size, best = 1, None
    for i in sorted({1 << k for k in range(most.bit_length())} | {most}):
        bound = inf if best is None else (best[0] * rows[i - 1] - 1) // best[1]
        cuts = subjects.cuts(longest[i - 1], i, bound)
        if cuts is not None:
            size, best = i, (len(cuts) - 1, rows[i - 1])
    return size


class _Caps:
    """The most items, up to ``limit``, that a run padded to a given longest length holds
    within the budget (0 if not one), memoized. As ``fits`` cannot turn true when the length
    grows, a new length's cap lies between those of the nearest longer and shorter lengths
    known. The search starts at a guess, gallops away from it, then bisects. The guess is
    where 1 / cap on the line through the two nearest lengths known puts it (right where need
    grows in proportion to the length); but where none lie on either side and ``like`` (caps
    beside a similar query group) knows the cap there and at the nearest length known, it is
    that cap, scaled as at the nearest."""

    def __init__(self, fits: Fits, limit: int, like: _Caps | None = None,
                 most: Most | None = None) -> None:
        self.fits, self.limit, self.like, self.most = fits, limit, like, most
        self.known: dict[int, int] = {}
        self.lengths: list[int] = []  # those known, ascending (searched caps only)

    def __call__(self, longest: int) -> int:
        cap = self.known.get(longest)
        if cap is not None:
            return cap
        if self.most is not None:  # the cap in closed form: no search
            cap = self.known[longest] = min(self.most(longest), self.limit)
            return cap
        lengths, known, fits = self.lengths, self.known, self.fits
        k = bisect_left(lengths, longest)
        good = known[lengths[k]] if k < len(lengths) else 0  # fits (or is 0)
        bad = (known[lengths[k - 1]] if k else self.limit) + 1  # does not fit
        guess, like = good, self.like.known if self.like else {}
        near = lengths[k if k < len(lengths) else k - 1] if lengths else None
        if longest in like and (not lengths or like.get(near)) and not 0 < k < len(lengths):
            guess = like[longest] * known[near] // like[near] if lengths else like[longest]
        elif len(lengths) > 1:
            i = k - 1 if 0 < k < len(lengths) else (0 if k == 0 else k - 2)
            a, b = lengths[i], lengths[i + 1]
            ca, cb = known[a], known[b]
            den = cb * (b - a) + (ca - cb) * (longest - a)
            guess = ca * cb * (b - a) // den if den > 0 else bad - 1
        if guess >= bad:
            guess = bad - 1
        step = 1
        if guess > good and not fits(longest, guess):
            bad = guess
            while bad - step > good and not fits(longest, bad - step):
                bad, step = bad - step, 2 * step
            if bad - step > good:
                good = bad - step
        else:
            if guess > good:
                good = guess
            while good + step < bad and fits(longest, good + step):
                good, step = good + step, 2 * step
            if good + step < bad:
                bad = good + step
        while bad - good > 1:
            mid = (good + bad) // 2
            if fits(longest, mid):
                good = mid
            else:
                bad = mid
        known[longest] = good
        lengths.insert(k, longest)
        return good

    def holds(self, longest: int, count: int) -> bool:
        """Whether the cap at ``longest`` is at least ``count``: told by the caps known where
        they can, else by one need() call."""
        if self.most is not None:
            return count <= self(longest)
        lengths, known = self.lengths, self.known
        k = bisect_left(lengths, longest)
        if k < len(lengths) and known[lengths[k]] >= count:
            return True  # a length at least as long holds as many
        if k and known[lengths[k - 1]] < count:
            return False  # a shorter one does not
        return count <= self.limit and self.fits(longest, count)


class _Line(ABC):
    """Lengths in run order, cut greedily into runs (bounds 0, ..., n): a run takes, from its
    start, the most that fit padded to their longest (at least one)."""

    def __init__(self, values: np.ndarray) -> None:
        self.values, self.n = values, values.size

    def longest(self, start: int, stop: int) -> int:
        return int(self.values[start:stop].max())

    @abstractmethod
    def take(self, start: int, caps: _Caps) -> int:
        """How many the run at ``start`` takes, with ``caps`` for the budget."""

    def cuts(self, caps: _Caps, bound: float = inf) -> list[int] | None:
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


class _FileOrder(_Line):
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

    def take(self, start: int, caps: _Caps) -> int:
        size, n = self.BLOCK, self.n
        stop = min(n, -(-(start + self.width) // size) * size)
        end, top = self._end(start, start, stop, 0, caps)
        if end is None and stop < n:
            end = self._blocks(start, stop // size, top, caps)
        taken = (n if end is None else end) - start
        self.width = min(2 * taken, 1 << 14)
        return taken

    def _blocks(self, start: int, k: int, top: int, caps: _Caps) -> int | None:
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
             caps: _Caps) -> tuple[int | None, int]:
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


class _Sorted(_Line):
    """Lengths longest first, as runs of equal ones: a run is padded to its first, and closes
    before a length below ``share`` times it. Runs that start inside a run of equal lengths
    all take alike, so they are counted, not searched, one by one."""

    def __init__(self, values: np.ndarray, share: float) -> None:
        super().__init__(values)
        starts = np.flatnonzero(np.diff(values, prepend=-1))
        lengths = values[starts]
        bounds = np.append(starts, self.n)
        least = np.ceil(share * lengths).astype(np.int64)  # integer lengths >= share * length
        self.at = memoryview(values)
        self.sums: memoryview | None = None  # of the values before each position, for join
        self.lengths, self.starts = memoryview(lengths), memoryview(bounds)
        self.ends = memoryview(bounds[np.searchsorted(-lengths, -least, side="right")])
        # cells of runs whose lengths + 1 lie within 2% of each other, and those cells merged
        # 4 and 16 at a time: each cell's shortest length, and how many items it holds
        cell = np.floor(np.log1p(lengths) / np.log(1.02))
        last = np.flatnonzero(np.diff(cell, append=-1))  # the last run of each cell
        self.cells: list[tuple[list[int], np.ndarray]] = []
        for k in (16, 4, 1):
            ends = last[np.minimum(np.arange(k - 1, last.size + k - 1, k), last.size - 1)]
            self.cells.append((lengths[ends].tolist(), np.diff(bounds[ends + 1], prepend=0)))

    def longest(self, start: int, stop: int) -> int:
        return self.at[start]

    def take(self, start: int, caps: _Caps) -> int:
        r = bisect_right(self.starts, start) - 1
        return max(1, min(caps(self.lengths[r]), self.ends[r] - start))

    def cuts(self, caps: _Caps, bound: float = inf) -> list[int] | None:
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

    def fewest(self, sizes: np.ndarray, caps: list[int]) -> float:
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
        values = self.at
        if self.sums is None:
            self.sums = memoryview(np.concatenate(([0], np.cumsum(self.values))))
        sums, out = self.sums, cuts[:2]
        for before, start, stop in zip(cuts[:-2], cuts[1:-1], cuts[2:], strict=True):
            first, size = out[-2], stop - out[-2]
            if (values[start] < share * values[before] and fits(values[first], size)
                    and sums[stop] - sums[first] >= (1 + share) / 2 * values[first] * size):
                out[-1] = stop
            else:
                out.append(stop)
        return out


def _line(values: np.ndarray, share: float) -> _FileOrder | _Sorted:
    """``values`` as a :class:`_Sorted` line when longest first (where a run's longest so far
    is its first), else as a :class:`_FileOrder` one."""
    if np.all(values[1:] <= values[:-1]):
        return _Sorted(values, share)
    return _FileOrder(values)


class _Subjects:
    """Subjects ``index`` (in run order) of lengths ``lengths[index]``, and their greedy cuts
    beside query groups of each (longest, count), memoized."""

    def __init__(self, index: np.ndarray, lengths: np.ndarray, budget: int, need: Need,
                 share: float | None = None) -> None:
        self.index, self.line = index, _line(lengths[index], share or 0.0)
        self.need, self.budget = need, budget
        self.known: dict[tuple[int, int], tuple[list[int] | None, float]] = {}
        self.caps: dict[tuple[int, int], _Caps] = {}
        self.longests: dict[int, list[int]] = {}  # those with caps, ascending, per count

    def cuts(self, longest: int, count: int, bound: float = inf) -> list[int] | None:
        """The cuts, or None when more than ``bound`` runs: on a longest-first line that is
        seen first, where it can be, from a lower bound on their number."""
        cuts, tried = self.known.get((longest, count), (None, -1))
        if cuts is not None:
            return cuts if len(cuts) - 1 <= bound else None
        if bound <= tried:
            return None
        line = self.line
        if bound < inf and count > 1 and isinstance(line, _Sorted) and any(
                line.fewest(sizes, self._cell_caps(lengths, longest, count))
                > bound * (1 + 1e-9) for lengths, sizes in line.cells):
            cuts = None
        else:
            cuts = line.cuts(self._caps(longest, count), bound)
        self.known[longest, count] = cuts, bound
        return cuts

    def parts(self, cuts: list[int]) -> list[np.ndarray]:
        """The subjects cut at ``cuts``, each part longest first (ties in run order)."""
        return [self.line.part(self.index, a, b) for a, b in zip(cuts[:-1], cuts[1:],
                                                                   strict=True)]

    def _caps(self, longest: int, count: int) -> _Caps:
        """The caps beside ``count`` queries up to ``longest``, which guess from those beside
        as many queries up to the nearest longest."""
        key = longest, count
        if key not in self.caps:
            fits = _subject_fits(self.need, self.budget, longest, count)
            most = _subject_most(self.need, self.budget, longest, count)
            like = None
            if most is None:  # searched: guessed from the nearest longest
                longests = self.longests.setdefault(count, [])
                k = bisect_left(longests, longest)
                near = min(longests[max(0, k - 1):k + 1], key=lambda x: abs(x - longest),
                           default=None)
                like = None if near is None else self.caps[near, count]
                longests.insert(k, longest)
            self.caps[key] = _Caps(fits, self.line.n, like, most)
        return self.caps[key]

    def _cell_caps(self, lengths: list[int], longest: int, count: int) -> list[int]:
        """Upper bounds on the caps at ``lengths`` beside ``count`` queries: 1 / count of those
        beside one, where the budget confirms it (each costs one need() call, and holds when
        need grows at least in proportion to the queries), else the cap itself."""
        caps, limit = self._caps(longest, count), self.line.n
        if caps.most is not None:  # the caps themselves, in closed form, all at once
            runs = np.asarray(lengths)
            return np.broadcast_to(np.minimum(caps.most(runs), limit), runs.shape)
        one = self._caps(longest, 1)
        bounds = []
        for length in lengths:
            guess = one(length) // count
            if guess < limit and caps.fits(length, guess + 1):
                guess = caps(length)
            bounds.append(guess)
        return bounds
