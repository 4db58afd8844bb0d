"""Non-intersecting local alignments (Waterman-Eggert; ``docs/design.md``, "Non-intersecting
hits"):
``wavedp.local_hits`` for one pair, ``run_hits`` for the pairs a search reports."""

from __future__ import annotations

import numbers

import numpy as np

from .. import engines
from ..alignment import Alignment
from ..api import Prepared, SeqLike, alignments, check_pairs_range, check_scoring
from ..device import Device, choose
from ..errors import InputError
from ..scoring import Scoring


def check_fraction(fraction: object) -> float:
    """``fraction`` as a float in (0, 1], else an InputError."""
    if (isinstance(fraction, bool) or not isinstance(fraction, numbers.Real)
            or not 0 < fraction <= 1):
        raise InputError(f"fraction must be a number in (0, 1], got {fraction!r}")
    return float(fraction)


def check_limit(limit: object, name: str = "limit") -> int | None:
    """``limit`` (the alignments a pair at most) as an int, or None; else an InputError
    naming it ``name``."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, numbers.Integral)
                              or limit < 1):
        raise InputError(f"{name} must be a positive integer or None, got {limit!r}")
    return None if limit is None else int(limit)


def run_hits(queries: Prepared, targets: Prepared, pairs: np.ndarray, scoring: Scoring,
             fraction: float, limit: int | None, device: Device) -> list[list[Alignment]]:
    """Each (query index, target index) row's hits as Alignments, best first, on the
    resolved ``device`` (on the GPU over its GPUs; every engine returns the same lists)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    check_pairs_range(queries, targets, pairs, scoring)
    raw = engines.hits(device, queries.codes, targets.codes, pairs, scoring.table,
                       scoring.gap_open, scoring.gap_extend, fraction, limit=limit)
    flat = [hit for found in raw for hit in found]
    owners = [pair for pair, found in zip(pairs.tolist(), raw, strict=True) for _ in found]
    made = iter(alignments(flat, queries, targets, owners, "local"))
    return [[next(made) for _ in found] for found in raw]


def local_hits(query: SeqLike, target: SeqLike, scoring: Scoring, fraction: float = 0.5,
               limit: int | None = None, device: str | Device = "auto") -> list[Alignment]:
    """The Waterman-Eggert local alignments of query and target that score > 0 and at least
    ``fraction`` (in (0, 1]) times the best, at most ``limit`` of them (None: all).

    Hits pair no (i, j) in common; they come best first, equal scores in the order found
    (each the best end cell, smallest i then j, once the earlier hits' pairs are forbidden).
    The first is ``align(query, target, scoring, mode="local")``. The CPU and GPU engines
    return the same list.
    """
    scoring = check_scoring(scoring)
    fraction = check_fraction(fraction)
    limit = check_limit(limit)
    resolved = choose(device)
    q = Prepared([query], scoring, "query")
    t = Prepared([target], scoring, "target")
    return run_hits(q, t, np.zeros((1, 2), np.int64), scoring, fraction, limit, resolved)[0]
