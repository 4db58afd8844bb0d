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

The fit and the model are :mod:`.energy_model`'s, the report and its claims
:mod:`.energy_report`'s; this module measures.

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

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise

import numpy as np

from .. import energy, engines
from ..db.database import Database
from ..db.files import PROTEIN_LETTERS
from ..dbsearch.api import iter_search
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
from . import cudasw, ncu, swat
from .energy_model import searches
from .timing import l2_bytes

FILE = "lab_energy.cu"
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
#: NVML's power samples lag the power by about a second: the peak searches sample this long
#: past their scans, as the anchor's samples run on past its scan
POWER_LAG = 1.0
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
    progress(f"energy: {label({'strategy': name, 'blocks': blocks})} "
             f"{cells / m.seconds / 1e9:,.0f} GCUPS, {m.mean_watts:.0f} W")
    return _row("strategy", m, strategy=name, **fields, runs=runs, cells=cells,
                l2_cache=l2_bytes())


def label(row: dict) -> str:
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
            for r in searches(rows):
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
