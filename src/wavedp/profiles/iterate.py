"""Iterative search (PSI-BLAST's and jackhmmer's rounds): each round's hits at E <=
``inclusion`` become the next round's profile (``build.build``); the rounds stop after
``iterations`` searches, or once a round includes no sequence the one before did not."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..alignment import Alignment
from ..api import Prepared
from ..errors import InputError
from .build import build
from .pssm import Profile

#: the E-value at most of a hit a round's profile is built from (PSI-BLAST's default, 0.002;
#: jackhmmer's is 0.001)
INCLUSION = 0.002


def check(iterations: Any, inclusion: Any) -> tuple[int, float]:
    """The rounds and the inclusion E-value, checked."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations must be a positive integer, got {iterations!r}")
    if isinstance(inclusion, bool) or not isinstance(inclusion, (int, float)) \
            or not inclusion > 0:
        raise InputError(f"inclusion_evalue must be a positive number, got {inclusion!r}")
    return iterations, float(inclusion)


def iterated(searcher: Any, q: Prepared, todo: list[int], iterations: int,
             inclusion: float, report: dict[str, Any],
             on_profile: Callable[[int, Profile], None] | None = None,
             progress: Callable[[int], None] | None = None
             ) -> Iterator[tuple[int, list[Alignment]]]:
    """Each query of ``todo`` searched in rounds by ``searcher`` (a ``wavedp.Searcher``),
    its last round's hits under the
    ``report`` options (``Searcher.search``'s keywords); ``on_profile(k, profile)`` is told
    the profile of query k's last round (None: its first round's query was never replaced).
    A round before the last searches for the hits at E <= ``inclusion`` only; ``progress``
    is told the last round's cells."""
    scoring, stats = searcher.scoring, report.get("stats", "fitted")
    for k in todo:
        query, qid = q.texts[k], q.ids[k]
        current: Any = Prepared.from_codes([query], [qid], [q.codes[k]])
        included: set[str] = set()
        profile: Profile | None = None
        for _ in range(iterations - 1):
            hits = searcher.search(current, top=0, evalue=inclusion, stats=stats)[0]
            found = {h.target_id for h in hits}
            if profile is not None and found <= included:
                break  # nothing new: the next round would search with the same sequences
            included |= found
            profile = build(query, hits, scoring, id=qid)
            current = profile
        if on_profile is not None and profile is not None:
            on_profile(k, profile)
        yield k, next(iter(searcher.iter_search(current, progress=progress, **report)))[1]
