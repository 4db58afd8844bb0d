"""GPU part of the search benchmark (run by ``benchmarks/search.py --device gpu``).

The 20 queries of allqueries.fasta against a seeded random protein database (BLOSUM62
background frequencies; 1,000,000 x 512 by default, or lognormal lengths), BLOSUM62 11/1,
through the public API (``wavedp.search`` with a ``wavedp.db.database.Database`` built from
arrays): score-only, then with traceback of the top 10 per query. Prints the time split
(upload, scan, 32-bit rescoring of saturated pairs, top-K, aligning the hits) and the anchor:
CUDASW++4.0's published 4,977 GCUPS on this workplace's H100 for the same queries and
database shape (shared/data/README.md).
"""

from __future__ import annotations

import time

import numpy as np

import wavedp
from wavedp.db.database import Database
from wavedp.db.files import PROTEIN_LETTERS
from wavedp.trace import Trace

#: CUDASW++4.0 (DPX, 16-bit) on this workplace's H100, 1,000,000 x 512, the 20 queries
CUDASW_GCUPS = 4977.0

def array_database(seed: int, count: int, length: int, lognormal: bool, letters: str,
                   frequencies: list[float]) -> Database:
    """A random protein database of ``letters`` drawn with ``frequencies``, built straight
    from arrays (no per-sequence strings)."""
    rng = np.random.default_rng(seed)
    if lognormal:
        lengths = np.clip(rng.lognormal(np.log(length), 0.8, count), 10, 35000).astype(np.int64)
    else:
        lengths = np.full(count, length, np.int64)
    codes = np.array([PROTEIN_LETTERS.index(c) for c in letters], np.uint8)
    p = np.array(frequencies) / sum(frequencies)
    # letters drawn through a 65,536-entry table of the frequencies (fast for 10^9 residues)
    table = codes[np.searchsorted(np.cumsum(p), (np.arange(1 << 16) + 0.5) / (1 << 16))]
    residues = table[rng.integers(0, 1 << 16, int(lengths.sum()), dtype=np.uint16)]
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    composition = np.bincount(residues, minlength=len(PROTEIN_LETTERS)).astype(np.int64)
    return Database(path=None, alphabet="protein", letters=PROTEIN_LETTERS, residues=residues,
                    offsets=offsets, lengths=lengths.astype(np.int32),
                    ids=[f"s{k}" for k in range(count)], composition=composition,
                    longest=int(lengths.max()))


def gpu_part(queries: list[str], db: Database, repeats: int,
             partition: str = "auto") -> list[dict]:
    """Score-only and traceback runs; returns table rows."""
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    cells = sum(len(q) for q in queries) * db.total_residues
    t0 = time.perf_counter()
    for traceback in (False, True):  # every kernel and Numba specialisation a run uses
        wavedp.search(queries, db, scoring, top=10, traceback=traceback, device="gpu",
                      partition=partition)
    warm = time.perf_counter() - t0  # NVRTC and Numba compiles (or cache loads) included
    rows = []
    for traceback in (False, True):
        times, splits = [], []
        for _ in range(repeats):
            trace = Trace()
            t0 = time.perf_counter()
            hits = wavedp.search(queries, db, scoring, top=10, traceback=traceback,
                                 device="gpu", partition=partition, trace=trace)
            times.append(time.perf_counter() - t0)
            splits.append({**trace.seconds, **trace.counts})
        k = int(np.argsort(times)[len(times) // 2])
        seconds = times[k]
        rows.append({"run": "traceback top 10" if traceback else "score-only",
                     "seconds": seconds, "gcups": cells / seconds / 1e9, "split": splits[k],
                     "hits": sum(len(h) for h in hits)})
    rows[0]["warm"] = warm
    return rows


def align_all_part(queries: list[str], db: Database, count: int = 5000) -> None:
    """``wavedp.align_all`` of the queries against the first ``count`` database sequences on
    the GPU (the batch kernel, a warp per pair): score-only and with traceback, against the
    CPU engine on all cores in the same run (same results asserted)."""
    import os

    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    targets = [db.text(k) for k in range(min(count, len(db)))]
    cells = sum(len(q) for q in queries) * sum(len(t) for t in targets)
    print(f"\nalign_all: {len(queries)} queries x {len(targets):,} sequences, BLOSUM62 11/1 "
          f"({os.cpu_count()} CPU cores for the CPU engine)")
    print("| run | GPU s | GPU GCUPS | CPU s | CPU GCUPS | GPU / CPU |")
    print("|---|---|---|---|---|---|")
    for traceback in (False, True):
        seconds = {}
        results = {}
        for device in ("gpu", "cpu"):
            wavedp.align_all(queries[:1], targets[:50], scoring, traceback=traceback,
                             device=device)  # compiles
            t0 = time.perf_counter()
            results[device] = wavedp.align_all(queries, targets, scoring,
                                               traceback=traceback, device=device)
            seconds[device] = time.perf_counter() - t0
        assert results["gpu"] == results["cpu"]
        g, c = cells / seconds["gpu"] / 1e9, cells / seconds["cpu"] / 1e9
        print(f"| {'traceback' if traceback else 'score-only'} | {seconds['gpu']:.2f} | "
              f"{g:,.1f} | {seconds['cpu']:.2f} | {c:,.1f} | {g / c:.1f} |")


def report(rows: list[dict], db: Database, nq: int, partition: str = "auto") -> None:
    parts = f"partition {partition}"
    print(f"\nGPU: {nq} queries x {len(db):,} sequences ({db.total_residues:,} residues), "
          f"BLOSUM62 11/1, {parts}, warm-up (one untimed run of each, compiles included) "
          f"{rows[0]['warm']:.1f} s")
    print("| run | seconds | GCUPS | CUDASW++4.0 (published) | ratio | upload | scan | rescore "
          "(pairs) | top-K | align hits |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["split"]
        print(f"| {r['run']} | {r['seconds']:.2f} | {r['gcups']:,.0f} | {CUDASW_GCUPS:,.0f} | "
              f"{r['gcups'] / CUDASW_GCUPS:.2f} | {s.get('upload', 0):.2f} | "
              f"{s.get('scan', 0):.2f} | {s.get('rescore', 0):.3f} ({s.get('rescored', 0)}) | "
              f"{s.get('topk', 0):.2f} | {s.get('align', 0):.2f} |")
    print(f"traceback / score-only: {rows[1]['seconds'] / rows[0]['seconds']:.2f}x")

