"""Non-serial polyadic DP: Moazeni et al.'s Table 1, Nussinov folding and matrix chains.

Run from the repository root:  python benchmarks/polyadic.py [--quick] [--skip-table1]
(with wavedp installed, or ``PYTHONPATH=src``). Prints markdown tables:

1. Table 1 of the paper on the GPU: iterative vs divide-and-conquer schedule, n = 1024 to
   8192, float32, blocks 32/64/128; GFLOP/s = 2 operations per (i, k, j) triple, i.e.
   ``2 * (n+1) n (n-1) / 6 / seconds``. The instance is random leaves plus a random
   per-interval table weight (without a weight every split ties: a degenerate instance);
   timed is the GPU engine on the encoded instance (uploads and kernels; the input checks
   of ``solve`` excluded).
2. Nussinov (int32, max-plus, the packed DPX product): n = 16384 on the GPU end to end
   (sequence in, structure out) against its floor, ``n^3/6`` add-max operations at the
   GPU's int32 rate (SMs x 64 lanes x clock); at n = 4096 the GPU, the CPU engine (all
   cores) and ViennaRNA's ``maximum_matching``, measured in the same run.
3. Matrix chain of 8192 matrices (int64, product weight), GPU vs CPU engine.

Each configuration is warmed up first (NVRTC and Numba compilation, reported apart); times
are the best of ``--repeats`` runs and include host-device copies.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time

import numpy as np

import wavedp
from wavedp.device import gpu_status
from wavedp.polyadic import solve


def best_time(run, repeats: int) -> tuple[float, object]:
    """(fastest wall time, result) of ``repeats`` calls."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - start)
    return best, out


def synced(run):
    """``run`` followed by a device synchronisation (a GPU result is complete when timed)."""
    import cupy

    def call():
        out = run()
        cupy.cuda.Device().synchronize()
        return out

    return call


