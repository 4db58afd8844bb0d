"""All-pairs score matrix: ``wavedp.scores`` of every query against every target.

Run from the repository root:  python benchmarks/scores.py [--device gpu|cpu]
    [--queries N] [--sequences N] [--length L] [--seed K]
(with wavedp installed, or ``PYTHONPATH=src``). Queries and targets are seeded random
proteins (BLOSUM62 background frequencies, lognormal lengths with median ``--length``);
BLOSUM62, gap open 11, extend 1, local mode. Default: 1,000 x 10,000; size it down with
``--queries``/``--sequences`` on a CPU.

Reported: seconds and GCUPS (sum of query lengths x sum of target lengths, per second), the
warm-up (Numba's compilation or cache load, the GPU's kernel compilation) timed apart. Anchor
on the CPU, measured in the same run on the same data: pyopal (Opal's SIMD inter-sequence
Smith-Waterman) scoring every pair on every core, its scores checked equal to wavedp's. On
the GPU: CUDASW++4.0's published H100 figure for its BLOSUM62 database search.
"""

from __future__ import annotations

import argparse
import multiprocessing.pool
import os
import time

import numpy as np
from search import GAP_EXTEND, GAP_OPEN, random_database

import wavedp
from wavedp.score_matrix import scores

#: CUDASW++4.0's published H100 figure for its BLOSUM62 protein search (as benchmarks/search.py)
CUDASW_GCUPS = 4977.0


def pyopal_scores(queries: list[str], targets: list[str]) -> tuple[np.ndarray, float]:
    """pyopal's local score of every pair (all cores) and its seconds."""
    import pyopal  # the anchor: installed for benchmarks only

    threads = os.cpu_count() or 1
    db = pyopal.Database(targets)
    out = np.empty((len(queries), len(targets)), np.int32)
    t0 = time.perf_counter()
    with multiprocessing.pool.ThreadPool(threads) as pool:
        for k, q in enumerate(queries):
            for hit in pyopal.align(q, db, "BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND,
                                    mode="score", algorithm="sw", threads=threads, pool=pool):
                out[k, hit.target_index] = hit.score
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "gpu"], default="gpu")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--sequences", type=int, default=10000, help="targets")
    parser.add_argument("--length", type=int, default=300, help="median sequence length")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    queries = random_database(args.seed, args.queries, args.length, True, False)
    targets = random_database(args.seed + 1, args.sequences, args.length, True, False)
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND)
    cells = float(sum(map(len, queries))) * float(sum(map(len, targets)))

    t0 = time.perf_counter()  # warm-up, timed apart: compilation, not scoring
    if args.device == "cpu":
        scores(queries[:2], targets[:50], scoring, device="cpu")
    else:
        scores(queries, targets, scoring, device="gpu")
    warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    matrix = scores(queries, targets, scoring, device=args.device)
    seconds = time.perf_counter() - t0
    gcups = cells / seconds / 1e9

    print(f"{len(queries)} queries ({sum(map(len, queries))} residues) x {len(targets)} targets "
          f"({sum(map(len, targets))} residues), BLOSUM62 11/1 local, {cells:.3g} cells; "
          f"{os.cpu_count()} CPUs; warm-up {warm:.1f} s\n")
    print("| device | seconds | GCUPS | anchor | anchor s | anchor GCUPS | ratio |")
    print("|---|---|---|---|---|---|---|")
    if args.device == "cpu":
        theirs, anchor_s = pyopal_scores(queries, targets)
        if not np.array_equal(theirs, matrix):
            raise SystemExit(f"pyopal and wavedp differ on {int((theirs != matrix).sum())} "
                             "pairs")
        anchor = cells / anchor_s / 1e9
        print(f"| cpu | {seconds:.2f} | {gcups:.2f} | pyopal (scores equal) | {anchor_s:.2f} "
              f"| {anchor:.2f} | {gcups / anchor:.2f} |")
    else:
        print(f"| gpu | {seconds:.2f} | {gcups:.1f} | CUDASW++4.0 (published, H100) | - "
              f"| {CUDASW_GCUPS:.0f} | {gcups / CUDASW_GCUPS:.2f} |")


if __name__ == "__main__":
    main()
