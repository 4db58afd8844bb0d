"""CPU pairwise alignment: wavedp's Numba engine against parasail, one thread, same pairs.

Run from the repository root:  python benchmarks/cpu_align.py [--quick]
(with wavedp installed, or ``PYTHONPATH=src``). Local mode; DNA (match 2, mismatch -3,
open 5, extend 2) and protein (BLOSUM62, open 11, extend 1). Each pair is a random
sequence and a mutated copy (~15% substitutions and indels), so the alignments are long.

Every measured (method, pair) runs in a fresh child process: warm-up call on a tiny pair
(Numba JIT or cache load, timed and reported apart), then RSS just before the first real
call; peak memory is that child's peak RSS (``getrusage``) minus this baseline. Timings are
the median of several calls in that child; GCUPS = m*n / seconds / 1e9.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

DNA_LETTERS = "ACGT"
PROTEIN_LETTERS = "ARNDCQEGHILKMFPSTWYV"
#: (kind, length) of the query; the target is a mutated copy of it
CASES = [("DNA", 1000), ("DNA", 10_000), ("DNA", 30_000), ("protein", 1000), ("protein", 5000)]
METHODS = ("wavedp", "wavedp_tb", "parasail", "parasail_tb")
SUBST, INDEL = 0.10, 0.025  # per residue: substitution rate, deletion rate = insertion rate
MIN_REPEATS, MAX_REPEATS, REPEAT_SECONDS = 3, 15, 2.0


def related_pair(seed: int, kind: str, n: int) -> tuple[str, str]:
    """A random sequence of length n and a mutated copy of it (substitutions and indels)."""
    rng = np.random.default_rng(seed)
    letters = DNA_LETTERS if kind == "DNA" else PROTEIN_LETTERS
    alphabet = np.frombuffer(letters.encode(), dtype=np.uint8)
    a = alphabet[rng.integers(0, alphabet.size, n)]
    b = a.copy()
    sub = rng.random(n) < SUBST
    b[sub] = alphabet[rng.integers(0, alphabet.size, int(sub.sum()))]
    b = b[rng.random(n) >= INDEL]
    ins = np.flatnonzero(rng.random(b.size) < INDEL)
    b = np.insert(b, ins, alphabet[rng.integers(0, alphabet.size, ins.size)])
    return a.tobytes().decode(), b.tobytes().decode()


def rss_mb() -> float:
    """Current resident set size of this process in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def reset_peak() -> None:
    """Reset the peak RSS high-water mark (Linux); harmless where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def aligner(method: str, kind: str):
    """A function (a, b) -> score running one call of ``method``."""
    if method.startswith("wavedp"):
        import numba

        import wavedp

        numba.set_num_threads(1)
        scoring = (wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
                   if kind == "DNA" else
                   wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1))
        tb = method == "wavedp_tb"

        def run(a, b):
            aln = wavedp.align(a, b, scoring, mode="local", traceback=tb, device="cpu")
            assert (aln.cigar is not None) == tb
            return aln.score
        return run
    import parasail

    if kind == "DNA":
        matrix, gap_open, gap_extend = parasail.matrix_create("ACGT", 2, -3), 5, 2
    else:
        matrix, gap_open, gap_extend = parasail.blosum62, 11, 1
    if method == "parasail":
        def run(a, b):
            return parasail.sw_striped_32(a, b, gap_open, gap_extend, matrix).score
        return run

    def run(a, b):  # the CIGAR is part of what a traceback call delivers
        result = parasail.sw_trace_striped_32(a, b, gap_open, gap_extend, matrix)
        result.get_cigar()
        return result.score
    return run


def one(spec: dict) -> dict:
    """Child process: warm up, then measure one method on one pair."""
    run = aligner(spec["method"], spec["kind"])
    a, b = related_pair(spec["seed"], spec["kind"], spec["n"])
    t0 = time.perf_counter()
    run(a[:64], b[:64])
    first_call = time.perf_counter() - t0
    if spec.get("warmup_only"):
        return {"first_call": first_call}
    base = rss_mb()
    reset_peak()
    t0 = time.perf_counter()
    score = run(a, b)
    times = [time.perf_counter() - t0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    while len(times) < MAX_REPEATS and (len(times) < MIN_REPEATS
                                        or sum(times) < REPEAT_SECONDS):
        t0 = time.perf_counter()
        assert run(a, b) == score
        times.append(time.perf_counter() - t0)
    return {"score": score, "m": len(a), "n": len(b), "first_call": first_call,
            "seconds": statistics.median(times), "runs": len(times),
            "mem_mb": max(0.0, peak - base)}


def child(spec: dict, env: dict | None = None) -> dict:
    """Run ``one(spec)`` in a fresh interpreter and return its result."""
    proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(spec)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"child {spec} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def cold_jit_seconds() -> float:
    """First wavedp call with an empty Numba cache directory: the full JIT compile."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        spec = {"method": "wavedp_tb", "kind": "DNA", "n": 64, "seed": 0, "warmup_only": True}
        return child(spec, env)["first_call"]


