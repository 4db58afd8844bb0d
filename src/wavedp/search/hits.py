"""``wavedp.local_hits``: the non-intersecting local alignments of one pair (Waterman-Eggert;
DESIGN.md, "Non-intersecting hits")."""

from __future__ import annotations

import numbers

from .. import device as _device
from ..alignment import Alignment, cigar_from_ops
from ..api import Prepared, SeqLike, _check_scoring
from ..errors import InputError
from ..scoring import Scoring


def _check_fraction(fraction: object) -> float:
    if (isinstance(fraction, bool) or not isinstance(fraction, numbers.Real)
            or not 0 < fraction <= 1):
        raise InputError(f"fraction must be a number in (0, 1], got {fraction!r}")
    return float(fraction)


def _check_limit(limit: object) -> int | None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral)
                              or limit < 1):
        raise InputError(f"limit must be a positive integer or None, got {limit!r}")
    return None if limit is None else int(limit)


def local_hits(query: SeqLike, target: SeqLike, scoring: Scoring, fraction: float = 0.5,
               limit: int | None = None, device: str = "auto") -> list[Alignment]:
    """The Waterman-Eggert local alignments of query and target that score > 0 and at least
    ``fraction`` (in (0, 1]) times the best, at most ``limit`` of them (None: all).

    Hits pair no (i, j) in common; they come best first, equal scores in the order found
    (each the best end cell, smallest i then j, once the earlier hits' pairs are forbidden).
    The first is ``align(query, target, scoring, mode="local")``. Runs on the CPU engine
    (``auto`` picks it; ``gpu`` is an InputError for now).
    """
    scoring = _check_scoring(scoring)
    fraction = _check_fraction(fraction)
    limit = _check_limit(limit)
    _device.resolve(device)  # an unknown name, or "gpu" without a GPU, is an InputError
    if device == "gpu":
        raise InputError("local_hits runs on the CPU engine for now")
    from ..engines.cpu.hits import iter_hits

    q = Prepared([query], scoring, "query")
    t = Prepared([target], scoring, "target")
    qc, tc = q.codes[0], t.codes[0]
    scoring.check_range(qc.size, tc.size)
    hits: list[Alignment] = []
    for score, qs, qe, ts, te, ops in iter_hits(qc, tc, scoring.table, scoring.gap_open,
                                                 scoring.gap_extend):
        if hits and score < fraction * hits[0].score:
            break
        hits.append(Alignment(
            score=score, query_start=qs, query_end=qe, target_start=ts, target_end=te,
            cigar=cigar_from_ops(ops), query_id=q.ids[0], target_id=t.ids[0], mode="local",
            query_length=qc.size, target_length=tc.size, query=q.texts[0], target=t.texts[0],
        ))
        if len(hits) == limit:
            break
    return hits