def table(headers: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


def gpu_rate() -> tuple[float, str]:
    """int32 add-max operations per second of the GPU (SMs x 64 lanes x boost clock)."""
    from cupy.cuda import runtime

    dev = runtime.getDevice()
    sms = runtime.deviceGetAttribute(runtime.cudaDevAttrMultiProcessorCount, dev)
    khz = runtime.deviceGetAttribute(runtime.cudaDevAttrClockRate, dev)
    rate = sms * 64 * khz * 1e3
    return rate, f"{sms} SMs x 64 int32 lanes x {khz / 1e6:.2f} GHz = {rate / 1e12:.1f} Tops/s"


def _engine_run(diag: np.ndarray, weight: np.ndarray, schedule: str, block: int):
    """One GPU engine run (uploads and kernels) of an instance encoded beforehand."""
    from wavedp.engines.cuda import polyadic as engine
    from wavedp.polyadic.problem import encode

    prob = encode(diag, opt="min", weight=weight, pair=None, dtype=np.float32, block=block)
    return synced(lambda: engine.solve(prob, schedule))


def table1(sizes: list[int], blocks: list[int], repeats: int) -> str:
    rng = np.random.default_rng(1)
    rows, compile_s = [], 0.0
    for n in sizes:
        diag = rng.random(n).astype(np.float32)
        weight = rng.random((n, n)).astype(np.float32)
        flops = 2 * (n + 1) * n * (n - 1) / 6
        for block in blocks:
            secs = {}
            for schedule in ("iterative", "divide-and-conquer"):
                start = time.perf_counter()
                _engine_run(diag[:300], weight[:300, :300], schedule, block)()
                compile_s += time.perf_counter() - start
                secs[schedule], _ = best_time(_engine_run(diag, weight, schedule, block),
                                              repeats)
            it, dc = secs["iterative"], secs["divide-and-conquer"]
            rows.append([n, block, f"{it:.3f}", f"{flops / it / 1e9:.0f}", f"{dc:.3f}",
                         f"{flops / dc / 1e9:.0f}", f"{dc / it:.2f}x"])
    return (table(["n", "block", "iterative s", "GFLOP/s", "divide-and-conquer s", "GFLOP/s",
                   "iterative speed-up"], rows)
            + f"\n\nWarm-up (NVRTC compilation, small solves): {compile_s:.1f} s. The paper's "
              "Table 1 speed-ups: 1.01x (n = 1024) to 3.92x (n = 8192).")


def random_rna(n: int, seed: int) -> str:
    return "".join(np.random.default_rng(seed).choice(list("ACGU"), n))


def nussinov_section(big: int, small: int, gpu: bool, repeats: int) -> str:
    out = []
    start = time.perf_counter()
    for device in (["gpu"] if gpu else []) + ["cpu"]:
        wavedp.nussinov(random_rna(300, 0), device=device)
    out.append(f"Warm-up (compilation): {time.perf_counter() - start:.1f} s.")
    if gpu:
        seq = random_rna(big, 2)
        secs, (pairs, _) = best_time(lambda: wavedp.nussinov(seq, device="gpu"), repeats)
        solve_s, _ = best_time(synced(lambda: solve(
            np.zeros(big, np.int32), opt="max", dtype=np.int32, device="gpu",
            pair=wavedp.polyadic.Pairs(_codes(seq), _pairs(), 3))), repeats)
        rate, how = gpu_rate()
        floor = big**3 / 6 / rate
        out.append(table(["n", "pairs", "end to end s", "table only s", "floor s",
                          "end to end / floor"],
                         [[big, pairs, f"{secs:.3f}", f"{solve_s:.3f}", f"{floor:.3f}",
                           f"{secs / floor:.1f}x"]]))
        out.append(f"Floor: n^3/6 = {big**3 / 6:.3e} add-max operations at {how}.")
    import RNA

    seq = random_rna(small, 3)
    rows = []
    vienna_s, vienna = best_time(lambda: RNA.maximum_matching(seq), 1)
    cpu_s, (cpu_pairs, _) = best_time(lambda: wavedp.nussinov(seq, device="cpu"), repeats)
    assert cpu_pairs == vienna, (cpu_pairs, vienna)
    rows.append(["ViennaRNA maximum_matching (1 core)", vienna, f"{vienna_s:.3f}", "1.00x"])
    rows.append([f"wavedp CPU ({_threads()} threads)", cpu_pairs, f"{cpu_s:.3f}",
                 f"{vienna_s / cpu_s:.1f}x"])
    if gpu:
        gpu_s, (gpu_pairs, _) = best_time(lambda: wavedp.nussinov(seq, device="gpu"), repeats)
        assert gpu_pairs == vienna
        rows.append(["wavedp GPU", gpu_pairs, f"{gpu_s:.3f}", f"{vienna_s / gpu_s:.1f}x "
                     f"({cpu_s / gpu_s:.1f}x the CPU engine)"])
    out.append(f"Nussinov at n = {small}:\n\n"
               + table(["engine", "pairs", "seconds", "speed-up over ViennaRNA"], rows))
    return "\n\n".join(out)


def _codes(seq: str) -> np.ndarray:
    from wavedp.polyadic.nussinov import rna_codes

    return rna_codes(seq)


def _pairs() -> np.ndarray:
    from wavedp.polyadic.nussinov import pair_table

    return pair_table(True)


def _threads() -> int:
    import numba

    return numba.get_num_threads()


def chain_section(n: int, gpu: bool, repeats: int) -> str:
    dims = np.random.default_rng(4).integers(1, 1001, n + 1).tolist()
    start = time.perf_counter()
    for device in (["gpu"] if gpu else []) + ["cpu"]:
        wavedp.matrix_chain(dims[:300], device=device)
    warm = time.perf_counter() - start
    rows = []
    cpu_s, cpu = best_time(lambda: wavedp.matrix_chain(dims, device="cpu"), 1)
    rows.append([f"CPU ({_threads()} threads)", cpu[0], f"{cpu_s:.3f}", "1.00x"])
    if gpu:
        gpu_s, res = best_time(lambda: wavedp.matrix_chain(dims, device="gpu"), repeats)
        assert res == cpu
        rows.append(["GPU", res[0], f"{gpu_s:.3f}", f"{cpu_s / gpu_s:.1f}x"])
    return (f"Matrix chain of {n} matrices (dimensions 1..1000, int64):\n\n"
            + table(["engine", "cost", "seconds", "speed-up"], rows)
            + f"\n\nWarm-up (compilation, a chain of 299): {warm:.1f} s.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--skip-table1", action="store_true", help="skip the paper's Table 1")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per configuration")
    args = parser.parse_args()
    ok, why = gpu_status()
    print(f"# wavedp polyadic benchmark, {datetime.date.today()}\n")
    print(f"- command: `{' '.join(['python', *sys.argv])}`")
    cpu = platform.processor() or platform.machine()
    print(f"- device: {why if ok else 'no GPU (' + why + ')'}; CPU: {cpu}, "
          f"{os.cpu_count()} logical CPUs")
    if args.quick:
        sizes, blocks, big, small, chain = [512, 1024], [32, 64, 128], 2048, 1024, 1024
    else:
        sizes, blocks, big, small, chain = [1024, 2048, 4096, 8192], [32, 64, 128], 16384, \
            4096, 8192
    if ok and not args.skip_table1:
        print("\n## Table 1: iterative vs divide-and-conquer (float32)\n")
        print(table1(sizes, blocks, args.repeats), flush=True)
    print("\n## Nussinov\n")
    print(nussinov_section(big, small, ok, args.repeats), flush=True)
    print("\n## Matrix chain\n")
    print(chain_section(chain, ok, args.repeats))


if __name__ == "__main__":
    main()
