"""Many-vs-many search with non-intersecting hits (PaSWAS class): every sequence of A against
every sequence of B, each reported pair expanded into its alignments scoring at least
``--fraction`` of the pair's best.

Run from the repository root:  python benchmarks/many_vs_many.py [--device gpu|cpu|both]
(with wavedp installed, or ``PYTHONPATH=src``). A is ``--queries`` seeded random proteins
(BLOSUM62 background, lognormal lengths, median ``--length``); B is ``--targets`` of them, a
``--related`` share being mutated copies of an A sequence with one of its segments
duplicated (pairs with several hits), the rest random. Local mode, BLOSUM62, gap open 11,
extend 1, E-value 10 (the search's default), ``top=0`` (every pair that passes).

Reported: scan seconds and GCUPS (|A| x |B| cells, sum of m*n), hit-stage seconds, reported
pairs, alignments and alignments per second, total. Anchors measured in the same run: the CPU
scan against pyopal scoring the same pairs (first ``--anchor-queries`` queries), the GPU scan
against CUDASW++4.0's published H100 figure; with ``both``, the CPU's and GPU's results are
asserted equal.
"""

from __future__ import annotations

import argparse
import multiprocessing.pool
import os
import time

import numpy as np
from search import BACKGROUND, GAP_EXTEND, GAP_OPEN, LETTERS, random_database

import wavedp
from wavedp.trace import Trace

#: CUDASW++4.0's published H100 figure for its BLOSUM62 protein search (as benchmarks/search.py)
CUDASW_GCUPS = 4977.0


def data(seed: int, queries: int, targets: int, length: int, related: float
         ) -> tuple[list[str], list[str]]:
    """A and B (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    a = random_database(seed, queries, length, True, False)
    b = random_database(seed + 1, targets, length, True, False)
    p = np.array(BACKGROUND) / sum(BACKGROUND)
    letters = np.array(list(LETTERS))
    for k in np.flatnonzero(rng.random(targets) < related):
        src = a[int(rng.integers(queries))]
        s = np.array(list(src))
        hit = rng.random(s.size) < 0.3
        s[hit] = rng.choice(letters, int(hit.sum()), p=p)
        mutated = "".join(s)
        cut = int(rng.integers(0, max(1, len(mutated) // 2)))
        piece = mutated[cut:cut + max(20, len(mutated) // 3)]
        b[k] = mutated + b[k][:40] + piece
    return a, b


def run(a: list[str], b: list[str], device: str, fraction: float) -> dict:
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND)
    trace = Trace()
    t0 = time.perf_counter()
    hits = wavedp.search(a, b, scoring, top=0, fraction=fraction, device=device, trace=trace)
    seconds = time.perf_counter() - t0
    scan = {k: v for k, v in trace.seconds.items() if k != "align"}
    if scan:
        print(f"{device} scan phases: " + ", ".join(
            f"{k} {v:.3f}" for k, v in {**scan, **trace.counts}.items()))
    hit_s = trace.seconds.get("align", 0.0)
    cells = sum(map(len, a)) * sum(map(len, b))
    alignments = sum(map(len, hits))
    pairs = sum(len({h.target_id for h in q}) for q in hits)
    return {"device": device, "seconds": seconds, "scan": seconds - hit_s, "hits": hit_s,
            "gcups": cells / (seconds - hit_s) / 1e9, "pairs": pairs,
            "alignments": alignments, "rate": alignments / max(hit_s, 1e-9), "result": hits}


def pyopal_gcups(a: list[str], b: list[str]) -> float:
    import pyopal

    threads = os.cpu_count() or 1
    db = pyopal.Database(b)
    t0 = time.perf_counter()
    with multiprocessing.pool.ThreadPool(threads) as pool:
        for q in a:
            list(pyopal.align(q, db, "BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND,
                              mode="score", algorithm="sw", threads=threads, pool=pool))
    return sum(map(len, a)) * sum(map(len, b)) / (time.perf_counter() - t0) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "gpu", "both"], default="gpu")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--targets", type=int, default=10000)
    parser.add_argument("--length", type=int, default=300, help="median sequence length")
    parser.add_argument("--related", type=float, default=0.2,
                        help="share of B made from A sequences")
    parser.add_argument("--fraction", type=float, default=0.8)
    parser.add_argument("--anchor-queries", type=int, default=50,
                        help="queries of the pyopal anchor (CPU)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    a, b = data(args.seed, args.queries, args.targets, args.length, args.related)
    devices = ["cpu", "gpu"] if args.device == "both" else [args.device]
    # warm-up, timed apart: Numba's compilation (any size), the GPU's kernel instances (NVRTC
    # compiles each on first use, and which ones a search takes depends on its lengths)
    t0 = time.perf_counter()
    for device in devices:
        if device == "cpu":
            run(a[:2], b[:50], device, args.fraction)
        else:
            run(a, b, device, args.fraction)
    warm = time.perf_counter() - t0
    rows = [run(a, b, device, args.fraction) for device in devices]
    if len(rows) == 2 and rows[0]["result"] != rows[1]["result"]:
        raise SystemExit("CPU and GPU results differ")
    print(f"A {len(a)} sequences ({sum(map(len, a))} residues), B {len(b)} ({sum(map(len, b))} "
          f"residues), fraction {args.fraction}, top 0, E-value 10; {os.cpu_count()} CPUs; "
          f"warm-up {warm:.1f} s\n")
    print("| device | total s | scan s | scan GCUPS | anchor | ratio | reported pairs "
          "| alignments | hit stage s | alignments/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["device"] == "cpu":
            sub = a[:args.anchor_queries]
            anchor = pyopal_gcups(sub, b)
            ours = run(sub, b, "cpu", args.fraction)["gcups"]
            name, ratio = f"pyopal {anchor:.1f} ({len(sub)} queries)", ours / anchor
        else:
            name, ratio = f"CUDASW++4.0 {CUDASW_GCUPS:.0f} (published)", r["gcups"] / CUDASW_GCUPS
        print(f"| {r['device']} | {r['seconds']:.2f} | {r['scan']:.2f} | {r['gcups']:.1f} "
              f"| {name} | {ratio:.2f} | {r['pairs']} | {r['alignments']} | {r['hits']:.2f} "
              f"| {r['rate']:.0f} |")


if __name__ == "__main__":
    main()
