"""What a search records as it runs: each GPU scan launch, predicted beside measured, and the
seconds of its phases. A :class:`Trace` is handed to a search (``trace=``) and filled by its
scanners and its hit stage; ``search --explain`` and the benchmarks read it."""

from __future__ import annotations

import os
import threading
from typing import NamedTuple


class LaunchTime(NamedTuple):
    """One GPU scan launch: its partitioning, units (profiles) and subjects, its predicted
    seconds, and by CUDA events the seconds it added to the scan (from the end of the launch
    before, or the start of its chunk's scan, to its own end) and its kernel's."""

    partition: str
    units: int
    subjects: int
    predicted: float
    measured: float
    kernel: float


class Trace:
    """A search's record: ``launches`` (:class:`LaunchTime`, in launch order) and
    ``seconds`` per phase (GPU: ``upload``, ``plan``, ``scan``, ``rescore``, ``topk``; the
    hits: ``align``), ``counts`` (``rescored``: pairs
    rescored at 32 bits). Safe to share between the threads of several GPUs."""

    def __init__(self) -> None:
        self.launches: list[LaunchTime] = []
        self.seconds: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def launch(self, record: LaunchTime) -> None:
        """Record one scan launch."""
        with self._lock:
            self.launches.append(record)

    def add(self, phase: str, seconds: float) -> None:
        """Add ``seconds`` to ``phase``."""
        with self._lock:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    def count(self, name: str, number: int) -> None:
        """Add ``number`` to the count ``name``."""
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + number

    def clear(self) -> None:
        """Forget everything recorded so far."""
        with self._lock:
            self.launches.clear()
            self.seconds.clear()
            self.counts.clear()


def process_seconds() -> float | None:
    """Seconds since this process started (its interpreter's start-up and imports
    included), from ``/proc``; None where there is none."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22: starttime
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def explain_lines(log: list[LaunchTime]) -> list[str]:
    """``search --explain``'s table: every scan launch predicted beside measured (and the
    kernel's share of the measurement), and the totals."""
    lines = ["| launch | partition | units | subjects | predicted s | measured s | kernel s "
             "| error |", "|---|---|---|---|---|---|---|---|"]
    for k, (name, units, subjects, guess, seen, kernel) in enumerate(log, 1):
        lines.append(f"| {k} | {name} | {units} | {subjects:,} | {guess:.4f} | {seen:.4f} | "
                     f"{kernel:.4f} | {(guess - seen) / seen:+.1%} |")
    guess, seen, kernel = (sum(r[k] for r in log) for k in (3, 4, 5))
    if seen > 0:
        lines.append(f"| total | | | | {guess:.4f} | {seen:.4f} | {kernel:.4f} | "
                     f"{(guess - seen) / seen:+.1%} |")
    return lines
