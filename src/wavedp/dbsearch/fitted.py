"""A search whose E-values are fitted (``stats`` ``fitted``, ``empirical`` or
``composition``; ``significance.py`` says what each is): per batch of queries, each query's
scores against the database's sample fit its distribution, on the CPU's cores while the
scan runs (the scan asks for the floors the fits give once it has scores to select from);
the scan returns every subject that can reach the E-value cutoff; candidates rank by
E-value (then score, database order, strand); the best are aligned and, with composition,
rescored under their pair's adjusted matrix and capped by the reverse null (``reverse.py``).
Both can only raise an E-value, so candidates are aligned in rank order until the
``top``-th best final E-value is at most the next candidate's first one: the reported hits
are the best ``top`` by final E-value, exactly."""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .. import engines
from ..alignment import Alignment, replaced
from ..api import Prepared
from ..db.database import Database
from ..engines.protocol import Scanner
from ..errors import StatisticsWarning
from ..ranking import Later, thresholds_of, top
from ..stats import composition as comp_stats
from ..stats import empirical
from ..stats.composition import ProfileComposition
from ..stats.significance import Method, QueryStats, Sample, subject_freqs
from ..threads import cores
from ..threads import pool as thread_pool
from .hitlist import Ranked, align_ranked, at_most, batch_jobs, query_batches
from .options import Context, Options
from .reverse import reversed_scores

#: candidates aligned in a first round beyond ``top`` (rescoring may reorder them)
SPARE = 8
#: hits rescored under their adjusted matrices at once (each holds a few matrices of the
#: alphabet's size squared while rescored: about 20 KB of temporaries a hit)
RESCORED = 2048


#: a GPU search of fewer DP cells than this (about 0.5 s of an H100's scan) starts loading
#: its fits' kernels (Numba: 0.5-1 s of a fresh process on the H100 machine) before its scan
#: instead of once the scan is planned: a short scan cannot hide the load
EARLY_CELLS = 2.5e12


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


def run_fitted(context: Context, q: Prepared, todo: list[int], options: Options,
               sample: tuple[Sample, Scanner] | None,
               progress: Callable[[int], None] | None) -> Iterator[tuple[int, list[Alignment]]]:
    """The queries ``todo`` of ``q`` searched in batches under fitted statistics (the
    module's docstring): ``sample``, the database's sample and a scanner of it."""
    db, device, method, trace = context.db, context.device, options.method, context.trace
    traceback, evalue, min_score = options.traceback, options.evalue, options.min_score
    wanted, mode = options.strands, context.mode
    n = db.total_residues
    lengths = np.asarray(db.lengths)
    count = int(np.count_nonzero(lengths)) * len(wanted)  # what an E-value counts
    sizes = db.sizes
    said: set[str] = set()
    threads = max(1, min(16, cores()))
    cells = sum(q.codes[k].size for k in todo) * n * len(wanted)
    with thread_pool(threads, "wavedp-stats") as pool:
        early = device.gpu and method.fitted and sample is not None and cells < EARLY_CELLS
        if early:  # a short GPU scan cannot hide the fits' kernels' load: it starts now
            pool.submit(_load_fit, method)
            if traceback:
                engines.preload_walk()
        for batch in query_batches(todo, [q.codes[k].size for k in todo], n,
                                   context.batch_cells):
            live, jobs = batch_jobs(q, batch, wanted)
            start = time.perf_counter()
            scores = _sample_scores(method, jobs, sample)
            trace.add("sample", time.perf_counter() - start)
            started: list[Future] = []  # the fits' futures, once their kernels loaded

            def begin(started: list[Future] = started, jobs: list = jobs,
                      scores=scores) -> None:
                """The fits started (a GPU scan starts them once its launches are
                planned: they run while it scans). Their kernels load Numba on a thread of
                the pool, not in the thread that goes on to enqueue the launches."""
                if traceback and device.gpu and not early:  # the hits' host walk as well
                    engines.preload_walk()
                started.append(pool.submit(_started_fits, method, jobs, sample, scores, mode,
                                           count, n, pool))

            def fitted(started: list[Future] = started) -> list[QueryStats]:
                """Each job's statistics, once fitted."""
                return [f.result() for f in started[0].result()] if started else []

            def thresholds(fitted: Callable[[], list[QueryStats]] = fitted
                           ) -> list[int | None]:
                """Each job's scan floor, once its fit is done (the scan asks when it
                needs them)."""
                start = time.perf_counter()
                stats = fitted()
                trace.add("fit", time.perf_counter() - start)  # what the scan waited
                out = []
                for st in stats:
                    floor = st.floor(evalue, sizes)
                    for other in (min_score, 1 if mode == "local" else None):
                        if other is not None:
                            floor = other if floor is None else max(floor, other)
                    out.append(floor)
                return out

            later = Later(thresholds, begin)
            if scores is not None and _whole_sample(sample, db, mode):
                found = _selected(scores, sample[0].index, len(db), later)  # no second scan
                if progress is not None:
                    progress(sum(codes.size for *_, codes in jobs) * n)
            else:
                found = context.scanner.top([codes for *_, codes in jobs], 0, later,
                                            progress) if jobs else []
            later.begin()  # where the scan asked for none
            stats = fitted()
            for st in stats:
                kind = re.sub(r"\d+", "#", st.reason)  # one warning a kind, not a count
                if not st.available and kind not in said:
                    said.add(kind)
                    warnings.warn(f"no E-values for some queries: {st.reason}, and BLAST has "
                                  "no table for this scoring and mode", StatisticsWarning,
                                  stacklevel=4)
            start = time.perf_counter()
            ranked = _rank(context, live, jobs, found, stats, options, pool)
            trace.add("rank", time.perf_counter() - start)
            start = time.perf_counter()
            hits = _hits(context, q, live, jobs, ranked, stats, options)
            trace.add("align", time.perf_counter() - start)
            for k in batch:
                yield k, hits.get(k, [])


