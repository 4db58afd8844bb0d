"""makedb's progress: the bytes of the input read so far (:class:`ReadPosition` finds the
reader's file offset), shown on stderr as a bar on a terminal and as a line now and then in a
log (:func:`progress`). No NumPy: makedb's parallel builder shows it before NumPy is
imported."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import TextIO

#: makedb's progress in a log: a line at most this often (seconds)
PROGRESS_INTERVAL = 30.0


class ReadPosition:
    """How far a reader of ``path`` in this process has got: the offset of its file descriptor.

    pyfastx reads through its own descriptor; the newest descriptor open on the same file is
    found through /proc/self/fd (or /dev/fd) and its offset read with ``lseek(fd, 0,
    SEEK_CUR)``, which moves nothing. Where that is not possible, the position stays unknown.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.before = set(self._fds())

    def _fds(self) -> list[int]:
        folder = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
        try:
            target = os.stat(self.path)
            names = os.listdir(folder)
        except OSError:
            return []
        found = []
        for name in names:
            with contextlib.suppress(OSError, ValueError):
                st = os.fstat(int(name))
                if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                    found.append(int(name))
        return found

    def bytes_read(self) -> int | None:
        for _ in range(2):
            if self.fd is None:
                fresh = [fd for fd in self._fds() if fd not in self.before]
                self.fd = max(fresh) if fresh else None
            if self.fd is None:
                return None
            try:
                return os.lseek(self.fd, 0, os.SEEK_CUR)
            except OSError:
                self.fd = None
        return None


@contextlib.contextmanager
def progress(path: str, show: bool, interval: float | None = None,
             stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic,
             done: Callable[[], int | None] | None = None) -> Iterator:
    """The input file's bytes read, shown on ``stream`` (stderr): a rich progress bar on a
    terminal (it vanishes at the end), elsewhere (a batch job's log) a plain line at most
    every ``interval`` seconds of ``clock`` (PROGRESS_INTERVAL); nothing where ``show`` is
    False. ``done``: the bytes read so far (default: the offset of this process's newest
    descriptor of ``path``, :class:`ReadPosition`). Yields the function the reader calls
    after each piece."""
    stream = sys.stderr if stream is None else stream
    interval = PROGRESS_INTERVAL if interval is None else interval
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        terminal = False
    try:
        total = os.path.getsize(path) if show else None
    except OSError:  # the reader names the problem
        total, show = None, False
    label = f"building database from {os.path.basename(path)}"
    if done is None and show:
        done = ReadPosition(path).bytes_read
    if not terminal or not show:  # rich is not imported: a log gets lines
        start = last = clock()

        def line() -> None:
            nonlocal last
            now = clock()
            if now - last < interval:
                return
            read = done() if done else None
            if read is not None:
                last = now
                print(f"wavedp: {label}: {read / 1e6:,.0f} of {(total or 0) / 1e6:,.0f} MB "
                      f"read, {now - start:.0f} s", file=stream, flush=True)

        yield line
        return
    import rich.progress as rp  # lazy: 0.03-0.05 s of a command's start, for a terminal's bar
    from rich.console import Console

    console = Console(file=stream)
    bar = rp.Progress(rp.TextColumn("{task.description}"), rp.BarColumn(),
                           rp.DownloadColumn(), rp.TimeElapsedColumn(),
                           rp.TimeRemainingColumn(), console=console, transient=True)
    with bar:
        task = bar.add_task(label, total=total)

        def update() -> None:
            read = done() if done else None
            if read is not None:
                bar.update(task, completed=read)

        yield update
