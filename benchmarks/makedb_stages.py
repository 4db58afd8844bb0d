"""makedb stage by stage on this machine: what each stage costs alone, beside the whole build.

Run from the repository root:  python benchmarks/makedb_stages.py FASTA [--threads 1,2,4,8,16]
(with wavedp installed, or ``PYTHONPATH=src``; a Swiss-Prot-sized FASTA: ``seeded_fasta.py``).
Printed, best of ``--repeats``: reading the file into the pieces the parsers take (one
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
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from wavedp.search import database as dbm
from wavedp.seqio import fasta_chunks


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
    args = parser.parse_args()
    counts = [int(n) for n in args.threads.split(",")]
    path = args.fasta
    pieces: list[bytes] = []

    def read() -> None:
        pieces.clear()
        pieces.extend(bytes(data) for data, _ in fasta_chunks(path, checked=False))

    print(f"read into pieces: {best(read, args.repeats):.3f} s ({len(pieces)} pieces, "
          f"{os.path.getsize(path) / 1e6:.0f} MB)")
    lut = dbm._lut("protein")
    parsed: list = []
    for n in counts:
        def parse(n: int = n) -> None:
            with ThreadPoolExecutor(n) as pool:
                parsed[:] = pool.map(lambda d: dbm._encode_block(path, memoryview(d), lut),
                                     pieces)

        print(f"parse, {n} threads: {best(parse, args.repeats):.3f} s")
    work = tempfile.mkdtemp(prefix="wavedp-stages-")

    def write() -> None:
        folder = tempfile.mkdtemp(dir=work)
        builder = dbm._Builder(folder, path, "protein")
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
