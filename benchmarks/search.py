"""Database search throughput: wavedp's inter-sequence kernel against pyopal, same run.

Run from the repository root:  python benchmarks/search.py [--device cpu] [--sequences N]
(with wavedp installed, or ``PYTHONPATH=src``). Local mode, BLOSUM62, gap open 11, extend 1
(the same costs in both conventions: checked on pairs against parasail). The queries are
those of ``allqueries.fasta`` (in ``../shared/data`` beside the repository or in ``.carry``;
``--queries`` takes the first K); the
database is a seeded random protein set (BLOSUM62 background frequencies or uniform,
fixed or lognormal lengths). Both engines use all cores; the scores are asserted equal.
Warm-up first (Numba compile or cache load timed and reported apart); each engine's time
is the median of ``--repeats`` runs, the two engines taking turns. Then the whole
``wavedp.search`` on 1, 2, 4, ... threads up to every core (``threads=``), hits identical.
GCUPS = sum over pairs of m*n / seconds / 1e9.
``--device`` names the part to run: ``cpu``, ``gpu`` (``search_gpu.py``) or ``both``.
"""

from __future__ import annotations

import argparse
import multiprocessing.pool
import os
import statistics
import time

import numpy as np

import wavedp
from wavedp.engines.common import LOCAL
from wavedp.engines.cpu.intersequence import scores_many

#: where the 20 queries are looked for (from the repository root)
QUERIES = ("../shared/data/allqueries.fasta", ".carry/allqueries.fasta")
LETTERS = "ARNDCQEGHILKMFPSTWYV"
#: BLOSUM62 background frequencies (Henikoff & Henikoff), in LETTERS order
BACKGROUND = [0.074, 0.052, 0.045, 0.054, 0.025, 0.034, 0.054, 0.074, 0.026, 0.068,
              0.099, 0.058, 0.025, 0.047, 0.039, 0.057, 0.051, 0.013, 0.032, 0.073]
GAP_OPEN, GAP_EXTEND = 11, 1


def read_fasta(path: str) -> list[str]:
    """Sequences of a FASTA file, in order."""
    seqs: list[str] = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith(">"):
                seqs.append("")
            elif line:
                seqs[-1] += line
    return seqs


def random_database(seed: int, count: int, length: int, lognormal: bool,
                    uniform: bool) -> list[str]:
    """count random protein sequences: all of ``length``, or lognormal lengths with that
    median (sigma 0.5, at least 10 residues)."""
    rng = np.random.default_rng(seed)
    if lognormal:
        lengths = np.maximum(10, rng.lognormal(np.log(length), 0.5, count).astype(np.int64))
    else:
        lengths = np.full(count, length, dtype=np.int64)
    p = None if uniform else np.array(BACKGROUND) / sum(BACKGROUND)
    letters = np.frombuffer(LETTERS.encode(), dtype=np.uint8)
    pool = letters[rng.choice(letters.size, int(lengths.sum()), p=p)].tobytes().decode()
    cuts = np.concatenate(([0], np.cumsum(lengths)))
    return [pool[a:b] for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def interleaved_medians(fns: list, repeats: int) -> tuple[list[float], list[object]]:
    """Median seconds of repeats calls of each fn, the engines taking turns (so a change in
    the machine's load hits both alike), and each fn's last result."""
    times: list[list[float]] = [[] for _ in fns]
    results: list[object] = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            results[k] = fn()
            times[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times], results


def cpu_part(queries: list[str], database: list[str], repeats: int) -> list[dict]:
    """Time wavedp's CPU kernel and pyopal on the same search; rows for the table."""
    import pyopal

    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND)
    sub = np.ascontiguousarray(scoring.table, dtype=np.int32)
    qcodes = [scoring.encode(q) for q in queries]
    residues = scoring.encode("".join(database))
    offsets = np.zeros(len(database) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in database])
    cells = sum(len(q) for q in queries) * int(offsets[-1])

    t0 = time.perf_counter()
    scores_many(qcodes[:1], residues[:offsets[2]], offsets[:3], sub, GAP_OPEN, GAP_EXTEND, LOCAL)
    compile_s = time.perf_counter() - t0

    def run_wavedp():
        return scores_many(qcodes, residues, offsets, sub, GAP_OPEN, GAP_EXTEND, LOCAL)

    threads = os.cpu_count() or 1
    opal_db = pyopal.Database(database)
    matrix = "BLOSUM62"

    def run_pyopal():
        with multiprocessing.pool.ThreadPool(threads) as pool:
            return np.array([[r.score for r in pyopal.align(
                q, opal_db, matrix, gap_open=GAP_OPEN, gap_extend=GAP_EXTEND, mode="score",
                algorithm="sw", threads=threads, pool=pool, ordered=True)] for q in queries],
                dtype=np.int32)

    list(pyopal.align(queries[0], database[:2], matrix, gap_open=GAP_OPEN,
                      gap_extend=GAP_EXTEND))
    names = ("wavedp (Numba, inter-sequence)", "pyopal (Opal)")
    seconds, (ours, theirs) = interleaved_medians([run_wavedp, run_pyopal], repeats)
    if not np.array_equal(ours, theirs):
        bad = np.argwhere(ours != theirs)[:5].tolist()
        raise SystemExit(f"scores differ between wavedp and pyopal at (query, target) {bad}")
    rows = [{"engine": name, "seconds": sec, "gcups": cells / sec / 1e9, "compile": warm}
            for name, sec, warm in zip(names, seconds, (compile_s, None), strict=True)]
    for row in rows:
        row["ratio"] = row["gcups"] / rows[1]["gcups"]
    return rows


