"""The lab's experiments end to end: measure on the GPU in hand, then write one report
(markdown, PNG plots, and the raw rows as JSON) that states which of the papers' claims
this GPU reproduces."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..device import choose
from ..engines.cuda.multipass import multiprocessors
from ..engines.cuda.sync import BARRIER_SYNCS, HOST_SYNCS, SYNCS, check_sync
from ..errors import InputError
from . import barriers, claims, energy_report, fft, report, sort, swat, traffic
from . import energy as lab_energy
from .timing import device

EXPERIMENTS = ("barriers", "fft", "sort", "swat", "traffic", "energy")
TITLES = {"barriers": "barrier micro-benchmark", "fft": "FFT", "sort": "bitonic sort",
          "swat": "Smith-Waterman", "traffic": "off-chip traffic", "energy": "energy"}


@dataclass(frozen=True)
class Settings:
    """What the lab measures. ``syncs``: the strategies (wavedp's own barriers, ``TUNED``,
    run in the barrier micro-benchmark only; the algorithms run the rest). ``blocks``: the
    block counts of the algorithms' sweeps (None: powers of two and multiples of the
    multiprocessor count up to the co-resident maximum)."""

    syncs: tuple[str, ...] = BARRIER_SYNCS
    repeats: int = 3
    threads: int = barriers.THREADS
    rounds: int = barriers.ROUNDS
    barrier_blocks: tuple[int, ...] | None = None
    blocks: tuple[int, ...] | None = None
    fft_sizes: tuple[int, ...] = tuple(1 << k for k in range(10, 25))
    fft_sweep: int = 1 << 20
    sort_sizes: tuple[int, ...] = tuple(1 << k for k in range(16, 27, 2))
    sort_sweep: int = 1 << 20
    dtypes: tuple[str, ...] = ("int32", "float32")
    swat_sizes: tuple[int, ...] = (3000, 10_000, 30_000, 100_000)
    swat_sweep: int = 3000
    implementations: tuple[str, ...] = swat.IMPLEMENTATIONS
    traffic_sizes: tuple[int, ...] = traffic.SIZES
    energy: lab_energy.Settings = lab_energy.Settings()


#: a smoke run of every experiment (a minute or two)
QUICK = Settings(repeats=1, rounds=1000, fft_sizes=(1 << 10, 1 << 14, 1 << 18),
                 fft_sweep=1 << 16, sort_sizes=(1 << 12, 1 << 16), sort_sweep=1 << 14,
                 swat_sizes=(1000, 3000), swat_sweep=1000, traffic_sizes=traffic.QUICK_SIZES,
                 energy=lab_energy.QUICK)

Progress = Callable[[str], None]


def _tag(rows: list[dict], sweep: str) -> list[dict]:
    return [{**r, "sweep": sweep} for r in rows]


def _sweep(limit: int, s: Settings, cap: int | None = None) -> list[int]:
    """The block counts of an algorithm's sweep: the settings' (checked by the launchers
    against the co-resident maximum), else the default list up to ``cap``."""
    if s.blocks:
        return list(s.blocks)
    top = min(limit, cap) if cap else limit
    return barriers.block_counts(top, multiprocessors())


def run_barriers(s: Settings, progress: Progress) -> list[dict]:
    counts = list(s.barrier_blocks) if s.barrier_blocks else \
        barriers.block_counts(barriers.limit(s.threads), multiprocessors())
    return barriers.measure(s.syncs, counts, s.threads, s.rounds, s.repeats, progress)


def _algorithm_syncs(s: Settings) -> list[str]:
    """The strategies the algorithms run: ``s.syncs`` without wavedp's own barriers (their
    kernels are compiled for the papers' strategies only)."""
    return [name for name in s.syncs if name in SYNCS]


def run_fft(s: Settings, progress: Progress) -> list[dict]:
    per_sm = min(multiprocessors(), fft.limit())
    names = _algorithm_syncs(s)
    return (_tag(fft.measure([s.fft_sweep], names, _sweep(fft.limit(), s), s.repeats,
                             progress), "blocks")
            + _tag(fft.measure(s.fft_sizes, names, [per_sm], s.repeats, progress), "sizes"))


def run_sort(s: Settings, progress: Progress) -> list[dict]:
    per_sm = min(multiprocessors(), sort.limit())
    dtypes = [np.dtype(d) for d in s.dtypes]
    names = _algorithm_syncs(s)
    return (_tag(sort.measure([s.sort_sweep], names, _sweep(sort.limit(), s), dtypes,
                              s.repeats, progress), "blocks")
            + _tag(sort.measure(s.sort_sizes, names, [per_sm], dtypes, s.repeats, progress),
                   "sizes"))


