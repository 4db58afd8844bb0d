"""Length partitioning on skewed sets: every partitioning's time, its padding, and the
predictor's estimate beside the measurement, launch by launch.

Run from the repository root:  python benchmarks/partitioning.py [--repeats R] [--sets ...]
(with wavedp installed, on a GPU). Seeded random protein sets, BLOSUM62 11/1, local,
score-only ``wavedp.search(..., top=10, device="gpu", partition=P)`` for P in none, static,
dynamic1, dynamic2 and auto, after a warm-up of each; the results are asserted equal.
The sets (the PaSWAS thesis's skewed cases and DS-like mixtures):

- ``long-subject``: 200 queries of 200-600 residues against 20,000 subjects of 200-600 and
  one of 35,000 (at a random place in the file);
- ``long-query``: 400 queries of 200-600 and one of 35,000 against 50,000 of 200-600;
- ``mixture``: 300 queries and 100,000 subjects of lognormal lengths (median 300, sigma 1,
  20 to 35,000 residues), both sides skewed.

Per set and partitioning: launches, the scan's measured seconds (sum of its launches, each
timed by CUDA events from the end of the launch before to its own end: the time it adds to
the scan, the host preparing it while the one before runs; what ``--explain`` shows; the
median run; Python's garbage collector paused while timing), the predicted seconds, the
worst and the median error of one launch (each launch's median over the runs), how many
launches are within 15% (all, and those of 10 ms or more), the total's error, the median
spread of one launch over the runs ((slowest - fastest) / median: how far a launch's own
measurement moves), and the padding (PaSWAS's padded cells over real cells
of the batches). Where auto runs another partitioning's launches, the two measurements of
each launch are set against each other: one taken as the other's prediction, how many are
within 15% (what a perfect model of one run could reach on the other). Then whether each
partitioning beats none and how far auto is from the best.
The predictor's constants are this machine's calibration (``wavedp calibrate``, run first
by ``--calibrate``) or the built-in ones.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import wavedp
from wavedp.db.database import Database
from wavedp.db.files import PROTEIN_LETTERS
from wavedp.dbsearch import predict
from wavedp.engines.calibration import kernel_only, save
from wavedp.engines.cuda.multipass import multiprocessors
from wavedp.engines.cuda.scan import calibrate, cost, shapes
from wavedp.engines.cuda.scan import partition as part
from wavedp.engines.cuda.scan.cost import gpu_seconds, launch_shape
from wavedp.engines.cuda.scan.model import gpu_model
from wavedp.engines.cuda.scan.planner import schedule
from wavedp.trace import Trace

PARTITIONS = ("none", "static", "dynamic1", "dynamic2", "auto")
#: launches at least this long (seconds) are counted apart: below it a launch's fixed host
#: cost (about 0.3 ms on the H100 machine) moves its relative error by tens of percent
LONG_LAUNCH = 0.010
LETTERS = "ARNDCQEGHILKMFPSTWYV"


def lengths_of(name: str, rng) -> tuple[np.ndarray, np.ndarray]:
    """(query lengths, subject lengths) of one set."""
    if name == "long-subject":
        subjects = rng.integers(200, 601, 20_001)
        subjects[rng.integers(0, subjects.size)] = 35_000
        return rng.integers(200, 601, 200), subjects
    if name == "long-query":
        queries = rng.integers(200, 601, 401)
        queries[rng.integers(0, queries.size)] = 35_000
        return queries, rng.integers(200, 601, 50_000)
    draw = lambda n: np.clip(rng.lognormal(np.log(300), 1.0, n), 20, 35_000)  # noqa: E731
    return draw(300).astype(np.int64), draw(100_000).astype(np.int64)


def database(lengths: np.ndarray, rng) -> Database:
    codes = np.array([PROTEIN_LETTERS.index(c) for c in LETTERS], np.uint8)
    residues = codes[rng.integers(0, 20, int(lengths.sum()))]
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Database(path=None, alphabet="protein", letters=PROTEIN_LETTERS, residues=residues,
                    offsets=offsets, lengths=lengths.astype(np.int32),
                    ids=[f"s{k}" for k in range(lengths.size)],
                    composition=np.bincount(residues, minlength=len(PROTEIN_LETTERS)),
                    longest=int(lengths.max()))


def padding(qlens: np.ndarray, slens: np.ndarray, name: str) -> float:
    """PaSWAS's padded cells over real cells of the engine's batches (one query batch)."""
    if name == "auto":
        return float("nan")
    units = np.sort(qlens)[::-1][::2]  # packed: two queries per unit, longest first
    need = shapes.scan_need(24, multiprocessors())
    batches = part.partition(name, units, slens, shapes.OUT_BYTES
                             + shapes.SCRATCH_BYTES, need)
    real, padded = part.padding(batches, units, slens)
    return padded / real


def details(model, qlens: np.ndarray, slens: np.ndarray, name: str, log: list) -> None:
    """Each launch of ``name``: its kernel shape and work beside predicted and measured, and
    both split into the kernel and the rest (the host's work or the launch's other GPU work,
    whichever is longer: the host prepares a launch while the one before runs)."""
    units = np.sort(qlens)[::-1][::2]
    need = shapes.scan_need(24, multiprocessors())
    _, batches, seconds = schedule(model, name, units, slens, 24, True, need,
                                           shapes.OUT_BYTES + shapes.SCRATCH_BYTES)
    bare = kernel_only(model, start=False)
    print("|   launch | units x subjects | shape | work, critical path | predicted s | "
          "measured s | error | besides the kernel predicted / measured ms | kernel "
          "predicted / measured ms |")
    for b, guess, row in zip(batches, seconds, log, strict=False):
        shape = launch_shape(model, units[b.queries], slens[b.subjects], 24, True)
        work, critical = cost.gpu_work(units[b.queries], slens[b.subjects], shape)
        kernel = gpu_seconds(bare, units[b.queries], slens[b.subjects], 24, True,
                                     shape)
        print(f"|   launch | {b.queries.size} units x {b.subjects.size:,} | shape {shape} | "
              f"W {work:.3g} C {critical:.3g} | {guess:.4f} | {row[4]:.4f} | "
              f"{(guess - row[4]) / row[4]:+.1%} | {(guess - kernel) * 1e3:.2f} / "
              f"{(row[4] - row[5]) * 1e3:.2f} | {kernel * 1e3:.2f} / {row[5] * 1e3:.2f} |")


def repeatability(launches: dict[str, list]) -> str | None:
    """Where auto ran the same launches as another partitioning: how far the two
    measurements of a launch agree (one as the other's prediction), as a line of text."""
    auto = launches.get("auto", [])
    chosen = {x[0] for x in auto}
    if len(chosen) != 1 or not auto:
        return None
    (name,) = chosen
    other = launches.get(name, [])
    if [x[:4] for x in other] != [x[:4] for x in auto]:
        return None
    diffs = [(a[4] - b[4]) / b[4] for a, b in zip(auto, other, strict=True)]
    within = sum(abs(d) <= 0.15 for d in diffs)
    return (f"auto ran {name}'s {len(auto)} launches again: one measurement as the other's "
            f"prediction is within 15% for {within}/{len(auto)} (median difference "
            f"{statistics.median(abs(d) for d in diffs):.1%}, worst "
            f"{max(diffs, key=abs):+.1%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sets", default="long-subject,long-query,mixture")
    parser.add_argument("--launches", action="store_true",
                        help="also list every launch: shape, work, predicted, measured")
    parser.add_argument("--json", metavar="FILE",
                        help="write every launch of every run (for replaying the model "
                             "offline: the launches follow from the sets' seeds and the "
                             "calibration)")
    parser.add_argument("--calibrate", action="store_true",
                        help="run wavedp calibrate's measurement first (and store it)")
    args = parser.parse_args()
    if args.calibrate:
        model = predict.calibrate("gpu")
        save(model)
        gpu_model.cache_clear()
        print(f"calibrated {model.device} in {model.seconds:.1f} s")
    model = predict.model_for("gpu")
    print(f"predictor: {model.device}" + ("" if model.calibrated else " (built-in constants)"))
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    summary, raw = [], {}
    for name in args.sets.split(","):
        rng = np.random.default_rng(7)
        qlens, slens = lengths_of(name, rng)
        queries = ["".join(LETTERS[c] for c in rng.integers(0, 20, m)) for m in qlens]
        db = database(slens, rng)
        cells = float(qlens.sum()) * float(slens.sum())
        print(f"\n{name}: {qlens.size} queries ({int(qlens.sum()):,} residues, longest "
              f"{int(qlens.max()):,}) x {slens.size:,} subjects ({int(slens.sum()):,} "
              f"residues, longest {int(slens.max()):,}); median of {args.repeats}")
        print("| partition | launches | scan s | predicted s | total error | worst launch "
              "error | median launch error | launches within 15% | launches of >= 10 ms "
              "within 15% | median launch spread | GCUPS | padded / real |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        results, rows, launches = None, {}, {}
        for p in PARTITIONS:
            found = wavedp.search(queries, db, scoring, top=10, traceback=False,
                                  device="gpu", partition=p)  # warm-up
            results = results or found
            assert found == results, f"{name}: partition {p} changed the results"
            runs = []
            with calibrate.collector_paused():
                for _ in range(args.repeats):
                    trace = Trace()
                    wavedp.search(queries, db, scoring, top=10, traceback=False,
                                  device="gpu", partition=p, trace=trace)
                    runs.append(list(trace.launches))
            raw.setdefault(name, {})[p] = runs
            log = sorted(runs, key=lambda r: sum(x[4] for x in r))[len(runs) // 2]
            seen, guess = sum(x[4] for x in log), sum(x[3] for x in log)
            spreads = [float("nan")]
            if all(len(r) == len(log) for r in runs):  # each launch: its median over runs
                log = [(*x[:4], *(statistics.median(r[k][i] for r in runs) for i in (4, 5)))
                       for k, x in enumerate(log)]
                spreads = [(max(r[k][4] for r in runs) - min(r[k][4] for r in runs)) / x[4]
                           for k, x in enumerate(log)]
            errors = [(x[3] - x[4]) / x[4] for x in log]
            within = sum(abs(e) <= 0.15 for e in errors)
            long = [e for x, e in zip(log, errors, strict=True) if x[4] >= LONG_LAUNCH]
            long_within = sum(abs(e) <= 0.15 for e in long)
            chosen = sorted({x[0] for x in log})
            label = p if p != "auto" else f"auto ({', '.join(chosen)})"
            rows[p], launches[p] = seen, log
            print(f"| {label} | {len(log)} | {seen:.3f} | {guess:.3f} | "
                  f"{(guess - seen) / seen:+.1%} | {max(errors, key=abs):+.1%} | "
                  f"{statistics.median(errors):+.1%} | {within}/{len(log)} | "
                  f"{long_within}/{len(long)} | {statistics.median(spreads):.1%} | "
                  f"{cells / seen / 1e9:,.0f} | "
                  f"{padding(qlens, slens, p):.2f} |")
            if args.launches:
                details(model, qlens, slens, chosen[0], log)
        repeat = repeatability(launches)
        if repeat:
            print(repeat)
        best = min((p for p in PARTITIONS if p != "auto"), key=rows.get)
        beats = all(rows[p] < rows["none"] for p in ("static", "dynamic1", "dynamic2"))
        summary.append((name, best, rows["auto"] / rows[best], beats))
    print("\n| set | best | auto / best | every partitioning beats none |")
    print("|---|---|---|---|")
    for name, best, ratio, beats in summary:
        print(f"| {name} | {best} | {ratio:.3f} | {'yes' if beats else 'no'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": model.device, "sets": raw}, f)
    print(f"\n(done {time.strftime('%Y-%m-%d %H:%M')})")


if __name__ == "__main__":
    main()
