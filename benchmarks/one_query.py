"""Where one query's search goes on a warm ``Searcher`` (the service's path): each query of
QUERIES searched alone, several turns, the median wall time and the trace's phases (sample,
fit, plan, scan, rank, align, ...), then cProfile over one turn (the host's functions by
their own time and by their cumulative time).

    python3 benchmarks/one_query.py QUERIES.fa DB.wdb [--device gpu] [--turns 3]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import time

import wavedp
from wavedp.seqio import read_records
from wavedp.trace import Trace


def arguments(doc: str) -> argparse.ArgumentParser:
    """The arguments of a benchmark of QUERIES on a warm Searcher of DB (``doc``: its
    docstring): the two files, ``--device`` and ``--turns``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("queries")
    parser.add_argument("database")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--turns", type=int, default=3)
    return parser


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--stats", default="fitted")
    args = parser.parse_args()
    records = read_records(args.queries)
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    trace = Trace()
    searcher = wavedp.Searcher(args.database, scoring, device=args.device, trace=trace)
    searcher.search([records[0][1]], stats=args.stats)  # warm: compiled, resident, sampled
    walls: list[float] = []
    phases: dict[str, list[float]] = {}
    for _ in range(args.turns):
        for _, seq in records:
            trace.seconds.clear()
            start = time.perf_counter()
            searcher.search([seq], stats=args.stats)
            walls.append(time.perf_counter() - start)
            for name, seconds in trace.seconds.items():
                phases.setdefault(name, []).append(seconds)
    print(f"# one query alone, {len(records)} queries x {args.turns} turns, "
          f"device {searcher.device.kind}, stats {args.stats}")
    print(f"wall: median {statistics.median(walls) * 1e3:.1f} ms, "
          f"min {min(walls) * 1e3:.1f}, max {max(walls) * 1e3:.1f}")
    for name, seconds in sorted(phases.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {name:10} median {statistics.median(seconds) * 1e3:7.2f} ms "
              f"({len(seconds)} records)")
    profile = cProfile.Profile()
    profile.enable()
    for _, seq in records:
        searcher.search([seq], stats=args.stats)
    profile.disable()
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(key).print_stats(28)
        print(f"# cProfile over {len(records)} one-query searches, by {key}")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


if __name__ == "__main__":
    main()
