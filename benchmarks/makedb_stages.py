"""makedb stage by stage on this machine: its workers' stages beside the whole build.

Run from the repository root:  python benchmarks/makedb_stages.py FASTA [--processes 8,16]
[--threads 2,6,16] (with wavedp installed, or ``PYTHONPATH=src``; a Swiss-Prot-sized FASTA:
``seeded_fasta.py``). The builder (``db/makedb.py``) on each count of processes, then of
threads, from a fresh process each (it forks only where no other thread runs), turns taking
turns: its wall and each stage of its ranges in the workers (reading, parsing, waiting for
the place, writing; the slowest range's and the mean). A parse that does not shorten with
more workers, or long waits for places, say where the wall clock goes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

#: one build in a fresh process: its wall and its ranges' stages
BUILD = """
import os, shutil, sys, tempfile, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command sets it
from wavedp.db import makedb
makedb.FEWEST = 1  # any count of processes, to compare
path, workers, processes = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
out = os.path.join(tempfile.mkdtemp(prefix="wavedp-stages-"), "p.wdb")
start = time.perf_counter()
built = makedb.build(path, out, workers=workers, show=False, processes=processes)
wall = time.perf_counter() - start
shutil.rmtree(os.path.dirname(out))
names = ("read", "parse", "wait", "write")
stages = list(zip(*built.stages))
print(f"{wall:.3f} s ({len(built.stages)} ranges); slowest range / mean: " + ", ".join(
    f"{n} {max(v):.3f}/{sum(v) / len(v):.3f}" for n, v in zip(names, stages)))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fasta")
    parser.add_argument("--processes", default="8,16")
    parser.add_argument("--threads", default="2,6,16")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    runs = [(int(n), True) for n in args.processes.split(",") if n] + \
        [(int(n), False) for n in args.threads.split(",") if n]
    for turn in range(args.repeats):
        for n, processes in runs:
            kind = "processes" if processes else "threads"
            done = subprocess.run([sys.executable, "-c", BUILD, args.fasta, str(n),
                                   "1" if processes else "0"],
                                  capture_output=True, text=True, check=True)
            print(f"makedb.build, {n} {kind}, turn {turn + 1}: {done.stdout.strip()}")


if __name__ == "__main__":
    main()
