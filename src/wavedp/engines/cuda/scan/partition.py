"""Length partitioning: which queries and subjects share a GPU batch (PaSWAS, Timal 2015).

A batch is a cartesian product, some queries x some subjects, computed together and padded to
its longest query and longest subject; ``need(longest_query, n_queries, longest_subject,
n_subjects)`` gives the bytes such a batch takes on the device, must not decrease when any
argument grows, and must be affine in each count, the other arguments fixed (marked
``need.affine = True``, as ``shapes.scan_need``; else a TypeError): runs are sized in closed
form. Every scheduler covers each (query, subject) pair exactly once, lists each batch's
sequences longest first and keeps every batch within ``budget`` bytes, except a single query x
single subject that alone needs more: it still gets a batch of its own, which the engine must
check and handle itself (the thesis's run script skips such runs).

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import inf

import numpy as np

from ....errors import InputError
from .lines import (
    Caps,
    Fits,
    Lengths,
    Line,
    Most,
    Need,
    SubjectLine,
    Subjects,
    as_lengths,
    closed_form,
    line_of,
    longest_first,
    subject_fits,
)

PARTITIONS: tuple[str, ...] = ("none", "static", "dynamic1", "dynamic2", "auto")


@dataclass(frozen=True)
class Batch:
    """Queries x subjects computed together, as indices into the lengths given (queries
    int64, subjects int32: slices of the sorted order), longest first; ``start``, ``stop``:
    where the subjects lie in the sorted order as a range of it (None for ``none``'s, in
    file order)."""

    queries: np.ndarray
    subjects: np.ndarray
    start: int | None = None
    stop: int | None = None


def none(queries: Lengths, subjects: Lengths, budget: int, need: Need) -> list[Batch]:
    """No length partitioning: groups and batches in file order."""
    ql, sl = as_lengths(queries), as_lengths(subjects)
    line = SubjectLine(np.arange(sl.size, dtype=np.int32), line_of(sl, 0.0), budget, need)
    return _grid(np.arange(ql.size), ql, line)


def static(queries: Lengths, subjects: Lengths | Subjects, budget: int, need: Need,
           threshold: int | None = None) -> list[Batch]:
    """Algorithm 10: the sequences longer than ``threshold`` apart from the rest on each side,
    each block cut as by :func:`dynamic1`.

    The default threshold is twice the median length, each side its own: a sequence longer than
    that would more than double the padded length of a batch of typical sequences, while a side
    without such outliers stays whole.
    """
    if threshold is not None and threshold < 0:
        raise InputError(f"threshold must be >= 0, got {threshold!r}")
    ql = as_lengths(queries)
    sides, at = [], 0  # at: where each side starts in the sorted order
    for side in _sorted(subjects).split(threshold):
        sides.append(SubjectLine.sorted(side, budget, need, at=at))
        at += side.n
    return [batch for qi in _split(ql, threshold) for side in sides
            for batch in _grid(qi, ql, side)]


def dynamic1(queries: Lengths, subjects: Lengths | Subjects, budget: int, need: Need
             ) -> list[Batch]:
    """Algorithm 11: longest first; groups sized as the module docstring says, batches as
    large as the budget allows at their first, longest subject."""
    ql = as_lengths(queries)
    return _grid(longest_first(ql), ql, SubjectLine.sorted(_sorted(subjects), budget, need))


def dynamic2(queries: Lengths, subjects: Lengths | Subjects, budget: int, need: Need,
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
    ql = as_lengths(queries)
    side = SubjectLine.sorted(_sorted(subjects), budget, need, share)
    return _grid(longest_first(ql), ql, side, share)


def _sorted(subjects: Lengths | Subjects) -> Subjects:
    return subjects if isinstance(subjects, Subjects) else Subjects.of(subjects)


SCHEDULERS: dict[str, Callable[..., list[Batch]]] = {
    "none": none, "static": static, "dynamic1": dynamic1, "dynamic2": dynamic2,
}


def check_partition(name: object) -> str:
    """``name`` when it is one of PARTITIONS, else an InputError."""
    if isinstance(name, str) and name in PARTITIONS:
        return name
    raise InputError(f"partition must be one of {', '.join(PARTITIONS)}, got {name!r}")


def partition(name: str, queries: Lengths, subjects: Lengths | Subjects, budget: int,
              need: Need, **params) -> list[Batch]:
    """The batches of scheduler ``name`` (``params`` go to it; subjects sorted already for
    all but ``none``); ``auto`` must have been resolved by the performance predictor
    before."""
    if check_partition(name) == "auto":
        raise ValueError("partition 'auto' is resolved by the performance predictor; "
                         "pass the partition it chose")
    return SCHEDULERS[name](queries, subjects, budget, need, **params)


def padding(batches: Sequence[Batch], queries: Lengths, subjects: Lengths) -> tuple[int, int]:
    """(real cells, padded cells) of ``batches``: the sum of q*s over their pairs, and of
    n_q*n_s*longest_q*longest_s over the batches."""
    ql, sl = as_lengths(queries), as_lengths(subjects)
    real = padded = 0
    for b in batches:
        q, s = ql[b.queries], sl[b.subjects]
        real += int(q.sum()) * int(s.sum())
        padded += q.size * s.size * int(q.max()) * int(s.max())
    return real, padded


def _split(lengths: np.ndarray, threshold: int | None) -> list[np.ndarray]:
    """The indices longer than ``threshold`` (default: twice the median), then the rest, each
    longest first; empty parts left out."""
    if threshold is None:
        threshold = int(2 * np.median(lengths)) if lengths.size else 0
    order = longest_first(lengths)
    cut = int(np.count_nonzero(lengths > threshold))
    return [part for part in (order[:cut], order[cut:]) if part.size]


def _grid(qi: np.ndarray, ql: np.ndarray, subjects: SubjectLine,
          share: float | None = None) -> list[Batch]:
    """Batches of queries ``qi`` (indices in run order) x ``subjects``: the query groups
    :func:`_group` sizes, then each group's subjects cut greedily; with ``share``, dynamic2's
    closing and joining rules on both sides."""
    if not qi.size or not subjects.line.n:
        return []
    need, budget = subjects.need, subjects.budget
    queries = line_of(ql[qi], share or 0.0)
    longest_subject = subjects.line.longest(0, subjects.line.n)
    caps = Caps(_query_most(need, budget, longest_subject), queries.n)
    stops = [0]
    while stops[-1] < queries.n:
        stops.append(stops[-1] + _group(queries, stops[-1], caps, subjects))
    if share is not None:
        stops = queries.join(stops, _query_fits(need, budget, longest_subject), share)
    batches = []
    for start, stop in zip(stops[:-1], stops[1:], strict=True):
        longest, count = queries.longest(start, stop), stop - start
        cuts = subjects.cuts(longest, count)
        if share is not None:
            cuts = subjects.line.join(cuts, subject_fits(need, budget, longest, count), share)
        group = longest_first(ql, qi[start:stop])
        batches += [Batch(group, *part) for part in subjects.parts(cuts)]
    return batches


def _query_fits(need: Need, budget: int, longest_subject: int) -> Fits:
    """Whether a query group of (longest, count) fits beside one subject of the longest."""
    return lambda longest, n: need(longest, n, longest_subject, 1) <= budget


def _query_most(need: Need, budget: int, longest_subject: int) -> Most:
    """The largest query group of a longest beside one subject of the longest."""
    return closed_form(budget, lambda longest, n: need(longest, n, longest_subject, 1))


def _group(queries: Line, start: int, caps: Caps, subjects: SubjectLine) -> int:
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


