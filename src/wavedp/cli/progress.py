"""Progress of a long command (``wavedp align``, ``wavedp search``) on stderr.

On a terminal: a rich progress bar that vanishes at the end. Elsewhere (a batch job's log):
a plain line at most every ``interval`` seconds while work is reported, and one summary line
at the end of a run that took at least ``quiet`` seconds or printed a line::

    wavedp: search: 12/20 queries, 3.1G residues scanned, 42.0 GCUPS, 00:01:10 elapsed, about
    00:00:47 left
    wavedp: search: 20 queries, 5.1G residues, 41.7 GCUPS, 00:02:03
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def counted(n: int, noun: str) -> str:
    """``n`` with ``noun`` (given plural), singular for one: "1 query", "2 queries"."""
    if n != 1:
        return f"{n:,} {noun}"
    return "1 " + (noun[:-3] + "y" if noun.endswith("ies") else
                   noun[:-1] if noun.endswith("s") else noun)


def si(count: float) -> str:
    """A count with an SI suffix: 17845600 -> '17.8M'."""
    for suffix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f}{suffix}"
    return f"{count:.0f}"


def clock_time(seconds: float) -> str:
    """Seconds as HH:MM:SS."""
    whole = int(seconds)
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def duration(seconds: float) -> str:
    """A run's length: '2.3 s' under a minute, else HH:MM:SS."""
    return f"{seconds:.1f} s" if seconds < 60 else clock_time(seconds)


def rate(cells: float, seconds: float) -> str:
    """GCUPS (DP cells per second / 1e9): '42.0', '9,412'."""
    gcups = cells / max(seconds, 1e-9) / 1e9
    return f"{gcups:,.0f}" if gcups >= 100 else f"{gcups:.1f}"


class Progress:
    """Progress of ``label`` ("align", "search"): ``total_cells`` DP cells of work (None: not
    known; the share done is then that of the items) over ``queries`` items (named ``unit``;
    0: not counted) and ``scans`` database residues scanned in all (0: report cells instead
    of residues).

    A context manager; the work reports ``advance(cells)`` and ``query_done()`` (or
    ``advance(cells, done=k)``). ``stream`` (default: stderr) is a terminal when its
    ``isatty()`` says so, unless ``terminal`` decides; ``bar=False`` shows nothing there.
    Elsewhere a line is printed on a report at least ``interval`` seconds after the start or
    the previous line, and a summary at the end of a run (without an exception) that
    printed a line or took at least ``quiet`` seconds. ``clock`` gives seconds.
    """

    def __init__(self, label: str, total_cells: int | None, queries: int = 0, scans: int = 0, *,
                 interval: float = 30.0, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, terminal: bool | None = None,
                 bar: bool = True, unit: str = "queries", quiet: float = 1.0) -> None:
        self.label = label
        self.total = None if total_cells is None else max(int(total_cells), 1)
        self.queries, self.scans, self.unit = queries, scans, unit
        self.interval, self.quiet, self.clock = interval, quiet, clock
        self.stream = sys.stderr if stream is None else stream
        self.terminal = _isatty(self.stream) if terminal is None else terminal
        self.bar = bar
        self.cells = self.done = self.lines = 0
        self.start = self.last = clock()
        self._rich = self._task = None

    def __enter__(self) -> Progress:
        self.start = self.last = self.clock()
        if self.terminal and self.bar:
            self._rich = self._make_bar()
            self._rich.__enter__()
            self._task = self._rich.add_task(self.label, total=1.0, status="")
        return self

    def __exit__(self, kind, value, tb) -> None:
        if self._rich is not None:
            self._rich.__exit__(kind, value, tb)
            self._rich = None
        elif kind is None and not self.terminal:
            seconds = self.clock() - self.start
            if self.lines or seconds >= self.quiet:
                self._say(self.summary(seconds))

    def advance(self, cells: int, done: int = 0) -> None:
        """Work completed: ``cells`` DP cells, and ``done`` more items finished."""
        self.cells += int(cells)
        self.done += done
        self._report()

    def query_done(self) -> None:
        """One more item (query) finished."""
        self.done += 1
        self._report()

    def status(self, seconds: float) -> str:
        """The line of the work so far, ``seconds`` into the run."""
        parts = ([f"{self.done:,}/{counted(self.queries, self.unit)}"] if self.queries else
                 [counted(self.done, self.unit)] if self.total is None else [])
        if self.scans:
            parts.append(f"{si(self.residues())} residues scanned")
        elif self.total is None:
            parts.append(f"{si(self.cells)} cells")
        else:
            parts.append(f"{min(self.cells / self.total, 1.0):.0%} of {si(self.total)} cells")
        parts.append(f"{rate(self.cells, seconds)} GCUPS")
        return ", ".join(parts)

    def summary(self, seconds: float) -> str:
        """The summary line of a run that took ``seconds``."""
        parts = [counted(self.done, self.unit)] if self.queries or self.total is None else []
        parts.append(f"{si(self.residues())} residues" if self.scans else f"{si(self.cells)} cells")
        parts += [f"{rate(self.cells, seconds)} GCUPS", duration(seconds)]
        return f"wavedp: {self.label}: " + ", ".join(parts)

    def residues(self) -> float:
        """Database residues scanned so far, over all scans."""
        return self.scans * (self.fraction() or 0.0)

    def fraction(self) -> float | None:
        """The share of the work done: of the cells, else of the items (None: neither
        total known)."""
        if self.total is not None:
            return min(self.cells / self.total, 1.0)
        return min(self.done / self.queries, 1.0) if self.queries else None

    def _report(self) -> None:
        now = self.clock()
        if self._rich is not None:
            self._rich.update(self._task, completed=self.fraction(),
                              status=self.status(now - self.start))
        elif not self.terminal and now - self.last >= self.interval:
            self.last = now
            self.lines += 1
            seconds = now - self.start
            done, whole = ((self.cells, self.total) if self.total is not None else
                           (self.done, self.queries))
            if not 0 < done < whole and self.queries:  # the cells all done, queries not yet
                done, whole = self.done, self.queries
            left = (f", about {clock_time(seconds * (whole - done) / done)} left"
                    if 0 < done < whole else "")
            self._say(f"wavedp: {self.label}: {self.status(seconds)}, "
                      f"{clock_time(seconds)} elapsed{left}")

    def _say(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _make_bar(self):
        # lazy: rich costs 0.05 s of every command's start-up
        import rich.progress as rp
        from rich.console import Console

        console = Console(file=self.stream, force_terminal=self.terminal)
        return rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(bar_width=20),
                           rp.TaskProgressColumn(), rp.TextColumn("{task.fields[status]}"),
                           rp.TimeElapsedColumn(), rp.TimeRemainingColumn(), console=console,
                           transient=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False
