"""A search whose E-values are fitted (``stats`` ``fitted``, ``empirical`` or
``composition``; ``significance.py`` says what each is): per batch of queries, each query's
scores against the database's sample fit its distribution; the scan then returns every
subject that can reach the E-value cutoff; candidates rank by E-value (then score, database
order, strand); the best are aligned and, with composition, rescored under their pair's
adjusted matrix. Rescoring can only raise an E-value, so candidates are aligned in rank
order until the ``top``-th best final E-value is at most the next candidate's first one:
the reported hits are the best ``top`` by final E-value, exactly."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..alignment import Alignment, replaced
from ..api import Prepared
from ..device import Device
from ..errors import StatisticsWarning
from ..ranking import Scanner
from ..scoring import Scoring
from ..threads import cores
from ..trace import Trace
from .database import Database
from .hitlist import align_ranked, batch_jobs, query_batches
from .significance import Method, QueryStats, Sample, subject_freqs

#: candidates aligned in a first round beyond ``top`` (rescoring may reorder them)
SPARE = 8


@dataclass
class _Candidates:
    """One query's candidates (both strands), in rank order of their first E-value."""

    index: np.ndarray
    score: np.ndarray
    strand: np.ndarray
    ratio: np.ndarray
    evalue: np.ndarray
    bits: np.ndarray
    job: np.ndarray  # the scan job (query strand) of each
    freqs: np.ndarray | None


def run_fitted(q: Prepared, db: Database, lut: np.ndarray | None, scoring: Scoring,
               mode: str, device: Device, scanner: Scanner,
               sample: tuple[Sample, Scanner] | None, batch_cells: float,
               todo: list[int], wanted: tuple[int, ...], top: int, evalue: float | None,
               min_score: int | None, method: Method, traceback: bool,
               fraction: float | None, progress: Callable[[int], None] | None,
               trace: Trace) -> Iterator[tuple[int, list[Alignment]]]:
    n = db.total_residues
    lengths = np.asarray(db.lengths)
    count = int(np.count_nonzero(lengths)) * len(wanted)  # what an E-value counts
    sizes = np.unique(lengths[lengths > 0])
    said: set[str] = set()
    threads = max(1, min(16, cores()))
    with ThreadPoolExecutor(threads, thread_name_prefix="wavedp-stats") as pool:
        for batch in query_batches(todo, [q.codes[k].size for k in todo], n, batch_cells):
            live, jobs = batch_jobs(q, batch, wanted)
            start = time.perf_counter()
            stats = _fits(method, jobs, sample, mode, count, n, pool)
            trace.add("fit", time.perf_counter() - start)
            for st in stats:
                if not st.available and st.reason not in said:
                    said.add(st.reason)
                    warnings.warn(f"no E-values for some queries: {st.reason}, and BLAST has "
                                  "no table for this scoring and mode", StatisticsWarning,
                                  stacklevel=4)
            thresholds = []
            for st in stats:
                floor = st.floor(evalue, sizes)
                for other in (min_score, 1 if mode == "local" else None):
                    if other is not None:
                        floor = other if floor is None else max(floor, other)
                thresholds.append(floor)
            found = scanner.top([codes for *_, codes in jobs], 0, thresholds,
                                progress) if jobs else []
            start = time.perf_counter()
            ranked = _rank(live, jobs, found, stats, db, lut, lengths, evalue, method, pool)
            trace.add("rank", time.perf_counter() - start)
            start = time.perf_counter()
            hits = _hits(q, live, jobs, ranked, stats, db, lut, scoring, mode, traceback,
                         device, top, evalue, min_score, method, fraction)
            trace.add("align", time.perf_counter() - start)
            for k in batch:
                yield k, hits.get(k, [])


def _fits(method: Method, jobs: list, sample: tuple[Sample, Scanner] | None, mode: str,
          count: int, residues: int, pool: ThreadPoolExecutor) -> list[QueryStats]:
    """Each job's statistics: fitted (on the sample's scores) where the method fits."""
    scores = None
    if method.fitted and sample is not None and jobs:
        scores = sample[1].matrix([codes for *_, codes in jobs])
    return list(pool.map(
        lambda j: QueryStats.of(method, jobs[j][3], None if scores is None else scores[j],
                                None if sample is None else sample[0], mode, count, residues),
        range(len(jobs))))


