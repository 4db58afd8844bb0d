"""GPU pairwise alignment throughput: strategies, traceback cost, latency, compute ceiling.

Run on a machine with a CUDA GPU:  python benchmarks/gpu_align.py [--quick] [--big]
Prints one table; GCUPS = m*n / seconds / 1e9 for one pair, host<->device copies included,
NVRTC compilation excluded (warm-up first, reported separately).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import wavedp
from wavedp.engines.cuda import hostmem, module, multipass, traceback

DNA = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
PROTEIN = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def related_pair(rng: np.random.Generator, n: int, letters: str, rate: float = 0.1):
    """A random sequence and a mutated copy (substitutions, insertions, deletions)."""
    alphabet = np.frombuffer(letters.encode(), dtype=np.uint8)
    a = alphabet[rng.integers(0, alphabet.size, n)]
    b = a.copy()
    sub = rng.random(n) < rate * 0.7
    b[sub] = alphabet[rng.integers(0, alphabet.size, int(sub.sum()))]
    b = b[rng.random(n) >= rate * 0.15]
    ins = np.flatnonzero(rng.random(b.size) < rate * 0.15)
    b = np.insert(b, ins, alphabet[rng.integers(0, alphabet.size, ins.size)])
    return a.tobytes().decode(), b.tobytes().decode()


def timed(fn, repeats: int = 1) -> float:
    import cupy

    times = []
    for _ in range(repeats):
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        fn()
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def first_call(fn, repeats: int = 3) -> float:
    """Median time of ``fn`` with no host memory pinned before each call."""
    times = []
    for _ in range(repeats):
        hostmem.release()
        times.append(timed(fn))
    return statistics.median(times)


def ceiling_gcups(seconds_target: float = 0.5) -> float:
    """Cells/s of the register-only kernel with the engine's per-cell arithmetic."""
    import cupy

    kernel = module.function("ceiling.cu", "ceiling<16>")
    blocks = multipass.multiprocessors() * 32
    out = cupy.zeros(blocks * 32, dtype=cupy.int32)
    cols = 4096

    def run(c):
        kernel((blocks,), (32,), (np.int32(c), np.int32(5), np.int32(2), np.int32(2),
                                  np.int32(-3), np.int32(7), out))

    run(cols)
    t = timed(lambda: run(cols))
    cols = max(cols, int(cols * seconds_target / max(t, 1e-6)))
    t = timed(lambda: run(cols), 3)
    return blocks * 32 * 16 * cols / t / 1e9