def run_swat(s: Settings, progress: Progress) -> list[dict]:
    rows = []
    names = _algorithm_syncs(s)
    for impl in s.implementations:
        counts = _sweep(swat.limit(impl), s, cap=multiprocessors())
        rows += _tag(swat.measure([(s.swat_sweep, s.swat_sweep)], [impl], names, counts,
                                  s.repeats, progress=progress), "blocks")
    for size in s.swat_sizes:
        big = size >= 30_000  # one timed run after a warm-up
        rows += _tag(swat.measure([(size, size)], s.implementations, names, [None],
                                  1 if big else s.repeats, progress=progress), "sizes")
    return rows


def run_traffic(s: Settings, progress: Progress) -> list[dict]:
    return traffic.measure(s.traffic_sizes, progress=progress)


def run_energy(s: Settings, progress: Progress) -> list[dict]:
    return lab_energy.measure(s.energy, progress)


RUNS = {"barriers": run_barriers, "fft": run_fft, "sort": run_sort, "swat": run_swat,
        "traffic": run_traffic, "energy": run_energy}
#: the papers' experiments (Xiao and Feng; Xiao, Aji and Feng) and the thesis's (Ranasinghe)
PAPERS = EXPERIMENTS[:4]


def energy_dram(traffic_rows: list[dict], energy_rows: list[dict]) -> dict[str, float]:
    """DRAM bytes of each energy run measured by the traffic experiment (the same strategy at
    the same size, per sweep, times the run's sweeps), where it measured one."""
    out = {}
    for e in energy_rows:
        if e.get("kind") != "strategy":
            continue
        for t in traffic_rows:
            if t["variant"] == e["strategy"] and t["m"] == e.get("m"):
                out[e["strategy"]] = (t["read_bytes"] + t["write_bytes"]) * e["runs"]
    return out


def model_costs(measured: dict[str, list[dict]], s: Settings, progress: Progress
                ) -> list[dict]:
    """Micro-benchmark rows at every block count the algorithms' size sweeps used (the
    barrier sweep's where it has them, else measured now with fewer rounds), for S_S."""
    have = {r["blocks"] for r in measured.get("barriers", [])}
    needed = {r["blocks"] for name in ("fft", "sort", "swat") for r in measured.get(name, [])
              if r["sweep"] == "sizes" and r["sync"] not in HOST_SYNCS}
    limit = barriers.limit(s.threads)
    missing = sorted(b for b in needed - have if 0 < b <= limit)
    extra = barriers.measure(s.syncs, missing, s.threads, min(s.rounds, 2000), s.repeats,
                             progress) if missing else []
    return measured.get("barriers", []) + extra


def write(folder: str, name: str, measured: dict[str, list[dict]], costs: list[dict],
          header: str, floor: list[dict] | None = None) -> str:
    """The report ``<folder>/<name>.md`` (with PNGs and ``<name>.json``); returns its path.
    ``floor``: rows of barriers.floor, tabled with the barriers."""
    doc = report.Document(folder, name, "wavedp lab: " + ", ".join(
        TITLES[k] for k in EXPERIMENTS if k in measured))
    doc.add(header)
    found = claims.evaluate(*(measured.get(k, []) for k in PAPERS), costs)
    if not all(k in measured for k in PAPERS):
        found = [c for c in found if c.verdict != "not measured"]
    dram = energy_dram(measured.get("traffic", []), measured.get("energy", []))
    if "traffic" in measured:
        found += traffic.claims(measured["traffic"])
    if "energy" in measured:
        found += energy_report.claims(measured["energy"], dram)
    doc.add("## The papers' claims on this GPU\n\n" + claims.claims_table(found))
    cost = report.barrier_costs(costs)
    if measured.get("barriers"):
        report.barriers_section(doc, measured["barriers"])
    if floor:
        report.floor_section(doc, floor)
    if measured.get("fft"):
        report.algorithm_section(doc, "fft", "FFT, complex radix-2 (Fig. 13)", measured["fft"],
                                 "size", "cuFFT", cost)
    for dtype in sorted({r["dtype"] for r in measured.get("sort", [])}):
        rows = report.select(measured["sort"], dtype=dtype)
        report.algorithm_section(doc, f"sort_{dtype}", f"Bitonic sort, {dtype} (Fig. 15)", rows,
                                 "size", "cupy.sort", cost)
    for impl in swat.IMPLEMENTATIONS:
        rows = report.select(measured.get("swat", []), implementation=impl)
        if rows:
            report.algorithm_section(doc, f"swat_{impl}",
                                     f"Smith-Waterman, {impl} (Figs. 8 and 14)", rows, "m",
                                     "multipass", cost)
    if measured.get("swat"):
        swat_summary(doc, measured["swat"])
    if measured.get("traffic"):
        traffic.section(doc, measured["traffic"])
    if measured.get("energy"):
        energy_report.section(doc, measured["energy"], dram)
    with open(os.path.join(folder, f"{name}.json"), "w", encoding="utf-8") as fh:
        json.dump({"measured": measured, "barrier_costs": costs, "floor": floor or []}, fh,
                  indent=1)
    return doc.write()


