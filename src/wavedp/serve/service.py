"""The service's state: each database opened once (checksums checked at start), its
searchers built once per scoring and mode (the GPU keeps the database resident between
searches), and a search run and written exactly as ``wavedp search`` writes it."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from concurrent.futures import Future
from dataclasses import dataclass, field

from ..api import Prepared
from ..db.database import Database
from ..dbsearch import text
from ..dbsearch.api import Searcher
from ..errors import InputError
from ..formats import format_alignment, sam_header_lines
from ..scoring import Scoring
from ..seqio import read_records, text_file
from .requests import RequestError, SearchRequest

#: searchers kept (a database under one scoring and mode each), the least recently used
#: closed first
SEARCHERS = 8


@dataclass(eq=False)
class Job:
    """A request checked and encoded, waiting for its search: ``key`` says which requests
    one search may serve together (database, scoring, mode and cutoffs); its answer comes on
    ``future``."""

    key: tuple
    request: SearchRequest
    database: str
    scoring: Scoring
    records: list[tuple[str, str]]
    queries: Prepared
    future: Future = field(default_factory=Future)

    total_residues: int = 0  # the database's

    @property
    def residues(self) -> int:
        """The queries' residues."""
        return sum(len(s) for _, s in self.records)


@dataclass(frozen=True)
class Limits:
    """What one request may ask: queries, their residues, and the body's bytes."""

    queries: int = 10_000
    residues: int = 10_000_000
    body: int = 64 << 20


