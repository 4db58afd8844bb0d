"""What the statistics cost: one search under each ``--stats``, same resident database.

Run from the repository root:  python benchmarks/stats_cost.py [--device gpu]
[--sequences N] [--queries K] [--repeats R] [--profile]  (with wavedp installed, or
``PYTHONPATH=src``).

A seeded protein database (BLOSUM62 background, lognormal lengths, median 300, written as
FASTA and built with ``Database.build``) is held by one ``wavedp.Searcher``; the queries are
the first K of ``allqueries.fasta`` (``../shared/data`` or ``.carry``). Each search (top 10,
E <= 10, with traceback) runs under ``none``, ``blast`` and ``fitted`` in turns, after a
warm-up of each (kernels compiled, the fit's sample scanned once); the median of the
repeats is reported with its phases (the trace: fit, scan, rank, align) and the ratio to
``blast``. A hit found under several has the same score under each (asserted).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import tempfile
import time

import numpy as np
from search import BACKGROUND, GAP_EXTEND, GAP_OPEN, LETTERS, QUERIES, read_fasta

import wavedp
from wavedp.trace import Trace

STATS = ("none", "blast", "fitted")


def write_database(path: str, count: int, seed: int) -> None:
    """``count`` seeded random proteins (lognormal lengths, median 300, sigma 0.65)."""
    rng = np.random.default_rng(seed)
    lengths = np.clip(rng.lognormal(np.log(300), 0.65, count), 8, 35_000).astype(np.int64)
    letters = np.frombuffer(LETTERS.encode(), np.uint8)
    p = np.array(BACKGROUND) / sum(BACKGROUND)
    pool = letters[rng.choice(letters.size, int(lengths.sum()), p=p)].tobytes()
    cuts = np.concatenate(([0], np.cumsum(lengths)))
    with open(path, "wb") as fh:
        for k in range(count):
            fh.write(b">s%d\n%s\n" % (k, pool[cuts[k]:cuts[k + 1]]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--sequences", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true",
                        help="then profile one --stats fitted search (cProfile, top 30)")
    args = parser.parse_args()
    found = next((q for q in QUERIES if os.path.exists(q)), None)
    if found is None:
        raise SystemExit(f"no queries: looked for {', '.join(QUERIES)}")
    queries = read_fasta(found)[:args.queries]
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND)
    with tempfile.TemporaryDirectory(prefix="wavedp-stats-") as tmp:
        fasta = os.path.join(tmp, "db.fa")
        write_database(fasta, args.sequences, args.seed)
        db = wavedp.Database.build(fasta, os.path.join(tmp, "db.wdb"), progress=False)
        trace = Trace()
        searcher = wavedp.Searcher(db, scoring, device=args.device, trace=trace)
        cells = sum(map(len, queries)) * db.total_residues
        print(f"# {len(queries)} queries x {len(db):,} proteins ({db.total_residues:,} "
              f"residues), device {args.device}, top 10, E <= 10, traceback\n")
        results, times, phases = {}, {s: [] for s in STATS}, {s: {} for s in STATS}
        for stats in STATS:  # warm-up: kernels, plans, the fit's sample
            searcher.search(queries, stats=stats)
        for _ in range(args.repeats):
            for stats in STATS:
                trace.seconds.clear()
                start = time.perf_counter()
                results[stats] = searcher.search(queries, stats=stats)
                times[stats].append(time.perf_counter() - start)
                for name, seconds in trace.seconds.items():
                    phases[stats].setdefault(name, []).append(seconds)
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(searcher.search, queries, stats="fitted")
            # the calling thread: what the search waits for (the pool's fits run beside it)
            pstats.Stats(profile).sort_stats("cumulative").print_stats(
                r"wavedp/(search|engines/cuda/scan/select|engines/cuda/gpus)", 30)
    for k in range(len(queries)):  # the statistics pick and order hits, never change scores
        seen: dict[str, int] = {}
        for stats in STATS:
            for h in results[stats][k]:
                assert seen.setdefault(h.target_id, h.score) == h.score, (stats, k, h)
    base = statistics.median(times["blast"])
    print("| stats | search (median) | GCUPS | vs blast | phases (median s) |")
    print("|---|---|---|---|---|")
    for stats in STATS:
        t = statistics.median(times[stats])
        parts = ", ".join(f"{name} {statistics.median(v):.3f}"
                          for name, v in sorted(phases[stats].items()))
        print(f"| {stats} | {t:.3f} s | {cells / t / 1e9:,.0f} | {t / base:.3f} | {parts} |")


if __name__ == "__main__":
    main()