def swat_summary(doc: report.Document, rows: list[dict]) -> None:
    """GCUPS of each implementation's best strategy at every pair size."""
    sizes = [r for r in rows if r["sweep"] == "sizes"]
    body = []
    for m in sorted({r["m"] for r in sizes}):
        line: list = [m]
        for impl in swat.IMPLEMENTATIONS:
            mine = report.select(sizes, m=m, implementation=impl)
            best = max(mine, key=lambda r: r["gcups"], default=None)
            line += [best["gcups"], best["sync"]] if best else [float("nan"), ""]
        body.append(line)
    headers = ["m = n"]
    for impl in swat.IMPLEMENTATIONS:
        headers += [f"{impl} GCUPS", "by"]
    doc.add("Smith-Waterman, best strategy per implementation (GCUPS, one pair, score-only):")
    doc.add(report.table(headers, body))


def validate(s: Settings) -> None:
    """An InputError for settings no experiment can run, before any GPU work."""
    for name in s.syncs:
        check_sync(name, BARRIER_SYNCS)
    for size in s.fft_sizes + (s.fft_sweep,):
        fft.log2_length(size)
    for dtype in s.dtypes:
        if np.dtype(dtype) not in sort.TYPES:
            raise InputError(f"sort keys must be int32 or float32, got {dtype}")
    for impl in s.implementations:
        swat.check_implementation(impl)
    if min(s.traffic_sizes, default=1) < 1:
        raise InputError(f"traffic sizes must be positive, got {s.traffic_sizes}")
    lab_energy.validate(s.energy)
    if not 1 <= s.threads <= 1024 or s.rounds < 1 or s.repeats < 1:
        raise InputError(f"threads must be 1..1024, rounds and repeats at least 1; got "
                         f"{s.threads}, {s.rounds}, {s.repeats}")


def run(names: Sequence[str], s: Settings, folder: str, command: str,
        progress: Progress) -> str:
    """Measure ``names`` (of EXPERIMENTS) and write their report into ``folder``; returns the
    report's path. The GPU must be usable (an InputError otherwise)."""
    validate(s)
    choose("gpu")  # an InputError where no GPU is usable
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise InputError(f"--out {folder}: exists and is not a directory")
    os.makedirs(folder, exist_ok=True)
    start = time.time()
    measured = {name: RUNS[name](s, progress) for name in EXPERIMENTS if name in names}
    floor = barriers.floor(barriers.limit(s.threads)) if "barriers" in names else None
    costs = model_costs(measured, s, progress)
    info = device()
    header = (f"Device: {info['name']} ({info['sms']} multiprocessors, "
              f"{info['memory_gib']:.0f} GiB), CUDA runtime {info['cuda']}, driver "
              f"{info['driver']}, CuPy {info['cupy']}. Date: "
              f"{time.strftime('%Y-%m-%d %H:%M %Z')}. Command: `{command}`. Measured in "
              f"{time.time() - start:.0f} s (compilation included).\n\n"
              f"Settings: {json.dumps(asdict(s))}")
    name = names[0] if len(names) == 1 else "report"
    return write(folder, name, measured, costs, header, floor)


def settings(quick: bool, energy: dict | None = None, **changes) -> Settings:
    """The default (or quick) settings with the non-None ``changes`` applied, and the
    non-None ``energy`` changes to the energy experiment's settings."""
    base = QUICK if quick else Settings()
    s = replace(base, **{k: v for k, v in changes.items() if v is not None})
    energy_changes = {k: v for k, v in (energy or {}).items() if v is not None}
    return replace(s, energy=replace(s.energy, **energy_changes)) if energy_changes else s
