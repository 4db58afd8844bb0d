"""wavedp beside CUDASW++4.0, whole commands from fresh processes, on one GPU in one run.

Run from the repository root:  python benchmarks/versus_cudasw4.py [--cudasw4 DIR]
[--sequences N] [--repeats R] [--out DIR]  (wavedp installed; DIR holds CUDASW++4.0's ``align``
and ``makedb``, built from its own sources: wavedp ships none of it; without it only
wavedp's rows are measured).

The database is seeded (``seeded_fasta.py``: Swiss-Prot-sized by default, 570,000
sequences, lognormal lengths of median 300, sigma 0.65, BLOSUM62 background, a mutated copy
of each query planted); the queries are ``allqueries.fasta`` (``../shared/data`` or
``.carry``), CUDASW++4.0's own benchmark queries. BLOSUM62, gaps 11/1, top 10. Each cell is
the wall clock of the whole command (fresh process, warm file cache, after one untimed run
of each: the CPU kernels a machine compiles on its first run are cached), the tools taking
turns ``--repeats`` times; min-max is printed. CUDASW++4.0 runs as its Swiss-Prot benchmark
runs it (DPX kernels, ``--uploadFull --prefetchDBFile``); its own ``Total time`` line gives
its scan's seconds and GCUPS, and wavedp's ``--explain`` its phases (the GPU scan's seconds
give its GCUPS). The top-10 score lists of the two tools are compared query by query.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from search import QUERIES, read_fasta

from wavedp.db.database import Database

DEVICE = os.environ.get("WAVEDP_BENCH_DEVICE", "gpu")
HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = ("--singlePassType", "DPXs16", "--manyPassType_small", "DPXs16",
           "--manyPassType_large", "DPXs32")
TOTAL = re.compile(r"Total time: ([0-9.eE+-]+) s, ([0-9.eE+-]+) GCUPS")
PHASE = re.compile(r"(\w+) ([0-9.]+) s")


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, str]:
    """(wall seconds, stdout + stderr) of one command from a fresh process."""
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    return wall, done.stdout + done.stderr


def span(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f} s" if len(values) > 1 else \
        f"{values[0]:.2f} s"


def cudasw_scores(path: str) -> dict[int, list[int]]:
    """Query number -> its scores in rank order, from ``align --tsv`` output."""
    out: dict[int, list[int]] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            if len(f) >= 5 and f[0].isdigit():
                out.setdefault(int(f[0]), []).append(int(f[4]))
    return out


def wavedp_scores(path: str, names: list[str]) -> dict[int, list[int]]:
    """Query number -> scores in rank order, from blast6 with columns qseqid score."""
    index = {n: k for k, n in enumerate(names)}
    out: dict[int, list[int]] = {}
    with open(path) as fh:
        for line in fh:
            q, s = line.split("\t")[:2]
            out.setdefault(index[q], []).append(int(s))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cudasw4", metavar="DIR", default=None)
    parser.add_argument("--sequences", type=int, default=570_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=None, help="keep the files here")
    args = parser.parse_args()
    found = next((q for q in QUERIES if os.path.exists(q)), None)
    if found is None:
        raise SystemExit(f"no queries: looked for {', '.join(QUERIES)}")
    queries = read_fasta(found)
    names = [f"q{k}" for k in range(len(queries))]
    align = makedb = None
    if args.cudasw4:
        align, makedb = (os.path.join(args.cudasw4, b) for b in ("align", "makedb"))
        for b in (align, makedb):
            if not os.access(b, os.X_OK):
                raise SystemExit(f"{b}: not an executable (build CUDASW++4.0 there)")
    work = args.out or tempfile.mkdtemp(prefix="wavedp-vs-")
    os.makedirs(work, exist_ok=True)
    qfa, one = os.path.join(work, "queries.fa"), os.path.join(work, "one.fa")
    with open(qfa, "w") as fh:
        fh.writelines(f">{n}\n{q}\n" for n, q in zip(names, queries, strict=True))
    with open(one, "w") as fh:
        fh.write(f">{names[0]}\n{queries[0]}\n")
    fasta = os.path.join(work, "db.fa")
    subprocess.run([sys.executable, os.path.join(HERE, "seeded_fasta.py"), fasta,
                    "--sequences", str(args.sequences), "--plant", found], check=True)
    wdb, cdb = os.path.join(work, "db.wdb"), os.path.join(work, "cdb", "db")
    os.makedirs(os.path.dirname(cdb), exist_ok=True)
    wavedp = [sys.executable, "-m", "wavedp.cli"]
    rows: dict[str, dict[str, list[float]]] = {}

    def add(row: str, who: str, seconds: float) -> None:
        rows.setdefault(row, {}).setdefault(who, []).append(seconds)

    cells = {}  # CUDASW++4.0's GCUPS (its own line)
    for _ in range(args.repeats):
        if makedb:
            add("makedb", "cudasw4", timed([makedb, fasta, cdb])[0])
        if os.path.exists(wdb):
            subprocess.run(["rm", "-rf", wdb], check=True)
        add("makedb", "wavedp", timed([*wavedp, "makedb", fasta, "-o", wdb])[0])
    residues = sum(len(q) for q in queries)
    # one untimed run of each command first: the file cache warm, and the CPU kernels that
    # the first run on a machine compiles (once, cached) compiled
    for extra in (["--score-only"], []):
        timed([*wavedp, "search", qfa, wdb, "--device", DEVICE, *extra, "-o", os.devnull])
    if align:
        timed([align, "--query", one, "--db", cdb, "--top", "10", "--uploadFull",
               "--prefetchDBFile", "--mat", "blosum62", *KERNELS, "--of", os.devnull])
    for _ in range(args.repeats):
        for label, key, qf in ((f"{len(queries)} queries", "all", qfa),
                               ("one query", "one", one)):
            if align:
                tsv = os.path.join(work, f"cudasw4-{key}.tsv")
                wall, text = timed([align, "--query", qf, "--db", cdb, "--top", "10",
                                    "--verbose", "--uploadFull", "--prefetchDBFile",
                                    "--mat", "blosum62", *KERNELS, "--tsv", "--of", tsv])
                add(f"search, {label}, scores", "cudasw4", wall)
                total = TOTAL.findall(text)
                if total and key == "all":
                    add("scan (own accounting)", "cudasw4", float(total[-1][0]))
                    cells.setdefault("cudasw4", []).append(float(total[-1][1]))
            for kind, extra in (("scores", ["--score-only"]), ("traceback", [])):
                for stats in ("fitted", "none"):
                    out = os.path.join(work, f"wavedp-{key}-{kind}-{stats}.tsv")
                    wall, text = timed([*wavedp, "search", qf, wdb, "--device", DEVICE,
                                        "--top", "10", "--stats", stats, *extra,
                                        "--columns", "qseqid score", "--explain",
                                        "-o", out])
                    add(f"search, {label}, {kind}, --stats {stats}", "wavedp", wall)
                    phases = dict((n, float(s)) for n, s in PHASE.findall(
                        text.split("phases:")[-1]))
                    if key == "all" and kind == "scores":
                        if stats == "none" and "scan" in phases:
                            add("scan (own accounting)", "wavedp", phases["scan"])
                        print(f"wavedp --stats {stats}: {text.split('phases:')[-1].strip()}",
                              flush=True)
    resident: list[float] = []  # a resident Searcher's scans after its first
    if DEVICE == "gpu":  # a resident Searcher: a repeated search against its kernels' time
        import wavedp
        from wavedp.trace import Trace

        trace = Trace()
        print()
        searcher = wavedp.Searcher(Database.open(wdb), wavedp.Scoring(), device="gpu",
                                   trace=trace)
        for turn in range(4):
            trace.clear()
            start = time.perf_counter()
            searcher.search(queries, stats="none", traceback=False)
            wall = time.perf_counter() - start
            kernels = sum(launch.kernel for launch in trace.launches)
            print(f"Searcher search {turn + 1}: {wall:.3f} s, scan {trace.seconds['scan']:.3f}"
                  f" s, kernels {kernels:.3f} s ({wall / kernels:.3f}x its kernels)")
            if turn:
                resident.append(trace.seconds["scan"])
    print(f"\n# wavedp beside CUDASW++4.0: {len(queries)} queries ({residues:,} residues) x "
          f"{args.sequences:,} sequences, top 10, whole commands ({args.repeats} turns)\n")
    print("| what | CUDASW++4.0 | wavedp | wavedp / CUDASW++4.0 |")
    print("|---|---|---|---|")
    for row, cols in rows.items():
        c, w = cols.get("cudasw4"), cols.get("wavedp")
        base = [v for r, cc in rows.items() if r.startswith(row.rsplit(",", 2)[0])
                for v in cc.get("cudasw4", [])] if c is None else c
        ratio = f"{min(w) / min(base):.2f}x" if w and base else "-"
        print(f"| {row} | {span(c) if c else '-'} | {span(w) if w else '-'} | {ratio} |")
    scans = dict(rows.get("scan (own accounting)", {}))
    if resident:
        scans["wavedp, resident Searcher"] = resident
    total = residues * Database.open(wdb).total_residues / 1e9  # G cells
    gcups = {who: total / min(seconds) for who, seconds in scans.items()}
    print("\nscan GCUPS (the best turn): " + ", ".join(
        f"{who} {value:,.0f}" + (f" ({value / gcups['cudasw4']:.2f}x)" if who != "cudasw4"
                                 and "cudasw4" in gcups else "")
        for who, value in gcups.items()))
    if "cudasw4" in cells:
        print(f"CUDASW++4.0's own GCUPS line: {max(cells['cudasw4']):,.0f}")
    if align:  # ranked by score (--stats none), the lists must be equal
        cw = cudasw_scores(os.path.join(work, "cudasw4-all.tsv"))
        wv = wavedp_scores(os.path.join(work, "wavedp-all-scores-none.tsv"), names)
        same = sum(cw.get(k, [])[:10] == wv.get(k, [])[:10] for k in range(len(queries)))
        print(f"\ntop-10 score lists equal (--stats none): {same} of {len(queries)} queries")


if __name__ == "__main__":
    main()
