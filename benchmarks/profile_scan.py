"""A PSSM's scan against the matrix's, and iterative search's cost, on one warm ``Searcher``.

    python3 benchmarks/profile_scan.py QUERIES.fa DB.wdb [--device gpu] [--turns 3]

Each query's PSSM is its matrix's rows (``Profile.from_matrix``): the same scores, so both
scans do the same work; the run first checks, on the scanner itself, that the two give
every database sequence the same score (three queries). Then, turns alternating, the
queries are searched (default options, fitted statistics): with the matrix, as profiles,
and from their sequences in three iterations (``iterations=3``). Printed per way: the
median whole search, its scan phase (the trace's; the CPU's has none: the whole) and the
scan's GCUPS (query residues x database residues over the scan's seconds, every round's
scans for the iterations); the PSSM scan's GCUPS over the matrix's, the iterations' time
over one search, the searches each query's rounds ran and each way's phases (the trace's,
medians). A database with families to find round by round: ``seeded_fasta.py --plant
QUERIES.fa --copies 8``.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

import wavedp
from wavedp.seqio import read_records
from wavedp.trace import Trace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from one_query import arguments  # noqa: E402  (beside this script)


def same_scores(searcher: wavedp.Searcher, texts: list[str]) -> None:
    """Raise unless the profiles' scan gives each database sequence the matrix's score."""
    scoring = searcher.scoring
    codes = [scoring.encode(t) for t in texts]
    table = np.concatenate([wavedp.Profile.from_matrix(t, scoring).table(scoring)
                            for t in texts])
    ends = np.cumsum([c.size for c in codes])
    rows = [np.arange(e - c.size, e, dtype=np.int32) for c, e in zip(codes, ends, strict=True)]
    plain = searcher.scanner.matrix(codes)
    profiled = searcher.scanner.with_table(table).matrix(rows)
    if not np.array_equal(plain, profiled):
        bad = np.argwhere(plain != profiled)[0]
        raise SystemExit(f"PSSM scan differs from the matrix scan at query {bad[0]}, "
                         f"subject {bad[1]}: {profiled[tuple(bad)]} != {plain[tuple(bad)]}")


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    records = read_records(args.queries)
    texts = [seq for _, seq in records]
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    trace = Trace()
    searcher = wavedp.Searcher(args.database, scoring, device=args.device, trace=trace)
    profiles = [wavedp.Profile.from_matrix(t, scoring, id=name) for name, t in records]
    same_scores(searcher, texts[:3])
    searches: list[tuple[int, int]] = []  # each search's queries and their residues
    run = searcher.run

    def counted(q, *rest, **options):
        searches.append((len(q.codes), sum(c.size for c in q.codes)))
        return run(q, *rest, **options)

    searcher.run = counted  # type: ignore[method-assign]
    ways = {"matrix": lambda: searcher.search(texts),
            "PSSM": lambda: searcher.search(profiles),
            f"{args.iterations} iterations": lambda: searcher.search(
                texts, iterations=args.iterations)}
    for way in ways.values():  # warm: compiled, resident, sampled, planned
        way()
    walls: dict[str, list[float]] = {name: [] for name in ways}
    rates: dict[str, list[float]] = {name: [] for name in ways}
    scans: dict[str, list[float]] = {name: [] for name in ways}
    phases: dict[str, dict[str, list[float]]] = {name: {} for name in ways}
    hits: dict[str, int] = {}
    residues = int(np.sum(searcher.db.lengths))
    for _ in range(args.turns):
        for name, way in ways.items():
            trace.seconds.clear()
            searches.clear()
            start = time.perf_counter()
            found = way()
            walls[name].append(time.perf_counter() - start)
            scan = trace.seconds.get("scan") or walls[name][-1]  # the CPU: no phase
            scans[name].append(scan)
            for phase, seconds in trace.seconds.items():
                phases[name].setdefault(phase, []).append(seconds)
            rates[name].append(sum(r for _, r in searches) * residues / scan / 1e9)
            hits[name] = sum(len(h) for h in found)
            if name.endswith("iterations"):
                print(f"# {name}: searches of {[n for n, _ in searches]} queries", flush=True)
    print(f"# {len(texts)} queries ({sum(len(t) for t in texts):,} residues) x "
          f"{len(searcher.db.lengths):,} sequences ({residues:,} residues), "
          f"device {searcher.device.kind}, {args.turns} turns alternating")
    print("| way | whole search, median s | scan s | scan GCUPS | hits |")
    print("|---|---|---|---|---|")
    med = {name: statistics.median(w) for name, w in walls.items()}
    gcups = {name: statistics.median(r) for name, r in rates.items()}
    for name in ways:
        print(f"| {name} | {med[name]:.3f} | {statistics.median(scans[name]):.3f} | "
              f"{gcups[name]:,.0f} | {hits[name]} |")
    for name in ways:
        print(f"# {name}, phases (median s): " + ", ".join(
            f"{phase} {statistics.median(seconds):.3f}" for phase, seconds in
            sorted(phases[name].items(), key=lambda kv: -statistics.median(kv[1]))))
    print(f"PSSM scan / matrix scan GCUPS: {gcups['PSSM'] / gcups['matrix']:.3f}; "
          f"whole search {med['matrix'] / med['PSSM']:.3f}x the matrix's speed")
    last = f"{args.iterations} iterations"
    print(f"{last} / one search: {med[last] / med['matrix']:.2f}x the time")


if __name__ == "__main__":
    main()
