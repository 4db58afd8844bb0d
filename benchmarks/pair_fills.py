"""The host's chunk writes inside the many-pairs engine (``engines/cuda/many_pairs.py``):
each chunk's write into its page-locked slot, timed piece by piece as the helper threads
copy it, in the engine's own calls on the seeded pairs of ``benchmarks/pairs.py``; then the
same writes again alone (the same slots and sources, no GPU work, no other thread).

    python3 benchmarks/pair_fills.py --kind dna --calls score

Each line: a chunk's bytes, its write's span and rate in the call and alone, how late its
last piece started (the threads' dispatch), its slowest piece, and the write on one thread.
The pipeline's writes pace score-only calls; this says whether they lose their time to
copying or to waiting.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pairs  # noqa: E402  (beside this script)

from wavedp.engines.cuda import many_pairs, transfer  # noqa: E402


class Recorder:
    """Wraps the engine's chunk writer (``many_pairs._write``) and the copy threads' pieces
    (``transfer.spread``) to record each write: its start, end, arrays and pieces."""

    def __init__(self) -> None:
        self.writes: list[dict] = []
        self.on = False
        self._write, self._pieces = many_pairs._write, transfer.spread
        self._lock = threading.Lock()
        self._local = threading.local()  # the write under way on this thread (the filler's)

    def __enter__(self) -> Recorder:
        many_pairs._write, transfer.spread = self.write, self.pieces
        return self

    def __exit__(self, *exc) -> None:
        many_pairs._write, transfer.spread = self._write, self._pieces

    def write(self, views: list[np.ndarray], sources: list[np.ndarray], *rest) -> None:
        record = {"views": views, "sources": sources, "rest": rest, "pieces": [], "calls": []}
        record["start"] = time.perf_counter()
        self._local.record = record
        try:
            self._write(views, sources, *rest)
        finally:
            self._local.record = None
        record["end"] = time.perf_counter()
        if self.on:
            self.writes.append(record)

    def pieces(self, work, pieces: int, own: bool):
        record = getattr(self._local, "record", None)
        if record is None:  # not a chunk write (the results' copies down)
            return self._pieces(work, pieces, own)
        began = time.perf_counter()
        record["calls"].append(began)

        def timed(a: int, b: int):
            start = time.perf_counter()
            out = work(a, b)
            with self._lock:
                record["pieces"].append((began, start, time.perf_counter()))
            return out
        return self._pieces(timed, pieces, own)


def report(name: str, writes: list[dict]) -> None:
    """A line a chunk write: in the call, then alone."""
    for k, record in enumerate(writes):
        nbytes = sum(v.nbytes for v in record["views"])
        span = record["end"] - record["start"]
        late = max(start - began for began, start, _ in record["pieces"])
        slowest = max(end - start for _, start, end in record["pieces"])
        start = time.perf_counter()
        many_pairs._write(record["views"], record["sources"], *record["rest"])
        alone = time.perf_counter() - start
        start = time.perf_counter()  # the same write on this thread alone
        for work, size in many_pairs._jobs(record["views"], record["sources"],
                                           bool(record["rest"] and record["rest"][0])):
            work(0, size)
        single = time.perf_counter() - start
        print(f"{name} write {k}: {nbytes / 2**20:6.1f} MiB, {span * 1e3:5.2f} ms "
              f"({nbytes / span / 1e9:5.1f} GB/s) in the call, {alone * 1e3:5.2f} ms "
              f"({nbytes / alone / 1e9:5.1f} GB/s) alone; last piece started "
              f"{late * 1e3:4.2f} ms late, slowest piece {slowest * 1e3:4.2f} ms, "
              f"{len(record['pieces'])} pieces; one thread {single * 1e3:5.2f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("dna", "protein"), default="dna")
    parser.add_argument("--count", type=int, default=None,
                        help="pairs (default: 2,000,000 DNA, 500,000 protein)")
    parser.add_argument("--calls", choices=("score", "cigar"), default="score")
    args = parser.parse_args()
    count = args.count or (2_000_000 if args.kind == "dna" else 500_000)
    scoring, qs, ts, _ = pairs.encoded(args.kind, count)
    traceback = args.calls == "cigar"
    with Recorder() as recorder:
        pairs.engine(qs, ts, scoring, "local", traceback)  # compiled, slots made
        recorder.on = True
        start = time.perf_counter()
        pairs.engine(qs, ts, scoring, "local", traceback)
        whole = time.perf_counter() - start
        recorder.on = False
    print(f"# {args.kind} local {args.calls}: the engine's call {whole * 1e3:.1f} ms, "
          f"{len(recorder.writes)} chunk writes", flush=True)
    report(f"{args.kind} {args.calls}", recorder.writes)


if __name__ == "__main__":
    main()