def _rank(live: list[int], jobs: list, found: list, stats: list[QueryStats], db: Database,
          lut: np.ndarray | None, lengths: np.ndarray, evalue: float | None, method: Method,
          pool: ThreadPoolExecutor) -> dict[int, _Candidates]:
    """Each live query's candidates with their first E-values, cut at ``evalue`` and in
    rank order (E-value, then score descending, database order, strand)."""
    per_query: dict[int, list[int]] = {}
    for j, (k, *_rest) in enumerate(jobs):
        per_query.setdefault(k, []).append(j)

    def one(k: int) -> tuple[int, _Candidates]:
        parts = []
        for j in per_query[k]:
            index, score = found[j]
            index = np.asarray(index, np.int64)
            score = np.asarray(score, np.int64)
            keep = lengths[index] > 0  # an empty subject has no hits
            index, score = index[keep], score[keep]
            st = stats[j]
            freqs = None
            ratio = np.ones(index.size)
            if method.composition is not None and index.size:
                freqs = subject_freqs(db, index, lut, method.composition)
                ratio = st.ratios(freqs)
            values = st.values(score * ratio, lengths[index],
                               None if method.composition is None else ratio)
            e, bits = values if values is not None else (np.full(index.size, np.nan),) * 2
            parts.append((index, score, np.full(index.size, jobs[j][1]), ratio, e, bits,
                          np.full(index.size, j), freqs))
        index, score, strand, ratio, e, bits, job = (np.concatenate([p[i] for p in parts])
                                                     for i in range(7))
        freqs = None
        if method.composition is not None:
            have = [p[7] for p in parts if p[7] is not None]
            freqs = np.concatenate(have) if have else np.zeros((0, 1))
        if evalue is not None:
            keep = ~(e > evalue)  # NaN (no statistics) kept
            index, score, strand, ratio, e, bits, job = (a[keep] for a in (
                index, score, strand, ratio, e, bits, job))
            freqs = None if freqs is None else freqs[keep]
        order = np.lexsort((strand, index, -score, np.nan_to_num(e, nan=np.inf)))
        return k, _Candidates(index[order], score[order], strand[order], ratio[order],
                              e[order], bits[order], job[order],
                              None if freqs is None else freqs[order])

    return dict(pool.map(one, live))


def _hits(q: Prepared, live: list[int], jobs: list, ranked: dict[int, _Candidates],
          stats: list[QueryStats], db: Database, lut: np.ndarray | None, scoring: Scoring,
          mode: str, traceback: bool, device: Device, top: int, evalue: float | None,
          min_score: int | None, method: Method,
          fraction: float | None) -> dict[int, list[Alignment]]:
    """The reported hits of each live query: aligned in rank order, in rounds until the best
    ``top`` by final E-value are known (one round without rescoring)."""
    rescore = method.composition is not None and traceback
    done: dict[int, list[tuple]] = {k: [] for k in live}  # (E, -score, index, strand, aln)
    taken = dict.fromkeys(live, 0)
    want = {k: (len(ranked[k].index) if top == 0 else
                top + (max(SPARE, top) if rescore and fraction is None else 0)) for k in live}
    views: dict[int, dict] = {}
    for k, s, text, codes in jobs:
        views.setdefault(k, {})[s] = (text, codes)
    pending = list(live)
    while pending:
        batch = []
        for k in pending:
            c = ranked[k]
            stop = min(len(c.index), taken[k] + want[k])
            batch.append((k, taken[k], stop))
        entries = [(k, views[k], ranked[k].index[a:b], ranked[k].score[a:b],
                    ranked[k].strand[a:b]) for k, a, b in batch]
        aligned = align_ranked(q, entries, db, lut, scoring, mode, traceback, device, None,
                               fraction, grouped=True)
        for (k, a, _), pairs in zip(batch, aligned, strict=True):
            c = ranked[k]
            for i, alns in enumerate(pairs, a):
                for aln in alns:
                    e, bits = _final(aln, c, i, stats, jobs, db, lut, rescore, method)
                    done[k].append((e, -aln.score, int(c.index[i]), int(c.strand[i]),
                                    replaced(aln, evalue=e, bitscore=bits)))
        for k, _, b in batch:
            taken[k] = b
        pending = []
        for k in live:
            c = ranked[k]
            if taken[k] >= len(c.index) or not rescore or top == 0:
                continue
            finals = sorted(_key(item[0]) for item in done[k])
            if len(finals) >= top and finals[top - 1] <= _key(c.evalue[taken[k]]):
                continue
            want[k] = max(want[k], top) * 2
            pending.append(k)
    out = {}
    for k in live:
        items = [item for item in done[k] if evalue is None or item[0] is None
                 or item[0] <= evalue]
        if min_score is not None:
            items = [item for item in items if -item[1] >= min_score]
        items.sort(key=lambda item: (_key(item[0]), item[1], item[2], item[3]))
        if top and fraction is None:
            items = items[:top]
        elif top:  # with fraction, top counts pairs
            pairs: list[tuple[int, int]] = []
            kept = []
            for item in items:
                pair = (item[2], item[3])
                if pair not in pairs:
                    if len(pairs) == top:
                        continue
                    pairs.append(pair)
                kept.append(item)
            items = kept
        out[k] = [item[4] for item in items]
    return out


def _key(e: float | None) -> float:
    return np.inf if e is None or np.isnan(e) else float(e)


def _final(aln: Alignment, c: _Candidates, i: int, stats: list[QueryStats], jobs: list,
           db: Database, lut: np.ndarray | None, rescore: bool,
           method: Method) -> tuple[float | None, float | None]:
    """A hit's E-value and bit score: from its own score (several alignments of a pair with
    ``fraction``), rescored under the pair's adjusted matrix with composition."""
    st = stats[int(c.job[i])]
    ratio = float(c.ratio[i])
    t = int(c.index[i])
    eff = aln.score * ratio
    if rescore and aln.cigar is not None and c.freqs is not None:
        target = db.codes(t) if lut is None else lut[db.codes(t)]
        eff = st.rescored(aln, jobs[int(c.job[i])][3], target, ratio, c.freqs[i])
    values = st.values(np.array([eff]), np.array([int(db.lengths[t])]),
                       None if method.composition is None else np.array([ratio]))
    if values is None:
        return None, None
    return float(values[0][0]), float(values[1][0])
