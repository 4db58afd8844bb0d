"""The host's chunk writes inside the many-pairs engine (``engines/cuda/many_pairs.py``):
each chunk's write into its page-locked slot, timed piece by piece as the helper threads
copy it, in the engine's own calls on the seeded pairs of ``benchmarks/pairs.py``; then the
same writes again alone (the same slots and sources, no GPU work, no other thread).

    python3 benchmarks/pair_fills.py --kind dna --calls score
    python3 benchmarks/pair_fills.py --floor

Each line: a chunk's bytes, its write's span, start and rate in the call and alone, how late
its last piece started (the threads' dispatch; a parallel call's pieces are not timed), its
slowest piece, and the write on one thread.
The pipeline's writes pace score-only calls; this says whether they lose their time to
copying or to waiting. ``--floor``: the host's own rates on letters beyond its caches (read,
copied, packed), the floor under those writes.
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

from wavedp.engines.cuda import pair_chunks, transfer  # noqa: E402


class Recorder:
    """Wraps the engine's chunk writer (``pair_chunks.fill``) and the copy threads' pieces
    (``transfer.spread``) to record each write: its start, end, arrays and pieces."""

    def __init__(self) -> None:
        self.writes: list[dict] = []
        self.on = False
        self._write, self._pieces = pair_chunks.fill, transfer.spread
        self._lock = threading.Lock()
        self._local = threading.local()  # the write under way on this thread (the filler's)

    def __enter__(self) -> Recorder:
        pair_chunks.fill, transfer.spread = self.write, self.pieces
        return self

    def __exit__(self, *exc) -> None:
        pair_chunks.fill, transfer.spread = self._write, self._pieces

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


def report(name: str, writes: list[dict], call_start: float) -> None:
    """A line a chunk write (``call_start``: the call's): in the call, then alone."""
    for k, record in enumerate(writes):
        nbytes = sum(v.nbytes for v in record["views"])
        span = record["end"] - record["start"]
        if record["pieces"]:  # on the writers' threads
            late = max(start - began for began, start, _ in record["pieces"])
            slowest = max(end - start for _, start, end in record["pieces"])
            pieces = (f"last piece started {late * 1e3:4.2f} ms late, slowest piece "
                      f"{slowest * 1e3:4.2f} ms, {len(record['pieces'])} pieces")
        else:
            pieces = "one parallel call (engines/cuda/writes.py)"
        alones = []  # three turns: the best, and the spread
        for _ in range(3):
            start = time.perf_counter()
            pair_chunks.fill(record["views"], record["sources"], *record["rest"])
            alones.append(time.perf_counter() - start)
        alone = min(alones)
        start = time.perf_counter()  # the same write on this thread alone
        for work, size in pair_chunks.jobs(record["views"], record["sources"],
                                           bool(record["rest"] and record["rest"][0])):
            work(0, size)
        single = time.perf_counter() - start
        at = record["start"] - call_start
        print(f"{name} write {k}: {nbytes / 2**20:6.1f} MiB, {span * 1e3:5.2f} ms from "
              f"{at * 1e3:5.1f} ms ({nbytes / span / 1e9:5.1f} GB/s) in "
              f"the call, {alone * 1e3:5.2f} ms ({nbytes / alone / 1e9:5.1f} GB/s) alone (best "
              f"of 3, worst {max(alones) * 1e3:5.2f}); {pieces}; one thread "
              f"{single * 1e3:5.2f} ms", flush=True)


#: the --floor source: larger than the host's last-level cache (300 MiB on the H200 machine)
FLOOR_BYTES = 2 << 30


def floor(repeats: int = 8) -> None:
    """The host's own rates on letters beyond its caches (a source of FLOOR_BYTES, a chunk of
    94 MiB taken from it in turn), on the writers' threads: the letters read alone, copied
    into page-locked memory, and packed there two a byte as the engine writes DNA; then the
    time those rates give 900 MB of letters (two million DNA pairs)."""
    from wavedp.engines.cuda import nibbles
    from wavedp.engines.cuda.staging import pinned

    chunk = 94 << 20
    source = np.ones(FLOOR_BYTES, np.uint8)
    page_locked = pinned(chunk)
    ways = {
        "read": lambda src: transfer.host_work([(lambda a, b: src[a:b].max(), src.size)],
                                               own=True),
        "copy": lambda src: transfer.host_work([transfer.copier(page_locked, src)], own=True),
        "pack": lambda src: transfer.host_work([nibbles.packer(page_locked, src)], own=True),
    }
    turn = 0
    for name, way in ways.items():
        times = []
        for _ in range(repeats):
            at = turn % (FLOOR_BYTES // chunk) * chunk
            turn += 1
            start = time.perf_counter()
            way(source[at:at + chunk])
            times.append(time.perf_counter() - start)
        best = min(times)
        print(f"floor {name}: 94 MiB of letters in {best * 1e3:5.2f} ms ({chunk / best / 1e9:5.1f} "
              f"GB/s; median {np.median(times) * 1e3:5.2f} ms); 900 MB at the best rate "
              f"{900e6 / chunk * best * 1e3:5.1f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("dna", "protein"), default="dna")
    parser.add_argument("--count", type=int, default=None,
                        help="pairs (default: 2,000,000 DNA, 500,000 protein)")
    parser.add_argument("--calls", choices=("score", "cigar"), default="score")
    parser.add_argument("--floor", action="store_true",
                        help="instead, the host's rates on letters beyond its caches")
    args = parser.parse_args()
    if args.floor:
        floor()
        return
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
    report(f"{args.kind} {args.calls}", recorder.writes, start)


if __name__ == "__main__":
    main()
