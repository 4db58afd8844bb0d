"""The hits of a search as Alignments: queries in batches, each batch's ranked candidates
aligned in one pairwise engine call (``wavedp.align``'s pair for each)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ..alignment import Alignment, replaced
from ..api import Prepared, alignments, pair_alignments, pair_results
from ..db.database import Database
from ..ranking import MINUS
from ..scoring import Scoring
from .options import Context
from .strands import SIGN, reverse_complement
from .waterman_eggert import run_hits


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


class Ranked(NamedTuple):
    """A query's ranked candidates: its index, its (text, codes) by strand searched, the
    database indices, scores and strands in rank order and, where the scan found them,
    the end cells (int64 [n, 2]: what a score-only local hit reports)."""

    query: int
    views: dict[int, tuple[str, np.ndarray]]
    index: np.ndarray
    score: np.ndarray
    strand: np.ndarray
    ends: np.ndarray | None = None


def align_ranked(context: Context, q: Prepared, ranked: list[Ranked], traceback: bool, stats,
                 fraction: float | None = None, grouped: bool = False, *,
                 limit: int | None = None) -> list[list]:
    """The hits of each ranked query as Alignments, in rank order: every hit of the batch in
    one pairwise engine call (each strand of a query is a query of that call), or none
    where the scan found every score-only hit's end cell; with ``fraction``, each hit's
    non-intersecting alignments (``hits.run_hits``), at most ``limit`` a pair; ``grouped``:
    per query a list per ranked pair (its alignments), in the order asked."""
    db, scoring, mode = context.db, context.scoring, context.mode
    texts, ids, codes, rows = [], [], [], []  # each (query, strand) is a query of the call
    for r in ranked:
        view = np.zeros(2, np.int64)  # the strand's index among the calls' queries
        for s, (text, seq) in r.views.items():
            view[s] = len(texts)
            texts.append(text)
            ids.append(q.ids[r.query])
            codes.append(seq)
        rows.append(view[r.strand.astype(np.int64)])
    every = np.concatenate([r.index for r in ranked]) if ranked else np.empty(0, np.int64)
    order, target = np.unique(every, return_inverse=True)  # the call's targets
    order = order.tolist()
    subjects = Prepared.from_codes(
        [db.text(t) for t in order], [db.id(t) for t in order],
        [context.subject(t) for t in order])
    queries = Prepared.from_codes(texts, ids, codes)
    pairs = np.stack([np.concatenate(rows) if rows else np.empty(0, np.int64),
                      target.reshape(-1)], axis=1).astype(np.int64)
    if fraction is not None:
        found = run_hits(queries, subjects, pairs, scoring, fraction, limit, context.device)
        return _with_fraction(q, ranked, db, scoring, found, stats, grouped, limit)
    scanned = np.concatenate([r.score for r in ranked]) if ranked else np.empty(0, np.int32)
    strands = np.concatenate([r.strand for r in ranked]) if ranked else np.empty(0, np.int8)
    owners = [r.query for r in ranked for _ in range(r.index.size)]
    if not traceback and mode == "local" and all(r.ends is not None for r in ranked):
        ends = np.concatenate([r.ends for r in ranked]).reshape(-1, 2)
        unknown = [-1] * len(ends)
        found = pair_alignments(scanned.tolist(), unknown, ends[:, 0].tolist(), unknown,
                                ends[:, 1].tolist(), queries, subjects, pairs, mode=mode,
                                **_extra(q, owners, scanned, strands, db, scoring, stats,
                                         every))
    else:
        raws = pair_results(queries, subjects, pairs, scoring, mode, traceback, context.device,
                            table=context.table)
        got = np.array([raw[0] for raw in raws], np.int64)
        wrong = np.flatnonzero(got != scanned)
        if wrong.size:
            p = int(wrong[0])
            raise RuntimeError(f"search engine bug: query {q.ids[owners[p]]!r} vs database "
                               f"index {order[pairs[p, 1]]} scanned {scanned[p]}, aligned "
                               f"{got[p]}")
        found = alignments(raws, queries, subjects, pairs, mode,
                           **_extra(q, owners, scanned, strands, db, scoring, stats,
                                    every))
    out, start = [], 0
    for r in ranked:
        hits = found[start:start + r.index.size]
        start += r.index.size
        out.append([[h] for h in hits] if grouped else hits)
    return out


def _extra(q: Prepared, owners: list[int], scores: np.ndarray, strands: np.ndarray,
           db: Database, scoring: Scoring, stats, subjects: np.ndarray) -> dict[str, list]:
    """The search's fields of each hit (query ``owners``, ``scores``, ``strands``, database
    indices ``subjects``): the strand (DNA), the subject's title, the E-value and bit score
    (with ``stats``)."""
    n = len(owners)
    sign = [SIGN[s] for s in strands.tolist()] if scoring.is_dna else [None] * n
    titles = [db.title(t) for t in subjects.tolist()]
    if stats is None:
        return {"strand": sign, "target_title": titles, "evalue": [None] * n,
                "bitscore": [None] * n}
    total = db.total_residues
    pairs = list(zip(scores.tolist(), [q.codes[k].size for k in owners], strict=True))
    return {"strand": sign, "target_title": titles,
            "evalue": [stats.evalue(s, m, total) for s, m in pairs],
            "bitscore": [stats.bitscore(s) for s, _ in pairs]}


def _with_fraction(q: Prepared, ranked: list[Ranked], db: Database, scoring: Scoring,
                   alignments_of: list, stats, grouped: bool, limit: int | None) -> list[list]:
    """:func:`align_ranked` with ``fraction``: each ranked pair's non-intersecting local
    alignments (``alignments_of``, ``hits.run_hits``'), the first scoring what the scan
    found; not ``grouped``, at most ``limit`` a subject over both strands."""
    found = iter(alignments_of)
    out = []
    for r in ranked:
        hits: list = []
        for t, sc, s in zip(r.index.tolist(), r.score.tolist(), r.strand.tolist(),
                            strict=True):
            alns = next(found)  # none for a pair whose best is 0
            if (alns[0].score if alns else 0) != sc:
                raise RuntimeError(f"search engine bug: query {q.ids[r.query]!r} vs database "
                                   f"index {t} scanned {sc}, aligned "
                                   f"{alns[0].score if alns else 'nothing'}")
            extra = {"strand": SIGN[s] if scoring.is_dna else None, "target_title": db.title(t)}
            pair: list[Alignment] = []
            for aln in alns:
                if stats is not None:
                    extra["evalue"] = stats.evalue(aln.score, q.codes[r.query].size,
                                                   db.total_residues)
                    extra["bitscore"] = stats.bitscore(aln.score)
                changed = {f: v for f, v in extra.items() if getattr(aln, f) != v}
                pair.append(replaced(aln, **changed) if changed else aln)
            if grouped:
                hits.append(pair)
            else:
                hits.extend((aln, t) for aln in pair)
        if not grouped:  # stable: database order, strand, discovery
            hits.sort(key=lambda h: -h[0].score)
            hits = [aln for aln, _ in at_most(hits, lambda h: h[1], limit)]
        out.append(hits)
    return out


def at_most(items: list, subject: Callable[[Any], int], limit: int | None) -> list:
    """``items`` (best first) with at most ``limit`` of each ``subject`` (None: all): BLAST's
    ``-max_hsps``, which counts a subject's alignments on both strands."""
    if limit is None:
        return items
    seen: dict[int, int] = {}
    kept = []
    for item in items:
        t = subject(item)
        if seen.get(t, 0) < limit:
            seen[t] = seen.get(t, 0) + 1
            kept.append(item)
    return kept
