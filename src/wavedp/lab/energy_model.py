"""The energy lab's model (Ranasinghe 2014, eqs. 10-13): the fit of the micro-benchmarks
(static power and joules per operation), each strategy's operations per DP cell, its DRAM
bytes, and the model's prediction of a run's energy (:mod:`.energy` measures the rows)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: the operations the model prices (``energy``'s module docstring says what each counts)
OPS = ("add", "max", "max16", "shared", "shared16", "l2", "dram")


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
            for r in full(rows)}


def model_per_cell(f: Fit, row: dict) -> float:
    """The model's joules per real cell of a strategy row beyond static power (its
    operations and the DRAM estimate)."""
    parts = predict(f, row)
    return (parts["total"] - parts["static"]) / row["cells"]


def search_power(rows: list[dict]) -> tuple[float, float] | None:
    """The capped searches' power against their cell rate, least squares: (joules per real
    cell, watts at no cells); None with fewer than two such rows."""
    capped = searches(rows, capped=True)
    if len(capped) < 2:
        return None
    rate = np.array([r["cells"] / r["seconds"] for r in capped])
    watts = np.array([r["joules"] / r["seconds"] for r in capped])
    slope, intercept = np.polyfit(rate, watts, 1)
    return float(slope), float(intercept)


# --- the rows ------------------------------------------------------------------------------

def select(rows: list[dict], kind: str) -> list[dict]:
    return [r for r in rows if r["kind"] == kind]


def full(rows: list[dict]) -> list[dict]:
    """Strategy rows at their full grid (the capped searches left out)."""
    return [r for r in select(rows, "strategy") if not r.get("blocks")]


def searches(rows: list[dict], capped: bool = False) -> list[dict]:
    """The search's rows: at its full grid, or (``capped``) the capped ones."""
    return [r for r in select(rows, "strategy")
            if r["strategy"] == "search" and bool(r.get("blocks")) == capped]
