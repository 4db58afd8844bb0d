"""Nsight Compute (``ncu``) as a subprocess: profile a command's sweep kernels for the DRAM
and L2 counters, then read its report back as CSV.

A run exports a report (``--export``) and a second call prints it (``--import --csv --page
raw --print-units base``), so the profiled program's own output never mixes with the
numbers. :func:`parse_csv` also reads the default details page and values with units
(``Kbyte``, ``Mbyte``, ``msecond``, ``%``) or thousands separators (``1,383,168``).
"""

from __future__ import annotations

import csv
import io
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from ..errors import DeviceError, InputError

#: DRAM bytes read and written, the L2 hit rate over all its sector lookups, kernel time
METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
           "gpu__time_duration.sum")
#: the kernels profiled: the sweeps of wavedp's three Smith-Waterman strategies
KERNELS = "regex:^(multipass|diagonal_sweep|tiled_sweep)$"
PERMISSION = "ERR_NVGPUCTRPERM"

#: unit -> factor to the base unit (bytes, seconds; percentages stay percentages)
UNITS = {
    "": 1.0, "byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
    "kibyte": 2.0**10, "mibyte": 2.0**20, "gibyte": 2.0**30,
    "nsecond": 1e-9, "ns": 1e-9, "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3,
    "second": 1.0, "s": 1.0, "%": 1.0,
}


def executable() -> str:
    """Path of ``ncu``, or an InputError saying how to get it."""
    found = shutil.which("ncu")
    if not found:
        raise InputError("ncu (Nsight Compute) is not on PATH: the traffic lab reads DRAM bytes "
                         "and the L2 hit rate from hardware counters through it; install Nsight "
                         "Compute or add its folder (e.g. /usr/local/cuda/bin) to PATH")
    return found


def value(text: str, unit: str = "") -> float:
    """One cell as a float in base units (bytes, seconds, percent); NaN where ncu printed
    none. Commas are thousands separators (ncu's output in the C locale)."""
    text = text.strip().replace(",", "")
    if text in ("", "n/a", "N/A"):
        return math.nan
    key = unit.strip().lower()
    if key not in UNITS:
        raise ValueError(f"unknown ncu unit {unit!r}")
    return float(text) * UNITS[key]


def parse_csv(text: str) -> list[dict]:
    """One dict per profiled kernel, in launch order: ``id``, ``kernel`` (its name) and each
    metric in base units. Reads the raw page (a metric per column, units on the second
    row) and the details page (a metric per row); lines that are not CSV records
    (``==PROF==`` notes, the program's output) are skipped."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    records = list(csv.reader(io.StringIO("\n".join(lines))))
    if not records:
        return []
    header = records[0]
    if "Metric Name" in header:
        name, unit, val = (header.index(k) for k in ("Metric Name", "Metric Unit",
                                                     "Metric Value"))
        kernels: dict[str, dict] = {}
        for rec in records[1:]:
            row = dict(zip(header, rec, strict=False))
            entry = kernels.setdefault(row["ID"], {"id": int(row["ID"]),
                                                   "kernel": row["Kernel Name"]})
            entry[rec[name]] = value(rec[val], rec[unit])
        return sorted(kernels.values(), key=lambda k: k["id"])
    units, start = [""] * len(header), 1
    if len(records) > 1 and not records[1][0]:  # the raw page's units row
        units, start = records[1], 2
    out = []
    for rec in records[start:]:
        row = {"id": int(rec[0]), "kernel": rec[header.index("Kernel Name")]}
        for k, key in enumerate(header):
            if "__" in key:
                try:
                    row[key] = value(rec[k], units[k])
                except ValueError:  # text attributes (names, grid shapes), other units
                    continue
        out.append(row)
    return out


def _check(result: subprocess.CompletedProcess, what: str) -> None:
    text = result.stdout + result.stderr
    if PERMISSION in text:
        raise InputError(f"ncu may not read this GPU's performance counters ({PERMISSION}): run "
                         "as root, or let every user profile (NVreg_RestrictProfilingToAdminUsers"
                         "=0; https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
    if result.returncode:
        last = [line for line in text.splitlines() if line.strip()][-3:]
        raise DeviceError(f"{what} failed (exit status {result.returncode}): "
                          + " / ".join(last))


def profile(command: Sequence[str], metrics: Sequence[str] = METRICS,
            kernels: str = KERNELS) -> list[dict]:
    """Run ``command`` under ncu, profiling every launch of ``kernels`` for ``metrics``
    (caches flushed before each kernel, ncu's default; clocks left alone), and return
    :func:`parse_csv`'s rows. InputError where ncu is missing or may not read the
    counters; DeviceError where the command fails."""
    ncu = executable()
    with tempfile.TemporaryDirectory(prefix="wavedp-ncu-") as folder:
        report = os.path.join(folder, "report")
        _check(subprocess.run(
            [ncu, "--metrics", ",".join(metrics), "--kernel-name", kernels,
             "--target-processes", "all", "--clock-control", "none", "--export", report,
             "--force-overwrite", *command], capture_output=True, text=True, check=False),
            "the profiled run")
        result = subprocess.run(
            [ncu, "--import", report + ".ncu-rep", "--csv", "--page", "raw", "--print-units",
             "base"], capture_output=True, text=True, check=False)
        _check(result, "reading the ncu report")
    return parse_csv(result.stdout)
