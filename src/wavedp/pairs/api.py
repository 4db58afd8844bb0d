"""``wavedp.align_pairs`` (the i-th query against the i-th target, or the pairs of an index
array) and ``wavedp.align_all`` (every query against every target): every pair exact, the
results as one columnar :class:`PairBatch`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engines
from ..api import Prepared as _Prepared
from ..api import check_flag, check_scoring, mode_code, pair_results
from ..device import Device, choose
from ..engines import cross
from ..engines.common import GLOBAL, Sides
from ..errors import InputError
from ..scoring import Scoring
from ..threads import check as check_threads
from ..threads import limited
from .batch import PairBatch
from .sequences import Sequences, as_sequences


def check_pairs(pairs: Any, queries: int, targets: int
                ) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """(query indices, target indices) of ``pairs``: (None, None) for one-to-one (None:
    equal counts needed), or k x 2 integers within range."""
    if pairs is None:
        if queries != targets:
            raise InputError(f"one-to-one pairs need as many queries as targets: {queries} "
                             f"queries, {targets} targets")
        return None, None
    rows = np.asarray(pairs)
    if rows.dtype.kind not in "iu" or rows.ndim != 2 or rows.shape[1] != 2:
        raise InputError(f"pairs must be a k x 2 array of integer (query, target) indices, "
                         f"got shape {rows.shape} of {rows.dtype}")
    rows = rows.astype(np.int64)
    for col, size, what in ((0, queries, "query"), (1, targets, "target")):
        bad = np.flatnonzero((rows[:, col] < 0) | (rows[:, col] >= size))
        if bad.size:
            raise InputError(f"pairs row {int(bad[0])}: {what} index {int(rows[bad[0], col])} "
                             f"is outside 0..{size - 1}")
    return rows[:, 0].copy(), rows[:, 1].copy()


_identity = np.zeros(0, np.int64)
#: the longest identity kept between calls (32 MB); longer ones are made for their call
IDENTITY_KEPT = 1 << 22


def identity(count: int) -> np.ndarray:
    """0 .. count - 1 (int64, read-only): up to IDENTITY_KEPT a view of one array kept and
    grown, so one-to-one calls (the command's every chunk) do not each fault in a fresh one."""
    global _identity
    if count > IDENTITY_KEPT:
        made = np.arange(count, dtype=np.int64)
        made.flags.writeable = False
        return made
    if _identity.size < count:
        grown = np.arange(min(max(count, 2 * _identity.size), IDENTITY_KEPT), dtype=np.int64)
        grown.flags.writeable = False
        _identity = grown
    return _identity[:count]


def run(queries: Sequences, targets: Sequences, qi: np.ndarray | None,
        ti: np.ndarray | None, scoring: Scoring, mode: str, traceback: bool,
        device: Device, sides: Sides | None = None, every: bool = False,
        **strategy: str) -> PairBatch:
    """The pairs (``qi[k]``, ``ti[k]``) aligned on the resolved ``device`` (None: query k
    against target k, or with ``every`` every query against every target, their indices
    made once the engines are done; ``sides``: theirs, where the caller has them);
    ``strategy`` (the lab's GPU ``strategy``, ``sync`` and ``storage``) sends every pair to
    the pairwise engines."""
    code = mode_code(mode)
    if sides is None:  # one-to-one: the lengths read off the offsets where asked for
        sides = (Sides(queries.spans, targets.spans, *queries.extremes, *targets.extremes)
                 if qi is None or ti is None else
                 Sides.of(queries.lengths[qi], targets.lengths[ti]))
    count = int(sides.m.size)
    if count:  # the int32 range: the longest pair decides (the extremes, where they pass)
        try:
            scoring.check_range(sides.m_max, sides.n_max)
        except InputError:
            m, n = np.asarray(sides.m), np.asarray(sides.n)
            k = int(np.argmax(m + n))
            scoring.check_range(int(m[k]), int(n[k]))
    if strategy:
        if every:
            qi, ti = cross.indices(len(queries), len(targets))
        own = np.arange(count, dtype=np.int64)
        rows = np.stack([own if qi is None else qi, own if ti is None else ti], axis=1)
        cols = engines.raw_columns(pair_results(
            *(_Prepared.from_codes([], [], np.split(s.codes, s.offsets[1:-1]))
              for s in (queries, targets)), rows, scoring, mode, traceback, device,
            **strategy), traceback)
    else:
        cols = engines.pair_columns(device, queries.codes, queries.offsets, targets.codes,
                                    targets.offsets, qi, ti, sides=sides, sub=scoring.table,
                                    gap_open=scoring.gap_open, gap_extend=scoring.gap_extend,
                                    mode=code, traceback=traceback, every=every)
    if every and qi is None:
        qi, ti = cross.indices(len(queries), len(targets))
    qs, ts = cols.query_start, cols.target_start
    if not traceback and code == GLOBAL:  # a global alignment starts at the origin
        qs = ts = np.broadcast_to(np.int32(0), qs.shape)
    if qi is None or ti is None:
        qi = ti = identity(count)
    return PairBatch(cols.score, qs, cols.query_end, ts, cols.target_end, cols.runs,
                     cols.run_offsets, qi, ti, queries, targets, mode, scoring.alphabet)


def align_pairs(queries: Any, targets: Any, scoring: Scoring, mode: str = "local",
                traceback: bool = True, device: str | Device = "auto", *, pairs: Any = None,
                devices: object = None, threads: int | None = None) -> PairBatch:
    """Align the i-th query against the i-th target (``pairs``: a k x 2 array of (query,
    target) indices instead), exactly (``docs/design.md``: the recurrence and the tie
    rules); on the GPU every visible GPU or those of ``devices``, on the CPU all cores or
    ``threads`` of them.

    ``queries`` and ``targets`` are lists of str, bytes, Bio.Seq or SeqRecords, or
    :class:`Sequences` (encoded once, one array with offsets). Returns a :class:`PairBatch`.
    """
    scoring, q, t = _checked(queries, targets, scoring, mode, traceback)
    qi, ti = check_pairs(pairs, len(q), len(t))
    chosen = choose(device, devices)
    with limited(check_threads(threads)):
        return run(q, t, qi, ti, scoring, mode, bool(traceback), chosen)


def align_all(queries: Any, targets: Any, scoring: Scoring, mode: str = "local",
              traceback: bool = True, device: str | Device = "auto", *,
              strategy: str | None = None, sync: str | None = None,
              storage: str | None = None, devices: object = None,
              threads: int | None = None) -> PairBatch:
    """Align every query against every target, in query-major order, as
    :func:`align_pairs` does (``strategy``, ``sync`` and ``storage``: the lab's GPU
    strategies, ``wavedp.align``'s options, for every pair)."""
    scoring, q, t = _checked(queries, targets, scoring, mode, traceback)
    sides = cross.sides(q.lengths, t.lengths, (*q.extremes, *t.extremes))
    options = {name: value for name, value in
               (("strategy", strategy), ("sync", sync), ("storage", storage))
               if value is not None}
    chosen = choose(device, devices)
    with limited(check_threads(threads)):
        return run(q, t, None, None, scoring, mode, bool(traceback), chosen, sides, True,
                   **options)


def _checked(queries: Any, targets: Any, scoring: Scoring, mode: str, traceback: object
             ) -> tuple[Scoring, Sequences, Sequences]:
    """The arguments both functions share, checked, and the sequences encoded."""
    scoring = check_scoring(scoring)
    mode_code(mode)
    check_flag("traceback", traceback)
    return (scoring, as_sequences(queries, scoring, "query"),
            as_sequences(targets, scoring, "target"))
