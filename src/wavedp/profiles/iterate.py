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

#: the E-value at most of a hit a round's profile is built from (PSI-BLAST's default is
#: 0.002, jackhmmer's 0.001): the reverse null and the rescoring keep wavedp's E-values
#: conservative (at most 0.025 false hits a query at E <= 0.1 on the Pfam benchmark), and
#: three rounds find more of a family the more each includes. Chosen on three of the
#: benchmark's query sets (ROC1 0.959-0.970 at 0.002, 0.966-0.994 at 0.01, 0.992-0.996 at
#: 0.03, 0.980-0.998 at 0.1 with false hits at E <= 0.01), held on two more (BENCHMARKS.md)
INCLUSION = 0.03


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
    its last round's hits under the ``report`` options (``Searcher.search``'s keywords), in
    query order; ``on_profile(k, profile)`` is told the profile of query k's last round
    (none where its first round's query was never replaced). A round before the last
    searches for the hits at E <= ``inclusion`` only, every query still going in one search
    (those on their sequence in one, those on a profile in another); ``progress`` is told
    the last round's cells."""
    scoring, stats = searcher.scoring, report.get("stats", "fitted")
    current: dict[int, Profile | None] = dict.fromkeys(todo)  # None: the query itself
    included: dict[int, set[str]] = {k: set() for k in todo}
    going = list(todo)
    for _ in range(iterations - 1):
        found = _round(searcher, q, going, current, top=0, evalue=inclusion, stats=stats)
        still = []
        for k in going:
            names = {h.target_id for h in found[k]}
            if current[k] is not None and names <= included[k]:
                continue  # nothing new: the next round would search with the same sequences
            included[k] |= names
            current[k] = build(q.texts[k], found[k], scoring, id=q.ids[k])
            still.append(k)
        going = still
        if not going:
            break
    if on_profile is not None:
        for k in todo:
            if current[k] is not None:
                on_profile(k, current[k])
    last = _round(searcher, q, todo, current, progress=progress, **report)
    for k in todo:
        yield k, last[k]


def _round(searcher: Any, q: Prepared, keys: list[int], current: dict[int, Profile | None],
           **options: Any) -> dict[int, list[Alignment]]:
    """One round's hits of the queries ``keys``: those on their sequence searched together,
    those on a profile together."""
    plain = [k for k in keys if current[k] is None]
    profiled = [k for k in keys if current[k] is not None]
    found: dict[int, list[Alignment]] = {}
    if plain:
        batch = Prepared.from_codes([q.texts[k] for k in plain], [q.ids[k] for k in plain],
                                    [q.codes[k] for k in plain])
        for j, hits in searcher.iter_search(batch, **options):
            found[plain[j]] = hits
    if profiled:
        for j, hits in searcher.iter_search([current[k] for k in profiled], **options):
            found[profiled[j]] = hits
    return found
