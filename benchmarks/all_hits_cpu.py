"""Every hit, scores only, on the CPU: ``wavedp.search(..., top=0, traceback=False)`` against
pyopal scanning the same pairs, same run.

Run from the repository root:  python benchmarks/all_hits_cpu.py [--queries 8] [--sequences 3000]
(with wavedp installed, or ``PYTHONPATH=src``). Seeded random proteins (BLOSUM62 background
frequencies), queries and database sequences of 100-700 residues, BLOSUM62 11/1, local mode,
no statistics (``stats="none"``: every pair with a positive score is a hit, as a search of
all hits without a cutoff reports them). Each engine uses every core; times are the best of
``--repeats`` runs, taking turns. pyopal runs twice: ``mode="score"`` (scores only) and
``mode="end"`` (scores and end cells: what a score-only wavedp hit reports). Printed: the
times, wavedp's ``top=10`` run beside them (what the scan and ten hits a query cost), where
wavedp's ``top=0`` time goes (scan, hits' end cells, hit objects), and the ratios.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyopal
from search import BACKGROUND, LETTERS

import wavedp
from wavedp.trace import Trace


def proteins(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` random proteins of 100-700 residues."""
    p = np.array(BACKGROUND) / sum(BACKGROUND)
    letters = np.array(list(LETTERS))
    return ["".join(rng.choice(letters, int(n), p=p)) for n in rng.integers(100, 701, count)]


def timed(run) -> float:
    """The wall time of one call of ``run``."""
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=8)
    parser.add_argument("--sequences", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    queries, database = proteins(rng, args.queries), proteins(rng, args.sequences)
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    opal_db = pyopal.Database(database)

    def ours(top: int, trace: Trace | None = None):
        return wavedp.search(queries, database, scoring, top=top, traceback=False,
                             stats="none", device="cpu", trace=trace)

    def opal(mode: str):
        return [list(pyopal.align(q, opal_db, "BLOSUM62", gap_open=11, gap_extend=1,
                                  mode=mode)) for q in queries]

    hits = ours(0)  # the kernels compiled or loaded, then timed
    found = opal("end")
    want = sorted((k, r.target_index, r.score) for k, rows in enumerate(found) for r in rows
                  if r.score > 0)
    names = {f"target{i + 1}": i for i in range(len(database))}  # wavedp's default ids
    got = sorted((k, names[h.target_id], h.score) for k, hs in enumerate(hits) for h in hs)
    assert got == want, "the hits' scores differ from pyopal's"
    times = {"wavedp top=0": [], "wavedp top=10": [], "pyopal score": [], "pyopal end": []}
    for _ in range(args.repeats):  # taking turns
        times["wavedp top=0"].append(timed(lambda: ours(0)))
        times["wavedp top=10"].append(timed(lambda: ours(10)))
        times["pyopal score"].append(timed(lambda: opal("score")))
        times["pyopal end"].append(timed(lambda: opal("end")))
    cells = sum(len(q) for q in queries) * sum(len(s) for s in database) / 1e9
    print(f"{args.queries} queries x {args.sequences} proteins, {cells:.2f} G cells, "
          f"{sum(map(len, hits)):,} hits (every pair with a positive score), best of "
          f"{args.repeats}:")
    for name, values in times.items():
        print(f"  {name}: {min(values):.3f} s ({cells / min(values):.1f} GCUPS)")
    trace = Trace()
    ours(0, trace)
    print("  wavedp top=0 by phase: " + ", ".join(f"{k} {v:.3f} s"
                                                  for k, v in trace.seconds.items()))
    top0 = min(times["wavedp top=0"])
    print(f"wavedp top=0 against pyopal: {min(times['pyopal score']) / top0:.2f}x score mode, "
          f"{min(times['pyopal end']) / top0:.2f}x end mode (>= 1.0x: as fast)")


if __name__ == "__main__":
    main()
