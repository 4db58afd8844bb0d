"""The predictor's terms, measured one by one: where a launch's time goes (host work around
it, the kernel alone) beside what the model says for each, and the controlled launches the
model's kernel terms were fitted on.

Run from the repository root:  python benchmarks/predictor_terms.py [--sets ...]
[--partitions ...] [--json FILE] (with wavedp installed, on a GPU; the predictor's constants
are this machine's calibration, ``wavedp calibrate``, or the built-in ones).

1. **Launches split.** Every launch of the partitioning benchmark's sets
   (``benchmarks/partitioning.py``) under the given partitionings: the whole launch by the
   host clock (profiles built, kernel, results unpacked and scattered), the kernel by CUDA
   events, and the profiles' build re-timed alone (queries gathered on the host, built on
   the GPU); beside them the model's kernel term and its host terms (launch, per profile,
   per profile word, per subject, per result word). Per partitioning: how many launches
   the kernel term and the host terms each get within 15%.
2. **Controlled launches** (kernel alone, CUDA events): one 35,000-residue subject against
   1 to 128 profiles in one and in two passes (the thesis's falling phase: an item left for
   last runs alone), and heavy-tailed subjects in random and in sorted order at 1, 2, 4 and
   8 blocks per SM (the padding a warp and a block pay, and how much other blocks cover).
3. **Passes and grids** (kernel alone): shape (4, 32) packed, one profile of 1, 8 and 32
   passes against subjects all n = 400, 1,600 and 6,400 long at the engine's grid (one and
   four tickets per block), and one ticket per block at grids capped at 1 to 5 blocks per
   SM: what a later pass costs with the device full (against a group alone, the
   calibration's ``later``), and what a block pays when its multiprocessor holds k blocks.

``--json`` writes every launch's raw numbers (units' rows, subjects' lengths in launch
order, shape, seconds of each part) for fitting the model offline.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time

import numpy as np

from wavedp.dbsearch import predict
from wavedp.engines import calibration
from wavedp.engines.calibration import Model, kernel_only
from wavedp.engines.common import LOCAL
from wavedp.engines.cuda.scan import calibrate, scanner, shapes
from wavedp.engines.cuda.scan.cost import gpu_seconds
from wavedp.scoring import Scoring

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partitioning as bench  # noqa: E402

SCORING = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def _scanner(lengths: np.ndarray, rng, partition: str = "none") -> tuple[scanner.Scanner, object]:
    """A scanner over random residues of ``lengths`` and its resident chunk."""
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    residues = rng.integers(0, 20, int(offsets[-1]), dtype=np.uint8)
    sc = scanner.Scanner(residues, offsets, None, SCORING.table, 11, 1, LOCAL, partition)
    return sc, next(sc.chunks())


def _profile_seconds(sc: scanner.Scanner, units: list[list[np.ndarray]], shape) -> float:
    """The time a launch spends on its profiles (units of the same lengths; gathered on the
    host, built on the GPU; best of three)."""
    import cupy

    g, r, _ = shape
    own = np.array([max(1, -(-max(q.size for q in u) // (g * r))) for u in units])
    best = []
    for _ in range(3):
        start = time.perf_counter()
        sc._profiles(units, own, g, r, sc.packed)
        cupy.cuda.get_current_stream().synchronize()
        best.append(time.perf_counter() - start)
    return min(best)


def split_launches(model: Model, name: str, partition: str, repeats: int) -> list[dict]:
    """Every launch of one set under one partitioning, split into its parts (median run)."""
    rng = np.random.default_rng(7)
    qlens, slens = bench.lengths_of(name, rng)
    sc, ch = _scanner(slens.astype(np.int64), rng, partition)
    queries = [rng.integers(0, 20, m, dtype=np.uint8) for m in qlens]
    calibrate.timed_launches(sc, ch, queries)  # warm-up: kernels loaded
    runs = [calibrate.timed_launches(sc, ch, queries) for _ in range(repeats)]
    rows = sorted(runs, key=lambda r: sum(x["whole"] for x in r))[len(runs) // 2]
    kmodel = kernel_only(model)
    for r in rows:
        unit_m, subj_n, shape = np.array(r["m"]), np.array(r["n"]), tuple(r["shape"])
        chosen = [[np.zeros(m, np.uint8)] * (1 + sc.packed) for m in r["m"]]
        whole = gpu_seconds(model, unit_m, subj_n, 24, sc.packed, shape)
        kernel = gpu_seconds(kmodel, unit_m, subj_n, 24, sc.packed, shape)
        r.update(set=name, partition=partition, profile=_profile_seconds(sc, chosen, shape),
                 kernel_guess=kernel, host_guess=whole - kernel)
    return rows


def _error(guess: float, seen: float) -> float:
    return (guess - seen) / seen if seen > 0 else float("nan")


def print_split(rows: list[dict]) -> None:
    print("| units | subjects | n | shape | whole ms | predicted | kernel ms | predicted | "
          "host ms | profiles ms | predicted host |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        host = r["whole"] - r["kernel"]
        print(f"| {len(r['m'])} | {len(r['n']):,} | {min(r['n'])}-{max(r['n'])} | "
              f"{tuple(r['shape'])} | {r['whole'] * 1e3:.2f} | "
              f"{_error(r['kernel_guess'] + r['host_guess'], r['whole']):+.0%} | "
              f"{r['kernel'] * 1e3:.2f} | {_error(r['kernel_guess'], r['kernel']):+.0%} | "
              f"{host * 1e3:.2f} | {r['profile'] * 1e3:.2f} | "
              f"{_error(r['host_guess'], host):+.0%} |")
    parts = {"whole": lambda r: _error(r["kernel_guess"] + r["host_guess"], r["whole"]),
             "kernel": lambda r: _error(r["kernel_guess"], r["kernel"]),
             "host": lambda r: _error(r["host_guess"], r["whole"] - r["kernel"])}
    print("within 15%: " + ", ".join(
        f"{k} {sum(abs(f(r)) <= 0.15 for r in rows)}/{len(rows)}" for k, f in parts.items()))


def _timed(sc: scanner.Scanner, ch, qs, units, subjects, shape, reps: int = 3) -> float:
    """Median kernel seconds (CUDA events) of one launch after a warm-up."""
    import cupy

    out = cupy.zeros((len(qs), ch.size), cupy.int32)
    times = [calibrate._timed_batch(sc, ch, qs, units, subjects, out, shape)[1]
             for _ in range(reps + 1)]
    return statistics.median(times[1:])


def controlled(model: Model) -> list[dict]:
    """The lone long subject and the order/occupancy launches, predicted against measured."""
    kmodel = kernel_only(model)
    rng = np.random.default_rng(3)
    rows = []
    lengths = rng.integers(200, 601, 200_000)
    lengths[0] = 35_000
    sc, ch = _scanner(lengths, rng)
    qs = [rng.integers(0, 20, m, dtype=np.uint8) for m in rng.integers(200, 601, 512)]
    qs.sort(key=lambda q: -q.size)
    qs += [rng.integers(0, 20, 300, dtype=np.uint8) for _ in range(256)]
    units = shapes.pair_up(list(range(len(qs))), True)
    for label, chosen, shape in (("35k x units, 2 passes", units, (16, 20, 2)),
                                 ("35k x units, 1 pass", units[256:], (16, 20, 1))):
        for nu in (1, 8, 32, 128):
            seen = _timed(sc, ch, qs, chosen[:nu], np.array([0]), shape)
            m = np.array([max(qs[k].size for k in u) for u in chosen[:nu]])
            rows.append(dict(case=f"{label} ({nu})", seen=seen, guess=gpu_seconds(
                kmodel, m, np.array([35_000.0]), 24, True, shape)))
    lens = np.clip(rng.lognormal(np.log(300), 1.0, 60_000), 20, 8000).astype(np.int64)
    sc, ch = _scanner(lens, rng)
    qs = [rng.integers(0, 20, m, dtype=np.uint8) for m in [1280] * 32 + [320] * 32]
    units = shapes.pair_up(list(range(len(qs))), True)
    orders = {"random": rng.permutation(lens.size), "sorted": np.argsort(-lens, kind="stable")}
    sms, own = model.sms or 132, sc.model
    try:
        for bps in (1, 2, 4, 8):  # the grid capped at bps blocks per SM
            sc.model = calibration.capped(own, bps * sms)
            for order, subjects in orders.items():
                for chosen, shape in ((units[:16], (16, 20, 4)), (units[16:], (16, 20, 1))):
                    seen = _timed(sc, ch, qs, chosen, subjects, shape, reps=2)
                    m = np.array([max(qs[k].size for k in u) for u in chosen])
                    rows.append(dict(case=f"{order}, {shape[2]} pass(es), {bps} blocks/SM",
                                     seen=seen, guess=gpu_seconds(
                                         calibration.capped(kmodel, bps * sms), m,
                                         lens[subjects].astype(np.float64), 24, True, shape)))
    finally:
        sc.model = own
    return rows


def passes_and_grids(model: Model) -> list[dict]:
    """Shape (4, 32) packed: passes against subject length at the engine's grid, and one
    ticket per block at capped grids; measured (median of three, CUDA events) beside the
    model's kernel term."""
    kmodel = kernel_only(model)
    sms = model.sms or 132
    runs = []  # (case, n, count, passes, cap)
    for n in (400, 1600, 6400):
        blocks = shapes.launch_blocks(4, 1, 1 << 30, 2, n, sms)
        runs += [(f"n {n}, {t} ticket(s) per block, {p} pass(es)", n, t * 32 * blocks, p, None)
                 for t in (1, 4) for p in (1, 8, 32)]
    runs += [(f"n 1600, {cap / sms:.2f} blocks per SM, 1 ticket each, {p} pass(es)", 1600,
              32 * cap, p, cap) for cap in (sms, sms * 5 // 4, sms * 3 // 2, 2 * sms, 3 * sms,
                                            4 * sms, 5 * sms) for p in (1, 8)]
    rows = {}  # by case, printed in the order of runs
    for n in dict.fromkeys(n for _, n, _, _, _ in runs):  # one database per length
        group = [run for run in runs if run[1] == n]
        size = max(count for _, _, count, _, _ in group)
        found = calibrate.calibration(np.full(size, n, np.int64), [
            (128 * p, 4, 32, p, True, 0, count, 1, *([cap] if cap else []))
            for _, _, count, p, cap in group])
        for (case, _, count, p, cap), (seen, _) in zip(group, found, strict=True):
            guess = gpu_seconds(calibration.capped(kmodel, cap), np.array([128 * p]),
                                        np.full(count, float(n)), 24, True, (4, 32, p))
            rows[case] = dict(case=case, seen=seen, guess=guess)
    return [rows[case] for case, *_ in runs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="mixture")
    parser.add_argument("--partitions", default="dynamic2,static")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write every launch's raw numbers here")
    args = parser.parse_args()
    model = predict.model_for("gpu")
    print(f"predictor: {model.device}" + ("" if model.calibrated else " (built-in constants)"))
    split = []
    for name in args.sets.split(","):
        for p in args.partitions.split(","):
            rows = split_launches(model, name, p, args.repeats)
            print(f"\n{name}, {p}: {len(rows)} launches")
            print_split(rows)
            split += rows
    print("\ncontrolled launches, kernel alone (CUDA events), median of 3")
    print("| case | measured ms | predicted ms | error |")
    print("|---|---|---|---|")
    fixed = controlled(model) + passes_and_grids(model)
    for r in fixed:
        print(f"| {r['case']} | {r['seen'] * 1e3:.2f} | {r['guess'] * 1e3:.2f} | "
              f"{_error(r['guess'], r['seen']):+.0%} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"model": dataclasses.asdict(model), "launches": split,
                       "controlled": fixed}, fh)
    print(f"\n(done {time.strftime('%Y-%m-%d %H:%M')})")


if __name__ == "__main__":
    main()