def _whole_sample(sample: tuple[Sample, Scanner] | None, db: Database, mode: str) -> bool:
    """Whether the sample holds every database sequence a scan could report (all of them, or
    in local mode every non-empty one: an empty one scores 0): then each job's scores
    against the sample are its scan's, and the database is scanned once, not twice."""
    if sample is None:
        return False
    size = sample[0].index.size
    return size == len(db) or (mode == "local" and size == np.count_nonzero(db.lengths))


def _selected(scores: np.ndarray, index: np.ndarray, count: int, thresholds: Later
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    """What a scanner's ``top`` (every candidate) gives each job, from its ``scores`` (one
    row a job) against the sample's sequences ``index`` (every one a scan could report;
    the others score 0) of a database of ``count``: the indices at or above its threshold,
    ranked, and their scores."""
    limits = thresholds_of(thresholds)
    whole = np.zeros(count, np.int64)
    out = []
    for row, limit in zip(scores, limits, strict=True):
        whole[index] = row
        idx = top(whole, 0, limit)
        out.append((idx, whole[idx]))
    return out


def _sample_scores(method: Method, jobs: list, sample: tuple[Sample, Scanner] | None
                   ) -> np.ndarray | None:
    """Each job's scores against the sample (fitted methods), one row per job."""
    if method.fitted and sample is not None and jobs:
        return sample[1].matrix([codes for *_, codes in jobs])
    return None


def _load_fit(method: Method) -> None:
    """The fit's kernels' modules imported (Numba with them) and Numba's code generator
    started (a task of the pool)."""
    from ..engines.cpu.compile import warm  # lazy: it imports Numba (as the kernels do)

    empirical.kernels()
    if method.composition is not None:
        comp_stats.kernels()
    warm()


def _started_fits(method: Method, jobs: list, sample: tuple[Sample, Scanner] | None,
                  scores: np.ndarray | None, mode: str, count: int, residues: int,
                  pool: ThreadPoolExecutor) -> list[Future]:
    """:func:`_fits`, after saying that the fit's kernels compile where they do (the
    kernels' module loads Numba; a sample of fewer than MIN_SUBJECTS is not fitted, and
    compiles nothing): a task of the pool."""
    if method.fitted and sample is not None and sample[0].index.size >= empirical.MIN_SUBJECTS:
        empirical.kernels().announce()
    return _fits(method, jobs, sample, scores, mode, count, residues, pool)


def _fits(method: Method, jobs: list, sample: tuple[Sample, Scanner] | None,
          scores: np.ndarray | None, mode: str, count: int, residues: int,
          pool: ThreadPoolExecutor) -> list[Future]:
    """Each job's statistics (fitted on the sample's scores where the method fits), as
    futures of the pool's threads (the fit's kernels release the GIL). Where the kernels are
    not compiled yet, the first job runs here first: they compile in half the time in this
    thread."""
    def one(j: int) -> QueryStats:
        return QueryStats.of(method, jobs[j][3], None if scores is None else scores[j],
                             None if sample is None else sample[0], mode, count, residues)

    futures: list[Future] = []
    if jobs and scores is not None and not empirical.kernels().compiled():
        here: Future = Future()
        here.set_result(one(0))
        futures.append(here)
    return futures + [pool.submit(one, j) for j in range(len(futures), len(jobs))]


def _rank(context: Context, live: list[int], jobs: list, found: list,
          stats: list[QueryStats], options: Options,
          pool: ThreadPoolExecutor) -> dict[int, _Candidates]:
    """Each live query's candidates with their first E-values, cut at the E-value cutoff
    and in rank order (E-value, then score descending, database order, strand)."""
    db, lut, method, evalue = context.db, context.lut, options.method, options.evalue
    lengths = np.asarray(db.lengths)
    per_query: dict[int, list[int]] = {}
    for j, (k, *_rest) in enumerate(jobs):
        per_query.setdefault(k, []).append(j)

    def one(k: int) -> tuple[int, _Candidates]:
        parts = []
        for j in per_query[k]:
            index, score = found[j]
            index = np.asarray(index, np.int64)
            score = np.asarray(score, np.int64)
            st = stats[j]
            keep = lengths[index] > 0  # an empty subject has no hits
            if st.fit is not None and evalue is not None and index.size:
                # the scan's floor is the lowest over all lengths; a candidate whose raw score
                # misses its own length's threshold cannot reach the cutoff (the effective
                # score is at most the raw one)
                keep &= score >= st.fit.threshold(evalue, lengths[index]) - 1e-6
            index, score = index[keep], score[keep]
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


def _hits(context: Context, q: Prepared, live: list[int], jobs: list,
          ranked: dict[int, _Candidates], stats: list[QueryStats],
          options: Options) -> dict[int, list[Alignment]]:
    """The reported hits of each live query: aligned in rank order, in rounds until the best
    ``top`` by final E-value are known (one round without rescoring)."""
    top, evalue, min_score, method = (options.top, options.evalue, options.min_score,
                                      options.method)
    traceback, fraction = options.traceback, options.fraction
    # final E-values may rise above the first ones: aligned in rounds
    rescore = (method.composition is not None and method.composition.rescores and traceback
               or method.reverse_null)
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
        entries = [Ranked(k, views[k], ranked[k].index[a:b], ranked[k].score[a:b],
                          ranked[k].strand[a:b]) for k, a, b in batch]
        aligned = align_ranked(context, q, entries, traceback, None, fraction, grouped=True,
                               limit=options.max_hsps)
        items = [(k, i, aln) for (k, a, _), pairs in zip(batch, aligned, strict=True)
                 for i, alns in enumerate(pairs, a) for aln in alns]
        for (k, i, aln), (e, bits) in zip(
                items, _finals(context, items, ranked, stats, jobs, rescore, method),
                strict=True):
            c = ranked[k]
            done[k].append((e, -aln.score, int(c.index[i]), int(c.strand[i]),
                            replaced(aln, evalue=e, bitscore=bits)))
        for k, _, b in batch:
            taken[k] = b
        pending = []
        for k in live:
            c = ranked[k]
            if taken[k] >= len(c.index) or not rescore or top == 0:
                continue
            finals = _finals_ranked(done[k], fraction is not None)
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
        items = at_most(items, lambda item: item[2], options.max_hsps)
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


def _capped(context: Context, eff: np.ndarray, score: np.ndarray, ratio: np.ndarray, *,
            job: np.ndarray, target: np.ndarray, lengths: np.ndarray,
            stats: list[QueryStats], jobs: list, allowance: float) -> np.ndarray:
    """``eff`` at most ``S - S_rev + u + allowance`` for each hit with a fit (the reverse
    null of ``reverse.py``; ``u`` the effective score of E-value 1 against the hit's subject
    length, on the fit's lattice as its E-values are), each (query, subject) reversed once."""
    sel = np.flatnonzero([stats[int(j)].fit is not None for j in job])
    if not sel.size:
        return eff
    pairs, back = np.unique(np.stack([job[sel], target[sel]], axis=1), axis=0,
                            return_inverse=True)
    used, which = np.unique(pairs[:, 0], return_inverse=True)
    rev = reversed_scores(context, [jobs[int(j)][3] for j in used], which.reshape(-1),
                          pairs[:, 1])[back.reshape(-1)]
    u = np.empty(sel.size)
    for j in used.tolist():
        mine = job[sel] == j
        u[mine] = stats[j].fit.threshold(1.0, lengths[sel][mine], spacing=0.0) \
            + 0.5 * ratio[sel][mine]
    out = eff.copy()
    out[sel] = np.minimum(eff[sel], score[sel] - rev + u + allowance)
    return out


def _finals_ranked(done: list[tuple], by_pair: bool) -> list[float]:
    """The final E-values known (``done``: (E, -score, index, strand, alignment)), ranked;
    ``by_pair``: each pair's best (``top`` counts pairs with ``fraction``)."""
    if not by_pair:
        return sorted(_key(item[0]) for item in done)
    best: dict[tuple[int, int], float] = {}
    for e, _, index, strand, _ in done:
        best[index, strand] = min(best.get((index, strand), np.inf), _key(e))
    return sorted(best.values())


def _key(e: float | None) -> float:
    return np.inf if e is None or np.isnan(e) else float(e)


def _finals(context: Context, items: list[tuple[int, int, Alignment]],
            ranked: dict[int, _Candidates], stats: list[QueryStats], jobs: list,
            rescore: bool, method: Method) -> list[tuple[float | None, float | None]]:
    """Each aligned hit's E-value and bit score (``items``: query, its candidate's rank,
    the alignment; several alignments of a pair with ``fraction``): from its own score,
    with composition times its pair's lambda ratio and, rescoring, the smaller of that and
    its alignment rescored under the pair's adjusted matrix (all hits at once); then, where
    the method has it, at most the reverse null's cap (``reverse.py``)."""
    db = context.db
    n = len(items)
    ratio = np.array([ranked[k].ratio[i] for k, i, _ in items], dtype=np.float64)
    target = np.array([ranked[k].index[i] for k, i, _ in items], dtype=np.int64)
    job = np.array([ranked[k].job[i] for k, i, _ in items], dtype=np.int64)
    score = np.array([aln.score for _, _, aln in items], dtype=np.float64)
    eff = score * ratio
    c = method.composition
    if rescore and c is not None and c.rescores:
        every = [x for x, (k, _, aln) in enumerate(items)
                 if aln.cigar is not None and ranked[k].freqs is not None]
        for a in range(0, len(every), RESCORED):  # each hit's own matrix: memory per slice
            sel = every[a:a + RESCORED]
            counts = np.stack([comp_stats.pair_counts(
                jobs[job[x]][3], context.subject(int(target[x])), items[x][2].cigar,
                items[x][2].query_start or 0, items[x][2].target_start or 0, c.size)
                for x in sel])
            query_freqs = np.stack([stats[job[x]].query_freq for x in sel])
            subject_freqs = np.stack([ranked[items[x][0]].freqs[items[x][1]] for x in sel])
            adjusted = c.adjusted_scores(score[sel], counts, query_freqs, subject_freqs)
            eff[sel] = c.combined(eff[sel], adjusted)
    if isinstance(c, ProfileComposition) and ranked:  # each hit under its adjusted rows
        for x, (k, i, aln) in enumerate(items):
            if aln.cigar is not None and aln.query_start is not None and \
                    ranked[k].freqs is not None:
                again = c.rescored(score[x], jobs[job[x]][3], aln,
                                   context.subject(int(target[x])), ranked[k].freqs[i])
                eff[x] = min(eff[x], again + c.allowance)
    lengths = np.asarray(db.lengths)[target].astype(np.int64)
    if method.reverse_null and c is not None and n:
        eff = _capped(context, eff, score, ratio, job=job, target=target, lengths=lengths,
                      stats=stats, jobs=jobs, allowance=c.allowance)
    out: list[tuple[float | None, float | None]] = [(None, None)] * n
    for j in np.unique(job):
        sel = np.flatnonzero(job == j)
        values = stats[int(j)].values(eff[sel], lengths[sel],
                                      None if c is None else ratio[sel])
        if values is not None:
            for x, e, bits in zip(sel, values[0], values[1], strict=True):
                out[x] = (float(e), float(bits))
    return out
