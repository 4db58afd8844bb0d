"""Energy on the GPU (Ranasinghe 2014, chapter 5): micro-benchmarks give the energy of one
operation, and the model E = P_static T + sum_op count_op e_op (eqs. 10-13) is checked against
the measured energy of each Smith-Waterman strategy's sweep and of the database search.

- Micro-benchmarks (``kernels/lab_energy.cu``): integer adds, integer maxes (the fused add-max
  of the alignment kernels), shared-memory words (32-bit, and 16-byte loads as the search
  reads its profile), and global loads served by L2 or by DRAM,
  each at two intensities (a full grid, and one warp per multiprocessor), each run for at
  least ``Settings.seconds`` after a warm-up to a steady power; and the idle power.
- The fit: least squares (on relative errors) of every micro-benchmark's energy on its time
  and its operation counts, so the static power and each operation's energy come out
  together and the static part cancels between the intensities.
- The model: a run's energy is P_static T + cells sum_op c_op e_op + DRAM bytes e_dram, with
  T measured, c_op per DP cell read from the kernels (``CELL_COUNTS``) and the DRAM bytes a
  parameter (:func:`dram_estimate` by default; the search's counted by Nsight Compute,
  :func:`search_traffic`, where ``ncu`` is on the PATH, with its L2 bytes).
- The search once more with its grid capped at ``Settings.slope``'s block counts (one block
  per multiprocessor): its power against its cell rate (:func:`search_power`) gives the
  kernel's own static intercept and joules per cell, to set beside the model's.
- The peak searches, as CUDASW++4.0 measures the peak its published GCUPS/W comes from (one
  length on both sides of the database, the database resident, the scan alone timed), and,
  given its ``align``, CUDASW++4.0's own peak benchmark on this GPU (:mod:`.cudasw`).

Operations are per-thread instructions of the sm_90 SASS (NVRTC 13; uniform-datapath
instructions not counted) and bytes: ``max``: 32-bit integer maxes (the DPX add-max
VIADDMNMX, VIMNMX, VIMNMX3); ``max16``: the same on two 16-bit halves (the packed search's
VIADDMNMX.S16x2 and VIMNMX3.S16x2, measured apart: a packed instruction may cost more than
a 32-bit one); ``add``: every other instruction (integer ALU, and the issue of loads,
stores, shuffles, branches and barriers); ``shared``: 32-bit words loaded from or stored to
shared memory, and shuffled; ``shared16``: 16-byte shared-memory loads (LDS.128, the
search's profile reads; measured apart: per byte one costs about four times what a 32-bit
load's byte does, H100, 2026-11); ``l2``: bytes of global loads and stores that reach L2;
``dram``: those of them served by DRAM (a DRAM byte costs e_l2 + e_dram).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

import numpy as np

from .. import energy, engines
from ..device import Device, choose
from ..engines.common import LOCAL
from ..engines.cuda import sync as syncs
from ..engines.cuda.module import function
from ..engines.cuda.multipass import rows_for, sweep
from ..engines.cuda.scan.cost import shape_rate
from ..engines.cuda.scan.model import gpu_model
from ..engines.cuda.scan.shapes import plan
from ..errors import DeviceError, InputError
from ..scoring import Scoring
from ..search.api import iter_search
from ..search.database import PROTEIN_LETTERS, Database
from . import cudasw, ncu, report, swat
from .claims import Claim
from .timing import l2_bytes

FILE = "lab_energy.cu"
OPS = ("add", "max", "max16", "shared", "shared16", "l2", "dram")
INTENSITIES = ("high", "low")
STRATEGIES = ("multipass", "simple", "coalesced", "tiled", "search")
LABELS = {"multipass": "multipass", "simple": "diagonal, simple storage",
          "coalesced": "diagonal, coalesced storage", "tiled": "tiled", "search": "search"}
#: the lengths of the CUDASW++ query set (shared/data/allqueries.fasta), for the search
QUERY_LENGTHS = (144, 189, 222, 375, 464, 567, 657, 729, 850, 1000, 1500, 2005, 2504, 3005,
                 3564, 4061, 4548, 4743, 5147, 5478)
#: CUDASW++4.0's published energy efficiency on the H100 (the search's anchor): "up to", its
#: peak benchmark's (the query set against a pseudo-database of one length)
CUDASW_GCUPS_PER_WATT = 15.7
#: the residues of the random proteins
LETTERS = "ACDEFGHIKLMNPQRSTVWY"
#: the peak searches' databases: one random sequence repeated (CUDASW++4.0's --pseudodb),
#: or independent random sequences
PEAK_DATABASES = ("repeated", "distinct")
#: the target: the model within this fraction of every strategy's measured energy
TOLERANCE = 0.15
#: a micro-benchmark launch takes about this long; the warm-up measures windows this long
LAUNCH_S, WINDOW_S = 0.05, 1.0
#: the warm-up ends once two successive windows' mean powers differ by at most this fraction
SETTLE = 0.01
#: value the micro-benchmarks' results never take (kernels/lab_energy.cu's ``keep``)
KEY = np.uint32(0xFFFFFFFF)
#: energy_max's floor (positive: its Fibonacci steps never settle)
FLOOR = 12345
SOURCE = "Ranasinghe 2014"
#: m = n of the untimed run before a per-diagonal or tiled strategy's measurement
WARM_PAIR = 3_000

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    """What the energy lab measures: every measurement runs at least ``seconds``; the warm-up
    stops once the power settles, or after ``warmup`` seconds; ``idle`` seconds of idle
    power; m = n of each strategy's pair (``diagonal`` for simple and coalesced), under
    ``sync``; the search's random database of ``sequences`` x ``length`` residues, searched
    again with its grid capped at each of ``slope``'s block counts (one block per
    multiprocessor: power against cell rate); the peak searches as CUDASW++4.0 measures its
    peak: for each of ``peak``'s lengths and ``peak_databases``, the search's queries
    against about ``peak_residues`` residues in sequences of that length; ``cudasw4``: the
    path of CUDASW++4.0's ``align``, whose own peak benchmark then runs at the same lengths
    on ``anchor_residues`` (:mod:`.cudasw`); the DRAM micro-benchmark's array of
    ``stream_bytes``."""

    strategies: tuple[str, ...] = STRATEGIES
    seconds: float = 2.0
    warmup: float = 60.0
    idle: float = 3.0
    multipass: int = 1_000_000
    diagonal: int = 300_000
    tiled: int = 1_000_000
    sync: str = "cpu-implicit"
    sequences: int = 400_000
    length: int = 512
    stream_bytes: int = 4 << 30
    slope: tuple[int, ...] = (33, 66, 132)
    peak: tuple[int, ...] = (128, 256, 512, 1024)
    peak_residues: int = 1 << 28
    peak_seconds: float = 8.0
    peak_databases: tuple[str, ...] = PEAK_DATABASES
    cudasw4: str | None = None
    anchor_residues: int = 1 << 30


#: a smoke run (about a minute)
QUICK = Settings(seconds=1.0, warmup=5.0, idle=1.0, multipass=100_000, diagonal=10_000,
                 tiled=20_000, sequences=20_000, stream_bytes=1 << 30, slope=(66, 132),
                 peak=(256,), peak_residues=1 << 22, peak_seconds=1.0,
                 anchor_residues=1 << 26)


def validate(s: Settings) -> None:
    """An InputError for settings that cannot run, before any GPU work."""
    for name in s.strategies:
        if name not in STRATEGIES:
            raise InputError(f"energy: strategy {name!r} is not one of {', '.join(STRATEGIES)}")
    syncs.check_sync(s.sync)
    sizes = (s.multipass, s.diagonal, s.tiled, s.sequences, s.length, s.stream_bytes >> 20,
             *s.slope, *s.peak)
    if min(sizes) < 1 or min(s.seconds, s.idle, s.peak_seconds) <= 0 or s.warmup < 0:
        raise InputError("energy: sizes, slope's block counts and peak's lengths must be "
                         "positive (the stream at least 1 MiB), seconds, idle and "
                         "peak_seconds positive, warmup not negative")
    if s.peak and min(s.peak_residues, s.anchor_residues) < max(s.peak):
        raise InputError(f"energy: peak_residues ({s.peak_residues:,}) and anchor_residues "
                         f"({s.anchor_residues:,}) must hold one sequence of the longest "
                         f"peak length ({max(s.peak):,})")
    for name in s.peak_databases:
        if name not in PEAK_DATABASES:
            raise InputError(f"energy: peak database {name!r} is not one of "
                             f"{', '.join(PEAK_DATABASES)}")
    if s.cudasw4 is not None:
        cudasw.check(s.cudasw4)


# --- micro-benchmarks -------------------------------------------------------------------------

@dataclass(frozen=True)
class Micro:
    """A micro-benchmark: a kernel of ``lab_energy.cu`` and its operations per step (a loop
    iteration of one thread; for ``energy_stream``, one 16-byte load)."""

    kernel: str
    per_step: dict[str, float]


#: sm_90 SASS of the loops (add and max checked against Nsight Compute's executed counts):
#: energy_add 128 IADD3/IMAD, ISETP, BRA; energy_max 512 VIADDMNMX and VIADD, ISETP, BRA per
#: four iterations (energy_max16 the same with VIADDMNMX.S16x2); energy_shared 64 LDS, 64
#: LOP3 (the mask), ISETP, BRA; energy_shared16 64 LDS.128, 128 LOP3 (the fold), ISETP,
#: BRA; energy_stream 4 LDG.128 and 25 others (the fold, 64-bit
#: addressing, the loop) per four loads
MICROS = {
    "add": Micro("energy_add", {"add": 130}),
    "max": Micro("energy_max", {"max": 128, "add": 0.75}),
    "max16": Micro("energy_max16", {"max16": 128, "add": 0.75}),
    "shared": Micro("energy_shared", {"shared": 64, "add": 130}),
    "shared16": Micro("energy_shared16", {"shared16": 64, "add": 194}),
    "l2": Micro("energy_stream", {"add": 7.25, "l2": 16}),
    "dram": Micro("energy_stream", {"add": 7.25, "l2": 16, "dram": 16}),
}


def _stream_input(op: str, s: Settings, threads: int):
    """energy_stream's input (pseudo-random words) and its 16-byte count: a quarter of L2
    for ``l2``, ``s.stream_bytes`` for ``dram``; a multiple of the grid's loads."""
    import cupy

    quantum = threads * 4  # kernels/lab_energy.cu's STREAM_UNROLL
    size = l2_bytes() // 4 if op == "l2" else s.stream_bytes
    n = max(size // 16 // quantum, 1) * quantum
    x = cupy.arange(4 * n, dtype=cupy.uint32)
    x *= np.uint32(2654435761)
    return x, n


def _micro(op: str, intensity: str, s: Settings) -> tuple[Callable[[int], None], int, dict]:
    """(launch(count), steps per count, the grid) of a micro-benchmark: ``high`` a full grid
    of 256-thread blocks, ``low`` one warp per multiprocessor."""
    import cupy  # optional dependency: the GPU extra

    micro = MICROS[op]
    kern = function(FILE, micro.kernel)
    blocks, threads = ((syncs.co_resident(kern, 256), 256) if intensity == "high"
                       else (syncs.multiprocessors(), 32))
    out = cupy.zeros(blocks * threads, dtype=cupy.uint32)
    if micro.kernel == "energy_stream":
        x, n = _stream_input(op, s, blocks * threads)

        def launch(count: int) -> None:
            kern((blocks,), (threads,), (x, np.int64(n), np.int32(count), out, KEY))

        return launch, n, {"blocks": blocks, "threads": threads, "bytes": 16 * n}
    extra = (np.int32(FLOOR),) if op in ("max", "max16") else ()

    def launch(count: int) -> None:
        kern((blocks,), (threads,), (out, KEY, np.int32(count), *extra))

    return launch, blocks * threads, {"blocks": blocks, "threads": threads}


def _synchronized(launch: Callable[[int], None], count: int) -> Callable[[], None]:
    import cupy

    def run() -> None:
        launch(count)
        cupy.cuda.get_current_stream().synchronize()

    return run


def _calibrate(launch: Callable[[int], None]) -> int:
    """The count (iterations or passes, a multiple of 4) that makes a launch take about
    LAUNCH_S; the first launches also absorb compilation."""
    count = 4
    _synchronized(launch, count)()
    while True:
        start = time.perf_counter()
        _synchronized(launch, count)()
        took = time.perf_counter() - start
        if took >= LAUNCH_S / 8 or count >= 1 << 28:
            return max(4, round(count * LAUNCH_S / max(took, 1e-9) / 4) * 4)
        count *= 8


def _energy_of(run: Callable[[], object], seconds: float) -> tuple[energy.Measurement, int]:
    """The energy of ``run`` (synchronous) repeated for at least ``seconds``, and the runs."""
    runs = 0
    with energy.measure() as m:
        start = time.perf_counter()
        while runs == 0 or time.perf_counter() - start < seconds:
            run()
            runs += 1
    return m, runs


def _row(kind: str, measured: energy.Measurement, /, **fields) -> dict:
    return {"kind": kind, **fields, "seconds": measured.seconds, "joules": measured.joules,
            "watts": measured.mean_watts, "peak_watts": measured.peak_watts,
            "source": measured.source}


def settled(watts: list[float]) -> bool:
    """Whether the last three windows' mean powers agree within SETTLE, step to step."""
    return len(watts) >= 3 and all(abs(b - a) <= SETTLE * a for a, b in pairwise(watts[-3:]))


def warm_up(s: Settings, progress: Progress) -> dict:
    """Run the add benchmark (full grid) in WINDOW_S windows until the power settles or
    ``s.warmup`` seconds pass; the row holds each window's mean watts."""
    launch, _, _ = _micro("add", "high", s)
    run = _synchronized(launch, _calibrate(launch))
    watts: list[float] = []
    start = time.perf_counter()
    while not settled(watts) and (not watts or time.perf_counter() - start < s.warmup):
        watts.append(_energy_of(run, WINDOW_S)[0].mean_watts)
    progress(f"energy: warmed up for {time.perf_counter() - start:.0f} s, {watts[-1]:.0f} W")
    return {"kind": "warmup", "window": WINDOW_S, "watts": watts, "settled": settled(watts)}


def idle(s: Settings, progress: Progress) -> dict:
    """The GPU's power with no work for ``s.idle`` seconds."""
    with energy.measure() as m:
        time.sleep(s.idle)
    progress(f"energy: idle {m.mean_watts:.0f} W")
    return _row("static", m)


def run_micro(op: str, intensity: str, s: Settings, progress: Progress) -> dict:
    """One micro-benchmark at one intensity: its energy and its operation counts."""
    launch, per_count, grid = _micro(op, intensity, s)
    count = _calibrate(launch)
    m, runs = _energy_of(_synchronized(launch, count), s.seconds)
    steps = runs * count * per_count
    progress(f"energy: {op} ({intensity}) {m.mean_watts:.0f} W")
    return _row("micro", m, op=op, intensity=intensity, kernel=MICROS[op].kernel, **grid,
                steps=steps, counts={k: v * steps for k, v in MICROS[op].per_step.items()})


# --- strategies and the search ---------------------------------------------------------------

def _pair_run(name: str, s: Settings) -> tuple[Callable[[], None], dict]:
    """A synchronous sweep of one strategy over a related DNA pair (the lab's Smith-Waterman
    scoring), and its row's fields."""
    size = {"multipass": s.multipass, "tiled": s.tiled}.get(name, s.diagonal)
    p = swat.upload(*swat.related_pair(np.random.default_rng(29), size, size))
    fields = {"m": size, "n": size, "sync": None if name == "multipass" else s.sync,
              "cells_per_run": size * size}
    if name == "multipass":
        fields["rows_per_thread"] = rows_for(size)

        def run() -> None:
            sweep(p, 0, size, 0, size)
    else:
        plan = swat.make_sweep(p, name, s.sync)

        def run() -> None:
            plan.run()
            plan.check()

    return run, fields


def search_shape(lengths: tuple[int, ...], length: int, alphabet: int) -> tuple[float, int]:
    """(DP cells the scan computes per real cell, database scans per search) for queries of
    ``lengths`` against subjects of ``length``: queries go two to a word, longest first, and
    each pair runs its planned passes over tiles of G x R rows (the scan's shape planning,
    weighing shapes by the cost model's rates as a search does)."""
    ordered = sorted(lengths, reverse=True)
    rate = shape_rate(gpu_model(), True, -(-len(ordered) // 2), 1_000_000, length)
    computed = scans = 0
    for k in range(0, len(ordered), 2):
        g, r, passes = plan(ordered[k], length, alphabet, rate)
        computed += 2 * passes * g * r
        scans += passes
    return computed / sum(lengths), scans


def _random_residues(rng, count: int) -> np.ndarray:
    """``count`` random residues (database codes of LETTERS)."""
    codes = np.array([PROTEIN_LETTERS.index(c) for c in LETTERS], np.uint8)
    return codes[rng.integers(0, len(LETTERS), count, dtype=np.uint8)]


def _random_database(residues: np.ndarray, length: int):
    """The protein database of ``residues`` cut into sequences of ``length`` (the residues
    past the last whole one left out)."""
    sequences = residues.size // length
    return Database(path=None, alphabet="protein", letters=PROTEIN_LETTERS,
                    residues=residues[:sequences * length],
                    offsets=np.arange(sequences + 1, dtype=np.int64) * length,
                    lengths=np.full(sequences, length, np.int32),
                    ids=[f"s{k}" for k in range(sequences)], composition=None,
                    longest=length)


def _random_queries(rng, lengths: Sequence[int]) -> list[str]:
    return ["".join(rng.choice(list(LETTERS), k)) for k in lengths]


def search_queries() -> list[str]:
    """The search's queries: random proteins of the CUDASW++ query set's lengths (seeded)."""
    return _random_queries(np.random.default_rng(31), QUERY_LENGTHS)


@lru_cache(maxsize=1)
def _search_inputs(sequences: int, length: int):
    """The search's queries and random database of ``sequences`` x ``length`` residues,
    built once for the full and the capped searches."""
    rng = np.random.default_rng(32)
    return search_queries(), _random_database(_random_residues(rng, sequences * length),
                                              length)


@lru_cache(maxsize=1)
def _scoring():
    """The searches' scoring: BLOSUM62, gap open 11, extend 1."""
    return Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def _this_gpu() -> Device:
    """This GPU alone (the current CUDA device)."""
    import cupy  # optional dependency: the GPU extra

    return choose("gpu", (cupy.cuda.Device().id,))


def _searcher(queries: list[str], db, blocks: int | None = None) -> Callable[[], None]:
    """A synchronous search (score-only, top 10, BLOSUM62 11/1, this GPU only), each scan
    launch on at most ``blocks`` blocks where given."""
    scoring, gpu = _scoring(), _this_gpu()

    def run() -> None:
        for _ in iter_search(queries, db, scoring, top=10, traceback=False, device=gpu,
                             grid_cap=blocks, stats="blast"):
            pass

    return run


def search_run(s: Settings, blocks: int | None = None) -> tuple[Callable[[], None], dict]:
    """The search of random proteins of QUERY_LENGTHS against a random database (see
    :func:`_searcher`; each launch on at most ``blocks`` blocks where given), and its row's
    fields."""
    queries, db = _search_inputs(s.sequences, s.length)
    total = s.sequences * s.length
    overhead, scans = search_shape(QUERY_LENGTHS, s.length, len(PROTEIN_LETTERS))
    return _searcher(queries, db, blocks), {
        "queries": len(QUERY_LENGTHS), "sequences": s.sequences, "length": s.length,
        "residues": total, "overhead": overhead, "scans": scans,
        "cells_per_run": sum(QUERY_LENGTHS) * total}


def peak_inputs(length: int, residues: int, database: str = "repeated"
                ) -> tuple[list[str], object]:
    """The peak search at ``length``: the search's queries and a database of about
    ``residues`` residues in sequences of ``length``, as CUDASW++4.0's peak benchmark (its
    query set against one length, no padding, the whole database on the GPU). ``database``
    ``repeated``: one random sequence copied (CUDASW++4.0's --pseudodb); ``distinct``:
    independent random sequences, cut from one pool that the lengths share."""
    if database == "repeated":
        one = _random_residues(np.random.default_rng(37 + length), length)
        residues_of = np.tile(one, residues // length)
    else:
        residues_of = _peak_residues(residues)
    return search_queries(), _random_database(residues_of, length)


@lru_cache(maxsize=1)
def _peak_residues(count: int) -> np.ndarray:
    """The peak searches' residues, drawn once for all their lengths."""
    return _random_residues(np.random.default_rng(37), count)


def peak_scan(queries: list[str], db, device: str = "gpu") -> Callable[[], list]:
    """One scan of the peak search (score-only, top 10, BLOSUM62 11/1) on ``device`` (``gpu``:
    this GPU only) with the scanner built once, so the database stays resident between
    calls: the scan alone is timed, as CUDASW++4.0 times its peak with the database already
    on the GPU. Returns each query's (indices, scores)."""
    scoring = _scoring()
    scanner = engines.scanner(_this_gpu() if device == "gpu" else choose(device), db.residues,
                              db.offsets, db.codes_for(scoring), scoring.table,
                              scoring.gap_open, scoring.gap_extend, LOCAL)
    codes = [scoring.encode(q) for q in queries]
    thresholds: list[int | None] = [None] * len(codes)
    return lambda: scanner.top(codes, 10, thresholds)


def run_peak(length: int, database: str, s: Settings, progress: Progress) -> dict:
    """The measured energy of the peak search at ``length`` on ``database`` (after one
    untimed scan, which also puts the database on the GPU), its scans repeated for
    ``peak_seconds``; beside the energy counter's figure, the power read as the anchor's is
    (``sample_watts``: :func:`wavedp.energy.busiest_watts` over power samples taken until POWER_LAG
    past the scans, as CUDASW++4.0's process runs on past its scan)."""
    queries, db = peak_inputs(length, s.peak_residues, database)
    run = peak_scan(queries, db)
    run()
    with energy.measure() as around:
        m, runs = _energy_of(run, s.peak_seconds)
        time.sleep(POWER_LAG)
    cells = runs * sum(map(len, queries)) * db.total_residues
    sampled = energy.busiest_watts(around.samples, m.seconds)
    progress(f"energy: peak search, length {length}, {database}: "
             f"{cells / m.seconds / 1e9:,.0f} GCUPS, {m.mean_watts:.0f} W "
             f"({sampled:.0f} W read as the anchor's)")
    return _row("peak", m, length=length, database=database, queries=len(queries),
                sequences=len(db), runs=runs, cells=cells, sample_watts=sampled)


def run_strategy(name: str, s: Settings, progress: Progress, blocks: int | None = None) -> dict:
    """The measured energy of one strategy (or the search), after one untimed run (of a
    3,000 x 3,000 pair for the per-diagonal and tiled strategies, whose kernels do not
    depend on the size); the search with ``blocks``: every launch capped at that many
    blocks (no untimed run: it follows the full search)."""
    run, fields = search_run(s, blocks) if name == "search" else _pair_run(name, s)
    if blocks is None:
        small = replace(s, diagonal=WARM_PAIR, tiled=WARM_PAIR)
        (_pair_run(name, small)[0] if name in ("simple", "coalesced", "tiled") else run)()
        m, runs = _energy_of(run, s.seconds)
    else:
        m, runs = _energy_of(run, s.seconds)
        fields["blocks"] = blocks
    cells = runs * fields.pop("cells_per_run")
    progress(f"energy: {_label({'strategy': name, 'blocks': blocks})} "
             f"{cells / m.seconds / 1e9:,.0f} GCUPS, {m.mean_watts:.0f} W")
    return _row("strategy", m, strategy=name, **fields, runs=runs, cells=cells,
                l2_cache=l2_bytes())


def _label(row: dict) -> str:
    if row.get("blocks"):
        return f"{LABELS[row['strategy']]}, {row['blocks']} blocks"
    return LABELS[row["strategy"]]


def measure(s: Settings, progress: Progress) -> list[dict]:
    """Every measurement of the energy lab as rows (``kind``: warmup, static, micro,
    strategy; plain JSON-able dicts). Needs a GPU and NVML (an InputError before any work
    otherwise)."""
    validate(s)
    with energy.measure():
        pass
    rows = [warm_up(s, progress), idle(s, progress)]
    rows += [run_micro(op, level, s, progress) for op in MICROS for level in INTENSITIES]
    rows += [run_strategy(name, s, progress) for name in s.strategies]
    if "search" in s.strategies:
        traffic = search_traffic(s, progress)
        if traffic is not None:
            for r in _searches(rows):
                r["l2_bytes"] = traffic["l2"] * r["runs"]
                r["dram_bytes"] = traffic["dram"] * r["runs"]
        rows += [run_strategy("search", s, progress, blocks) for blocks in s.slope]
        _search_inputs.cache_clear()  # the database's residues: hundreds of MB
        rows += [run_peak(length, database, s, progress)
                 for length in s.peak for database in s.peak_databases]
        _peak_residues.cache_clear()
        if s.cudasw4 is not None:
            rows += [cudasw.run(s.cudasw4, search_queries(), length, s.anchor_residues,
                                progress) for length in s.peak]
    return rows


#: the scan kernel's name as Nsight Compute lists it (``void scan<MODE, G, R, PACKED>(...)``)
SCAN_KERNEL = "regex:^scan"
#: Nsight Compute's metrics of the search's traffic
TRAFFIC = {"l2": ("lts__t_bytes.sum",),
           "dram": ("dram__bytes_read.sum", "dram__bytes_write.sum")}


def search_traffic(s: Settings, progress: Progress) -> dict[str, float] | None:
    """Bytes of one search's scan launches, counted by Nsight Compute in a child process
    (``wavedp.lab.energy_run``): ``l2`` through L2 (lts__t_bytes), ``dram`` read and
    written in DRAM; None where ``ncu`` is not on PATH (the model then estimates them:
    CELL_COUNTS's L2 bytes per cell, :func:`dram_estimate`). Counted, because the scan's
    traffic depends on the shapes its planner picks: a long query in many passes moves its
    scratch rows through L2, and to DRAM where they outgrow it."""
    try:
        ncu.executable()
    except InputError:
        progress("energy: ncu is not on PATH; the search's L2 and DRAM bytes are estimated")
        return None
    kernels = ncu.profile([sys.executable, "-m", "wavedp.lab.energy_run", "--sequences",
                           str(s.sequences), "--length", str(s.length)],
                          (*TRAFFIC["l2"], *TRAFFIC["dram"]), SCAN_KERNEL)
    scans = [k for k in kernels if _is_scan(k["kernel"])]
    if not scans:
        raise DeviceError(f"ncu profiled no scan launch of the search (kernels: "
                          f"{sorted({k['kernel'][:40] for k in kernels})})")
    total = {kind: sum(k.get(m, 0.0) for k in scans for m in metrics)
             for kind, metrics in TRAFFIC.items()}
    progress(f"energy: the search's {len(scans)} scan launch(es) moved "
             f"{total['l2'] / 1e9:,.1f} GB through L2 and {total['dram'] / 1e9:,.1f} GB to "
             "and from DRAM (ncu)")
    return total


def _is_scan(name: str) -> bool:
    """Whether an ncu kernel name is the search's scan (not, e.g., a CuPy cumsum)."""
    name = name.removeprefix("void ").strip()
    return name == "scan" or name.startswith(("scan<", "scan("))


# --- the fit and the model ---------------------------------------------------------------------

@dataclass(frozen=True)
class Fit:
    """The model's parameters: static power (watts) and joules per operation."""

    static_watts: float
    energy: dict[str, float]

    def joules(self, seconds: float, counts: dict[str, float]) -> float:
        """E = P_static T + sum_op count_op e_op."""
        return self.static_watts * seconds + sum(counts.get(op, 0.0) * e
                                                 for op, e in self.energy.items())


def fit(rows: list[dict]) -> Fit | None:
    """Least squares of the micro-benchmark rows' joules on their seconds and operation
    counts, each row weighted by its own joules (relative errors); None without such rows."""
    micro = [r for r in rows if r["kind"] == "micro"]
    if not micro:
        return None
    a = np.array([[r["seconds"], *(r["counts"].get(op, 0.0) for op in OPS)] for r in micro])
    b = np.array([r["joules"] for r in micro])
    scale = np.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    x = np.linalg.lstsq(a / scale / b[:, None], np.ones(len(b)), rcond=None)[0] / scale
    return Fit(float(x[0]), {op: float(v) for op, v in zip(OPS, x[1:], strict=True)})


#: operations per DP cell of each strategy: maxes and shared words read from the sm_90 SASS
#: of the kernel's inner loop (``wavedp.lab.sass`` counts it); ``add`` the other
#: instructions, from Nsight Compute's count of executed thread instructions
#: (uniform-datapath ones left out) for one launch on the H100, less the maxes; ``l2``
#: Nsight Compute's L2 bytes (lts__t_bytes) of that launch, less the
#: 1.4 MB any launch moves (code and constants). The launches: the middle diagonal of a
#: 10,240 x 10,240 pair (diagonal), its middle tile diagonal (tiled), a 20,000 x 20,000 sweep
#: (multipass, :func:`multipass_counts`) and two 464-residue queries against 20,000 x 512
#: residues (search, per cell the scan computes).
#: - diagonal_step<STORAGE> (local), a cell per thread: 3 VIADDMNMX and a VIMNMX, 8 LDG and 5
#:   STG, and the thread's setup (2 or 3 more maxes when simple); l2 read from the kernel: 22
#:   bytes loaded (H, E, F of d - 1, H of d - 2, the row's best, the residues) and 12 stored
#:   (a 10,240-cell launch's L2 bytes are mostly the launch's own, too many to subtract);
#: - tiled_step (local): a thread's step with a cell: 2 VIADDMNMX, VIMNMX3, the row best's
#:   VIMNMX, 4 LDS and 2 STS, with the barrier and the idle steps (a 128 x 128 tile takes
#:   255 steps); Nsight counts 7.5 shared words per cell (the tile's borders included);
#: - scan<LOCAL, G, 32, true> (two queries per 32-bit word): per column a lane does 64 cells with
#:   128 VIADDMNMX and 16 VIMNMX3 (the ALU pipe), 32 VIADD.16x2 (X - go), 8 LDS.128 (32
#:   profile words; 0.125 per cell) and 3 shuffles (with the step's LDS, 0.07 32-bit shared
#:   words per cell); Nsight Compute counts 3.45 thread instructions per cell the scan
#:   computes (the peak search at length 128: 2.53 on the ALU pipe, 0.79 on FMA).
CELL_COUNTS: dict[str, dict[str, float]] = {
    "simple": {"add": 105.0, "max": 7.0, "l2": 34.0},
    "coalesced": {"add": 101.0, "max": 5.0, "l2": 34.0},
    "tiled": {"add": 56.0, "max": 4.5, "shared": 7.5, "l2": 1.9},
    "search": {"add": 1.20, "max16": 2.25, "shared": 0.07, "shared16": 0.125, "l2": 0.25},
}


def multipass_counts(rows: int) -> dict[str, float]:
    """Operations per cell of a score-only multipass sweep (local, keyed end cell, int32
    profile) with ``rows`` rows per thread: per column a lane updates ``rows`` cells with 4
    VIADDMNMX each and a VIMNMX3 per two (the keys), reads ``rows`` profile words, and spends
    about 80 instructions, 2 maxes and 6 shuffles on the column (fetching the row above,
    handing rows down, flushing its bottom row); 202 L2 bytes per column of a strip (Nsight
    Compute at 8 rows: 17.3 instructions per cell)."""
    return {"add": 2.5 + 80 / rows, "max": 4.5 + 2 / rows, "shared": 1 + 6 / rows,
            "l2": 202 / (32 * rows)}


def cell_counts(row: dict) -> dict[str, float]:
    """Operations per real DP cell of a strategy row (the search's counts scaled by the
    cells its scan computes per real cell; its L2 bytes counted by Nsight Compute where the
    row has them, ``l2_bytes``)."""
    if row["strategy"] == "multipass":
        return multipass_counts(row["rows_per_thread"])
    scale = row.get("overhead", 1.0)
    counts = {op: c * scale for op, c in CELL_COUNTS[row["strategy"]].items()}
    if "l2_bytes" in row:
        counts["l2"] = float(row["l2_bytes"]) / row["cells"]
    return counts


def working_set(row: dict) -> float:
    """Bytes a pair's sweep keeps in GPU memory besides its inputs' (m + n bytes), from the
    kernels: multipass two rows of H and F; diagonal three diagonals of H, two of E and F,
    the rows' bests; tiled a row of H and F per tile column, a column of H and E, the rows'
    bests."""
    m, n = row["m"], row["n"]
    strategy = row["strategy"]
    if strategy == "multipass":
        return m + n + 16 * (n + 1)
    if strategy == "tiled":
        return m + n + 8 * (n + n // 128 + 1) + 16 * (m + 1)
    return m + n + 36 * (m + 1)


def dram_estimate(row: dict) -> float:
    """A run's DRAM bytes: Nsight Compute's count where the row has one (``dram_bytes``,
    the search's), else this module's own estimate (lab/traffic.py's measurement may
    replace it): a search streams the database once per pass of each query pair; a pair's
    sweep reads its working set once per run where it fits in L2, else every L2 byte goes
    to DRAM."""
    if "dram_bytes" in row:
        return float(row["dram_bytes"])
    if row["strategy"] == "search":
        return float(row["residues"] * row["scans"] * row["runs"])
    ws = working_set(row)
    if ws <= row["l2_cache"]:
        return float(ws * row["runs"])
    return row["cells"] * cell_counts(row).get("l2", 0.0)


def predict(f: Fit, row: dict, dram_bytes: float | None = None) -> dict[str, float]:
    """The model's joules for a strategy row: ``static`` (P_static T), one entry per
    operation, and ``total``. ``dram_bytes``: the runs' DRAM bytes (default
    :func:`dram_estimate`)."""
    counts = {op: c * row["cells"] for op, c in cell_counts(row).items()}
    counts["dram"] = dram_estimate(row) if dram_bytes is None else dram_bytes
    parts = {"static": f.static_watts * row["seconds"],
             **{op: counts.get(op, 0.0) * f.energy[op] for op in OPS}}
    parts["total"] = sum(parts.values())
    return parts


def errors(rows: list[dict], dram: dict[str, float] | None = None) -> dict[str, float]:
    """Each strategy's relative model error (model / measured - 1); ``dram``: DRAM bytes
    by strategy, replacing :func:`dram_estimate`."""
    f = fit(rows)
    if f is None:
        return {}
    dram = dram or {}
    return {r["strategy"]: predict(f, r, dram.get(r["strategy"]))["total"] / r["joules"] - 1
            for r in _full(rows)}


def model_per_cell(f: Fit, row: dict) -> float:
    """The model's joules per real cell of a strategy row beyond static power (its
    operations and the DRAM estimate)."""
    parts = predict(f, row)
    return (parts["total"] - parts["static"]) / row["cells"]


def search_power(rows: list[dict]) -> tuple[float, float] | None:
    """The capped searches' power against their cell rate, least squares: (joules per real
    cell, watts at no cells); None with fewer than two such rows."""
    capped = _searches(rows, capped=True)
    if len(capped) < 2:
        return None
    rate = np.array([r["cells"] / r["seconds"] for r in capped])
    watts = np.array([r["joules"] / r["seconds"] for r in capped])
    slope, intercept = np.polyfit(rate, watts, 1)
    return float(slope), float(intercept)


# --- report and claims -------------------------------------------------------------------------

def _select(rows: list[dict], kind: str) -> list[dict]:
    return [r for r in rows if r["kind"] == kind]


def _full(rows: list[dict]) -> list[dict]:
    """Strategy rows at their full grid (the capped searches left out)."""
    return [r for r in _select(rows, "strategy") if not r.get("blocks")]


def _searches(rows: list[dict], capped: bool = False) -> list[dict]:
    """The search's rows: at its full grid, or (``capped``) the capped ones."""
    return [r for r in _select(rows, "strategy")
            if r["strategy"] == "search" and bool(r.get("blocks")) == capped]


def _gcups(row: dict) -> float:
    return row["cells"] / row["seconds"] / 1e9


def _gcups_per_watt(row: dict) -> float:
    return row["cells"] / 1e9 / row["joules"] if row["joules"] > 0 else math.nan


def _warmup_text(doc: report.Document, rows: list[dict]) -> None:
    for warm in _select(rows, "warmup"):
        watts = warm["watts"]
        state = "settled" if warm["settled"] else "had not settled (time limit)"
        doc.add(f"Warm-up (the add benchmark, full grid): {len(watts)} windows of "
                f"{warm['window']:g} s; the power {state} at {watts[-1]:.0f} W.")
        doc.figure("energy_warmup", "Power while warming up", "seconds", "watts",
                   {"warm-up": ([warm["window"] * (k + 1) for k in range(len(watts))],
                                watts)}, logx=10)
    for idle_row in _select(rows, "static"):
        doc.add(f"Idle power (no work for {idle_row['seconds']:.1f} s, right after): "
                f"{idle_row['watts']:.0f} W.")


def _micro_table(rows: list[dict], f: Fit) -> str:
    idle_w = next((r["watts"] for r in _select(rows, "static")), math.nan)
    body = []
    for r in _select(rows, "micro"):
        main = r["counts"].get(r["op"], 0.0)
        naive = (r["joules"] - idle_w * r["seconds"]) / main * 1e12 if main else math.nan
        body.append([r["op"], r["intensity"], f"{r['blocks']} x {r['threads']}", r["seconds"],
                     r["joules"], r["watts"], f"{main:.3g}", f.joules(r["seconds"], r["counts"]),
                     100 * (f.joules(r["seconds"], r["counts"]) / r["joules"] - 1), naive])
    return report.table(["operation", "intensity", "blocks x threads", "s", "J", "W",
                         "operations", "fit J", "fit error %", "(E - P_idle t) / ops pJ"],
                        body)


def _fit_table(f: Fit) -> str:
    units = {"add": "pJ per instruction", "max": "pJ per instruction",
             "max16": "pJ per instruction (16-bit pairs)",
             "shared": "pJ per 32-bit word", "shared16": "pJ per 16-byte load",
             "l2": "pJ per byte",
             "dram": "pJ per byte (on top of L2)"}
    return report.table(["parameter", "value", "unit"],
                        [["P_static", f.static_watts, "W"]]
                        + [[f"e_{op}", f.energy[op] * 1e12, units[op]] for op in OPS])


def _model_table(rows: list[dict], f: Fit, dram: dict[str, float]) -> str:
    body = []
    for r in _select(rows, "strategy"):
        parts = predict(f, r, dram.get(r["strategy"]))
        size = (f"{r['queries']} x {r['sequences']:,} x {r['length']}" if r["strategy"] == "search"
                else f"{r['m']:,} x {r['n']:,}")
        body.append([_label(r), size, r.get("sync") or "-", r["runs"], r["seconds"],
                     _gcups(r), r["joules"], r["watts"], parts["static"],
                     parts["total"] - parts["static"], parts["total"],
                     100 * (parts["total"] / r["joules"] - 1), _gcups_per_watt(r)])
    return report.table(["strategy", "size", "sync", "runs", "s", "GCUPS", "measured J", "W",
                         "static J", "operations J", "model J", "error %", "GCUPS/W"], body)


def _search_table(rows: list[dict]) -> str:
    body = [[_gcups(r), r["joules"], r["watts"], r["peak_watts"],
             _gcups_per_watt(r), CUDASW_GCUPS_PER_WATT,
             _gcups_per_watt(r) / CUDASW_GCUPS_PER_WATT]
            for r in _searches(rows)]
    return report.table(["GCUPS", "J", "mean W", "peak W", "GCUPS/W",
                         "CUDASW++4.0 GCUPS/W (published)", "ratio"], body)


def _peak_table(rows: list[dict]) -> str:
    body = [[r["length"], r.get("database", "distinct"), f"{r['queries']} x {r['sequences']:,}",
             r["runs"], r["seconds"], _gcups(r), r["joules"], r["watts"],
             _gcups_per_watt(r), _gcups_per_watt(r) / CUDASW_GCUPS_PER_WATT]
            for r in _select(rows, "peak")]
    return report.table(["length", "database", "queries x sequences", "runs", "s", "GCUPS",
                         "J", "mean W", "GCUPS/W",
                         f"/ {CUDASW_GCUPS_PER_WATT} (CUDASW++4.0)"], body)


#: NVML's power samples lag the power by about a second: the peak searches sample this long
#: past their scans, as the anchor's samples run on past its scan
POWER_LAG = 1.0


def _anchor_watts(row: dict) -> float:
    """A peak row's power read as the anchor's is (``sample_watts``; rows without it: the
    energy counter's mean)."""
    return row.get("sample_watts", row["watts"])


def _as_anchor(row: dict) -> float:
    """GCUPS/W with the power read as the anchor's is."""
    return _gcups(row) / _anchor_watts(row)


def _like_anchor(rows: list[dict]) -> list[dict]:
    """The peak searches on CUDASW++4.0's kind of database (one sequence repeated), or all
    of them where none is."""
    peaks = _select(rows, "peak")
    return [r for r in peaks if r.get("database") == "repeated"] or peaks


def _best_peak(rows: list[dict], key: Callable[[dict], float] = _gcups_per_watt
               ) -> dict | None:
    return max(_like_anchor(rows), key=key, default=None)


def _anchor_table(rows: list[dict]) -> str:
    ours = {r["length"]: r for r in _like_anchor(rows)}
    body = []
    for a in _select(rows, "anchor"):
        mine = ours.get(a["length"])
        ours_row = [math.nan] * 5
        if mine:
            ours_row = [_gcups(mine), mine["seconds"], _anchor_watts(mine),
                        _as_anchor(mine), _gcups_per_watt(mine)]
        body.append([a["length"], f"{a['queries']} x {a['sequences']:,}", a["seconds"],
                     _gcups(a), a["watts"], _gcups_per_watt(a),
                     *ours_row, ours_row[3] / _gcups_per_watt(a)])
    return report.table(["length", "queries x sequences", "scan s", "GCUPS", "mean W (scan)",
                         "GCUPS/W", "wavedp GCUPS", "wavedp s", "wavedp W (read alike)",
                         "wavedp GCUPS/W", "wavedp GCUPS/W (energy counter)",
                         "wavedp / CUDASW++4.0"], body)


def section(doc: report.Document, rows: list[dict],
            dram: dict[str, float] | None = None) -> None:
    """The energy section of a lab report: warm-up and idle power, the micro-benchmarks, the
    fitted model, each strategy measured against the model, the search against CUDASW++4.0.
    ``dram``: DRAM bytes by strategy (default :func:`dram_estimate`)."""
    dram = dram or {}
    doc.add("## Energy (Ranasinghe 2014, chapter 5)\n\nNVML's energy counter around each run "
            "(the integral of power samples where a run is short); every run lasts at least "
            "a second or two after a warm-up. The model: E = P_static T + sum over operations "
            "of count x energy per operation (eqs. 10-13), T measured, P_static and the "
            "energies fitted to the micro-benchmarks, the counts per cell read from each "
            "kernel's sm_90 machine code and Nsight Compute's counts on the H100.")
    _warmup_text(doc, rows)
    f = fit(rows)
    if f is None:
        doc.add("No micro-benchmark was measured: no model.")
        return
    doc.add("Micro-benchmarks (each kernel does mostly one operation; high: a full grid, low: "
            "one warp per multiprocessor). The last column is the simple estimate with the "
            "idle power as the static part:")
    doc.add(_micro_table(rows, f))
    doc.add("The fitted model (least squares over both intensities, so the static part "
            "cancels):")
    doc.add(_fit_table(f))
    if _select(rows, "strategy"):
        counted = [r for r in _full(rows) if "dram_bytes" in r]
        source = ("the traffic experiment's counts for the sweeps" if dram
                  else "estimated from each sweep's working set")
        if counted:
            l2 = counted[-1].get("l2_bytes")
            through = f", and {l2 / 1e9:,.1f} GB through L2" if l2 is not None else ""
            source += (f"; the search's counted by Nsight Compute "
                       f"({counted[-1]['dram_bytes'] / 1e9:,.1f} GB{through}; the capped "
                       "searches' estimated)")
        doc.add(f"Each strategy measured against the model (target: within "
                f"{TOLERANCE:.0%}); DRAM bytes {source}:")
        doc.add(_model_table(rows, f, dram))
    if any(r["strategy"] == "search" for r in _select(rows, "strategy")):
        doc.add("The search (score-only, 20 random queries of the CUDASW++ set's lengths, "
                "BLOSUM62 11/1) against CUDASW++4.0's published energy efficiency:")
        doc.add(_search_table(rows))
        _power_text(doc, rows, f)
    if _select(rows, "peak"):
        doc.add(f"The search measured as CUDASW++4.0 measures its peak, the figure its "
                f"published \"up to {CUDASW_GCUPS_PER_WATT} GCUPS/W\" comes from: the "
                "search's 20 queries against a database of sequences all of one length, "
                "either one random sequence repeated (CUDASW++4.0's pseudo-database) or "
                "distinct random sequences, the database put on the GPU once and the scan "
                "alone timed (score-only, top 10, BLOSUM62 11/1):")
        doc.add(_peak_table(rows))
    if _select(rows, "anchor"):
        doc.add(f"{cudasw.NAME} itself on this GPU in the same run (its peak benchmark: its "
                "DPX kernels, its pseudo-database of one random sequence repeated, the same "
                "20 queries; seconds and GCUPS from its own timer, power the highest mean of "
                "NVML's power samples over a stretch as long as its scan, the database large "
                "enough that a scan lasts seconds: NVML's power readings average over about "
                "a second and read low on a short scan), beside wavedp's peak search on the "
                "same kind of database, its power read alike (its scans repeated for as "
                "many seconds, NVML's samples taken until a second past them, the highest "
                "mean over a stretch as long as the scans; the ratio compares these) and by "
                "the energy counter:")
        doc.add(_anchor_table(rows))


def _power_text(doc: report.Document, rows: list[dict], f: Fit) -> None:
    """Where the search's energy goes: the capped searches' slope and intercept against the
    model's static power and energy per cell."""
    found = search_power(rows)
    full = _searches(rows)
    if found is None or not full:
        return
    slope, intercept = found
    r = full[-1]
    own = (r["watts"] - f.static_watts) / (r["cells"] / r["seconds"])
    model = model_per_cell(f, r)
    blocks = ", ".join(str(c["blocks"]) for c in _searches(rows, capped=True))
    doc.add(f"The search again with every launch capped at {blocks} blocks (one per "
            f"multiprocessor), power against cell rate: {slope * 1e12:.1f} pJ per real cell "
            f"and {intercept:.0f} W at no cells (the model: P_static {f.static_watts:.0f} W, "
            f"{model * 1e12:.1f} pJ per real cell). At the full grid a cell costs "
            f"{own * 1e12:.1f} pJ above P_static." + _verdict(intercept / f.static_watts,
                                                           slope / model))


def _verdict(static_ratio: float, cell_ratio: float) -> str:
    """What the capped searches say about the model's miss (ratios measured / model)."""
    static_ok, cell_ok = abs(static_ratio - 1) <= 0.1, abs(cell_ratio - 1) <= 0.1
    if static_ok and not cell_ok:
        return (f" The intercept is P_static's ({static_ratio:.2f}x) and the slope "
                f"{cell_ratio:.2f}x the model's: the miss is in the energy per cell.")
    if cell_ok and not static_ok:
        return (f" The slope is the model's ({cell_ratio:.2f}x) and the intercept "
                f"{static_ratio:.2f}x P_static: the miss is in the static power.")
    return f" Intercept / P_static {static_ratio:.2f}, slope / model {cell_ratio:.2f}."


def claims(rows: list[dict], dram: dict[str, float] | None = None) -> list[Claim]:
    """The issue's two targets: the model within 15% for every strategy; the search at least
    CUDASW++4.0's 15.7 GCUPS/W, judged on the best peak search where there is one (the
    published figure is CUDASW++4.0's peak), else on the search. Where CUDASW++4.0 ran on
    this GPU (``anchor`` rows), a third: wavedp's best peak against its best."""
    model_claim = ("the energy model predicts every strategy's energy within 15%",
                   "E = P_static T + sum count x e_op (eqs. 10-13); wavedp's own target")
    search_claim = ("the search reaches CUDASW++4.0's energy efficiency",
                    f"{CUDASW_GCUPS_PER_WATT} GCUPS/W (CUDASW++4.0, published); "
                    "wavedp's own target")
    found = errors(rows, dram)
    if found:
        worst = max(found, key=lambda k: abs(found[k]))
        within = sum(abs(e) <= TOLERANCE for e in found.values())
        detail = ", ".join(f"{LABELS[k]} {100 * e:+.0f}%" for k, e in found.items())
        out = [Claim(SOURCE, *model_claim, f"{within} of {len(found)} within; worst "
                     f"{LABELS[worst]} ({detail})",
                     "yes" if within == len(found) else "partly" if within else "no")]
    else:
        out = [Claim(SOURCE, *model_claim, "not measured", "not measured")]
    searched, peak = _searches(rows), _best_peak(rows)
    texts = []
    if searched:
        r = searched[-1]
        texts.append(f"the search {_efficiency(r)}")
    if peak is not None:
        texts.append(f"at its peak (length {peak['length']}, as CUDASW++4.0's \"up to\" "
                     f"figure) {_efficiency(peak)}")
    if texts:
        value = _gcups_per_watt(peak if peak is not None else searched[-1])
        out.append(Claim("wavedp", *search_claim, "; ".join(texts),
                         "yes" if value >= CUDASW_GCUPS_PER_WATT else "no"))
    else:
        out.append(Claim("wavedp", *search_claim, "not measured", "not measured"))
    anchored = _anchor_claim(rows)
    return out + ([anchored] if anchored else [])


def _anchor_claim(rows: list[dict]) -> Claim | None:
    """wavedp's best peak search against CUDASW++4.0's best peak measured on this GPU in the
    same run (None where CUDASW++4.0 did not run), with the ratio at each length."""
    anchors, peak = _select(rows, "anchor"), _best_peak(rows, _as_anchor)
    if not anchors or peak is None:
        return None
    best = max(anchors, key=_gcups_per_watt)
    ours = {r["length"]: r for r in _like_anchor(rows)}
    ratios = {a["length"]: _as_anchor(ours[a["length"]]) / _gcups_per_watt(a)
              for a in anchors if a["length"] in ours}
    at = ", ".join(f"{length} {ratio:.2f}x" for length, ratio in ratios.items())
    value = _as_anchor(peak) / _gcups_per_watt(best)
    verdict = ("yes" if value >= 1 else "partly" if any(r >= 1 for r in ratios.values())
               else "no")
    return Claim("wavedp", "the search is as energy-efficient as CUDASW++4.0 on this GPU",
                 f"{cudasw.NAME}'s peak benchmark run here, same run: "
                 f"{_gcups_per_watt(best):.1f} GCUPS/W at length {best['length']} "
                 f"({_gcups(best):,.0f} GCUPS at {best['watts']:.0f} W)",
                 f"best peak {_as_anchor(peak):.1f} GCUPS/W at length {peak['length']} (power "
                 f"read alike; energy counter {_gcups_per_watt(peak):.1f}), {value:.2f}x; "
                 f"wavedp / {cudasw.NAME} by length: {at}", verdict)


def _efficiency(r: dict) -> str:
    return (f"{_gcups_per_watt(r):.1f} GCUPS/W ({_gcups(r):,.0f} GCUPS at "
            f"{r['watts']:.0f} W)")
