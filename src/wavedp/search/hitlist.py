"""The hits of a search as Alignments: queries in batches, each batch's ranked candidates
aligned in one pairwise engine call (``wavedp.align``'s pair for each)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..alignment import Alignment, replaced
from ..api import Prepared, run_pairs
from ..device import Device
from ..ranking import MINUS
from ..scoring import Scoring
from .database import Database
from .hits import run_hits
from .strands import SIGN, reverse_complement


def query_batches(todo: list[int], lengths: list[int], n: int, cells: float
                  ) -> Iterator[list[int]]:
    """The queries ``todo`` (of ``lengths``) in consecutive batches of about ``cells`` DP
    cells against ``n`` database residues (BATCH_CELLS)."""
    batch, work = [], 0.0
    for k, m in zip(todo, lengths, strict=True):
        batch.append(k)
        work += max(m, 1) * max(n, 1)
        if work >= cells:
            yield batch
            batch, work = [], 0.0
    if batch:
        yield batch


def batch_jobs(q: Prepared, batch: list[int], wanted: tuple[int, ...]
               ) -> tuple[list[int], list[tuple[int, int, str, np.ndarray]]]:
    """The queries of ``batch`` with residues (an empty query has no hits), and a scan job
    per query and strand searched: (query index, strand, text, codes), the minus strand's
    the reverse complement."""
    live = [k for k in batch if q.codes[k].size]
    jobs = []
    for k in live:
        for s in wanted:
            text, codes = q.texts[k], q.codes[k]
            if s == MINUS:
                text, codes = reverse_complement(text, codes)
            jobs.append((k, s, text, codes))
    return live, jobs


def align_ranked(q: Prepared, ranked: list, db: Database, lut, scoring: Scoring, mode: str,
                traceback: bool, device: Device, stats,
                fraction: float | None = None, grouped: bool = False) -> list[list]:
    """The hits of each ranked query as Alignments, in rank order: every hit of the batch in
    one pairwise engine call (each strand of a query is a query of that call); with
    ``fraction``, each hit's non-intersecting alignments (``hits.run_hits``); ``grouped``:
    per query a list per ranked pair (its alignments), in the order asked."""
    views, texts, ids, codes = {}, [], [], []  # (query, strand) -> index among the views
    targets: dict[int, int] = {}  # database index -> index among the targets
    rows = []
    for k, by_strand, index, _, strand_of in ranked:
        for s, (text, view) in by_strand.items():
            views[(k, s)] = len(texts)
            texts.append(text)
            ids.append(q.ids[k])
            codes.append(view)
        for t, s in zip(index.tolist(), strand_of.tolist(), strict=True):
            rows.append((views[(k, s)], targets.setdefault(t, len(targets))))
    order = list(targets)
    subjects = Prepared.from_codes(
        [db.text(t) for t in order], [db.id(t) for t in order],
        [db.codes(t) if lut is None else lut[db.codes(t)] for t in order])
    queries = Prepared.from_codes(texts, ids, codes)
    pairs = np.array(rows, dtype=np.int64).reshape(-1, 2)
    if fraction is None:
        found = iter([a] for a in run_pairs(queries, subjects, pairs, scoring, mode, traceback,
                                            device))
    else:
        found = iter(run_hits(queries, subjects, pairs, scoring, fraction, None, device))
    out = []
    for k, _, index, score, strand_of in ranked:
        hits: list = []
        for t, sc, s in zip(index.tolist(), score.tolist(), strand_of.tolist(), strict=True):
            alns = next(found)  # with fraction, none for a pair whose best is 0
            if (alns[0].score if alns else 0) != sc:
                raise RuntimeError(f"search engine bug: query {q.ids[k]!r} vs database index "
                                   f"{t} scanned {sc}, aligned "
                                   f"{alns[0].score if alns else 'nothing'}")
            extra = {"strand": SIGN[s] if scoring.is_dna else None}
            pair: list[Alignment] = []
            for aln in alns:
                if stats is not None:
                    extra["evalue"] = stats.evalue(aln.score, q.codes[k].size,
                                                   db.total_residues)
                    extra["bitscore"] = stats.bitscore(aln.score)
                changed = {f: v for f, v in extra.items() if getattr(aln, f) != v}
                (pair if grouped else hits).append(replaced(aln, **changed) if changed
                                                    else aln)
            if grouped:
                hits.append(pair)
        if fraction is not None and not grouped:  # stable: database order, strand, discovery
            hits.sort(key=lambda h: -h.score)
        out.append(hits)
    return out
