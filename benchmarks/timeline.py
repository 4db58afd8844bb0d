"""Where a whole ``wavedp`` command spends its wall clock, thread by thread: a timeline.

Run:  python benchmarks/timeline.py [--every 0.005] [--least 0.01] -- search QUERIES DB ...
(the words after ``--`` are the command's, as ``wavedp`` takes them). The command runs in this
process (its imports included: nothing of wavedp is imported before it starts) while a
sampler thread reads every thread's stack every ``--every`` seconds. Printed to stderr after
the command: per thread, the spans during which its innermost frame of interest stayed the
same (wavedp's own frames first, else the innermost frame's module and function), those of
at least ``--least`` seconds, with their start and end in seconds since this script started
(the interpreter's own start-up before it is not included: ``python -X importtime`` or the
``interpreter`` floor of ``cold_scan.py`` gives it); then the thread's samples summed by
frame of interest (samples x ``--every``: a thread's time, busy or waiting). A search
forks its planning children only where no other thread runs: the sampler stops for the
fork (a few milliseconds without samples) and starts again after it; makedb's parallel
build forks its workers likewise, and the sampler stops for the whole build (its work is in
the workers; the span shows as no samples).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

START = time.perf_counter()


def label(frame) -> str:
    """The frame of interest of a stack: "importing X.Y (by F)" where a module of the
    package X (subpackage Y) is being run before any of wavedp's frames (from the
    innermost), F the innermost wavedp frame that imports it, if any; else the innermost
    frame of wavedp (module:function), else the innermost frame's."""
    inner = frame
    while frame is not None:
        code = frame.f_code
        if code.co_name == "<module>":  # by package: numpy's many modules are one span
            parts = _module(code.co_filename).split(os.sep)
            what = ".".join(parts[:2]) if len(parts) > 2 else parts[0]
            by = _caller(frame.f_back)
            return f"importing {what}" + (f" (by {by})" if by else "")
        if "wavedp" in code.co_filename.split(os.sep):
            return f"{_module(code.co_filename)}:{code.co_name}"
        frame = frame.f_back
    return f"{_module(inner.f_code.co_filename)}:{inner.f_code.co_name}"


def _caller(frame) -> str:
    """The innermost wavedp frame from ``frame`` outwards (module:function), or ''."""
    while frame is not None:
        if "wavedp" in frame.f_code.co_filename.split(os.sep):
            return f"{_module(frame.f_code.co_filename)}:{frame.f_code.co_name}"
        frame = frame.f_back
    return ""


def _module(path: str) -> str:
    return path.split("site-packages" + os.sep)[-1].split("src" + os.sep)[-1].removesuffix(".py")


class Sampler:
    """A thread that, every ``every`` seconds, adds each other thread's (time, label) to
    ``out``; stopped and started again around a fork (:meth:`around`)."""

    def __init__(self, every: float, out: dict[str, list]) -> None:
        self.every, self.out = every, out
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(self.stop_event,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join()

    def around(self, function):
        """``function`` called with the sampler stopped (no thread of its own running)."""
        def wrapped(*args, **kwargs):
            self.stop()
            try:
                return function(*args, **kwargs)
            finally:
                self.start()
        return wrapped

    def _run(self, stop: threading.Event) -> None:
        me = threading.get_ident()
        while not stop.is_set():
            now = time.perf_counter() - START
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, frame in sys._current_frames().items():
                if ident != me:
                    self.out.setdefault(names.get(ident, str(ident)), []).append(
                        (now, label(frame)))
            time.sleep(self.every)


def spans(samples: list[tuple[float, str]], least: float) -> list[tuple[float, float, str]]:
    """Runs of one label: (start, end, label), those of at least ``least`` seconds."""
    runs: list[list] = []
    for t, name in samples:
        if runs and runs[-1][2] == name:
            runs[-1][1] = t
        else:
            runs.append([t, t, name])
    return [(a, b, n) for a, b, n in runs if b - a >= least]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=0.005)
    parser.add_argument("--least", type=float, default=0.01)
    parser.add_argument("--top", type=int, default=6, help="frames summed per thread")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    words = args.command[1:] if args.command[:1] == ["--"] else args.command
    found: dict[str, list] = {}
    sampler = Sampler(args.every, found)
    sampler.start()
    code = 0
    try:
        # timed: the command's imports (``main`` would leave by os._exit: the click group
        # raises SystemExit as it ends)
        from wavedp.cli import cli

        if words[:1] == ["makedb"]:
            from wavedp.db import makedb

            makedb.build = sampler.around(makedb.build)  # its workers
        sys.argv = ["wavedp", *words]
        cli()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        wall = time.perf_counter() - START
        sampler.stop()
        print(f"\ntimeline: the command took {wall:.3f} s in this process", file=sys.stderr)
        for thread, samples in found.items():
            print(f"thread {thread}:", file=sys.stderr)
            for a, b, name in spans(samples, args.least):
                print(f"  {a:7.3f} - {b:7.3f}  {b - a:6.3f} s  {name}", file=sys.stderr)
            totals: dict[str, float] = {}
            for name in (n for _, n in samples):
                totals[name] = totals.get(name, 0.0) + args.every
            print("  in all: " + ", ".join(f"{n} {t:.3f} s" for n, t in sorted(
                totals.items(), key=lambda item: -item[1])[:args.top]), file=sys.stderr)
    raise SystemExit(code)


if __name__ == "__main__":
    main()
