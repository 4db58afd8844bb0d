"""makedb stage by stage on this machine: what each stage costs alone, beside the whole build.

Run from the repository root:  python benchmarks/makedb_stages.py FASTA [--threads 1,2,4,8,16]
[--processes 8,16,32] (with wavedp installed, or ``PYTHONPATH=src``; a Swiss-Prot-sized
FASTA: ``seeded_fasta.py``). First the parallel builder (``db/makedb.py``) on each
process count, from a fresh process each (it forks only where no other thread runs): its
wall, each stage of its ranges in the workers (reading, parsing, waiting for the place,
writing; the slowest range's and the mean) and how long the letters' count (NumPy's import
first, on a thread) ran on after the last range was written. Then the threaded path,
best of ``--repeats``: reading the file into the pieces the parsers take (one
thread, as makedb's main thread does), parsing and encoding every piece on each thread count
(the pieces held in memory), writing the parsed pieces into a database folder (one thread,
as makedb's writer does), and ``Database.build`` itself at each thread count. A stage that
does not shorten with more threads, or the build well above its slowest stage, says where
the wall clock goes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from wavedp.db import building
from wavedp.db import database as dbm
from wavedp.seqio import fasta_chunks

#: one parallel build in a fresh process: its wall and its ranges' stages
PARALLEL = """
import os, shutil, sys, tempfile, time
from wavedp.db import makedb
makedb.FEWEST = 1  # any count, to compare
path, workers = sys.argv[1], int(sys.argv[2])
out = os.path.join(tempfile.mkdtemp(prefix="wavedp-stages-"), "p.wdb")
start = time.perf_counter()
built = makedb.build(path, out, workers=workers, show=False)
wall = time.perf_counter() - start
shutil.rmtree(os.path.dirname(out))
names = ("read", "parse", "wait", "write")
stages = list(zip(*built.stages))
print(f"{wall:.3f} s ({len(built.stages)} ranges); slowest range / mean: " + ", ".join(
    f"{n} {max(v):.3f}/{sum(v) / len(v):.3f}" for n, v in zip(names, stages))
    + f"; letters counted {built.counting:.3f} s after the last range was written")
"""


def best(run, repeats: int) -> float:
    """The least wall time of ``repeats`` calls of ``run``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fasta")
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--processes", default="8,16,32")
    args = parser.parse_args()
    counts = [int(n) for n in args.threads.split(",") if n]
    path = args.fasta
    for n in (int(n) for n in args.processes.split(",") if n):
        for turn in range(args.repeats):
            print(f"makedb.build, {n} processes, turn {turn + 1}: "
                  + subprocess.run([sys.executable, "-c", PARALLEL, path, str(n)],
                                   capture_output=True, text=True, check=True).stdout.strip())
    pieces: list[bytes] = []

    def read() -> None:
        pieces.clear()
        pieces.extend(bytes(data) for data, _ in fasta_chunks(path, checked=False))

    print(f"read into pieces: {best(read, args.repeats):.3f} s ({len(pieces)} pieces, "
          f"{os.path.getsize(path) / 1e6:.0f} MB)")
    lut = building.lut_of("protein")
    parsed: list = []
    for n in counts:
        def parse(n: int = n) -> None:
            with ThreadPoolExecutor(n) as pool:
                parsed[:] = pool.map(lambda d: building.encode_block(path, memoryview(d), lut),
                                     pieces)

        print(f"parse, {n} threads: {best(parse, args.repeats):.3f} s")
    work = tempfile.mkdtemp(prefix="wavedp-stages-")

    def write() -> None:
        folder = tempfile.mkdtemp(dir=work)
        builder = building.Builder(folder, path, "protein")
        for item in parsed:
            builder.add_block(*item)
        builder.close()

    print(f"write: {best(write, args.repeats):.3f} s")
    for n in counts:
        def build(n: int = n) -> None:
            dbm.Database.build(path, os.path.join(work, f"db{n}.wdb"), progress=False,
                               threads=n)

        print(f"Database.build, {n} threads: {best(build, args.repeats):.3f} s")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