def gcups(r: dict) -> float:
    return r["m"] * r["n"] / r["seconds"] / 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only the 1k sizes")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(json.loads(args.one))))
        return 0

    import parasail

    import wavedp

    cases = [c for c in CASES if c[1] == 1000] if args.quick else CASES
    print(f"wavedp {wavedp.__version__} (CPU engine, 1 thread) vs parasail "
          f"{parasail.__version__}; local alignment, one pair at a time")
    print(f"pairs: random query, target = mutated copy ({SUBST:.0%} substitutions, "
          f"{INDEL:.1%} deletions, {INDEL:.1%} insertions), so the alignments are long")
    print("each cell: median of >= 3 calls in a fresh child process after a warm-up call; "
          "MB = child's peak RSS minus its RSS just before the call")
    print("parasail traceback time includes get_cigar(); wavedp's includes building the CIGAR")
    jit = cold_jit_seconds()
    rows, loads = [], []
    for kind, n in cases:
        seed = 1000 + CASES.index((kind, n))  # the same pair with and without --quick
        res = {}
        for method in METHODS:
            res[method] = child({"method": method, "kind": kind, "n": n, "seed": seed})
            if method.startswith("wavedp"):
                loads.append(res[method]["first_call"])
            print(f"  {kind} {n}: {method:12s} {gcups(res[method]):7.3f} GCUPS "
                  f"{res[method]['mem_mb']:8.1f} MB  score {res[method]['score']}",
                  file=sys.stderr, flush=True)
        rows.append((kind, res))
    print(f"Numba one-off cost, excluded from the timings: JIT compile {jit:.1f} s "
          f"(empty cache), on-disk cache load {statistics.median(loads):.2f} s (median)")
    print()
    head = ("| pair | m x n | wavedp score GCUPS | MB | parasail sw_striped_32 GCUPS | MB "
            "| ratio | wavedp traceback GCUPS | MB | parasail sw_trace_striped_32 GCUPS | MB "
            "| ratio | scores equal |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for kind, res in rows:
        w, wt, p, pt = (res[m] for m in METHODS)
        same = len({r["score"] for r in res.values()}) == 1
        print(f"| {kind} {w['m'] // 1000}k | {w['m']} x {w['n']} "
              f"| {gcups(w):.3f} | {w['mem_mb']:.1f} | {gcups(p):.3f} | {p['mem_mb']:.1f} "
              f"| {gcups(w) / gcups(p):.2f}x "
              f"| {gcups(wt):.3f} | {wt['mem_mb']:.1f} | {gcups(pt):.3f} | {pt['mem_mb']:.1f} "
              f"| {gcups(wt) / gcups(pt):.2f}x | {'yes' if same else 'NO'} ({w['score']}) |")
    print()
    score_ok = sum(gcups(r["wavedp"]) >= 0.5 * gcups(r["parasail"]) for _, r in rows)
    trace_ok = sum(gcups(r["wavedp_tb"]) >= gcups(r["parasail_tb"]) for _, r in rows)
    print(f"targets: score-only >= 0.5x parasail sw_striped_32 (met on {score_ok}/{len(rows)}); "
          f"traceback >= 1.0x parasail sw_trace_striped_32 with far less memory "
          f"(speed met on {trace_ok}/{len(rows)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
