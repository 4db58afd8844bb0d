"""CUDASW++4.0's peak benchmark run on this GPU: the energy lab's same-board anchor.

CUDASW++4.0 publishes "up to 15.7 GCUPS/W" without the board's power limit, so the lab can
also run CUDASW++4.0 itself, here, in the same run as wavedp's peak searches. The user
builds its ``align`` from its own sources (wavedp ships none of it) and names it with
``wavedp lab energy --cudasw4 PATH``. It runs as its peak benchmark runs it (its DPX
kernels, the database uploaded whole, its ``--pseudodb``: one random sequence of one length
repeated), with wavedp's search queries written to a FASTA file, so both tools align the
same queries against the same kind of database.

Its own timer gives the scan's seconds and GCUPS (``Total time: S s, G GCUPS``); its power is
the highest mean of NVML's power samples over a stretch as long as the scan, the database
sized (``anchor_residues``) so that a scan lasts seconds: NVML's power readings average
over about a second and read low on a one-second scan.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence

from .. import energy
from ..errors import DeviceError, InputError

#: the kernels of CUDASW++4.0's DPX peak benchmark (its runpeakbenchmark.sh, kernel type 1)
KERNELS = ("--singlePassType", "DPXs16", "--manyPassType_small", "DPXs16",
           "--manyPassType_large", "DPXs32")
TOTAL = re.compile(r"Total time: ([0-9.eE+-]+) s, ([0-9.eE+-]+) GCUPS")
NAME = "CUDASW++4.0"


def check(path: str) -> None:
    """An InputError unless ``path`` is an executable file (before any GPU work)."""
    if not os.path.isfile(path):
        raise InputError(f"--cudasw4 {path}: no such file (CUDASW++4.0's align, built from "
                         "its sources)")
    if not os.access(path, os.X_OK):
        raise InputError(f"--cudasw4 {path}: not executable")


def command(path: str, queries: str, sequences: int, length: int) -> list[str]:
    """``align``'s command line for its peak benchmark on ``queries`` (a FASTA file): a
    pseudo-database of ``sequences`` copies of one random sequence of ``length``, BLOSUM62
    with its default gaps (11/1), scores only."""
    return [os.path.abspath(path), "--query", queries, "--top", "0", "--verbose",
            "--uploadFull", "--prefetchDBFile", "--mat", "blosum62", *KERNELS,
            "--pseudodb", str(sequences), str(length)]


def parse_total(text: str) -> tuple[float, float] | None:
    """(seconds, GCUPS) of the last ``Total time`` line of align's output; None if none."""
    found = TOTAL.findall(text)
    return (float(found[-1][0]), float(found[-1][1])) if found else None


def run(path: str, queries: Sequence[str], length: int, residues: int,
        progress: Callable[[str], None]) -> dict:
    """CUDASW++4.0's peak benchmark at ``length`` on about ``residues`` database residues, as
    an energy lab row (kind ``anchor``)."""
    sequences = max(1, residues // length)
    with tempfile.TemporaryDirectory(prefix="wavedp-cudasw4-") as folder:
        fasta = os.path.join(folder, "queries.fasta")
        with open(fasta, "w", encoding="ascii") as f:
            f.writelines(f">q{k}\n{q}\n" for k, q in enumerate(queries))
        with energy.measure() as m:
            done = subprocess.run(command(path, fasta, sequences, length), cwd=folder,
                                  capture_output=True, text=True, check=False)
    output = done.stdout + done.stderr
    total = parse_total(output)
    if done.returncode or total is None:
        last = output.strip().splitlines()[-1] if output.strip() else "no output"
        raise DeviceError(f"{NAME} ({path}) failed at length {length} (exit status "
                          f"{done.returncode}): {last}")
    seconds, gcups = total
    watts = energy.busiest_watts(m.samples, seconds)
    progress(f"energy: {NAME}, length {length}: {gcups:,.0f} GCUPS, {watts:.0f} W")
    return {"kind": "anchor", "length": length, "queries": len(queries),
            "sequences": sequences, "seconds": seconds, "cells": gcups * 1e9 * seconds,
            "watts": watts, "joules": watts * seconds, "process_seconds": m.seconds,
            "process_joules": m.joules}
