"""Where one query's search goes on a warm ``Searcher`` (the service's path): each query of
QUERIES searched alone, several turns, the median wall time and the trace's phases (sample,
fit, plan, scan, rank, align, ...), then cProfile over one turn (the host's functions by
their own time and by their cumulative time).

    python3 benchmarks/one_query.py QUERIES.fa DB.wdb [--device gpu] [--turns 3]
        [--pairs off|on|both] [--launches] [--no-profile]

``--pairs``: the GPU scan of a lone query sweeping two subjects per group (the kernel's
PAIRS, ``scan.scanner.PAIRS``) off, on, or both in alternating turns (default: as the
environment's ``WAVEDP_SCAN_PAIRS`` says); with both, each query's whole score row is first
scanned with each and the two asserted equal. ``--launches``: every query's scan launches
of the first turn of each variant (the fit's sample scan's too): subjects, predicted
seconds, the seconds each added to its scan (CUDA events, from the end of the one before),
its kernel's, and the rest (the host's gap, the profiles and the scatter).
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


def _pairs_module():
    """The GPU scanner's module (its PAIRS switch), None without CuPy."""
    try:
        from wavedp.engines.cuda.scan import scanner
    except ImportError:
        return None
    return scanner


def check_pairs(searcher, scoring, records, module) -> None:
    """Each query's score row over the whole database with PAIRS off and on: equal."""
    scanner = searcher.scanner
    if not hasattr(scanner, "matrix"):
        print("# pairs: the scanner has no score matrix; equality not checked")
        return
    for name, seq in records:
        rows = []
        for flag in (False, True):
            module.PAIRS = flag
            rows.append(scanner.matrix([scoring.encode(seq)]))
        if not (rows[0] == rows[1]).all():
            bad = int((rows[0] != rows[1]).sum())
            raise SystemExit(f"pairs: {name}: {bad} scores differ from the unpaired scan")
    print(f"# pairs: every score of the {len(records)} queries equal with and without")


def show_launches(name: str, length: int, launches) -> None:
    """One query's scan launches (``Trace.launches`` of its search)."""
    for k, t in enumerate(launches):
        print(f"  {name[:16]:16} m={length:5} #{k} {t.partition:8} units {t.units} "
              f"subjects {t.subjects:7} predicted {t.predicted * 1e3:7.2f} ms "
              f"added {t.measured * 1e3:7.2f} kernel {t.kernel * 1e3:7.2f} "
              f"rest {(t.measured - t.kernel) * 1e3:6.2f}")


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("--stats", default="fitted")
    parser.add_argument("--pairs", choices=("off", "on", "both"), default=None)
    parser.add_argument("--launches", action="store_true")
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    records = read_records(args.queries)
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    trace = Trace()
    searcher = wavedp.Searcher(args.database, scoring, device=args.device, trace=trace)
    module = _pairs_module()
    variants: list[bool | None] = [None]
    if args.pairs is not None and module is not None:
        variants = {"off": [False], "on": [True], "both": [False, True]}[args.pairs]
    for flag in variants:  # warm: compiled, resident, sampled (each variant's kernels)
        if flag is not None:
            module.PAIRS = flag
        searcher.search([records[0][1]], stats=args.stats)
    if len(variants) == 2:
        check_pairs(searcher, scoring, records, module)
    walls: dict[bool | None, list[float]] = {v: [] for v in variants}
    phases: dict[bool | None, dict[str, list[float]]] = {v: {} for v in variants}
    for turn in range(args.turns):
        for flag in variants if turn % 2 == 0 else variants[::-1]:
            if flag is not None:
                module.PAIRS = flag
            if args.launches and turn < 2:
                print(f"# launches, pairs {flag}, turn {turn}")
            for name, seq in records:
                trace.seconds.clear()
                trace.launches.clear()
                start = time.perf_counter()
                searcher.search([seq], stats=args.stats)
                walls[flag].append(time.perf_counter() - start)
                for phase, seconds in trace.seconds.items():
                    phases[flag].setdefault(phase, []).append(seconds)
                if args.launches and turn < 2:
                    show_launches(name, len(seq), list(trace.launches))
    for flag in variants:
        label = "" if flag is None else f", pairs {'on' if flag else 'off'}"
        print(f"# one query alone, {len(records)} queries x {args.turns} turns, "
              f"device {searcher.device.kind}, stats {args.stats}{label}")
        print(f"wall: median {statistics.median(walls[flag]) * 1e3:.1f} ms, "
              f"min {min(walls[flag]) * 1e3:.1f}, max {max(walls[flag]) * 1e3:.1f}")
        for name, seconds in sorted(phases[flag].items(), key=lambda kv: -sum(kv[1])):
            print(f"  {name:10} median {statistics.median(seconds) * 1e3:7.2f} ms "
                  f"({len(seconds)} records)")
    if len(variants) == 2:
        scan = [statistics.median(phases[v].get("scan", [0.0])) for v in variants]
        whole = [sum(w) for w in walls.values()]
        print(f"# pairs on against off: scan median {scan[0] * 1e3:.1f} -> "
              f"{scan[1] * 1e3:.1f} ms ({scan[0] / max(scan[1], 1e-9):.2f}x); "
              f"all searches {whole[0]:.2f} -> {whole[1]:.2f} s")
    if args.no_profile:
        return
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
