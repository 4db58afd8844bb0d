"""``wavedp.search``: every query against every database sequence, exact, ranked hits.

Validation and encoding happen once here, and the device is chosen once; the scanner (the
engine's of this machine, ``wavedp.engines.scanner``, or a Dask cluster's, ``cluster.py``)
only scores encoded queries against the database and returns each query's best candidates;
the reported hits are then aligned with the pairwise engines (``api.run_pairs``), so each is
the ``Alignment`` ``wavedp.align`` gives for that pair, plus its E-value, bit score and
strand.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from .. import engines
from ..alignment import Alignment
from ..api import Prepared, SeqLike, check_scoring, check_table_range, mode_code, sequences
from ..db.database import Database
from ..device import Device, choose
from ..engines.cuda.scan.partition import check_partition
from ..engines.protocol import Scanner
from ..errors import EmptyWarning, InputError
from ..profiles.iterate import INCLUSION, iterated
from ..profiles.iterate import check as check_iterations
from ..ranking import Later, Thresholds, merge
from ..scoring import Scoring
from ..seqio import iter_records, read_records
from ..stats import masking
from ..stats.composition import ProfileComposition
from ..stats.significance import DEFAULT_STATS, Method, Sample
from ..threads import check as check_threads
from ..threads import limited
from ..trace import Trace
from .cluster import ClusterScanner, database_path
from .fitted import run_fitted
from .hitlist import Ranked, align_ranked, batch_jobs, query_batches
from .options import DEFAULT_EVALUE, Context, Options

#: one batch of queries carries about this many DP cells (per scanner), so results stream out
#: (and ``--resume`` commits) as batches finish. The CPU scans each database chunk once for
#: the batch, and its hits' alignments go to the cores in one call: about a second of a
#: 16-core scan, so a many-vs-many batch has hundreds of pairs to spread (one query per
#: batch left 16 cores to a handful: 7.4 s for the hits of 200 x 10,000 proteins). The GPU
#: packs two queries per word and scans each database chunk once for the whole batch, and a
#: Dask cluster runs one round of shard tasks per batch
BATCH_CELLS = {"cpu": 5e10, "gpu": 2e13, "cluster": 2e13}

Progress = Callable[[int], None]


def _queries(queries: Any, scoring: Scoring) -> Prepared:
    if isinstance(queries, Prepared):
        return queries
    if isinstance(queries, (str, os.PathLike)) and os.path.isfile(queries):
        path = os.fspath(queries)
        return Prepared.from_records(read_records(path), scoring, "query", path)
    prepared = Prepared(sequences(queries, "queries",
                                  "a list of sequences or a FASTA/FASTQ path"), scoring, "query")
    if not prepared.codes:
        raise InputError("no queries given")
    return prepared


def profile_queries(queries: Any, scoring: Scoring) -> tuple[Prepared, np.ndarray] | None:
    """Profiles (``wavedp.Profile``, one or a list) as a search's queries: their letters,
    ids and codes (each profile's positions, offset past the profiles before it), and the
    table whose rows they index (each profile's ``table``, one after another); None where
    the queries are not profiles."""
    from ..profiles import Profile

    items = [queries] if isinstance(queries, Profile) else queries
    if not isinstance(items, (list, tuple)) or not any(isinstance(p, Profile) for p in items):
        return None
    if not all(isinstance(p, Profile) for p in items):
        raise InputError("queries: give profiles or sequences, not both")
    starts = np.cumsum([0] + [len(p) for p in items[:-1]])
    codes = [(start + p.codes()).astype(np.int32) for start, p in zip(starts, items,
                                                                      strict=True)]
    table = np.concatenate([p.table(scoring) for p in items])
    return Prepared.from_codes([p.query for p in items], [p.id for p in items], codes), table


def open_database(database: Any, scoring: Scoring, verify: bool | str = True) -> Database:
    """A :class:`Database` from a Database, a ``.wdb`` folder (checked, checksums included:
    ``verify`` as :meth:`Database.open` takes it), a FASTA/FASTQ path (read into memory) or a
    list of sequences."""
    kind = "dna" if scoring.is_dna else "protein"
    if isinstance(database, Database):
        return database
    if isinstance(database, (str, os.PathLike)):
        path = os.fspath(database)
        if os.path.isdir(path):
            return Database.open(path, verify)
        records = list(iter_records(path, titles=True))
        try:
            return Database.from_sequences([s for _, s, _ in records], [r for r, _, _ in records],
                                           alphabet=kind, titles=[t for _, _, t in records])
        except InputError as exc:
            raise InputError(f"file {path}, {exc}") from None
    prepared = Prepared(sequences(database, "database", "a list of sequences, a FASTA/FASTQ "
                                  "path, a .wdb folder or a wavedp.Database"), scoring, "target")
    return Database.from_sequences(prepared.texts, prepared.ids, alphabet=kind)


def search(queries: Iterable[SeqLike] | str | os.PathLike, database: Any, scoring: Scoring,
           top: int = 10, evalue: float | None = DEFAULT_EVALUE, *,
           min_score: int | None = None, mode: str = "local", traceback: bool = True,
           strand: str = "both",
           device: str | Device = "auto", fraction: float | None = None,
           client: Any = None, devices: Any = None,
           partition: str = "auto", trace: Trace | None = None, stats: str = DEFAULT_STATS,
           mask: bool = False, threads: int | None = None, max_hsps: int | None = None,
           iterations: int = 1, inclusion_evalue: float = INCLUSION
           ) -> list[list[Alignment]]:
    """Search every query against ``database``; one ranked hit list per query (query order).

    ``database``: a list of sequences, a FASTA/FASTQ path, a ``.wdb`` folder or a
    :class:`Database`. Hits rank by E-value, then score, then database index (then plus
    strand first); by score where there are no statistics (``stats="none"``); ``top=0`` keeps
    all, ``min_score`` and ``evalue`` (None: no E-value filter) filter. ``stats``: where
    E-values come from (``fitted``, ``empirical``, ``composition``, ``blast``, ``none``:
    ``stats.significance``); ``mask``: the queries' low-complexity regions (tantan) score
    as X (N for DNA). ``threads``: the CPU stages (scan, alignments, hits) on at most that
    many threads (default every core).
    Each hit equals ``wavedp.align`` on its pair, with ``evalue``, ``bitscore`` (None without
    statistics) and ``strand`` (DNA; ``both`` strands by default) filled in.
    ``fraction`` (local mode, in (0, 1]): each reported (query, target) pair expands into its
    non-intersecting local alignments scoring at least ``fraction`` times the pair's best
    (``wavedp.local_hits``); ``top`` then counts pairs, the filters apply to every alignment,
    and a query's alignments rank by score, then database index, strand and discovery order.
    ``max_hsps`` (local mode): at most that many such alignments a pair (BLAST's
    ``-max_hsps``), each passing the filters; without ``fraction``, any positive score.
    ``client``: a ``dask.distributed.Client`` (or a function returning one, called once the
    input is validated; the caller closes it); the database (a ``.wdb`` folder) is then
    scanned in shards by its workers on their ``device`` (``wavedp.dbsearch.cluster``), with the
    same results. The hits are aligned here, on the CPU where ``gpu`` finds no GPU here.
    ``devices``: the GPUs of this machine to use (indices, or ``"0,1"``; default every
    visible one): the database is sharded over them by residues and the hits spread over
    them, with the same results as one GPU.
    ``partition``: how the GPU scan cuts queries x database into launches (``none``,
    ``static``, ``dynamic1``, ``dynamic2`` of ``engines/cuda/scan/partition.py``, or ``auto``, the
    predictor's fastest; on a cluster, each worker's); results never depend on it.
    ``trace``: a :class:`~wavedp.trace.Trace` that records the GPU scan's launches
    (predicted and measured) and the seconds of the search's phases.
    ``queries`` may be profiles (``wavedp.Profile``, one or a list): each scores with its
    own PSSM, E-values from the fit (``wavedp.profiles``). ``iterations`` (N > 1): each
    query searched in up to N rounds, a round's hits at E <= ``inclusion_evalue`` the next
    round's profile (``profiles.build``), until no new sequence is included; the hits
    are the last round's.
    """
    results = iter_search(queries, database, scoring, top=top, evalue=evalue,
                          min_score=min_score, mode=mode, traceback=traceback, strand=strand,
                          device=device, fraction=fraction, client=client,
                          devices=devices, partition=partition, trace=trace, stats=stats,
                          mask=mask, threads=threads, max_hsps=max_hsps,
                          iterations=iterations, inclusion_evalue=inclusion_evalue)
    return [hits for _, hits in results]


def iter_search(queries: Any, database: Any, scoring: Scoring, *, top: int = 10,
                evalue: float | None = DEFAULT_EVALUE, min_score: int | None = None,
                mode: str = "local", traceback: bool = True, strand: str = "both",
                device: str | Device = "auto", progress: Progress | None = None,
                skip: Iterable[int] = (), fraction: float | None = None,
                client: Any = None, devices: Any = None, partition: str = "auto",
                trace: Trace | None = None, grid_cap: int | None = None,
                stats: str = DEFAULT_STATS, mask: bool = False, threads: int | None = None,
                max_hsps: int | None = None, iterations: int = 1,
                inclusion_evalue: float = INCLUSION) -> Iterator[tuple[int, list[Alignment]]]:
    """:func:`search` as a generator of ``(query index, hits)`` in query order, queries in
    ``skip`` left out; ``progress(cells)`` is called as work completes; ``grid_cap``: every
    GPU scan launch on at most that many blocks (the energy lab's capped searches). All
    input is validated, and resource limits checked, before the first result."""
    scoring = check_scoring(scoring)
    mode_code(mode)
    check_partition(partition)
    profiled = profile_queries(queries, scoring)
    options = Options.of(scoring, mode, top=top, evalue=evalue, min_score=min_score,
                         traceback=traceback, strand=strand, fraction=fraction, stats=stats,
                         mask=mask, max_hsps=max_hsps, profile=profiled is not None)
    if (profiled is not None or iterations != 1) and client is not None:
        raise InputError("a profile's search runs on this machine: drop the cluster")
    if iterations != 1:  # rounds of searches on one Searcher
        searcher = Searcher(database, scoring, mode=mode, device=device, devices=devices,
                            partition=partition, grid_cap=grid_cap, trace=trace,
                            threads=threads)
        return searcher.iter_search(queries, top=top, evalue=evalue, min_score=min_score,
                                    traceback=traceback, strand=strand, fraction=fraction,
                                    progress=progress, skip=skip, stats=stats, mask=mask,
                                    max_hsps=max_hsps, iterations=iterations,
                                    inclusion_evalue=inclusion_evalue)
    q, table = profiled if profiled is not None else (_queries(queries, scoring), None)
    searcher = Searcher(database, scoring, mode=mode, device=device, devices=devices,
                        partition=partition, client=client, grid_cap=grid_cap, trace=trace,
                        threads=threads)
    return searcher.run(q, options, progress, skip, table)


#: the search command reads, encodes and searches its queries this many records at a time
#: (its memory does not grow with their number)
QUERY_BATCH = 1 << 15


class Searcher:
    """A database held ready for many searches: opened once and its scanner built once, so
    on the GPU the database stays in GPU memory after the first search, the kernels stay
    compiled and the last plans are kept; each :meth:`search` then pays for the scan and
    the hits only. The arguments are :func:`search`'s; ``trace`` gathers every search's
    record (default a trace of its own: :attr:`trace`); ``threads`` bounds the CPU stages
    of every search."""

    def __init__(self, database: Any, scoring: Scoring, *, mode: str = "local",
                 device: str | Device = "auto", devices: Any = None, partition: str = "auto",
                 client: Any = None, grid_cap: int | None = None,
                 trace: Trace | None = None, threads: int | None = None) -> None:
        self.scoring = check_scoring(scoring)
        self.threads = check_threads(threads)
        self.mode, self.code = mode, mode_code(mode)
        self.partition = check_partition(partition)
        self.db = open_database(database, self.scoring)
        self.lut = self.db.codes_for(self.scoring)
        self.device = _local_device(device, devices, client)
        self.trace = trace if trace is not None else Trace()
        self._samples: dict[bool, tuple[Sample, Scanner]] = {}
        self.scanner: Scanner
        if client is not None:
            database_path(self.db)  # an in-memory database is refused before a cluster starts
            self.scanner = ClusterScanner(
                client() if callable(client) else client, self.db, self.scoring, self.code,
                device.kind if isinstance(device, Device) else device, self.partition)
            self.cells = BATCH_CELLS["cluster"]
        else:
            self.scanner = engines.scanner(
                self.device, self.db.residues, self.db.offsets, self.lut, self.scoring.table,
                self.scoring.gap_open, self.scoring.gap_extend, self.code,
                partition=self.partition, grid_cap=grid_cap, trace=self.trace,
                order=self.db.order if self.device.gpu else None, identity=self.db.identity)
            self.cells = BATCH_CELLS[self.device.kind]

    def search(self, queries: Any, *, top: int = 10, evalue: float | None = DEFAULT_EVALUE,
               min_score: int | None = None, traceback: bool = True, strand: str = "both",
               fraction: float | None = None, stats: str = DEFAULT_STATS,
               mask: bool = False, max_hsps: int | None = None, iterations: int = 1,
               inclusion_evalue: float = INCLUSION) -> list[list[Alignment]]:
        """Every query against the database: one ranked hit list per query, as
        :func:`search` gives."""
        return [hits for _, hits in self.iter_search(
            queries, top=top, evalue=evalue, min_score=min_score, traceback=traceback,
            strand=strand, fraction=fraction, stats=stats, mask=mask, max_hsps=max_hsps,
            iterations=iterations, inclusion_evalue=inclusion_evalue)]

    def iter_search(self, queries: Any, *, top: int = 10,
                    evalue: float | None = DEFAULT_EVALUE, min_score: int | None = None,
                    traceback: bool = True, strand: str = "both",
                    fraction: float | None = None, progress: Progress | None = None,
                    skip: Iterable[int] = (), stats: str = DEFAULT_STATS,
                    mask: bool = False, max_hsps: int | None = None, iterations: int = 1,
                    inclusion_evalue: float = INCLUSION,
                    on_profile: Callable[[int, Any], None] | None = None
                    ) -> Iterator[tuple[int, list[Alignment]]]:
        """:meth:`search` as a generator of ``(query index, hits)``, as :func:`iter_search`;
        ``on_profile(k, profile)``: query k's last round's profile (iterations)."""
        profiled = profile_queries(queries, self.scoring)
        iterations, inclusion = check_iterations(iterations, inclusion_evalue)
        options = Options.of(self.scoring, self.mode, top=top, evalue=evalue,
                             min_score=min_score, traceback=traceback, strand=strand,
                             fraction=fraction, stats=stats, mask=mask, max_hsps=max_hsps,
                             profile=profiled is not None or iterations > 1)
        if (profiled is not None or iterations > 1) and \
                isinstance(self.scanner, ClusterScanner):
            raise InputError("a profile's search runs on this machine: drop the cluster")
        if iterations > 1:
            if profiled is not None:
                raise InputError("iterations start from sequences: a profile's search is "
                                 "one round")
            if not traceback or not options.method.exists:
                raise InputError("iterations build each round's profile from the hits' "
                                 "alignments at an E-value: not with score-only or stats "
                                 "'none'")
            q = _queries(queries, self.scoring)
            report = {"top": top, "evalue": evalue, "min_score": min_score, "stats": stats}
            todo = [k for k in range(len(q.codes)) if k not in set(skip)]
            return iterated(self, q, todo, iterations, inclusion, report, on_profile,
                            progress)
        if profiled is not None:
            return self.run(profiled[0], options, progress, skip, table=profiled[1])
        return self.run(_queries(queries, self.scoring), options, progress, skip)

    def run(self, q: Prepared, options: Options, progress: Progress | None,
            skip: Iterable[int], table: np.ndarray | None = None
            ) -> Iterator[tuple[int, list[Alignment]]]:
        """The search of encoded queries ``q`` under checked ``options``: limits checked and
        empty sequences said now, the results as they come. ``table``: the queries are
        profiles, their codes the rows of this table (:func:`profile_queries`)."""
        longest = max(c.size for c in q.codes)
        if table is None:
            self.scoring.check_range(longest, self.db.longest)
        else:
            check_table_range(table, self.scoring, longest + self.db.longest)
        if options.traceback and not self.device.gpu and longest and self.db.longest:
            # a hit against the longest subject must fit (the GPU's traceback is linear)
            from ..engines.cpu.budget import check_traceback  # lazy: Numba

            letters = longest if table is not None else self.scoring.table.shape[0]
            check_traceback(np.array([longest]), np.array([self.db.longest]), letters, 1)
        skip = set(skip)
        todo = [k for k in range(len(q.codes)) if k not in skip]
        _warn_empty(q, self.db, todo)
        if options.mask:
            texts, codes = masking.masked(q.texts, q.codes, self.scoring)
            q = Prepared.from_codes(texts, q.ids, codes)
        return _limited(self._results(q, options, progress, todo, table), self.threads,
                        self.db)

    def _results(self, q: Prepared, options: Options, progress: Progress | None,
                 todo: list[int], table: np.ndarray | None
                 ) -> Iterator[tuple[int, list[Alignment]]]:
        scanner = self.scanner if table is None else self.scanner.with_table(table)
        if table is not None and options.method.name == "fitted" and self.mode == "local":
            options = replace(options, method=replace(  # a profile's composition statistics
                options.method, composition=ProfileComposition.of_table(self.scoring, table)))
        context = Context(self.db, self.lut, self.scoring, self.mode, self.device,
                          scanner, self.cells, self.trace, table)
        if options.method.name in ("blast", "none"):
            return _run(context, q, todo, options, progress)
        return run_fitted(context, q, todo, options, self._sample(options.method, table),
                          progress)

    def _sample(self, method: Method, table: np.ndarray | None = None
                ) -> tuple[Sample, Scanner] | None:
        """The database's sample for fitted statistics and a scanner of it (made once; for
        profiles, scoring with ``table``)."""
        if not method.fitted:
            return None
        key = method.composition is not None
        if key not in self._samples:
            sample = Sample.of(self.db, self.lut, method)
            residues, offsets = sample.residues(self.db, self.lut)
            scanner = engines.scanner(self.device, residues, offsets, None, self.scoring.table,
                                      self.scoring.gap_open, self.scoring.gap_extend,
                                      self.code, partition=self.partition, trace=Trace())
            self._samples[key] = (sample, scanner)
        sample, scanner = self._samples[key]
        return sample, scanner if table is None else scanner.with_table(table)


def _limited(results: Iterator[tuple[int, list[Alignment]]], threads: int | None,
             db: Database) -> Iterator[tuple[int, list[Alignment]]]:
    """``results`` with the CPU stages on at most ``threads`` threads while they run, the
    first once the database's background checksums (:meth:`Database.verified`) passed.
    Left early, ``results`` is closed here and then: the fitted search's generator holds a
    thread pool, which the garbage collector must not be left to stop (see
    ``pairs.reading._blocks``)."""
    try:
        with limited(threads):
            for n, item in enumerate(results):
                if not n:
                    db.verified()
                yield item
            db.verified()  # a search without results
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


def _warn_empty(q: Prepared, db: Database, todo: list[int]) -> None:
    """Say once that empty queries and database sequences have no hits (the rule of
    ``docs/design.md``, "Search")."""
    queries = [k for k in todo if q.codes[k].size == 0]
    warn_empty(len(queries), q.ids[queries[0]] if queries else None, db, stacklevel=4)


def warn_empty(queries: int, first: str | None, db: Database, stacklevel: int = 2) -> None:
    """Say that ``queries`` empty queries (``first`` the id of the first) and the empty
    database sequences have no hits, where there are some."""
    subjects = np.flatnonzero(np.asarray(db.lengths) == 0)
    parts = []
    if queries:
        parts.append(f"{queries} empty quer{'y' if queries == 1 else 'ies'} "
                     f"(the first: {first!r})")
    if subjects.size:
        parts.append(f"{subjects.size} empty database sequence{'s' * (subjects.size > 1)} "
                     f"(the first: {db.id(int(subjects[0]))!r})")
    if parts:
        warnings.warn(f"{' and '.join(parts)}: an empty sequence has no hits", EmptyWarning,
                      stacklevel=stacklevel)


def _local_device(device: str | Device, devices: Any, client: Any) -> Device:
    """The device of this process's work: the scan and the hits' alignments, or with a
    ``client`` the alignments only (the workers scan on ``device`` and check it themselves),
    which then fall back from ``gpu`` to the CPU where this process has no GPU."""
    if client is None:
        return choose(device, devices)
    name = device.kind if isinstance(device, Device) else device
    local = choose("auto" if name == "gpu" else name)
    if devices is not None:
        raise InputError("devices applies to a search on this machine; a cluster's workers "
                         "use their own GPUs")
    return local


def _run(context: Context, q: Prepared, todo: list[int], options: Options,
         progress: Progress | None) -> Iterator[tuple[int, list[Alignment]]]:
    """The queries ``todo`` of ``q`` searched in batches, BLAST's statistics (or none): each
    scan's floor from the E-value cutoff and ``min_score``, the candidates aligned."""
    db, scanner, mode = context.db, context.scanner, context.mode
    top, evalue, min_score, stats = (options.top, options.evalue, options.min_score,
                                     options.stats)
    traceback, fraction = options.traceback, options.fraction
    n = db.total_residues
    empty = np.asarray(db.lengths) == 0
    extra = int(empty.sum())  # empty subjects have no hits: ask for as many more candidates
    for batch in query_batches(todo, [q.codes[k].size for k in todo], n, context.batch_cells):
        live, jobs = batch_jobs(q, batch, options.strands)
        thresholds = []
        for _, _, _, codes in jobs:
            floor = None if min_score is None else min_score
            if evalue is not None and stats is not None:
                e_floor = stats.floor(evalue, codes.size, n)
                if e_floor is not None:
                    floor = e_floor if floor is None else max(floor, e_floor)
            if mode == "local":  # an alignment of no residues is not a hit
                floor = 1 if floor is None else max(floor, 1)
            thresholds.append(floor)
        # every score-only local hit: its end cell from the scan where the scanner finds it
        every = (getattr(scanner, "every_hit", None) if not top and not traceback and
                 fraction is None and mode == "local" else None)
        asked = [codes for *_, codes in jobs]
        floors: Thresholds = thresholds
        if traceback and context.device.gpu:  # the hits' host walk loads Numba while the
            # GPU scans
            floors = Later(lambda known=thresholds: known, lambda: engines.preload_walk())
        found = ((every(asked, floors, progress) if every is not None else
                  scanner.top(asked, top + extra if top else 0, floors, progress))
                 if jobs else [])
        ranked = []
        by_query: dict[int, list] = {}
        for (k, s, text, codes), candidates in zip(jobs, found, strict=True):
            if extra:
                keep = ~empty[candidates[0]]
                candidates = tuple(c[keep] for c in candidates)
            by_query.setdefault(k, []).append((s, text, codes, candidates))
        for k in live:
            parts = by_query[k]
            index, score, strand_of, ends = merge([(c[0], c[1], s, *c[2:])
                                                   for s, _, _, c in parts], top)
            views = {s: (text, codes) for s, text, codes, _ in parts}
            ranked.append(Ranked(k, views, index, score, strand_of, ends))
        start = time.perf_counter()
        aligned = dict(zip(live, align_ranked(context, q, ranked, traceback, stats, fraction,
                                              limit=options.max_hsps), strict=True))
        context.trace.add("align", time.perf_counter() - start)
        for k in batch:
            hits = aligned.get(k, [])
            if evalue is not None:
                hits = [h for h in hits if h.evalue is None or h.evalue <= evalue]
            if min_score is not None:
                hits = [h for h in hits if h.score >= min_score]
            yield k, hits