def scaling(queries: list[str], database: list[str], repeats: int) -> list[tuple[int, float]]:
    """The whole search (``wavedp.search``: scan and hits, top 10) on 1, 2, 4, ... threads
    up to every core; (threads, median seconds). The hits are asserted identical."""
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND)
    db = wavedp.Database.from_sequences(database)
    cores = wavedp.threads.cores()
    counts = sorted({1, cores, *(t for t in (2, 4, 8, 16, 32, 64) if t < cores)})
    wavedp.search(queries[:1], db, scoring, device="cpu", stats="blast")  # compile
    rows, want = [], None
    for threads in counts:
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            got = wavedp.search(queries, db, scoring, device="cpu", stats="blast",
                                threads=threads)
            times.append(time.perf_counter() - t0)
        found = [[(h.target_id, h.score, h.cigar) for h in q] for q in got]
        want = want or found
        if found != want:
            raise SystemExit(f"the hits on {threads} threads differ from those on 1")
        rows.append((threads, statistics.median(times)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "gpu", "both"], default="cpu",
                        help="which part to run: cpu (wavedp's kernel against pyopal), gpu "
                             "(wavedp.search on the GPU against CUDASW++4.0's published "
                             "figure; search_gpu.py), or both")
    parser.add_argument("--queries", type=int, default=20, help="use the first K queries")
    parser.add_argument("--sequences", type=int, default=None,
                        help="database sequences (default 20,000 for cpu, 1,000,000 for gpu)")
    parser.add_argument("--length", type=int, default=512, help="(median) sequence length")
    parser.add_argument("--lognormal", action="store_true", help="lognormal lengths")
    parser.add_argument("--uniform", action="store_true",
                        help="uniform residues instead of BLOSUM62 background frequencies")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per engine")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--partition", default="auto",
                        help="GPU: how the scan cuts queries x database into launches "
                             "(none, static, dynamic1, dynamic2, auto)")
    parser.add_argument("--align-all", type=int, default=0, metavar="N",
                        help="GPU: also time wavedp.align_all of the queries against the "
                             "first N database sequences, GPU against CPU")
    args = parser.parse_args()

    path = next((p for p in QUERIES if os.path.exists(p)), QUERIES[0])
    queries = read_fasta(path)[:args.queries]
    if args.device in ("gpu", "both"):
        from search_gpu import align_all_part, array_database, gpu_part, report

        db = array_database(args.seed, args.sequences or 1_000_000, args.length, args.lognormal,
                            LETTERS, BACKGROUND)
        report(gpu_part(queries, db, args.repeats, args.partition), db, len(queries),
               args.partition)
        if args.align_all:
            align_all_part(queries, db, args.align_all)
        if args.device == "gpu":
            return
    database = random_database(args.seed, args.sequences or 20_000, args.length,
                               args.lognormal, args.uniform)
    residues = sum(len(s) for s in database)
    rows = cpu_part(queries, database, args.repeats)
    load = os.getloadavg()[0]
    print(f"queries {len(queries)} ({sum(len(q) for q in queries)} residues), database "
          f"{len(database)} sequences, {residues} residues; {os.cpu_count()} CPUs, "
          f"load average before the table {load:.2f}; median of {args.repeats}\n")
    print("| engine | queries | db sequences | db residues | seconds | GCUPS "
          "| ratio to pyopal | compile/cache load s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        warm = "-" if row["compile"] is None else f"{row['compile']:.2f}"
        print(f"| {row['engine']} | {len(queries)} | {len(database)} | {residues} "
              f"| {row['seconds']:.3f} | {row['gcups']:.2f} | {row['ratio']:.2f} | {warm} |")
    cells = sum(len(q) for q in queries) * residues
    print("\nwavedp.search (scan and top-10 hits) by --threads, hits identical:\n")
    print("| threads | seconds | GCUPS | speed-up over 1 |")
    print("|---|---|---|---|")
    rows = scaling(queries, database, args.repeats)
    for threads, seconds in rows:
        print(f"| {threads} | {seconds:.3f} | {cells / seconds / 1e9:.2f} "
              f"| {rows[0][1] / seconds:.2f} |")


if __name__ == "__main__":
    main()