class Service:
    """Databases by name (``{name: path of a .wdb folder}``), searched on ``device``
    (``auto``, ``gpu`` or ``cpu``) one request at a time."""

    def __init__(self, databases: dict[str, str], device: str = "auto",
                 limits: Limits | None = None) -> None:
        if not databases:
            raise InputError("serve needs at least one database")
        self.paths = dict(databases)
        self.databases = {name: Database.open(path) for name, path in databases.items()}
        self.device, self.limits = device, limits or Limits()
        self._searchers: OrderedDict[tuple, Searcher] = OrderedDict()
        self._lock = threading.Lock()  # one search at a time: they share the device

    def describe(self) -> list[dict]:
        """Each database: its name, alphabet, sequences and residues."""
        return [{"name": name, "alphabet": db.alphabet, "sequences": len(db),
                 "residues": db.total_residues} for name, db in self.databases.items()]

    def search(self, request: SearchRequest) -> tuple[str, str]:
        """(the answer, its media type) of ``request`` alone: ``tsv`` the lines ``wavedp
        search`` prints for the same queries and options, ``sam`` its SAM, ``json`` each
        query's hits as objects. A fault of the request is a RequestError."""
        job = self.prepare(request)
        self.run([job])
        return job.future.result()

    def prepare(self, request: SearchRequest) -> Job:
        """``request`` checked and its queries read and encoded: a :class:`Job` to
        :meth:`run` (a RequestError for a fault, before any search)."""
        name, db = self._database(request.database)
        try:
            scoring = self._scoring(request, db)
            records = self._records(request.queries)
            queries = Prepared.from_records(records, scoring, "query", "the request")
            scoring.check_range(max((c.size for c in queries.codes), default=0), db.longest)
        except InputError as exc:
            raise RequestError(str(exc)) from None
        key = (name, scoring, request.mode, request.top, float(request.cutoff),
               request.evalue is None, request.min_score, request.stats, request.strand)
        return Job(key, request, name, scoring, records, queries,
                   total_residues=db.total_residues)

    def run(self, jobs: list[Job]) -> None:
        """The jobs (of one key) searched together in one call, each one's answer set on
        its future: every query's hits are those of a search of it alone."""
        jobs = [job for job in jobs if job.future.set_running_or_notify_cancel()]
        if not jobs:
            return
        name, scoring, mode = jobs[0].key[:3]
        request = jobs[0].request
        queries = Prepared.from_codes([t for j in jobs for t in j.queries.texts],
                                      [i for j in jobs for i in j.queries.ids],
                                      [c for j in jobs for c in j.queries.codes])
        try:
            with self._lock:
                searcher = self._searcher(name, self.databases[name], scoring, mode)
                hits = searcher.search(queries, top=request.top, evalue=request.cutoff,
                                       min_score=request.min_score, strand=request.strand,
                                       stats=request.stats)
        except InputError as exc:
            for job in jobs:
                job.future.set_exception(RequestError(str(exc)))
            return
        except BaseException as exc:  # a device failure: every waiting request learns it
            for job in jobs:
                job.future.set_exception(exc)
            raise
        at = 0
        for job in jobs:
            found = hits[at:at + len(job.records)]
            at += len(job.records)
            job.future.set_result(self._written(job, found))

    def _written(self, job: Job, hits: list) -> tuple[str, str]:
        """A job's answer and its media type, from its queries' hits."""
        request, db = job.request, self.databases[job.database]
        if request.format == "json":  # each hit: the command's object, line and block
            return json.dumps({"database": job.database, "queries": [
                {"id": rid, "hits": [
                    {**json.loads(format_alignment(h, "json", search=True)), "blast6": line,
                     "pairwise": format_alignment(h, "pairwise")}
                    for h, line in zip(found, text.render(
                        found, "blast6", request.columns, job.scoring).splitlines(),
                        strict=True)]}
                for (rid, _), found in zip(job.records, hits, strict=True)]}), \
                "application/json"
        if request.format == "sam":
            head = sam_header_lines(zip(db.ids, db.lengths.tolist(), strict=True))
            body = "".join(text.render(found, "sam") for found in hits)
            return "".join(line + "\n" for line in head) + body, "text/plain"
        return ("".join(text.render(found, "blast6", request.columns, job.scoring)
                        for found in hits), "text/tab-separated-values")

    def _database(self, name: str | None) -> tuple[str, Database]:
        if name is None:
            if len(self.databases) > 1:
                raise RequestError(f"database: name one of {', '.join(self.databases)}")
            name = next(iter(self.databases))
        if name not in self.databases:
            raise RequestError(f"database: no database named {name!r}; GET /databases lists "
                               "them", status=404)
        return name, self.databases[name]

    @staticmethod
    def _scoring(request: SearchRequest, db: Database):
        """The command's scoring for these options (a DNA database given none: blastn's)."""
        matrix, match, mismatch, gap_open, gap_extend = request.scoring_key()
        if matrix is None and match is None and mismatch is None and db.alphabet == "dna":
            match, mismatch, gap_open, gap_extend = text.database_scoring(
                matrix, match, mismatch, gap_open, gap_extend)
        return text.scoring(matrix, match, mismatch, gap_open, gap_extend)

    def _records(self, queries: str | list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The queries as (id, sequence), FASTA text read by the command's own reader;
        within the limits."""
        if isinstance(queries, str):
            with text_file(queries) as path:
                try:
                    records = read_records(path)
                except InputError as exc:
                    raise RequestError("queries: " + str(exc).replace(path, "the request")
                                       ) from None
        else:
            records = queries
        if len(records) > self.limits.queries:
            raise RequestError(f"queries: {len(records):,} in one request, at most "
                               f"{self.limits.queries:,}", status=413)
        residues = sum(len(s) for _, s in records)
        if residues > self.limits.residues:
            raise RequestError(f"queries: {residues:,} residues in one request, at most "
                               f"{self.limits.residues:,}", status=413)
        return records

    def _searcher(self, name: str, db: Database, scoring, mode: str) -> Searcher:
        key = (name, scoring, mode)
        searcher = self._searchers.pop(key, None)
        if searcher is None:
            searcher = Searcher(db, scoring, mode=mode, device=self.device)
        self._searchers[key] = searcher
        while len(self._searchers) > SEARCHERS:
            self._searchers.popitem(last=False)
        return searcher
