"""The service's state: each database opened once (checksums checked at start), its
searchers built once per scoring and mode (the GPU keeps the database resident between
searches), and a search run and written exactly as ``wavedp search`` writes it."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..api import Prepared
from ..db.database import Database
from ..errors import InputError
from ..formats import sam_header_lines
from ..search import text
from ..search.api import Searcher
from ..seqio import read_records
from .requests import RequestError, SearchRequest

#: searchers kept (a database under one scoring and mode each), the least recently used
#: closed first
SEARCHERS = 8


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
        """(the answer, its media type) of ``request``: ``tsv`` the lines ``wavedp search``
        prints for the same queries and options, ``sam`` its SAM, ``json`` each query's
        hits as objects. A fault of the request is a RequestError."""
        name, db = self._database(request.database)
        try:
            scoring = self._scoring(request, db)
            records = self._records(request.queries)
            queries = Prepared.from_records(records, scoring, "query", "the request")
            with self._lock:
                searcher = self._searcher(name, db, scoring, request.mode)
                hits = searcher.search(queries, top=request.top, evalue=request.cutoff,
                                       min_score=request.min_score, strand=request.strand,
                                       stats=request.stats)
        except InputError as exc:
            raise RequestError(str(exc)) from None
        if request.format == "json":
            return json.dumps({"database": name, "queries": [
                {"id": rid, "hits": [json.loads(line) for line in
                                     text.render(found, "json").splitlines()]}
                for (rid, _), found in zip(records, hits, strict=True)]}), "application/json"
        if request.format == "sam":
            head = sam_header_lines(zip(db.ids, db.lengths.tolist(), strict=True))
            body = "".join(text.render(found, "sam") for found in hits)
            return "".join(line + "\n" for line in head) + body, "text/plain"
        columns = request.columns
        return ("".join(text.render(found, "blast6", columns, scoring) for found in hits),
                "text/tab-separated-values")

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
            with tempfile.NamedTemporaryFile("w", suffix=".fa", encoding="utf-8",
                                             delete=False) as fh:
                fh.write(queries)
            try:
                records = read_records(fh.name)
            except InputError as exc:
                raise RequestError("queries: " + str(exc).replace(fh.name, "the request")
                                   ) from None
            finally:
                os.unlink(fh.name)
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
