"""The host's own work in ``wavedp align --pairs`` (reading and encoding both files, SAM's
header, writing the lines), with the aligner replaced by fixed results: each pair 140 at
q[0:150] against t[50:200], CIGAR 30=1X40=1X30=1X47=. Needs no GPU; run on any machine to
see what the command costs beside its alignments. Each run is a fresh process (as a user
times it), formats and turns alternating.

    python benchmarks/pairs_host.py [--count 2000000] [--turns 2] [--stdout]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

#: the fixed alignment's runs (BAM's length << 4 | op: 7 is =, 8 is X)
RUNS = np.array([30 << 4 | 7, 1 << 4 | 8, 40 << 4 | 7, 1 << 4 | 8, 30 << 4 | 7, 1 << 4 | 8,
                 47 << 4 | 7], np.uint32)


def fixed_columns(device, qcat, qoff, tcat, toff, qi, ti, *, sides, sub, gap_open, gap_extend,
                  mode, traceback, every=False):
    """``engines.pair_columns``' stand-in: every pair the same alignment, no work a pair."""
    from wavedp.engines.common import Columns

    count = int(sides.m.size)
    score = np.full(count, 140, np.int32)
    qe, te = np.full(count, 150, np.int32), np.full(count, 200, np.int32)
    if not traceback:
        unknown = np.broadcast_to(np.int32(-1), (count,))
        return Columns(score, unknown, qe, unknown, te, None, None)
    offsets = np.arange(count + 1, dtype=np.int64) * RUNS.size
    return Columns(score, np.zeros(count, np.int32), qe, np.full(count, 50, np.int32), te,
                   np.tile(RUNS, count), offsets)


def child(argv: list[str]) -> None:
    """The command, in this process, with the aligner replaced."""
    import wavedp.engines as engines

    engines.pair_columns = fixed_columns
    from wavedp.cli import main

    sys.argv = ["wavedp", *argv]
    main()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2_000_000, help="DNA pairs (150 vs 300)")
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--stdout", action="store_true", help="write to standard output")
    parser.add_argument("--work", default=None, help="folder for the files (default: a temp)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pairs_data

    work = args.work or tempfile.mkdtemp(prefix="wavedp-pairs-host-")
    q, t = os.path.join(work, "q.fa"), os.path.join(work, "t.fa")
    if not (os.path.exists(q) and os.path.exists(t)):
        reads, read_lengths, windows, window_lengths = pairs_data.dna(args.count)
        pairs_data.write_fasta(q, reads, read_lengths, "q")
        pairs_data.write_fasta(t, windows, window_lengths, "t")
    options = ["--pairs", "--device", "cpu", "--match", "1", "--mismatch", "-4",
               "--gap-open", "7", "--gap-extend", "1"]
    print(f"# {args.count:,} DNA pairs, aligner replaced, "
          f"{'standard output' if args.stdout else 'a file'}")
    for turn in range(args.turns):
        for fmt in ("sam", "paf") if turn % 2 == 0 else ("paf", "sam"):
            out = os.path.join(work, f"out.{fmt}")
            command = [sys.executable, os.path.abspath(__file__), "--child", "align", q, t,
                       *options, "--format", fmt, *([] if args.stdout else ["-o", out])]
            start = time.perf_counter()
            with open(out if args.stdout else os.devnull, "wb") as sink:
                subprocess.run(command, check=True, stdout=sink, stderr=subprocess.DEVNULL)
            took = time.perf_counter() - start
            print(f"{fmt}  {took:.2f} s  {os.path.getsize(out) / 2**20:,.0f} MiB")
            os.unlink(out)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
