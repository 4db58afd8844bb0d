"""Signals that stop a command (SIGTERM, SIGHUP) the way Ctrl-C does: raised where the command
is, so every ``finally`` on the way out runs and temporary files are removed; and remembered,
Ctrl-C's SIGINT too, because an exception raised inside a native callback (Numba's compiler
calls back into Python) is swallowed there."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

#: the signals that stop a command the way Ctrl-C does (its temporary files removed)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_pending: list[int] = []


class Stopped(BaseException):
    """A signal of STOP_SIGNALS arrived while the command ran."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame) -> None:
    _pending.append(signum)
    # what the signal interrupts may fail again as it is torn down (an object of Numba's
    # compiler left half made prints its __del__'s error): the stop's one line says it all
    sys.unraisablehook = _ignore
    raise Stopped(signum)


def _interrupt(signum: int, frame) -> None:
    """Ctrl-C (SIGINT): KeyboardInterrupt, as Python raises it, and remembered as well (a
    Numba compile that it lands in swallows it)."""
    _pending.append(signum)
    sys.unraisablehook = _ignore
    raise KeyboardInterrupt


def _ignore(unraisable) -> None:
    """An unraisable exception after a stop signal: dropped."""


def raise_if_stopped() -> None:
    """Raise :class:`Stopped` for a stop signal that arrived but was swallowed (for SIGINT,
    KeyboardInterrupt): before the CPU pool's work (``engines.cpu.threads.spread``), before an
    output is put in place, and when the command returns."""
    if _pending:
        if _pending[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise Stopped(_pending[0])


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """STOP_SIGNALS raise :class:`Stopped` while the command runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _pending.clear()
    old = {s: signal.signal(s, _stop) for s in STOP_SIGNALS}
    old[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupt)
    hook = sys.unraisablehook
    try:
        yield
        raise_if_stopped()
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        stopped = bool(_pending)
        _pending.clear()  # what runs next in this process (a test's next command) starts clean
        if not stopped:  # after a stop the process is ending: its teardown stays quiet
            sys.unraisablehook = hook
