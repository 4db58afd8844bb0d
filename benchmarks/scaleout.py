"""Several GPUs of one machine: the CUDASW++ search benchmark on one GPU and on every GPU,
and from those measurements the plan for UniRef50.

Run from the repository root:  python benchmarks/scaleout.py [--sequences N] [--repeats R]
The 20 queries of allqueries.fasta against a seeded random protein database (1,000,000 x 512,
BLOSUM62 background frequencies), BLOSUM62 11/1, ``wavedp.search`` score-only and with the
traceback of the top 10 per query, on ``devices=[0]`` and on every visible GPU (the database
sharded by residues, a host thread and stream per GPU). Each figure is the median of
``--repeats`` runs after a warm-up run on each device set (compiles excluded); the database
upload to the GPUs is inside every timed run. The results are asserted equal. Anchor:
CUDASW++4.0's published 4,977 GCUPS on one H100 of this workplace for the same shape.

The plan: UniRef50 (about 60 M sequences, 17 G residues) searched with the 20 queries and
with 10,000 queries of the same mean length, from the measured GCUPS per GPU and the
measured scaling from one GPU to all (``--plan-gpus`` lists the GPU counts to tabulate),
then the predictor's estimate per shard (``--plan-only``: that part alone, no GPU needed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
from search import BACKGROUND, LETTERS, QUERIES, read_fasta  # noqa: E402
from search_gpu import CUDASW_GCUPS, array_database  # noqa: E402

import wavedp  # noqa: E402
from wavedp import device as _device  # noqa: E402
from wavedp.dbsearch import predict  # noqa: E402
from wavedp.dbsearch.api import BATCH_CELLS  # noqa: E402

UNIREF50_SEQUENCES = 60e6
UNIREF50_RESIDUES = 17e9


def timed(queries: list[str], db, scoring, devices: list[int], traceback: bool,
          repeats: int) -> tuple[float, list]:
    """Median seconds of ``repeats`` searches, and the hits of the last."""
    times, hits = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        hits = wavedp.search(queries, db, scoring, top=10, traceback=traceback, device="gpu",
                             devices=devices)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=1_000_000)
    parser.add_argument("--length", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plan-gpus", default="1,2,4,8,16")
    parser.add_argument("--plan-only", action="store_true",
                        help="only the predictor's plan (no GPU needed)")
    args = parser.parse_args()

    path = next((p for p in QUERIES if os.path.exists(p)), QUERIES[0])
    queries = read_fasta(path)
    gpus = [int(x) for x in args.plan_gpus.split(",")]
    if args.plan_only:
        predicted_plan(queries, gpus, args.seed)
        return
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    db = array_database(args.seed, args.sequences, args.length, False, LETTERS, BACKGROUND)
    count = _device.gpu_count()
    sets = [[0], list(range(count))] if count > 1 else [[0]]
    cells = sum(len(q) for q in queries) * db.total_residues
    for devices in sets:  # warm-up: compiles and module loads on every GPU
        for traceback in (False, True):
            wavedp.search(queries, db, scoring, top=10, traceback=traceback, device="gpu",
                          devices=devices)
    _, names = _device.gpu_status()
    print(f"\n{count} GPU(s): {names}; {len(queries)} queries ({sum(map(len, queries)):,} "
          f"residues) x {len(db):,} sequences ({db.total_residues:,} residues), BLOSUM62 "
          f"11/1, median of {args.repeats}")
    print("| run | GPUs | seconds | GCUPS | GCUPS per GPU | vs one GPU | CUDASW++4.0 per GPU "
          "(published, H100) |")
    print("|---|---|---|---|---|---|---|")
    measured: dict[tuple[bool, int], float] = {}
    for traceback in (False, True):
        results = []
        for devices in sets:
            seconds, hits = timed(queries, db, scoring, devices, traceback, args.repeats)
            results.append(hits)
            measured[(traceback, len(devices))] = seconds
            gcups = cells / seconds / 1e9
            speedup = measured[(traceback, 1)] / seconds
            print(f"| {'traceback top 10' if traceback else 'score-only'} | {len(devices)} | "
                  f"{seconds:.3f} | {gcups:,.0f} | {gcups / len(devices):,.0f} | "
                  f"{speedup:.2f}x | {CUDASW_GCUPS:,.0f} |")
        assert all(r == results[0] for r in results), "results differ between device sets"

    one = cells / measured[(True, 1)] / 1e9  # GCUPS of one GPU, with traceback
    most = max(len(s) for s in sets)
    speedup = measured[(True, 1)] / measured[(True, most)]
    efficiency = (speedup - 1) / (most - 1) if most > 1 else 1.0  # of each added GPU
    mean_query = float(np.mean([len(q) for q in queries]))
    print(f"\nPlan for UniRef50 ({UNIREF50_SEQUENCES / 1e6:.0f} M sequences, "
          f"{UNIREF50_RESIDUES / 1e9:.0f} G residues) from these measurements: "
          f"{one:,.0f} GCUPS per GPU (traceback top 10), each added GPU adds {efficiency:.2f} "
          f"of one (measured from 1 to {most} GPUs), assumed to hold beyond {most}; "
          f"the database as 1 byte per residue + 24 bytes per sequence "
          f"({(UNIREF50_RESIDUES + 24 * UNIREF50_SEQUENCES) / 1e9:.1f} GB), sharded by "
          "residues.")
    print("| queries | query residues | cells | GPUs | GB per GPU | time | GPU-hours |")
    print("|---|---|---|---|---|---|---|")
    for nq, residues in ((len(queries), sum(map(len, queries))),
                         (10_000, int(round(10_000 * mean_query)))):
        plan_cells = residues * UNIREF50_RESIDUES
        for g in gpus:
            rate = one * 1e9 * (1 + (g - 1) * efficiency)
            hours = plan_cells / rate / 3600
            shard = (UNIREF50_RESIDUES + 24 * UNIREF50_SEQUENCES) / g / 1e9
            print(f"| {nq:,} | {residues:,} | {plan_cells:.2e} | {g} | {shard:.1f} | "
                  f"{int(hours)} h {hours * 60 % 60:04.1f} min | {hours * g:.2f} |")
    predicted_plan(queries, gpus, args.seed)


def predicted_plan(queries: list[str], gpus: list[int], seed: int) -> None:
    """The predictor's time per shard of UniRef50 (this machine's calibration, else the
    built-in H100 constants): a proxy shard of 1,000,000 subjects with UniRef50-like
    lognormal lengths (median 230, sigma 0.65: mean about 280), scaled to the shard's
    residues; the 20 queries as the search cuts them (``auto``), 10,000 by query residues."""
    rng = np.random.default_rng(seed)
    proxy = np.clip(rng.lognormal(np.log(230), 0.65, 1_000_000), 10, 35_000).astype(np.int64)
    model = predict.model_for("gpu")
    query_m = [len(q) for q in queries]
    plans = predict.search_plan(model, query_m, proxy, 24, True, BATCH_CELLS["gpu"])
    totals = {name: sum(r[3] for r in rows) for name, rows in plans.items()}
    best = min(totals, key=totals.get)
    residues = sum(query_m)
    print(f"\nThe predictor ({model.device}{'' if model.calibrated else ', built-in'}): "
          f"20 queries x a 1,000,000-subject proxy ({int(proxy.sum()):,} residues, mean "
          f"{proxy.mean():.0f}) {totals[best]:.2f} s with {best} "
          f"({residues * proxy.sum() / totals[best] / 1e9:,.0f} GCUPS); "
          "per UniRef50 shard, scaled by residues:")
    print("| GPUs | shard residues | 20 queries | 10,000 queries | GPU-hours (10,000) |")
    print("|---|---|---|---|---|")
    mean_query = residues / len(query_m)
    for g in gpus:
        shard = UNIREF50_RESIDUES / g
        seconds = totals[best] * shard / float(proxy.sum())
        many = seconds * 10_000 * mean_query / residues
        print(f"| {g} | {shard:.2e} | {seconds / 60:.1f} min | {many / 3600:.2f} h | "
              f"{many * g / 3600:.1f} |")


if __name__ == "__main__":
    main()