def timeline_summary(tl: np.ndarray, r: int) -> str:
    """When the strips of one sweep started and ended, and how long they waited (ms)."""
    t0 = tl[:, 0].min()
    start, end, wait = (tl[:, 0] - t0) / 1e6, (tl[:, 1] - t0) / 1e6, tl[:, 2] / 1e6
    k = len(tl)
    q = [0, k // 4, k // 2, 3 * k // 4, k - 1]
    return (f"timeline R={r}: {k} strips, sweep {end.max():.1f} ms; start of strips {q}: "
            f"{', '.join(f'{start[i]:.1f}' for i in q)}; end: "
            f"{', '.join(f'{end[i]:.1f}' for i in q)}; waiting: "
            f"{', '.join(f'{wait[i]:.1f}' for i in q)} ms")


def checkpoint_cost(p) -> None:
    """The forward sweep with no checkpoints, with them in GPU memory and in (pinned) host
    memory: what writing checkpoints costs, and how much of it is the bus."""
    import cupy

    K = traceback.K  # noqa: N806
    ck = multipass.Checkpoints(p.m, p.n, K)
    r = multipass.rows_for(p.m)
    reg = hostmem.region(ck.nbytes)
    dev = cupy.empty(ck.nbytes // 4, dtype=cupy.int32) \
        if ck.nbytes < cupy.cuda.runtime.memGetInfo()[0] // 2 else None
    for where, addr in (("none", None), ("GPU memory", dev), ("host memory", reg.ptr)):
        if where == "GPU memory" and dev is None:
            continue
        ck.addr = 0 if addr is None else (addr if isinstance(addr, int) else addr.data.ptr)

        def run(ck=ck if addr is not None else None):
            return multipass.end_cell(p, multipass.sweep(p, 0, p.m, 0, p.n, rows_per_thread=r,
                                                         checkpoints=ck))
        run()
        print(f"forward sweep, checkpoints every {K} rows and columns in {where}: "
              f"{timed(run, 3) * 1e3:.0f} ms")
    del dev


def tune(rng: np.random.Generator, n: int, ceil: float) -> int:
    """Score-only GCUPS per rows-per-thread and profile variant, each strip's timeline, and
    the traceback's phases per lookahead."""
    from wavedp.engines.common import LOCAL

    a, b = related_pair(rng, n, "ACGT")
    q, t = DNA.encode(a), DNA.encode(b)
    p = multipass.upload(q, t, DNA.table, DNA.gap_open, DNA.gap_extend, LOCAL)
    cells = p.m * p.n
    print(f"\ncompute ceiling: {ceil:.0f} GCUPS; pair {p.m} x {p.n}")
    for r in (16, 32):
        for profile in ("int8", "int32"):
            def run(r=r, profile=profile):
                return multipass.end_cell(p, multipass.sweep(p, 0, p.m, 0, p.n,
                                                             rows_per_thread=r, profile=profile))
            run()
            gcups = cells / timed(run, 3) / 1e9
            print(f"score-only R={r:2d} {profile} profile: {gcups:7.1f} GCUPS "
                  f"({gcups / ceil:.1%} of the ceiling)")
    for r in (16, 32):
        out = multipass.sweep(p, 0, p.m, 0, p.n, rows_per_thread=r, timeline=True)
        print(timeline_summary(out.timeline.get(), r))
    checkpoint_cost(p)
    so = timed(lambda: wavedp.align(a, b, DNA, device="gpu", traceback=False), 3)
    lookahead, last_chunk = traceback.LOOKAHEAD, hostmem.LAST_CHUNK
    firsts = [(lookahead, f"first, pinning {when} the sweep in steps up to {step >> 20} MiB")
              for when, step in (("before", last_chunk), ("during", last_chunk),
                                 ("during", 64 << 20), ("during", 1 << 30))]
    for la, call in (*firsts, (lookahead, "again"),
                     *((la, "again") for la in range(4) if la != lookahead)):
        if call.startswith("first"):
            hostmem.release()  # the first call pins anew
            traceback.OVERLAP_PINNING = "during" in call
            hostmem.LAST_CHUNK = int(call.split()[-2]) << 20
        traceback.LOOKAHEAD = la
        st: dict[str, float] = {}
        sec = timed(lambda: traceback.align_traceback(p, q, t, phases=st))  # noqa: B023
        print(f"traceback (engine), lookahead {la} ({call}): {sec:.2f} s = {sec / so:.2f} x "
              f"score-only; pinned after {st['pin_s']:.2f} s, forward {st['forward_s']:.2f} s,"
              f" {st['tiles']} tiles {st['tile_s']:.2f} s, walk {st['walk_s']:.2f} s, "
              f"closing {st['close_s']:.2f} s, engine {st['total_s']:.2f} s")
    traceback.LOOKAHEAD, hostmem.LAST_CHUNK = lookahead, last_chunk
    traceback.OVERLAP_PINNING = True
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--big", action="store_true", help="also 10 Mbp x 10 Mbp score-only")
    ap.add_argument("--tune", type=int, default=0, metavar="N",
                    help="only compare rows-per-thread variants on an N x N DNA pair")
    args = ap.parse_args()
    import cupy

    rng = np.random.default_rng(1)
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    print(f"device: {name}, wavedp {wavedp.__version__}", file=sys.stderr)

    t0 = time.perf_counter()
    for f in module.KERNELS:
        module.module(f).get_function(module.KERNELS[f][0])
    compile_s = time.perf_counter() - t0
    wavedp.align("ACGT" * 50, "ACGT" * 60, DNA, device="gpu")  # warm every launcher
    wavedp.align("ACGT" * 50, "ACGT" * 60, DNA, device="gpu", traceback=False)
    wavedp.align("ACGT" * 50, "ACGT" * 60, DNA, device="gpu", traceback=False,
                 strategy="diagonal")

    ceil = ceiling_gcups()
    if args.tune:
        return tune(rng, args.tune, ceil)
    rows = []
    sizes = [("DNA", 3_000), ("DNA", 30_000), ("protein", 30_000)]
    if not args.quick:
        sizes += [("DNA", 300_000), ("DNA", 1_000_000)]
    if args.big:
        sizes += [("DNA", 10_000_000)]
    for kind, n in sizes:
        scoring = DNA if kind == "DNA" else PROTEIN
        letters = "ACGT" if kind == "DNA" else "ARNDCQEGHILKMFPSTWYV"
        a, b = related_pair(rng, n, letters)
        cells = len(a) * len(b)
        reps = 3 if cells <= 1e12 else 1
        so = timed(lambda a=a, b=b, s=scoring: wavedp.align(a, b, s, device="gpu",
                                                             traceback=False), reps)
        tb = tb1 = None
        if n <= 1_000_000:  # first call pins host memory for checkpoints; later calls reuse it
            tb1 = first_call(lambda a=a, b=b, s=scoring: wavedp.align(a, b, s, device="gpu"))
            tb = timed(lambda a=a, b=b, s=scoring: wavedp.align(a, b, s, device="gpu"), reps)
        dg = None
        if n <= 30_000:
            dg = timed(lambda a=a, b=b, s=scoring: wavedp.align(
                a, b, s, device="gpu", traceback=False, strategy="diagonal"))
        cpu = None
        if n <= 30_000:
            cpu = timed(lambda a=a, b=b, s=scoring: wavedp.align(a, b, s, device="cpu",
                                                                 traceback=False))
        ok = wavedp.align(a, b, scoring, device="gpu", traceback=False)
        rows.append((kind, n, cells, so, tb, tb1, dg, cpu, ok.score))
        print(f"done {kind} {n}", file=sys.stderr, flush=True)

    lat = {}
    a, b = related_pair(rng, 1000, "ACGT")
    for tb in (False, True):
        timed(lambda tb=tb: wavedp.align(a, b, DNA, device="gpu", traceback=tb))
        lat[tb] = timed(lambda tb=tb: wavedp.align(a, b, DNA, device="gpu", traceback=tb), 20)

    def g(sec, cells):
        return f"{cells / sec / 1e9:9.1f}" if sec else "        -"

    print()
    print(f"NVRTC compile of all kernels (first use in a process): {compile_s:.2f} s")
    print(f"compute ceiling (register-only kernel, same per-cell arithmetic): {ceil:.0f} GCUPS")
    print(f"latency 1k x 1k DNA: score-only {lat[False] * 1e3:.2f} ms, "
          f"traceback {lat[True] * 1e3:.2f} ms")
    print()
    print(f"{'pair':>14} {'multipass':>9} {'of ceil':>7} {'trace':>9} {'tb/so':>6} "
          f"{'tb1/so':>6} {'diagonal':>9} {'cpu':>9} {'score':>9}   (GCUPS)")
    for kind, n, cells, so, tb, tb1, dg, cpu, score in rows:
        ratio = f"{tb / so:6.2f}" if tb else "     -"
        ratio1 = f"{tb1 / so:6.2f}" if tb1 else "     -"
        frac = f"{cells / so / 1e9 / ceil:7.1%}"
        print(f"{kind + ' ' + format(n, ','):>14} {g(so, cells)} {frac} {g(tb, cells)} {ratio} "
              f"{ratio1} {g(dg, cells)} {g(cpu, cells)} {score:9d}")
    print("trace, tb/so: repeated traceback calls; tb1/so: first calls (median of 3), with no "
          "host memory for checkpoints pinned; cpu: the CPU engine, score-only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
